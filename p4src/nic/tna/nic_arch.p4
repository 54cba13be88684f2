// TNA's side of what the NIC's shared files leave to the architecture (v1model/nic_arch.p4 is
// v1model's): the macros of the shared table fragments and of the path stage's arithmetic, and
// the TNA-only types the shared metadata (nic_types.p4, under NIC_ARCH_TNA) holds: the resubmit
// header and the mirror header of a SACK/NACK copy. Included before the shared files. The
// design is in tna/mrc_nic.p4.
#ifndef P4SRC_NIC_TNA_ARCH_P4
#define P4SRC_NIC_TNA_ARCH_P4

#define NIC_ARCH_TNA

// The ingress parser's sum of a SACK, NACK or probe from a plane port, UDP checksum included
// and the pseudo-header's next header (0x0011) left out, when the checksum holds: 0xFFFF - 0x11
// (tna/nic_parser.p4).
const bit<16> FB_CSUM_OK = 0xFFEE;

// Drop the packet: the ingress sets drop_ctl at its end (tna/mrc_nic.p4).
#define NIC_DROP() meta.drop = true
// The pass's one nic_counter event (a TNA Counter is reached once per packet and pass).
#define NIC_COUNT(e) meta.event = e; meta.counted = true
// The port the packet came in on (PlaneRx's ingress intrinsic metadata).
#define NIC_INGRESS_PORT ig_intr_md.ingress_port
// result = a draw of the caller's Random<bit<32>> `rng` is below threshold; 0xFFFFFFFF drops
// every packet, as v1model's draw in [0, 2^32 - 2] does.
#define NIC_DRAW_BELOW(result, threshold) \
    bit<32> draw = rng.get(); \
    result = draw < threshold || threshold == 0xFFFFFFFF

// The path stage's address arithmetic (path.p4) in 32-bit pieces: Tofino has no 128-bit ALU
// (v1model/nic_arch.p4 has the one-expression forms). An OR into 16-bit slices, and a 16-bit
// shift of the words below the block as 32-bit funnel shifts (each statement reads only words
// not yet written).
#define NIC_CARRIER_VIA_T1(carrier, base, t1, ua) \
    carrier = base; \
    carrier[79:64] = base[79:64] | t1; \
    carrier[47:32] = base[47:32] | ua
#define NIC_CARRIER_SAME_T0(carrier, base, ua) \
    carrier = base; \
    carrier[79:64] = base[79:64] | ua
#define NIC_SRC_VIA_T1(src, t1) \
    src[31:0] = (bit<32>)((src[63:32] ++ src[31:0]) >> 16); \
    src[63:32] = (bit<32>)((src[95:64] ++ src[63:32]) >> 16); \
    src[95:64] = (bit<32>)((t1 ++ src[95:64]) >> 16)

// Why a packet is resubmitted: the second ingress pass does what the first could not (a
// register reached twice, the other 32 bits of the ring, or a second nic_counter event).
// RESUB_NONE: a first pass.
const bit<4> RESUB_NONE = 0;
const bit<4> RESUB_TX_FIX = 1;        // data: add `move` to tx_cursor, send on `ev`
const bit<4> RESUB_TX_TRY = 2;        // data: `ev` in `slot` was not GOOD: try the next slot
const bit<4> RESUB_TX_REFILL = 3;     // data: refill `slot` (its `ev` left) and send on the backup
const bit<4> RESUB_TX_RECHOOSE = 4;   // data: `ev` is DENIED: choose again (the cursor moves on)
const bit<4> RESUB_HOST_MARK = 5;     // a loss the host reported: make `ev` ASSUMED_BAD
const bit<4> RESUB_RX_DATA = 6;       // data received: the window (catch up if `count`), SACK
const bit<4> RESUB_RX_PROBE = 7;      // a probe received: SACK the window
const bit<4> RESUB_RX_NACK = 8;       // trimmed or out of window: NACK with reason `count`
const bit<4> RESUB_FB_MARK = 9;       // an ALWAYS_SKIP SACK: make `ev` ASSUMED_BAD, deliver
const bit<4> RESUB_FB_COUNT = 10;     // feedback that changed an EV: count event `count`, deliver

// ev_path_seen's mark of a path learnt; how recent an ECN echo keeps a loss off the path (in
// the ingress timestamp's 1.024 µs units, v1model's NIC_CE_RECENT_US).
const bit<32> PATH_SEEN = 0x80000;
const bit<32> NIC_CE_RECENT = 98;

// The resubmit header (Tofino 1: 64 bits, in place of the port metadata).
header nic_resub_h {
    bit<4>  kind;       // RESUB_*
    bit<3>  move;       // TX: slots the cursor still has to move on by (port state);
                        // RX_DATA/RX_PROBE: bit 0, which half of the ring `drops` is (1: hi)
    bit<1>  flag;       // TX_TRY/TX_REFILL: the slot's EV is DENIED; RX_DATA: a duplicate
    bit<8>  slot;       // TX: the slot chosen first; RX_DATA/RX_PROBE: the expected PSN mod 128
                        // (the ring's rotation and the lap)
    bit<8>  ev;         // TX: that slot's EV; HOST_MARK/FB_MARK: the EV
    bit<8>  count;      // RX_DATA: 1 = the expected PSN arrived (the point catches up over the
                        // PSNs after it); RX_NACK: reason; FB_COUNT: the event; TX_TRY: the
                        // usable planes pass 1 found (its EV SKIP), 0 (ASSUMED_BAD)
    bit<32> drops;      // HOST_MARK/FB_MARK: the EV's losses (its EV event reports them);
                        // RX_DATA/RX_PROBE: pass 1's half of the ring (after its write)
}

// The mirror header of a SACK or NACK copy: what the egress needs to build it, besides the
// copy itself (the data packet or probe as it arrived: its outer source is the return address,
// its flow label the EV to reflect, its BTH PSN the NACK's PSN).
const bit<8> FB_MIRROR_SACK = 1;
const bit<8> FB_MIRROR_NACK = 2;
header nic_fb_mirror_h {
    bit<8>   kind;            // FB_MIRROR_*
    bit<8>   local_down;
    bit<6>   fb_dscp;
    bit<2>   fb_m;
    bit<1>   fb_pr;
    bit<7>   pad;
    bit<24>  fb_qp;
    bit<24>  fb_cack;
    bit<16>  fb_ack_offset;
    bit<8>   nack_reason;
    bit<64>  fb_bitmap;
    bit<48>  path_smac;
    bit<48>  path_dmac;
    bit<128> path_src;
}

// The SACK/NACK sessions (100 + plane) must truncate their copies to the mirror header plus
// the data headers through RETH (14 + 40 + 40 + 8 + 12 + 4 + 16): the egress then replaces
// METH + RETH by SETH + CC_STATE (a 150-byte SACK) or by NETH (a 134-byte NACK), as v1model's
// truncate() does. The controller creates them with packet_length_bytes = this.
const bit<32> FB_MIRROR_BYTES = 49;
const bit<32> FB_SESSION_BYTES = 183;   // FB_MIRROR_BYTES + 134

// Deparser extern types (ig_dprsr_md.mirror_type / digest_type / resubmit_type).
const bit<3> NIC_MIRROR_FEEDBACK = 1;
const bit<3> NIC_DIGEST_EV_EVENT = 1;
const bit<3> NIC_RESUBMIT = 1;

#endif
