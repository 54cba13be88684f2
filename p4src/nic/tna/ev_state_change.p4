// EV state changes the controller hears of (OCP MRC's EV events: GOOD <-> ASSUMED_BAD), TNA
// (v1model/ev_state_change.p4 is v1model's). v1model reads ev_state, bad_count, probe_ok and
// ev_drops and writes them back in one pass; on Tofino each register is reached once per pass,
// so a move to ASSUMED_BAD takes two passes (EvMarkBadBegin, then EvMarkBadEnd after a
// resubmit) and a recovery is ordered so that each register is reached once (EvProbeAnswered,
// then EvProbeRecovered). ev_state itself is reached by the caller (HostTx, PlaneRx: its
// stateful ALU runs four RegisterActions at most, so it has one per caller,
// NIC_EV_STATE_MOVE), between the two halves: these controls say what move it makes
// (meta.ev_from / meta.ev_to) and take the state it had. The refill of the slot an EV leaves
// happens when the rotation next meets it (tna/host_tx.p4).
#ifndef P4SRC_NIC_TNA_EV_STATE_CHANGE_P4
#define P4SRC_NIC_TNA_EV_STATE_CHANGE_P4

#include "nic_state.p4"

// Pass 1 of (conn, meta.ev) -> ASSUMED_BAD: count a loss on it (`loss`) and start its probe
// count over; meta.digest_drops = its losses (the EV event reports them). The caller then
// reads its state (ev_from EV_FROM_NONE): pass 2 is needed unless it is ASSUMED_BAD already.
control EvMarkBadBegin(inout nic_metadata_t meta, in bool loss) {
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_drops) drops_count = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (loss) {
                value = value + 1;
            }
            rv = value;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(probe_ok) probe_restart = {
        void apply(inout bit<8> value) {
            value = 0;   // recovery starts over
        }
    };

    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
        meta.digest_drops = drops_count.execute(cell);
        probe_restart.execute(cell);
        meta.ev_from = EV_FROM_NONE;
    }
}

// Pass 2: (conn, meta.ev) -> ASSUMED_BAD unless that would leave fewer than ev_min_active
// usable EVs (v1model's test on bad_count: ev_count - bad > ev_min_active, here bad <
// ev_count - ev_min_active, the same while bad_count <= ev_count, which it stays: it only
// grows below that bound). `allowed`: bad_count grew; the caller's ev_state move then makes it
// ASSUMED_BAD (from any state), and EvMarkBadDone takes the state it had.
control EvMarkBadEnd(inout nic_metadata_t meta, out bool allowed) {
    bit<16> room;   // ev_count - ev_min_active, 0 if negative

    RegisterAction<bit<16>, bit<32>, bit<8>>(bad_count) bad_add = {
        void apply(inout bit<16> value, out bit<8> rv) {
            rv = 0;
            if (value < room) {
                value = value + 1;
                rv = 1;
            }
        }
    };

    apply {
        room = ((bit<16>)meta.ev_mask + 1) |-| (bit<16>)meta.ev_min_active;
        allowed = bad_add.execute((bit<32>)meta.conn) == 1;
        meta.ev_from = allowed ? EV_FROM_ANY : EV_FROM_NONE;
        meta.ev_to = (bit<8>)EV_ASSUMED_BAD;
    }
}

// The end of pass 2, given the state before (`before`): the EV event (digest) with the losses
// pass 1 found (meta.resub.drops). Counted: NIC_EV_ASSUMED_BAD or NIC_EV_BAD_SUPPRESSED.
// (Between the passes another packet may have made it ASSUMED_BAD: then nothing is counted or
// sent, and bad_count may be one too high, a race v1model has not.)
control EvMarkBadDone(inout nic_metadata_t meta, in bit<8> before, in bool allowed) {
    apply {
        if (before == (bit<8>)EV_ASSUMED_BAD) {
            // made ASSUMED_BAD between the two passes: its event was sent then
        } else if (allowed) {
            NIC_COUNT(NIC_EV_ASSUMED_BAD);
            meta.digest = true;
            meta.digest_state = EV_ASSUMED_BAD;
            meta.digest_drops = meta.resub.drops;
        } else {
            NIC_COUNT(NIC_EV_BAD_SUPPRESSED);
        }
    }
}

// A probe answered (a SACK with PR=1) for (conn, meta.ev): `probe_successes` answers in a row
// bring an ASSUMED_BAD EV back, GOOD or (m = SKIP_ONCE) SKIP, with its EV event (digest).
// probe_ok counts first (every answer; EvMarkBadBegin resets it when the EV goes ASSUMED_BAD,
// and it resets itself at the K-th): at the K-th the caller's ev_state move takes the EV from
// ASSUMED_BAD to GOOD or SKIP (ev_from / ev_to), then EvProbeRecovered: one access each.
control EvProbeAnswered(inout nic_metadata_t meta, in bit<2> m, out bool reached) {
    RegisterAction<bit<8>, bit<32>, bit<8>>(probe_ok) probe_count = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if (value + 1 >= meta.probe_successes) {
                value = 0;
                rv = 1;
            } else {
                value = value + 1;
                rv = 0;
            }
        }
    };

    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
        reached = probe_count.execute(cell) == 1;
        meta.ev_from = reached ? (bit<8>)EV_ASSUMED_BAD : EV_FROM_NONE;
        meta.ev_to = m == SACK_M_SKIP_ONCE ? (bit<8>)EV_SKIP : (bit<8>)EV_GOOD;
    }
}

// The EV came back (it was ASSUMED_BAD at the K-th answer): one ASSUMED_BAD EV fewer, and its
// EV event with its losses.
control EvProbeRecovered(inout nic_metadata_t meta) {
    RegisterAction<bit<16>, bit<32>, bit<16>>(bad_count) bad_sub = {
        void apply(inout bit<16> value) {
            value = value - 1;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_drops) drops_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
        bad_sub.execute((bit<32>)meta.conn);
        meta.digest = true;
        meta.digest_state = EV_GOOD;
        meta.digest_drops = drops_read.execute(cell);
    }
}

#endif
