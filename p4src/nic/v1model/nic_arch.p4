// v1model's side of what the NIC's shared files leave to the architecture (tna/nic_arch.p4 is
// TNA's): the macros the shared table fragments (tx_tables.p4, rx_tables.p4,
// loss_injector_table.p4) use for a drop, a count, the ingress port and a random draw, the path
// stage's address arithmetic, and BMv2's instance types. Included before the shared files.
#ifndef P4SRC_NIC_V1MODEL_ARCH_P4
#define P4SRC_NIC_V1MODEL_ARCH_P4

// Drop the packet (the caller's `standard_metadata`).
#define NIC_DROP() mark_to_drop(standard_metadata)
// Count one event (NIC_* index) in nic_counter: v1model counts any number per packet.
#define NIC_COUNT(event) nic_counter.count(event)
// The port the packet came in on.
#define NIC_INGRESS_PORT standard_metadata.ingress_port
// result = a uniform draw in [0, 2^32 - 2] is below threshold (0xFFFFFFFF: always).
#define NIC_DRAW_BELOW(result, threshold) \
    bit<32> draw; \
    random(draw, 0, 0xFFFFFFFE); \
    result = draw < threshold

// The path stage's address arithmetic (path.p4): one 128-bit expression each.
// carrier = base with the T1 uSID at bits 79..64 and the destination uA at 47..32:
#define NIC_CARRIER_VIA_T1(carrier, base, t1, ua) \
    carrier = base | ((bit<128>)t1 << 64) | ((bit<128>)ua << 32)
// carrier = base with the destination uA at bits 79..64:
#define NIC_CARRIER_SAME_T0(carrier, base, ua) carrier = base | ((bit<128>)ua << 64)
// src = the block, the T1 uSID, then src's bits below the block shifted down by 16:
#define NIC_SRC_VIA_T1(src, t1) src = src[127:96] ++ t1 ++ src[95:16]

// The EV choice's port balance (v1model/host_tx.p4): how many packets more one plane's port may
// hold than the next usable plane's before a packet goes to that plane instead. Above the
// jitter of equal ports (the SACKs a port also carries), below a queue worth a resend: a few
// packets.
const bit<19> NIC_PORT_BALANCE_MARGIN = 8;

// ev_path_seen's mark of a path learnt (bit 19; plane and T1 uSID below it).
const bit<20> PATH_SEEN = 0x80000;
// How recent an ECN echo on an EV makes a loss on it a queue's (no bad path): about a
// retransmission timeout, the time the sender's loss inference looks back over.
const bit<32> NIC_CE_RECENT_US = 100;

// standard_metadata.instance_type values (BMv2's simple_switch).
const bit<32> PKT_INSTANCE_INGRESS_CLONE = 1;
const bit<32> PKT_INSTANCE_RESUBMIT = 6;

#endif
