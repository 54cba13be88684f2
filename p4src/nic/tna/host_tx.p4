// Host TX (TNA; v1model/host_tx.p4 is v1model's): a packet from the host transport gets its
// connection, an EV (a slot of the connection's EV set) and the SRv6 encapsulation. The same
// tables (tx_tables.p4) and the same choice as v1model's, spread over at most two ingress
// passes because each register is reached once per pass (tna/mrc_nic.p4 has the whole design):
// the first pass takes the cursor, looks at one slot and sends on it when it can; otherwise it
// resubmits the packet, saying why (meta.resub), and the second pass finishes the choice.
#ifndef P4SRC_NIC_TNA_HOST_TX_P4
#define P4SRC_NIC_TNA_HOST_TX_P4

#include "nic_state.p4"
#include "ev_state_change.p4"
#include "port_state.p4"

control HostTx(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    EvMarkBadBegin() report_begin;
    EvMarkBadEnd() report_end;
    EvMarkBadDone() report_done;
    NicPortStateMove() port_state;

    bit<32> cells;
    bit<8>  slot;
    bit<8>  ev;
    bit<8>  cursor_add;   // tx_cursor's catch-up: the port-state move pass 1 could not add,
                          // plus 1 when the second pass chooses again
    bit<16> take_code;    // ev_slot of the backup that takes the slot: slot + 1 (0: it may
                          // not, it is not GOOD or not an EV: 0 stays 0)
    bit<16> leave_code;   // ev_slot of the EV that leaves its slot: none (active EVs
                          // EV_NO_SLOT, backups 0)
    bit<8>  swap_from;    // slot_ev of the slot before the refill (its EV ^ slot) ...
    bit<8>  swap_to;      // ... and after (the backup ^ slot; swap_from if not taken)
    bit<8>  backup_index; // the backup tried, in its plane: backup_cursor mod backups
    bit<16> backup_row;   // its offset among the backups: backup_index * planes
    bit<32> retire_arg;   // retire_psn's new value (a loss the host reports)
    bit<32> psn_mark;     // ev_last_psn's new value (a data packet's PSN)
    bit<16> gap;          // psn_gap's new value
    bit<8>  report_down;  // a reported loss: the planes down at either end ...
    bit<8>  report_plane; // ... and its EV's plane

    // Why: is the reported EV's plane down (bit `report_plane` of `report_down`: v1model
    // shifts by a run-time amount)? A hit says so. Fixed: const entries, hidden from the
    // control plane (as the ingress's plane_port_down).
    @hidden
    table report_plane_down {
        key = {
            report_plane : exact;
            report_down  : ternary;
        }
        actions = { NoAction; }
        const entries = {
            (0, 8w0x01 &&& 8w0x01) : NoAction();
            (1, 8w0x02 &&& 8w0x02) : NoAction();
            (2, 8w0x04 &&& 8w0x04) : NoAction();
            (3, 8w0x08 &&& 8w0x08) : NoAction();
            (4, 8w0x10 &&& 8w0x10) : NoAction();
            (5, 8w0x20 &&& 8w0x20) : NoAction();
            (6, 8w0x40 &&& 8w0x40) : NoAction();
            (7, 8w0x80 &&& 8w0x80) : NoAction();
        }
    }

#include "../tx_tables.p4"
#include "ev_set.p4"

    RegisterAction<bit<8>, bit<32>, bit<8>>(peer_port_state) peer_read = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
        }
    };
    // The cursor moves on by one at the first look (the slot taken), ...
    RegisterAction<bit<32>, bit<32>, bit<32>>(tx_cursor) cursor_next = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value + 1;
        }
    };
    // ... and in the second pass by the port-state move the first could not add (plus one
    // when it chooses again: that choice starts from rv + the move).
    RegisterAction<bit<32>, bit<32>, bit<32>>(tx_cursor) cursor_catch_up = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value + (bit<32>)cursor_add;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(slot_ev) slot_read = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(slot_ev) slot_refill = {
        void apply(inout bit<8> value) {
            if (value == swap_from) {
                value = swap_to;
            }
        }
    };
    // Every ev_state access of the host side: a look at an EV (its state, and a SKIP EV passed
    // over is GOOD again: it sat out once), a read, a move to ASSUMED_BAD.
    NIC_EV_STATE_MOVE(state_move);
    RegisterAction<bit<16>, bit<32>, bit<8>>(ev_slot) slot_leave = {
        void apply(inout bit<16> value) {
            value = leave_code;
        }
    };
    // A DENIED EV met in its slot: the first time it is marked (bit 15; the packet chooses
    // again, as v1model's does after its refill), the next time it leaves the slot (rv 1:
    // refill now). (An EV in a slot never holds EV_NO_SLOT.)
    RegisterAction<bit<16>, bit<32>, bit<8>>(ev_slot) slot_denied = {
        void apply(inout bit<16> value, out bit<8> rv) {
            if (value >= 0x8000 && value != EV_NO_SLOT) {
                value = leave_code;
                rv = 1;
            } else {
                value = value | 0x8000;
                rv = 0;
            }
        }
    };
    // The backup takes the slot if it may (take_code) and is in no slot: 0 (a backup that
    // leaves a slot gets 0 back, leave_code, where v1model writes EV_NO_SLOT: both mean none
    // for a backup). rv: its ev_slot before.
    RegisterAction<bit<16>, bit<32>, bit<16>>(ev_slot) slot_take = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if (value == 0) {
                value = take_code;
            }
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(backup_cursor) backup_next = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            value = value + 1;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_path_seen) seen_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(bad_path) bad_path_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(bad_path) bad_path_set = {
        void apply(inout bit<32> value) {
            if (meta.path_key != 0) {
                value = meta.path_key;
            }
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_ce_at) ce_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_skip_at) skip_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    // Feedback may now name this PSN (nothing past the furthest: tx_psn_next): the mark moves
    // on, in 32-bit serial arithmetic (the PSN << 8 wraps with the cell).
    RegisterAction<bit<32>, bit<32>, bit<32>>(tx_psn_next) psn_sent = {
        void apply(inout bit<32> value) {
            if (value == 0 || meta.psn_next - value < 0x80000000) {
                value = meta.psn_next;
            }
        }
    };
    // A loss the host reports: pass 1 forgets the PSN a late arrival could undo (retire_arg 0:
    // another loss, or an unanswered probe, speaks against the EV); pass 2, which runs when
    // the EV was not ASSUMED_BAD, remembers the reported PSN (v1model's EvMarkBad).
    RegisterAction<bit<32>, bit<32>, bit<32>>(retire_psn) retire_write = {
        void apply(inout bit<32> value) {
            value = retire_arg;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(psn_ev) psn_read = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(psn_ev) psn_write = {
        void apply(inout bit<8> value) {
            value = meta.ev;
        }
    };
    // The PSN the EV carried before this one (rv), this one's in its place; and this PSN's gap
    // back to it (v1model/host_tx.p4's HostTxEncap).
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_last_psn) ev_last_swap = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = psn_mark;
        }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(psn_gap) gap_write = {
        void apply(inout bit<16> value) {
            value = gap;
        }
    };

    // The EV a slot holds now (slot_ev holds EV ^ slot: 0 is the slot's own EV). Its state is
    // the caller's next step (visit): v1model's look() reads both.
    action look(bit<8> candidate) {
        slot = candidate;
        ev = candidate ^ slot_read.execute(cells + (bit<32>)candidate);
    }

    // state_move's move for a look at an EV: a SKIP EV becomes GOOD (it was passed over once);
    // rv is its state before.
    @hidden
    action visit_state() {
        meta.ev_from = (bit<8>)EV_SKIP;
        meta.ev_to = (bit<8>)EV_GOOD;
    }

    @hidden action backup_row_1() { backup_row = (bit<16>)backup_index; }
    @hidden action backup_row_2() { backup_row = (bit<16>)backup_index << 1; }
    @hidden action backup_row_4() { backup_row = (bit<16>)backup_index << 2; }
    @hidden action backup_row_8() { backup_row = (bit<16>)backup_index << 3; }

    // Why: v1model's backup index * planes (no multiplier on Tofino): planes is 1, 2, 4 or 8
    // (a power of two, at most NIC_PLANES), a shift by a constant each. Fixed: const entries,
    // hidden from the control plane; any other count takes no backup (the offset is past 255).
    @hidden
    table tx_backup_row {
        key = { meta.planes : exact; }
        actions = { backup_row_1; backup_row_2; backup_row_4; backup_row_8; @defaultonly NoAction; }
        default_action = NoAction();
        const entries = {
            1 : backup_row_1();
            2 : backup_row_2();
            4 : backup_row_4();
            8 : backup_row_8();
        }
    }

    // Pass 1 resubmits: why, and what pass 2 needs.
    @hidden
    action again(bit<4> kind) {
        meta.resubmit = true;
        meta.resub.setValid();
        meta.resub.kind = kind;
        meta.resub.slot = slot;
        meta.resub.ev = ev;
        meta.resub.flag = meta.denied ? 1w1 : 1w0;
        meta.resub.count = 0;
        meta.resub.drops = 0;
    }

    apply {
        bool known = tx_connection.apply().hit;
        cells = (bit<32>)meta.conn * EV_SLOTS;
        ev_set_span.apply();
        // A probe, or a report of an unanswered probe, names an EV: one of the connection's.
        bool names_ev = hdr.bth.opcode == OP_PROBE
                        || (hdr.peth.probe_id & REPORT_PROBE_FLAG) != 0;
        bit<16> named_ev = hdr.bth.opcode == OP_PROBE ? hdr.peth.probe_id
                                                      : hdr.peth.probe_id & ~REPORT_PROBE_FLAG;
        if (!known) {
            // dropped and counted by the default action
        } else if (meta.pass_kind == RESUB_HOST_MARK) {
            // Pass 2 of a loss the host reported: ASSUMED_BAD unless the floor says no.
            meta.host_report = true;
            meta.ev = meta.resub.ev;
            bool allowed;
            report_end.apply(meta, allowed);
            bit<8> before = state_move.execute(cells + (bit<32>)meta.ev);
            report_done.apply(meta, before, allowed);
            meta.report_took_out = allowed && before != (bit<8>)EV_ASSUMED_BAD;
            // A loss by PSN may be undone by that PSN's late arrival; an unanswered probe may not.
            retire_arg = (hdr.peth.probe_id & REPORT_PROBE_FLAG) != 0
                         ? 32w0 : nic_psn_mark(hdr.bth.psn);
            retire_write.execute(cells + (bit<32>)meta.ev);
            // Its path is the connection's bad path now (v1model's EvMarkBad): if known, and
            // not queueing lately (ECN).
            meta.path_key = seen_read.execute(cells + (bit<32>)meta.ev);
            bit<32> ce_at = ce_read.execute(cells + (bit<32>)meta.ev);
            if (!allowed || before == (bit<8>)EV_ASSUMED_BAD
                    || (ce_at != 0 && meta.now_us - ce_at <= NIC_CE_RECENT)) {
                meta.path_key = 0;
            }
            bad_path_set.execute((bit<32>)meta.conn);
        } else if (hdr.peth.isValid()) {
            // (Nested: the data path below does not wait for ev_set_span.)
            if (names_ev && named_ev >= (bit<16>)meta.ev_mask + 1 + ev_span) {
                meta.malformed = true;   // no such EV: nothing to probe, nothing to take out
            } else if (hdr.bth.opcode == OP_EV_REPORT) {
                // A loss the host's timer found: the EV its PSN left on, or the probed EV; or
                // a query about the EV a PSN left on (v1model's HostQuery).
                meta.host_report = true;
                meta.host_query = (hdr.peth.probe_id & REPORT_QUERY_FLAG) != 0;
                if ((hdr.peth.probe_id & REPORT_PROBE_FLAG) != 0) {
                    meta.ev = hdr.peth.probe_id[7:0];
                } else {
                    meta.ev = psn_read.execute((bit<32>)meta.conn * PSN_WINDOW
                                               + (bit<32>)hdr.bth.psn[9:0]);
                }
                // The EV's plane has its port down, here or at the peer: the port's loss,
                // not the EV's (v1model/host_tx.p4 says why), and no EV state is touched.
                report_down = meta.local_down | peer_read.execute((bit<32>)meta.conn);
                report_plane = meta.ev & (meta.planes - 1);
                meta.report_port_down = report_plane_down.apply().hit;
                if (meta.host_query) {
                    // Out of service now: ASSUMED_BAD, on the bad path, or its plane down.
                    meta.ev_from = EV_FROM_NONE;   // a read
                    bit<8> state = state_move.execute(cells + (bit<32>)meta.ev);
                    bit<32> seen = seen_read.execute(cells + (bit<32>)meta.ev);
                    bit<32> suspect = bad_path_read.execute((bit<32>)meta.conn);
                    bool gone = meta.report_port_down || state == (bit<8>)EV_ASSUMED_BAD;
                    meta.query_good = !gone && suspect != 0 && seen == suspect;
                    meta.query_out = gone || meta.query_good;
                    if (meta.query_out) {
                        NIC_COUNT(NIC_QUERY_OUT);
                    } else {
                        NIC_COUNT(NIC_QUERY_IN_SERVICE);
                    }
                } else if (meta.report_port_down) {
                    NIC_COUNT(NIC_REPORT_PORT_DOWN);
                } else {
                    report_begin.apply(meta, true);
                    bit<8> state = state_move.execute(cells + (bit<32>)meta.ev);   // a read
                    retire_arg = 0;
                    retire_write.execute(cells + (bit<32>)meta.ev);
                    NIC_COUNT(NIC_HOST_REPORT);
                    if (state != (bit<8>)EV_ASSUMED_BAD) {
                        ev = meta.ev;
                        again(RESUB_HOST_MARK);
                        meta.resub.drops = meta.digest_drops;
                    }
                }
            } else if (hdr.bth.opcode == OP_PROBE) {
                // The host paces probes of ASSUMED_BAD EVs and names the EV: no rotation, no slot.
                meta.host_probe = true;
                meta.ev = hdr.peth.probe_id[7:0];
                meta.slot_chosen = true;
                ev_path.apply();
            }
        } else {
            // Data: the first pass, or the second with what the first asked for.
            if (meta.pass_kind == RESUB_TX_FIX) {
                // Pass 1 chose `ev`; the cursor still moves on past the plane it passed over.
                cursor_add = (bit<8>)meta.resub.move;
                cursor_catch_up.execute((bit<32>)meta.conn);
                meta.ev = meta.resub.ev;
                meta.slot = meta.resub.slot;
                meta.slot_chosen = true;
                ev_path.apply();
            } else if (meta.pass_kind == RESUB_TX_TRY) {
                // The first slot's EV was SKIP (now GOOD again), ASSUMED_BAD or on the bad
                // path: hand_off slots on, in its own plane (the planes keep their shares).
                // Else the first slot's EV anyway (v1model tries up to 4 slots).
                cursor_add = (bit<8>)meta.resub.move;
                if (meta.resub.move != 0) {
                    cursor_catch_up.execute((bit<32>)meta.conn);
                }
                look((meta.resub.slot + meta.hand_off) & meta.ev_mask);   // a slot of its plane
                visit_state();
                bit<32> tried_path = seen_read.execute(cells + (bit<32>)ev);
                bit<32> suspect = bad_path_read.execute((bit<32>)meta.conn);
                bit<8> tried = state_move.execute(cells + (bit<32>)ev);
                bit<32> tried_skip_at = skip_read.execute(cells + (bit<32>)ev);
                // (a SKIP older than skip_us is spent: GOOD, as the visit left it)
                bool good = tried == (bit<8>)EV_GOOD || (tried == (bit<8>)EV_SKIP
                                                       && meta.now_us - tried_skip_at
                                                          > meta.skip_us);
                if (good && suspect != 0 && tried_path == suspect) {
                    good = false;   // on the bad path: not taken
                    NIC_COUNT(NIC_TX_BAD_PATH_PASSED);
                }
                if (good) {
                    meta.ev = ev;
                    meta.slot = slot;
                } else {
                    meta.ev = meta.resub.ev;
                    meta.slot = meta.resub.slot;
                    meta.fallback = true;
                }
                meta.slot_chosen = true;
                ev_path.apply();
            } else if (meta.pass_kind == RESUB_TX_REFILL) {
                // The first slot's EV left it (ASSUMED_BAD, or DENIED met twice): the next backup
                // of the slot's plane that is GOOD and in no slot takes it (v1model tries two),
                // and the packet goes on it; else on the EV itself if it is only ASSUMED_BAD.
                cursor_add = (bit<8>)meta.resub.move;
                if (meta.resub.move != 0) {
                    cursor_catch_up.execute((bit<32>)meta.conn);
                }
                bit<8> plane = meta.resub.slot & (meta.planes - 1);
                bit<8> cursor = backup_next.execute((bit<32>)meta.conn * NIC_PLANES
                                                    + (bit<32>)plane);
                backup_index = cursor & (meta.backups - 1);
                backup_row = 0x100;   // past every EV, unless tx_backup_row says otherwise
                tx_backup_row.apply();
                bit<16> candidate = (bit<16>)meta.ev_mask + 1 + backup_row + (bit<16>)plane;
                meta.ev_from = EV_FROM_NONE;   // a read
                bit<8> state = state_move.execute(cells + (bit<32>)candidate);
                bool cand_ok = candidate < 256 && state == (bit<8>)EV_GOOD;
                take_code = cand_ok ? (bit<16>)meta.resub.slot + 1 : 16w0;
                bit<16> held = slot_take.execute(cells + (bit<32>)candidate);
                bool taken = cand_ok && held == 0;
                swap_from = meta.resub.slot ^ meta.resub.ev;
                swap_to = taken ? meta.resub.slot ^ (bit<8>)candidate : swap_from;
                slot_refill.execute(cells + (bit<32>)meta.resub.slot);
                meta.slot = meta.resub.slot;
                if (taken) {
                    meta.ev = (bit<8>)candidate;
                } else {
                    meta.ev = meta.resub.ev;   // a DENIED one is dropped (ev_path says so)
                    meta.fallback = true;
                }
                meta.slot_chosen = true;
                ev_path.apply();
            } else {
                // The first pass of a data packet, or a second one choosing again after a DENIED
                // EV: the cursor, the port state, one slot.
                if (meta.pass_kind == RESUB_NONE) {
                    // Feedback may now name this PSN (a resend counts too: after a restart of
                    // this NIC only resends may be left to teach it).
                    meta.psn_next = nic_psn_mark(hdr.bth.psn + 1);
                    psn_sent.execute((bit<32>)meta.conn);
                }
                bit<32> cursor;
                if (meta.pass_kind == RESUB_TX_RECHOOSE) {
                    cursor_add = (bit<8>)meta.resub.move + 1;
                    cursor = cursor_catch_up.execute((bit<32>)meta.conn)
                             + (bit<32>)meta.resub.move;
                } else {
                    cursor = cursor_next.execute((bit<32>)meta.conn);
                }
                bit<8> first = (cursor[7:0] + meta.rotation) & meta.ev_mask;
                bit<8> peer_down = peer_read.execute((bit<32>)meta.conn);
                bit<8> usable;
                bit<8> move;
                port_state.apply(meta.planes, meta.local_down, peer_down, first, usable, move);
                if (usable == 0) {
                    meta.no_port = true;   // every port of this NIC is down: the caller drops it
                } else {
                    look((first + move) & meta.ev_mask);
                    visit_state();
                    bit<8> state = state_move.execute(cells + (bit<32>)ev);
                    bit<32> skip_at = skip_read.execute(cells + (bit<32>)ev);
                    if (state == (bit<8>)EV_SKIP && meta.now_us - skip_at > meta.skip_us) {
                        state = (bit<8>)EV_GOOD;   // a spent SKIP (the visit made it GOOD)
                    }
                    bit<32> seen = seen_read.execute(cells + (bit<32>)ev);
                    bit<32> suspect = bad_path_read.execute((bit<32>)meta.conn);
                    // A GOOD EV seen on the connection's bad path is passed over as an
                    // ASSUMED_BAD one no backup replaced: pass 2 tries its plane's next slot. So
                    // is, for a resend, one never seen on any path while there is a bad path
                    // (v1model's NIC_ON_BAD_PATH: it may run over the failed element too).
                    bool resend = hdr.bth.retransmit == 1;
                    bool on_bad = state == (bit<8>)EV_GOOD && suspect != 0
                                  && (seen == suspect || (seen == 0 && resend));
                    bool good = state == (bit<8>)EV_GOOD && !on_bad;
                    meta.ev = ev;
                    meta.slot = slot;
                    ev_path.apply();
                    leave_code = (bit<16>)ev < (bit<16>)meta.ev_mask + 1 ? EV_NO_SLOT : 16w0;
                    if (meta.pass_kind == RESUB_TX_RECHOOSE) {
                        // No third pass: this slot's EV, whatever its state (v1model would try
                        // on); a DENIED one is dropped. The cursor does not add this choice's move.
                        meta.fallback = !good;
                        meta.slot_chosen = true;
                    } else if (good && !meta.denied) {
                        if (move == 0) {
                            meta.slot_chosen = true;   // sent in this pass
                        } else {
                            again(RESUB_TX_FIX);
                        }
                    } else if (state == (bit<8>)EV_GOOD && meta.denied) {
                        // DENIED: choose again (the cursor has moved on); met again, its slot
                        // takes a backup. Without backups it is only ever chosen again.
                        if (meta.backups != 0 && slot_denied.execute(cells + (bit<32>)ev) == 1) {
                            again(RESUB_TX_REFILL);
                        } else {
                            again(RESUB_TX_RECHOOSE);
                        }
                    } else if (state == (bit<8>)EV_ASSUMED_BAD && meta.backups != 0
                               && !(resend && suspect != 0)) {
                        // Its slot is refilled now (v1model refills when the EV goes bad). Not
                        // by a resend while there is a bad path: the backup's path is unseen
                        // (above); pass 2 tries the plane's next slot, new data refills.
                        slot_leave.execute(cells + (bit<32>)ev);
                        again(RESUB_TX_REFILL);
                    } else {
                        again(RESUB_TX_TRY);   // pass 2 tries its plane's next slot
                        if (on_bad) {
                            NIC_COUNT(NIC_TX_BAD_PATH_PASSED);
                        }
                    }
                    // Every branch above but these two asks for pass 2 (tested on what they
                    // test, not on meta.resubmit, which would cost a stage).
                    if (meta.pass_kind != RESUB_TX_RECHOOSE &&
                            !(good && !meta.denied && move == 0)) {
                        meta.resub.move = move[2:0];
                        meta.denied = false;   // pass 2 decides
                        if (move != 0) {
                            NIC_COUNT(NIC_TX_PORT_PASSED);
                        }
                    }
                }
            }
            if (meta.slot_chosen && !meta.denied) {
                // Remembered so that a loss the host reports by PSN names this EV, and which
                // PSN went on this EV just before it.
                psn_write.execute((bit<32>)meta.conn * PSN_WINDOW + (bit<32>)hdr.bth.psn[9:0]);
                psn_mark = nic_psn_mark(hdr.bth.psn);
                gap = nic_psn_gap(hdr.bth.psn, ev_last_swap.execute(cells + (bit<32>)meta.ev));
                gap_write.execute((bit<32>)meta.conn * PSN_WINDOW + (bit<32>)hdr.bth.psn[9:0]);
            }
        }
    }
}

// The outer header of a data packet or probe, once the path stage has filled meta's path
// fields (v1model's HostTxEncap; HostTx remembers the EV of each PSN: psn_ev is reached once
// per pass only on paths apart from the host report's read).
control HostTxEncap(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    apply {
        bit<16> ev = (bit<16>)meta.plane << 8 | (bit<16>)meta.ev;   // the compact EV
        hdr.outer_ipv6.setValid();
        hdr.outer_ipv6.version = 6;
        hdr.outer_ipv6.dscp = hdr.bth.retransmit == 1 ? meta.dscp_retx : meta.dscp_trimmable;
        hdr.outer_ipv6.ecn = ECN_ECT0;
        hdr.outer_ipv6.flow_label = (bit<20>)ev;
        hdr.outer_ipv6.payload_len = hdr.ipv6.payload_len + IPV6_HEADER_BYTES;
        hdr.outer_ipv6.next_hdr = PROTO_IPV6;
        hdr.outer_ipv6.hop_limit = NIC_HOP_LIMIT;
        hdr.outer_ipv6.src_addr = meta.path_src;
        hdr.outer_ipv6.dst_addr = meta.path_carrier;
        hdr.udp.src_port = ev;
        hdr.udp.checksum = 0;
        hdr.ethernet.src_addr = meta.path_smac;
        hdr.ethernet.dst_addr = meta.path_dmac;
        if (meta.host_probe) {
            NIC_COUNT(NIC_TX_PROBE);   // a probe has no PSN
        } else {
            // TNA counts one event per pass: a fallback in 1, the rest in 0.
            if (meta.fallback) {
                NIC_COUNT(NIC_TX_FALLBACK);
            } else {
                NIC_COUNT(NIC_TX_DATA);
            }
        }
    }
}

#endif
