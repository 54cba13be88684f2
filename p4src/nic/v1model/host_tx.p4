// Host TX (v1model; tna/host_tx.p4 is TNA's): a packet from the host transport (Ethernet | IPv6 |
// UDP | BTH | METH | RETH | payload) gets its connection, an EV (a slot of the connection's EV set)
// and the SRv6 encapsulation.
#ifndef P4SRC_NIC_V1MODEL_HOST_TX_P4
#define P4SRC_NIC_V1MODEL_HOST_TX_P4

#include "nic_state.p4"
#include "port_state.p4"
#include "ev_set.p4"

// A look's state for a GOOD EV on the connection's bad path (bad_path): passed over as an
// ASSUMED_BAD one is (its own state is left GOOD).
const bit<2> EV_ON_BAD_PATH = 3;

// After a look: a GOOD EV last seen on the connection's bad path counts as not GOOD; so does,
// for a resend, one never seen on any path while the connection has a bad path (a backup just
// swapped in may run over the failed element too: a resend lost again waits out a second
// reordering allowance, the longest tail a failure leaves).
#define NIC_ON_BAD_PATH() \
    if (state == EV_GOOD && suspect != 0 \
            && (seen == suspect || (seen == 0 && hdr.bth.retransmit == 1))) { \
        state = EV_ON_BAD_PATH; \
        nic_counter.count(NIC_TX_BAD_PATH_PASSED); \
    }

// After a look: a SKIP EV told to step aside more than skip_us ago counts as GOOD (and is GOOD
// again): the queue its mark spoke of is gone by this turn (tx_tables.p4 says why).
#define NIC_SKIP_SPENT() \
    if (state == EV_SKIP && meta.now_us - skip_at > meta.skip_us) { \
        state = EV_GOOD; \
        ev_state.write(cells + (bit<32>)ev, EV_GOOD); \
    }

// One try (EV_TRIES - 1 of them follow the first look): the looked-at EV is not GOOD, so its
// turn goes hand_off slots on, in its plane; a SKIP one sat out this turn and is GOOD again.
#define NIC_TRY_PLANES_OTHER_SLOT() \
    if (state != EV_GOOD) { \
        if (state == EV_SKIP) { \
            ev_state.write(cells + (bit<32>)ev, EV_GOOD); \
        } \
        look((slot + meta.hand_off) & meta.ev_mask); \
        NIC_SKIP_SPENT() \
        NIC_ON_BAD_PATH() \
    }

control HostTx(inout nic_headers_t hdr, inout nic_metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    bit<32> cells;
    bit<2>  state;
    bit<8>  slot;
    bit<8>  ev;
    bit<20> seen;      // the path the looked-at EV last left on (ev_path_seen)
    bit<20> suspect;   // the connection's bad path (bad_path; 0: none)
    bit<32> skip_at;   // when the looked-at EV was last told to step aside (ev_skip_at)

#include "../tx_tables.p4"

    // The EV a slot holds now (slot_ev holds EV ^ slot: 0 is the slot's own EV), and its state.
    action look(bit<8> candidate) {
        slot = candidate;
        bit<8> held;
        slot_ev.read(held, cells + (bit<32>)candidate);
        ev = candidate ^ held;
        ev_state.read(state, cells + (bit<32>)ev);
        ev_path_seen.read(seen, cells + (bit<32>)ev);
        ev_skip_at.read(skip_at, cells + (bit<32>)ev);
    }

    apply {
        if (!tx_connection.apply().hit) {
            // dropped by the default action
        } else if (hdr.bth.opcode == OP_EV_REPORT) {
            // A loss the host's timer found: the EV its PSN left on, or the probed EV.
            meta.host_report = true;
            meta.host_query = (hdr.peth.probe_id & REPORT_QUERY_FLAG) != 0;
            if ((hdr.peth.probe_id & REPORT_PROBE_FLAG) != 0) {
                meta.ev = hdr.peth.probe_id[7:0];
                // (with REPORT_QUERY_FLAG too, bit 14 puts the EV past any set: malformed)
                meta.malformed = !nic_ev_in_set(meta.ev_mask, meta.backups, meta.planes,
                                                (bit<16>)hdr.peth.probe_id[14:0]);
            } else {
                psn_ev.read(meta.ev,
                            (bit<32>)meta.conn * PSN_WINDOW + (bit<32>)hdr.bth.psn[9:0]);
            }
            // The EV's plane has its port down, here or at the peer (EV e is in plane
            // e mod planes): the loss is the port's, which the port-state bitmaps already
            // route around (MRC: a NIC port is the NIC's own matter, not a path's).
            bit<8> peer_down;
            peer_port_state.read(peer_down, (bit<32>)meta.conn);
            bit<8> down = meta.local_down | peer_down;
            meta.report_port_down = (down >> (meta.ev & (meta.planes - 1)))[0:0] == 1;
        } else if (hdr.bth.opcode == OP_PROBE) {
            // The host paces probes of ASSUMED_BAD EVs and names the EV: no rotation, no slot.
            meta.host_probe = true;
            meta.ev = hdr.peth.probe_id[7:0];
            meta.slot_chosen = nic_ev_in_set(meta.ev_mask, meta.backups, meta.planes,
                                             hdr.peth.probe_id);
            meta.malformed = !meta.slot_chosen;   // no such EV: nothing to probe
        } else {
            // Feedback may now name this PSN: the furthest one handed over moves on (a resend
            // counts too: after a restart of this NIC, only resends may be left to teach it).
            bit<32> after = nic_psn_mark(hdr.bth.psn + 1);
            bit<32> sent;
            tx_psn_next.read(sent, (bit<32>)meta.conn);
            if (sent == 0 || after - sent < 0x80000000) {
                tx_psn_next.write((bit<32>)meta.conn, after);
            }
            bit<32> cursor;
            tx_cursor.read(cursor, (bit<32>)meta.conn);
            cells = (bit<32>)meta.conn * EV_SLOTS;
            bit<8> first = (cursor[7:0] + meta.rotation) & meta.ev_mask;
            // Port state first (port_state.p4): the nearest slot of a usable plane.
            bit<8> peer_down;
            peer_port_state.read(peer_down, (bit<32>)meta.conn);
            NIC_PORT_STATE_MOVE(meta.planes, meta.local_down, peer_down, first, usable, move)
            // The cursor moves on past the slot taken: the usable planes share the load equally
            // (the slots of a plane that is down are passed over, their EVs' states untouched).
            tx_cursor.write((bit<32>)meta.conn, cursor + 1 + (bit<32>)move);
            if (move != 0) {
                first = (first + move) & meta.ev_mask;
                nic_counter.count(NIC_TX_PORT_PASSED);
            }
            if (usable == 0) {
                meta.no_port = true;   // every port of this NIC is down: the caller drops it
            } else {
                bad_path.read(suspect, (bit<32>)meta.conn);
                look(first);
                NIC_SKIP_SPENT()
                NIC_ON_BAD_PATH()
                // Tries 2..EV_TRIES. An EV that is not GOOD hands its turn to a slot of its own
                // plane (hand_off slots on; set_connection says why): the planes keep equal
                // shares while every port is up (a receiver's plane ports see equal loads;
                // mrc-srv6.md §3.3). A SKIP EV (a CE echo, an in-fabric trim) sits out this
                // one turn and is GOOD again: ECN moves the flow to its plane's other paths
                // (the paper's Fig. 14). An ASSUMED_BAD EV no backup replaced, or one on the
                // bad path, stays out.
                NIC_TRY_PLANES_OTHER_SLOT()
                NIC_TRY_PLANES_OTHER_SLOT()
                NIC_TRY_PLANES_OTHER_SLOT()
                if (state != EV_GOOD) {
                    // Every try hit a SKIP or ASSUMED_BAD EV: send on the first (usable) slot's
                    // anyway (a congested or suspect path beats no path; ev_min_active keeps
                    // this rare).
                    if (state == EV_SKIP) { ev_state.write(cells + (bit<32>)ev, EV_GOOD); }
                    look(first);
                    meta.fallback = true;
                } else if (meta.ev_min_active <= meta.ev_mask) {
                    // This NIC's own port backlog (plane_backlog, as the egress last saw it): a
                    // plane whose port holds NIC_PORT_BALANCE_MARGIN packets more than the next
                    // usable plane's gives this packet to that plane's next slot if its EV is
                    // GOOD — a slower or busier port gets fewer packets, as its share of the
                    // line rate. (A connection whose floor is its whole EV set, ev_min_active
                    // = ev_count, passes nothing over: oblivious spraying.)
                    bit<8> after = slot + 1;
                    after = (after + nic_usable_step(twice, meta.planes, after)) & meta.ev_mask;
                    bit<8> mine = slot & (meta.planes - 1);
                    bit<8> theirs = after & (meta.planes - 1);
                    bit<19> mine_queued;
                    bit<19> theirs_queued;
                    plane_backlog.read(mine_queued, (bit<32>)mine);
                    plane_backlog.read(theirs_queued, (bit<32>)theirs);
                    if (mine != theirs
                            && mine_queued > theirs_queued + NIC_PORT_BALANCE_MARGIN) {
                        bit<8> kept_slot = slot;
                        bit<8> kept_ev = ev;
                        look(after);
                        NIC_SKIP_SPENT()
                        NIC_ON_BAD_PATH()
                        if (state == EV_GOOD) {
                            nic_counter.count(NIC_TX_PORT_BALANCED);
                        } else {
                            slot = kept_slot;   // not GOOD: the slot chosen first after all
                            ev = kept_ev;
                        }
                    }
                }
                // One more packet queued at that plane's port, until its egress says what
                // is left there: the next packet's choice sees this one.
                bit<32> port_cell = (bit<32>)(slot & (meta.planes - 1));
                bit<19> queued;
                plane_backlog.read(queued, port_cell);
                plane_backlog.write(port_cell, queued + 1);
                meta.slot = slot;
                meta.ev = ev;
                meta.slot_chosen = true;
            }
        }
        if (meta.slot_chosen) {
            ev_path.apply();   // once: p4c applies each table at most once
        }
    }
}

// A query from the host about a PSN in flight (an OP_EV_REPORT with REPORT_QUERY_FLAG; meta.ev:
// the EV its latest transmission left on, psn_ev): is that EV out of service now — ASSUMED_BAD,
// on the connection's bad path, or in a plane whose port is down at either end? Then what went
// on it is lost with it (a blackhole, a cut): the query goes back to the host naming the EV, and
// the host resends the packet at once instead of after its reordering allowance (and reports
// its loss when the EV is GOOD, only passed over on the bad path: ANSWER_EV_GOOD). Else dropped.
control HostQuery(inout nic_headers_t hdr, in nic_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        bit<32> cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
        bit<2> state;
        ev_state.read(state, cell);
        bit<20> seen;
        ev_path_seen.read(seen, cell);
        bit<20> suspect;
        bad_path.read(suspect, (bit<32>)meta.conn);
        if (state == EV_ASSUMED_BAD || meta.report_port_down) {
            hdr.peth.probe_id = REPORT_QUERY_FLAG | (bit<16>)meta.ev;
            standard_metadata.egress_spec = NIC_HOST_PORT;
            nic_counter.count(NIC_QUERY_OUT);
        } else if (suspect != 0 && seen == suspect) {
            // Its own state says nothing yet: the host's report of this loss will.
            hdr.peth.probe_id = REPORT_QUERY_FLAG | ANSWER_EV_GOOD | (bit<16>)meta.ev;
            standard_metadata.egress_spec = NIC_HOST_PORT;
            nic_counter.count(NIC_QUERY_OUT);
        } else {
            mark_to_drop(standard_metadata);
            nic_counter.count(NIC_QUERY_IN_SERVICE);
        }
    }
}

// The outer header of a data packet, once the path stage has filled meta's path fields.
control HostTxEncap(inout nic_headers_t hdr, inout nic_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
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
        // The path this EV takes now (the EV choice reads it before ev_path, and a loss
        // pinned on the EV names it).
        ev_path_seen.write((bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev,
                           PATH_SEEN | (bit<20>)meta.plane << 16 | (bit<20>)meta.t1_usid);
        if (meta.host_probe) {
            nic_counter.count(NIC_TX_PROBE);   // a probe has no PSN
        } else {
            // Remembered so that a loss the host reports by PSN names this EV.
            psn_ev.write((bit<32>)meta.conn * PSN_WINDOW + (bit<32>)hdr.bth.psn[9:0], meta.ev);
            // And which PSN went on this EV just before it (its SACK will say whether that one
            // arrived: the path keeps their order).
            bit<32> ev_cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
            bit<32> before;
            ev_last_psn.read(before, ev_cell);
            ev_last_psn.write(ev_cell, nic_psn_mark(hdr.bth.psn));
            psn_gap.write((bit<32>)meta.conn * PSN_WINDOW + (bit<32>)hdr.bth.psn[9:0],
                          nic_psn_gap(hdr.bth.psn, before));
            nic_counter.count(NIC_TX_DATA);
        }
    }
}

#endif
