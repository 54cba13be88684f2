// Host TX: a packet from the host transport (Ethernet | IPv6 | UDP | BTH | METH | RETH | payload)
// gets its connection, an EV (a slot of the connection's EV set) and the SRv6 encapsulation.
#ifndef P4SRC_NIC_HOST_TX_P4
#define P4SRC_NIC_HOST_TX_P4

#include "nic_state.p4"

control HostTx(inout nic_headers_t hdr, inout nic_metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    bit<32> cells;
    bit<2>  state;
    bit<8>  slot;
    bit<8>  ev;

    @name(".set_connection")
    action set_connection(bit<16> conn, bit<16> profile, bit<8> ev_mask, bit<8> planes,
                          bit<8> backups, bit<8> ev_min_active, bit<16> dst_row,
                          bit<16> dst_ua) {
        meta.conn = conn;
        meta.profile = profile;
        meta.ev_mask = ev_mask;
        meta.planes = planes;
        meta.backups = backups;
        meta.ev_min_active = ev_min_active;
        meta.dst_row = dst_row;
        meta.dst_ua = dst_ua;
    }

    @name(".tx_no_connection")
    action tx_no_connection() {
        mark_to_drop(standard_metadata);
        nic_counter.count(NIC_TX_NO_CONNECTION);
    }

    // Why: the host names its peer by address and QP; this gives the connection's state index,
    // its EV profile (ev_count - 1 as a mask, ev_count a power of two and a multiple of
    // `planes`, itself a power of two; EV e is in plane e mod planes), its backups per plane and
    // ev_min_active, and the destination's T0 row and port uA for the path templates.
    // Installs: one entry per connection this NIC sends on.
    @name(".tx_connection")
    table tx_connection {
        key = {
            hdr.ipv6.dst_addr : exact @name("dst_addr");
            hdr.bth.dest_qp   : exact @name("dest_qp");
        }
        actions = { set_connection; @defaultonly tx_no_connection; }
        default_action = tx_no_connection();
        size = NIC_CONNECTIONS;
    }

    @name(".set_path")
    action set_path(bit<3> plane, bit<16> t1_usid) {
        meta.plane = plane;
        meta.t1_usid = t1_usid;
    }

    @name(".deny_path")
    action deny_path() {
        meta.denied = true;
    }

    // Why: an EV is a path (plane, T1); DENIED EVs and path rewrites are entries here, so the
    // controller changes paths with table writes only. Installs: one entry per (profile, EV),
    // active EVs and backups; no entry, or deny_path, is DENIED.
    @name(".ev_path")
    table ev_path {
        key = {
            meta.profile : exact @name("profile");
            meta.ev      : exact @name("ev");
        }
        actions = { set_path; deny_path; }
        default_action = deny_path();
        size = NIC_TABLE_SIZE;
    }

    // The EV a slot holds now (slot_ev holds EV ^ slot: 0 is the slot's own EV), and its state.
    action look(bit<8> candidate) {
        slot = candidate;
        bit<8> held;
        slot_ev.read(held, cells + (bit<32>)candidate);
        ev = candidate ^ held;
        ev_state.read(state, cells + (bit<32>)ev);
    }

    apply {
        if (!tx_connection.apply().hit) {
            // dropped by the default action
        } else if (hdr.bth.opcode == OP_EV_REPORT) {
            // A loss the host's timer found: the EV its PSN left on, or the probed EV.
            meta.host_report = true;
            if ((hdr.peth.probe_id & REPORT_PROBE_FLAG) != 0) {
                meta.ev = hdr.peth.probe_id[7:0];
            } else {
                psn_ev.read(meta.ev,
                            (bit<32>)meta.conn * PSN_WINDOW + (bit<32>)hdr.bth.psn[9:0]);
            }
        } else if (hdr.bth.opcode == OP_PROBE) {
            // The host paces probes of ASSUMED_BAD EVs and names the EV: no rotation, no slot.
            meta.host_probe = true;
            meta.ev = hdr.peth.probe_id[7:0];
            meta.slot_chosen = true;
        } else {
            bit<32> cursor;
            tx_cursor.read(cursor, (bit<32>)meta.conn);
            cells = (bit<32>)meta.conn * EV_SLOTS;
            bit<8> first = cursor[7:0] & meta.ev_mask;
            // Port state first: a plane is usable when its port is up at both ends (this NIC's
            // local_port_state, the peer's bitmap from its SACKs and NACKs). No plane usable:
            // the peer's bitmap is ignored (it can only be refreshed by feedback to packets
            // sent, so it must not stop them all); no local port up either: nothing is sent.
            bit<8> peer_down;
            peer_port_state.read(peer_down, (bit<32>)meta.conn);
            bit<8> in_use = (bit<8>)((16w1 << meta.planes) - 1);   // bits of planes 0..planes-1
            bit<8> usable = ~(meta.local_down | peer_down) & in_use;
            if (usable == 0) {
                usable = ~meta.local_down & in_use;
            }
            // Bit d of `ahead`: plane (first's plane + d) mod planes is usable (two turns of
            // the planes side by side, shifted by first's plane). Slot first + d is in that
            // plane (ev_count is a multiple of planes), so the nearest usable plane's slot is
            // first + move — bounded by 8 planes, no loop.
            bit<16> twice = (bit<16>)usable | ((bit<16>)usable << meta.planes);
            bit<16> ahead = twice >> (first & (meta.planes - 1));
            bit<8> move = 0;
            if (ahead[0:0] == 1) {
                move = 0;
            } else if (ahead[1:1] == 1) {
                move = 1;
            } else if (ahead[2:2] == 1) {
                move = 2;
            } else if (ahead[3:3] == 1) {
                move = 3;
            } else if (ahead[4:4] == 1) {
                move = 4;
            } else if (ahead[5:5] == 1) {
                move = 5;
            } else if (ahead[6:6] == 1) {
                move = 6;
            } else if (ahead[7:7] == 1) {
                move = 7;
            }
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
                look(first);
                // Tries 2..EV_TRIES: the next slot of the same plane. A SKIP EV passed over is
                // GOOD again: it sat out one rotation.
                if (state != EV_GOOD) {
                    if (state == EV_SKIP) { ev_state.write(cells + (bit<32>)ev, EV_GOOD); }
                    look((slot + meta.planes) & meta.ev_mask);
                }
                if (state != EV_GOOD) {
                    if (state == EV_SKIP) { ev_state.write(cells + (bit<32>)ev, EV_GOOD); }
                    look((slot + meta.planes) & meta.ev_mask);
                }
                if (state != EV_GOOD) {
                    if (state == EV_SKIP) { ev_state.write(cells + (bit<32>)ev, EV_GOOD); }
                    look((slot + meta.planes) & meta.ev_mask);
                }
                if (state != EV_GOOD) {
                    // Every try hit a SKIP or ASSUMED_BAD EV: send on the first (usable) slot's
                    // anyway (a congested or suspect path beats no path; ev_min_active keeps
                    // this rare).
                    if (state == EV_SKIP) { ev_state.write(cells + (bit<32>)ev, EV_GOOD); }
                    look(first);
                    meta.fallback = true;
                }
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
        if (meta.host_probe) {
            nic_counter.count(NIC_TX_PROBE);   // a probe has no PSN
        } else {
            // Remembered so that a loss the host reports by PSN names this EV.
            psn_ev.write((bit<32>)meta.conn * PSN_WINDOW + (bit<32>)hdr.bth.psn[9:0], meta.ev);
            nic_counter.count(NIC_TX_DATA);
        }
    }
}

#endif
