// State the data plane itself writes (TNA registers; v1model/nic_state.p4 is v1model's): the same
// registers by the same names and indexes, with TNA differences. Cells are 8, 16 or 32 bits
// (ev_state is wider than v1model's 2); rx_expected holds the expected PSN << 8 (a stateful
// ALU adds at its own width: the 24-bit PSN then wraps with the 32-bit cell); rx_bitmap is a
// pair of 32-bit halves holding the receive window as a ring (bit PSN mod 64, marked by lap),
// not shifted to the cumulative point; and ev_slot keeps a DENIED mark (bit 15). Every
// register is reached through RegisterActions (declared by the controls that use them), at
// most once per packet and pass, all in the ingress: tna/mrc_nic.p4 says which pass reaches
// which. A stateful ALU runs at most four RegisterActions and reads at most two PHV operands:
// ev_state is reached through one RegisterAction in HostTx and one in PlaneRx, both
// NIC_EV_STATE_MOVE below, with meta.ev_from / meta.ev_to saying what to do.
#ifndef P4SRC_NIC_TNA_STATE_P4
#define P4SRC_NIC_TNA_STATE_P4

#include "nic_arch.p4"
#include "../nic_types.p4"

// EV_GOOD / EV_SKIP / EV_ASSUMED_BAD per (connection, EV): index conn * EV_SLOTS + EV.
@name(".ev_state") Register<bit<8>, bit<32>>(EV_CELLS) ev_state;
// An EV's state moves from meta.ev_from (EV_FROM_ANY: any state; EV_FROM_NONE: none, a read)
// to meta.ev_to; rv: the state before. Every ev_state access (a look, SKIP, ASSUMED_BAD, back
// from probes) is this, so that the stateful ALU's two PHV operands suffice.
const bit<8> EV_FROM_ANY = 0xFE;
const bit<8> EV_FROM_NONE = 0xFF;
#define NIC_EV_STATE_MOVE(name) \
    RegisterAction<bit<8>, bit<32>, bit<8>>(ev_state) name = { \
        void apply(inout bit<8> value, out bit<8> rv) { \
            rv = value; \
            if (value == meta.ev_from || meta.ev_from == EV_FROM_ANY) { \
                value = meta.ev_to; \
            } \
        } \
    }
// Which EV each slot holds (EV ^ slot) and which slot holds each EV (slot + 1; 0: its own slot
// for an active EV, none for a backup; EV_NO_SLOT: none), as v1model's, except that a backup
// leaving a slot gets 0 back (v1model: EV_NO_SLOT; both mean none) and that bit 15 marks an EV
// found DENIED once in its slot (the next time, its slot is refilled).
@name(".slot_ev") Register<bit<8>, bit<32>>(EV_CELLS) slot_ev;
@name(".ev_slot") Register<bit<16>, bit<32>>(EV_CELLS) ev_slot;
// Per (connection, plane): the next backup to try.
@name(".backup_cursor") Register<bit<8>, bit<32>>(NIC_CONNECTIONS * NIC_PLANES) backup_cursor;
// Rotation cursor per connection: the next packet's first slot.
@name(".tx_cursor") Register<bit<32>, bit<32>>(NIC_CONNECTIONS) tx_cursor;
// The EV each PSN left on (conn * PSN_WINDOW + PSN mod PSN_WINDOW).
@name(".psn_ev") Register<bit<8>, bit<32>>(PSN_CELLS) psn_ev;
// Per (connection, EV): the PSN its latest packet carried << 8 | PSN_SENT; per PSN: the gap
// back to the PSN its EV carried before it (v1model/nic_state.p4 has why).
@name(".ev_last_psn") Register<bit<32>, bit<32>>(EV_CELLS) ev_last_psn;
@name(".psn_gap") Register<bit<16>, bit<32>>(PSN_CELLS) psn_gap;
// The peer's port-state bitmap per connection, from its latest SACK or NACK.
@name(".peer_port_state") Register<bit<8>, bit<32>>(NIC_CONNECTIONS) peer_port_state;
// EVs in EV_ASSUMED_BAD per connection (ev_min_active's floor is checked against it).
@name(".bad_count") Register<bit<16>, bit<32>>(NIC_CONNECTIONS) bad_count;
// Probes answered in a row per (connection, EV) (TNA: counted for every answer; reset when the
// EV goes ASSUMED_BAD and when it comes back, so what counts is the same as v1model's).
@name(".probe_ok") Register<bit<8>, bit<32>>(EV_CELLS) probe_ok;
// Losses pinned on each (connection, EV), reported in EV events.
@name(".ev_drops") Register<bit<32>, bit<32>>(EV_CELLS) ev_drops;
// Per (connection, EV): the PSN whose reported loss took it out, << 8 | PSN_SENT (0: none, or
// something spoke against the EV since); a SACK of that PSN over that EV undoes the loss
// (v1model/nic_state.p4 has why).
@name(".retire_psn") Register<bit<32>, bit<32>>(EV_CELLS) retire_psn;
// The bad path (v1model/nic_state.p4 has why): per (connection, EV) the path its feedback last
// came back by (PATH_SEEN | plane << 16 | the uSID after the block in the return address: the
// T1's, or the T0's when both NICs are on one), learnt from SACKs and NACKs (the data path's
// passes reach other registers); per connection the bad path (0: none); per (connection, EV)
// when (ingress µs / 1.024) its latest ECN echo came (0: none).
@name(".ev_path_seen") Register<bit<32>, bit<32>>(EV_CELLS) ev_path_seen;
@name(".bad_path") Register<bit<32>, bit<32>>(NIC_CONNECTIONS) bad_path;
@name(".ev_ce_at") Register<bit<32>, bit<32>>(EV_CELLS) ev_ce_at;
// Per (connection, EV): when (ingress µs / 1.024) it was last told to step aside, by an ECN echo
// or a TRIMMED NACK (v1model's ev_skip_at: a SKIP older than skip_us is spent).
@name(".ev_skip_at") Register<bit<32>, bit<32>>(EV_CELLS) ev_skip_at;
// Sender: the PSN after the furthest data packet the host handed over << 8 | PSN_SENT (0: none).
@name(".tx_psn_next") Register<bit<32>, bit<32>>(NIC_CONNECTIONS) tx_psn_next;
// Receiver: next expected PSN (relative to the connection's initial PSN) << 8.
@name(".rx_expected") Register<bit<32>, bit<32>>(NIC_CONNECTIONS) rx_expected;
// Receiver: which of the PSNs expected + 1 .. expected + 63 arrived, as a ring: bit (PSN mod
// 64), lo = bits 0..31, hi = bits 32..63. An arriving PSN in the window (the expected one too)
// sets its bit to its lap's mark, 1 - (PSN / 64) mod 2; PSN p has arrived when its bit holds
// p's mark. The bit of a PSN the cumulative point passed holds the mark of the PSN 64 on (the
// next to use it) negated, so nothing is cleared when the point moves. All 0 (as at the
// start): PSN 0 expected, nothing ahead.
struct rx_ring_t {
    bit<32> lo;
    bit<32> hi;
}
@name(".rx_bitmap") Register<rx_ring_t, bit<32>>(NIC_CONNECTIONS) rx_bitmap;

#endif
