// EV state changes that the controller hears of (OCP MRC's EV events: GOOD <-> ASSUMED_BAD),
// shared by everything that can cause them: a SACK asking ALWAYS_SKIP, a loss the host reports,
// enough answered probes.
#ifndef P4SRC_NIC_EV_STATE_CHANGE_P4
#define P4SRC_NIC_EV_STATE_CHANGE_P4

#include "nic_state.p4"

// (conn, slot) -> ASSUMED_BAD, unless that would leave fewer than ev_min_active usable slots
// (then counted in NIC_EV_BAD_SUPPRESSED and left as it is). `loss` counts a loss on the slot.
control EvMarkBad(in nic_metadata_t meta, in bool loss) {
    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.slot;
        bit<32> drops;
        ev_drops.read(drops, cell);
        if (loss) {
            drops = drops + 1;
            ev_drops.write(cell, drops);
        }
        probe_ok.write(cell, 0);   // recovery starts over
        bit<2> state;
        ev_state.read(state, cell);
        if (state != EV_ASSUMED_BAD) {
            bit<16> bad_now;
            bad_count.read(bad_now, (bit<32>)meta.conn);
            if ((bit<16>)meta.ev_mask + 1 - bad_now > (bit<16>)meta.ev_min_active) {
                ev_state.write(cell, EV_ASSUMED_BAD);
                bad_count.write((bit<32>)meta.conn, bad_now + 1);
                digest<ev_event_t>(1, {meta.conn, meta.profile, meta.slot, EV_ASSUMED_BAD,
                                       drops});
            } else {
                nic_counter.count(NIC_EV_BAD_SUPPRESSED);
            }
        }
    }
}

// A probe answered (a SACK with PR=1) on an ASSUMED_BAD (conn, slot): after `probe_successes`
// answers in a row it is back in service: GOOD, or SKIP when the answer was ECN-marked.
control EvProbeAnswered(in nic_metadata_t meta, in bit<2> m) {
    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.slot;
        bit<2> state;
        ev_state.read(state, cell);
        if (state == EV_ASSUMED_BAD) {
            bit<8> answered;
            probe_ok.read(answered, cell);
            answered = answered + 1;
            if (answered >= meta.probe_successes) {
                ev_state.write(cell, m == SACK_M_SKIP_ONCE ? EV_SKIP : EV_GOOD);
                bit<16> bad_now;
                bad_count.read(bad_now, (bit<32>)meta.conn);
                bad_count.write((bit<32>)meta.conn, bad_now - 1);
                probe_ok.write(cell, 0);
                bit<32> drops;
                ev_drops.read(drops, cell);
                digest<ev_event_t>(1, {meta.conn, meta.profile, meta.slot, EV_GOOD, drops});
            } else {
                probe_ok.write(cell, answered);
            }
        }
    }
}

#endif
