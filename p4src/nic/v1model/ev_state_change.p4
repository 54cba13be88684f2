// EV state changes (v1model; TNA's are in tna/ev_state_change.p4) that the controller hears of (OCP
// MRC's EV events: GOOD <-> ASSUMED_BAD), shared by everything that can cause them: a SACK asking
// ALWAYS_SKIP, a loss the host reports, enough answered probes.
#ifndef P4SRC_NIC_V1MODEL_EV_STATE_CHANGE_P4
#define P4SRC_NIC_V1MODEL_EV_STATE_CHANGE_P4

#include "nic_state.p4"

// A slot whose EV (meta.ev) left service gets a backup of the same plane, so every plane keeps
// its share of the load: the next backup (in cursor order) that is GOOD and in no slot; two
// candidates are tried. Backups of plane p are EVs ev_count + j * planes + p, j < backups.
control EvRefill(in nic_metadata_t meta) {
    bit<16> candidate;
    bool    taken;

    apply {
        bit<32> cells = (bit<32>)meta.conn * EV_SLOTS;
        bit<16> ev_count = (bit<16>)meta.ev_mask + 1;
        bit<16> held;
        ev_slot.read(held, cells + (bit<32>)meta.ev);
        bit<16> slot = held - 1;
        bool in_slot = held != EV_NO_SLOT;
        if (held == 0) {
            slot = (bit<16>)meta.ev;
            in_slot = (bit<16>)meta.ev < ev_count;   // an active EV in its own slot
        }
        if (in_slot && meta.backups != 0) {
            bit<8> plane = meta.ev & (meta.planes - 1);
            bit<32> cursor_cell = (bit<32>)meta.conn * NIC_PLANES + (bit<32>)plane;
            bit<8> cursor;
            backup_cursor.read(cursor, cursor_cell);
            bit<16> other;
            bit<2> state;
            taken = false;
            candidate = ev_count + (bit<16>)(cursor & (meta.backups - 1)) * (bit<16>)meta.planes
                        + (bit<16>)plane;
            ev_slot.read(other, cells + (bit<32>)candidate);
            ev_state.read(state, cells + (bit<32>)candidate);
            if (candidate < 256 && (other == 0 || other == EV_NO_SLOT) && state == EV_GOOD) {
                taken = true;
            } else {
                cursor = cursor + 1;
                candidate = ev_count
                            + (bit<16>)(cursor & (meta.backups - 1)) * (bit<16>)meta.planes
                            + (bit<16>)plane;
                ev_slot.read(other, cells + (bit<32>)candidate);
                ev_state.read(state, cells + (bit<32>)candidate);
                taken = candidate < 256 && (other == 0 || other == EV_NO_SLOT) &&
                        state == EV_GOOD;
            }
            if (taken) {
                slot_ev.write(cells + (bit<32>)slot, (bit<8>)(candidate ^ slot));
                ev_slot.write(cells + (bit<32>)candidate, slot + 1);
                ev_slot.write(cells + (bit<32>)meta.ev, EV_NO_SLOT);
                backup_cursor.write(cursor_cell, cursor + 1);
            }
        }
    }
}

// (conn, EV) -> ASSUMED_BAD, unless that would leave fewer than ev_min_active usable active
// slots (then counted in NIC_EV_BAD_SUPPRESSED and left as it is); its slot is refilled.
// `loss`: a loss the host reports (by PSN, or a probe unanswered), counted on the EV; else
// ALWAYS_SKIP. `retire`: what retire_psn remembers (EvLateArrival) when the EV was not out yet:
// a reported PSN << 8 | PSN_SENT; 0 (forget) for the rest, and for anything on an EV out
// already: only a loss that stands alone may be undone by its packet's late arrival.
// meta.report_took_out: this call took the EV out of service.
control EvMarkBad(inout nic_metadata_t meta, in bool loss, in bit<32> retire) {
    EvRefill() refill;

    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
        bit<32> drops;
        ev_drops.read(drops, cell);
        if (loss) {
            drops = drops + 1;
            ev_drops.write(cell, drops);
        }
        probe_ok.write(cell, 0);   // recovery starts over
        bit<2> state;
        ev_state.read(state, cell);
        retire_psn.write(cell, state == EV_ASSUMED_BAD ? 32w0 : retire);
        if (state != EV_ASSUMED_BAD) {
            bit<16> bad_now;
            bad_count.read(bad_now, (bit<32>)meta.conn);
            if ((bit<16>)meta.ev_mask + 1 - bad_now > (bit<16>)meta.ev_min_active) {
                ev_state.write(cell, EV_ASSUMED_BAD);
                meta.report_took_out = true;
                bad_count.write((bit<32>)meta.conn, bad_now + 1);
                nic_counter.count(NIC_EV_ASSUMED_BAD);
                digest<ev_event_t>(1, {meta.conn, meta.profile, meta.ev, EV_ASSUMED_BAD,
                                       drops});
                // Its path is the connection's bad path now (if the EV was ever used), unless
                // the path was queueing (ECN) lately: then the loss may be the sender's
                // inference about a packet behind a queue, and only this EV goes.
                bit<20> path;
                ev_path_seen.read(path, cell);
                bit<32> ce_at;
                ev_ce_at.read(ce_at, cell);
                if (path != 0 && (ce_at == 0 || meta.now_us - ce_at > NIC_CE_RECENT_US)) {
                    bad_path.write((bit<32>)meta.conn, path);
                }
                refill.apply(meta);
            } else {
                nic_counter.count(NIC_EV_BAD_SUPPRESSED);
            }
        }
    }
}

// A probe answered (a SACK with PR=1) on an ASSUMED_BAD (conn, EV): after `probe_successes`
// answers in a row it is usable again: GOOD, or SKIP when the answer was ECN-marked. (If its slot
// was refilled meanwhile, it is now a spare backup of its plane.)
control EvProbeAnswered(in nic_metadata_t meta, in bit<2> m) {
    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
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
                nic_counter.count(NIC_EV_RECOVERED);
                probe_ok.write(cell, 0);
                // Answered on its path: that path is no longer the connection's bad path.
                bit<20> path;
                bit<20> suspect;
                ev_path_seen.read(path, cell);
                bad_path.read(suspect, (bit<32>)meta.conn);
                if (suspect == path) {
                    bad_path.write((bit<32>)meta.conn, 0);
                }
                bit<32> drops;
                ev_drops.read(drops, cell);
                digest<ev_event_t>(1, {meta.conn, meta.profile, meta.ev, EV_GOOD, drops});
            } else {
                probe_ok.write(cell, answered);
            }
        }
    }
}

// A SACK (no probe's answer, no ALWAYS_SKIP) for (conn, EV) acknowledging PSN `psn`: if that is
// the PSN whose reported loss took the EV out (retire_psn), the packet came over the EV after
// all, late behind a queue: the EV is back in service at once, GOOD or (m = SKIP_ONCE) SKIP,
// counted in NIC_EV_LOSS_UNDONE, with its EV event. (A real loss never arrives; an EV with
// partial loss stays out: its lost PSN is the one remembered.) `state`: the EV's state as the
// caller read it; `undone`: the EV came back.
control EvLateArrival(in nic_metadata_t meta, in bit<24> psn, in bit<2> m, in bit<2> state,
                      out bool undone) {
    apply {
        undone = false;
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
        bit<32> retired;
        retire_psn.read(retired, cell);
        if (retired == nic_psn_mark(psn)) {
            retire_psn.write(cell, 0);
            if (state == EV_ASSUMED_BAD) {
                undone = true;
                ev_state.write(cell, m == SACK_M_SKIP_ONCE ? EV_SKIP : EV_GOOD);
                bit<16> bad_now;
                bad_count.read(bad_now, (bit<32>)meta.conn);
                bad_count.write((bit<32>)meta.conn, bad_now - 1);
                nic_counter.count(NIC_EV_LOSS_UNDONE);
                bit<20> path;
                bit<20> suspect;
                ev_path_seen.read(path, cell);
                bad_path.read(suspect, (bit<32>)meta.conn);
                if (suspect == path) {
                    bad_path.write((bit<32>)meta.conn, 0);
                }
                bit<32> drops;
                ev_drops.read(drops, cell);
                digest<ev_event_t>(1, {meta.conn, meta.profile, meta.ev, EV_GOOD, drops});
            }
        }
    }
}

#endif
