// The plane side: what arrives from the fabric. Classified by the outer DSCP before anything
// else (a trimmed packet has lost its payload: it is NACKed, never delivered); data is
// acknowledged with a SACK (per-connection cumulative PSN + 64-bit bitmap, in registers);
// SACKs and NACKs for this NIC's own sends update its EV state; everything the host needs is
// decapsulated and delivered to the host port.
#ifndef P4SRC_NIC_PLANE_RX_P4
#define P4SRC_NIC_PLANE_RX_P4

#include "nic_state.p4"
#include "ev_state_change.p4"
#include "loss_injector.p4"

control PlaneRx(inout nic_headers_t hdr, inout nic_metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    LossInjector() loss_injector_stage;
    EvMarkBad() mark_bad;
    EvProbeAnswered() probe_answered;
    @name(".set_rx_plane")
    action set_rx_plane(bit<3> plane) {
        meta.rx_plane = plane;
        meta.plane_port = true;
    }

    // Why: which plane a packet came in on (feedback goes back on the same plane).
    // Installs: one entry per plane port. No entry: not a plane port, dropped.
    @name(".port_plane")
    table port_plane {
        key = { standard_metadata.ingress_port : exact @name("port"); }
        actions = { set_rx_plane; @defaultonly NoAction; }
        default_action = NoAction();
        size = NIC_PLANES;
    }

    @name(".set_local_qp")
    action set_local_qp(bit<16> conn, bit<16> profile, bit<8> ev_mask, bit<8> planes,
                        bit<8> backups, bit<8> ev_min_active, bit<8> probe_successes,
                        bit<24> initial_psn, bit<24> peer_qp) {
        meta.conn = conn;
        meta.profile = profile;
        meta.ev_mask = ev_mask;
        meta.planes = planes;
        meta.backups = backups;
        meta.ev_min_active = ev_min_active;
        meta.probe_successes = probe_successes;
        meta.rx_initial_psn = initial_psn;
        meta.fb_qp = peer_qp;
    }

    // Why: packets for this NIC name its QP: data (this NIC receives) and SACKs/NACKs (for what
    // it sent). The entry gives the connection's state index, its EV profile (as tx_connection:
    // ev_count - 1, planes, backups per plane, ev_min_active; probe answers that bring an EV
    // back), the first PSN the peer sends and the peer's QP (what feedback is addressed to).
    // Installs: one entry per connection.
    @name(".local_qp")
    table local_qp {
        key = { hdr.bth.dest_qp : exact @name("dest_qp"); }
        actions = { set_local_qp; @defaultonly NoAction; }
        default_action = NoAction();
        size = NIC_CONNECTIONS;
    }

    action set_trailing_ones(bit<8> n) {
        meta.trailing_ones = n;
    }

    // How far the cumulative PSN moves: the number of consecutive PSNs from the expected one
    // that have arrived (the trailing ones of the bitmap). Fixed: no control-plane entries.
    table rx_trailing_ones {
        key = { meta.rx_bits : ternary; }
        actions = { set_trailing_ones; }
        const entries = {
            64w0x0000000000000000 &&& 64w0x0000000000000001 : set_trailing_ones(0);
            64w0x0000000000000001 &&& 64w0x0000000000000003 : set_trailing_ones(1);
            64w0x0000000000000003 &&& 64w0x0000000000000007 : set_trailing_ones(2);
            64w0x0000000000000007 &&& 64w0x000000000000000f : set_trailing_ones(3);
            64w0x000000000000000f &&& 64w0x000000000000001f : set_trailing_ones(4);
            64w0x000000000000001f &&& 64w0x000000000000003f : set_trailing_ones(5);
            64w0x000000000000003f &&& 64w0x000000000000007f : set_trailing_ones(6);
            64w0x000000000000007f &&& 64w0x00000000000000ff : set_trailing_ones(7);
            64w0x00000000000000ff &&& 64w0x00000000000001ff : set_trailing_ones(8);
            64w0x00000000000001ff &&& 64w0x00000000000003ff : set_trailing_ones(9);
            64w0x00000000000003ff &&& 64w0x00000000000007ff : set_trailing_ones(10);
            64w0x00000000000007ff &&& 64w0x0000000000000fff : set_trailing_ones(11);
            64w0x0000000000000fff &&& 64w0x0000000000001fff : set_trailing_ones(12);
            64w0x0000000000001fff &&& 64w0x0000000000003fff : set_trailing_ones(13);
            64w0x0000000000003fff &&& 64w0x0000000000007fff : set_trailing_ones(14);
            64w0x0000000000007fff &&& 64w0x000000000000ffff : set_trailing_ones(15);
            64w0x000000000000ffff &&& 64w0x000000000001ffff : set_trailing_ones(16);
            64w0x000000000001ffff &&& 64w0x000000000003ffff : set_trailing_ones(17);
            64w0x000000000003ffff &&& 64w0x000000000007ffff : set_trailing_ones(18);
            64w0x000000000007ffff &&& 64w0x00000000000fffff : set_trailing_ones(19);
            64w0x00000000000fffff &&& 64w0x00000000001fffff : set_trailing_ones(20);
            64w0x00000000001fffff &&& 64w0x00000000003fffff : set_trailing_ones(21);
            64w0x00000000003fffff &&& 64w0x00000000007fffff : set_trailing_ones(22);
            64w0x00000000007fffff &&& 64w0x0000000000ffffff : set_trailing_ones(23);
            64w0x0000000000ffffff &&& 64w0x0000000001ffffff : set_trailing_ones(24);
            64w0x0000000001ffffff &&& 64w0x0000000003ffffff : set_trailing_ones(25);
            64w0x0000000003ffffff &&& 64w0x0000000007ffffff : set_trailing_ones(26);
            64w0x0000000007ffffff &&& 64w0x000000000fffffff : set_trailing_ones(27);
            64w0x000000000fffffff &&& 64w0x000000001fffffff : set_trailing_ones(28);
            64w0x000000001fffffff &&& 64w0x000000003fffffff : set_trailing_ones(29);
            64w0x000000003fffffff &&& 64w0x000000007fffffff : set_trailing_ones(30);
            64w0x000000007fffffff &&& 64w0x00000000ffffffff : set_trailing_ones(31);
            64w0x00000000ffffffff &&& 64w0x00000001ffffffff : set_trailing_ones(32);
            64w0x00000001ffffffff &&& 64w0x00000003ffffffff : set_trailing_ones(33);
            64w0x00000003ffffffff &&& 64w0x00000007ffffffff : set_trailing_ones(34);
            64w0x00000007ffffffff &&& 64w0x0000000fffffffff : set_trailing_ones(35);
            64w0x0000000fffffffff &&& 64w0x0000001fffffffff : set_trailing_ones(36);
            64w0x0000001fffffffff &&& 64w0x0000003fffffffff : set_trailing_ones(37);
            64w0x0000003fffffffff &&& 64w0x0000007fffffffff : set_trailing_ones(38);
            64w0x0000007fffffffff &&& 64w0x000000ffffffffff : set_trailing_ones(39);
            64w0x000000ffffffffff &&& 64w0x000001ffffffffff : set_trailing_ones(40);
            64w0x000001ffffffffff &&& 64w0x000003ffffffffff : set_trailing_ones(41);
            64w0x000003ffffffffff &&& 64w0x000007ffffffffff : set_trailing_ones(42);
            64w0x000007ffffffffff &&& 64w0x00000fffffffffff : set_trailing_ones(43);
            64w0x00000fffffffffff &&& 64w0x00001fffffffffff : set_trailing_ones(44);
            64w0x00001fffffffffff &&& 64w0x00003fffffffffff : set_trailing_ones(45);
            64w0x00003fffffffffff &&& 64w0x00007fffffffffff : set_trailing_ones(46);
            64w0x00007fffffffffff &&& 64w0x0000ffffffffffff : set_trailing_ones(47);
            64w0x0000ffffffffffff &&& 64w0x0001ffffffffffff : set_trailing_ones(48);
            64w0x0001ffffffffffff &&& 64w0x0003ffffffffffff : set_trailing_ones(49);
            64w0x0003ffffffffffff &&& 64w0x0007ffffffffffff : set_trailing_ones(50);
            64w0x0007ffffffffffff &&& 64w0x000fffffffffffff : set_trailing_ones(51);
            64w0x000fffffffffffff &&& 64w0x001fffffffffffff : set_trailing_ones(52);
            64w0x001fffffffffffff &&& 64w0x003fffffffffffff : set_trailing_ones(53);
            64w0x003fffffffffffff &&& 64w0x007fffffffffffff : set_trailing_ones(54);
            64w0x007fffffffffffff &&& 64w0x00ffffffffffffff : set_trailing_ones(55);
            64w0x00ffffffffffffff &&& 64w0x01ffffffffffffff : set_trailing_ones(56);
            64w0x01ffffffffffffff &&& 64w0x03ffffffffffffff : set_trailing_ones(57);
            64w0x03ffffffffffffff &&& 64w0x07ffffffffffffff : set_trailing_ones(58);
            64w0x07ffffffffffffff &&& 64w0x0fffffffffffffff : set_trailing_ones(59);
            64w0x0fffffffffffffff &&& 64w0x1fffffffffffffff : set_trailing_ones(60);
            64w0x1fffffffffffffff &&& 64w0x3fffffffffffffff : set_trailing_ones(61);
            64w0x3fffffffffffffff &&& 64w0x7fffffffffffffff : set_trailing_ones(62);
            64w0x7fffffffffffffff &&& 64w0xffffffffffffffff : set_trailing_ones(63);
            64w0xffffffffffffffff &&& 64w0xffffffffffffffff : set_trailing_ones(64);
        }
    }

    bit<32> cell;

    action to_skip() {
        ev_state.write(cell, EV_SKIP);
        nic_counter.count(NIC_EV_SKIPPED);
    }

    // The receiver's cumulative point and bitmap as a SACK reports them (the congestion mark
    // is set in the apply block: no conditionals inside actions).
    action report_window(bit<24> expected, bit<64> bits, bit<24> psn) {
        meta.fb_cack = expected - 1 + meta.rx_initial_psn;
        meta.fb_bitmap = bits;
        meta.fb_ack_offset = (bit<16>)(psn - (expected - 1));
        meta.rx_sack = true;
    }

    apply {
        port_plane.apply();
        bool known_qp = local_qp.apply().hit;
        bool injected = false;
        if (meta.plane_port) {
            loss_injector_stage.apply(hdr, meta, standard_metadata, injected);
        }
        if (injected) {
            // dropped on arrival, as a lossy link would
        } else if (!meta.plane_port || !hdr.outer_ipv6.isValid() || !hdr.bth.isValid()) {
            meta.malformed = true;
        } else if (!known_qp) {
            nic_counter.count(NIC_RX_UNKNOWN_QP);
        } else if (hdr.seth.isValid() || hdr.neth.isValid()) {
            // Feedback for what this NIC sent: the reflected compact EV names the slot, and
            // the peer's port-state bitmap says which of its planes can still receive (a port
            // back up is simply a bit clear in the next SACK or NACK).
            bit<32> entropy = hdr.seth.isValid() ? hdr.seth.entropy : hdr.neth.entropy;
            peer_port_state.write((bit<32>)meta.conn,
                                  hdr.seth.isValid() ? hdr.seth.port_state : hdr.neth.port_state);
            meta.ev = entropy[7:0];
            cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
            bit<2> state;
            ev_state.read(state, cell);
            bool skip = (hdr.seth.isValid() && hdr.seth.m == SACK_M_SKIP_ONCE) ||
                        (hdr.neth.isValid() && hdr.neth.nack_reason == NACK_TRIMMED);
            bool bad = hdr.seth.isValid() && hdr.seth.m == SACK_M_ALWAYS_SKIP;
            if (hdr.seth.isValid() && hdr.seth.probe_response == 1) {
                probe_answered.apply(meta, hdr.seth.m);
            } else if (skip && state == EV_GOOD) {
                to_skip();
            } else if (bad) {
                mark_bad.apply(meta, false);
            }
            nic_counter.count(hdr.seth.isValid() ? NIC_RX_SACK : NIC_RX_NACK);
            meta.rx_deliver = true;   // the host transport retransmits and completes
        } else if (hdr.peth.isValid()) {
            // A probe of one of the peer's paths: answer with a SACK (PR=1) of the window as it
            // is; a probe consumes no PSN and carries nothing for the host.
            bit<24> expected;
            bit<64> bits;
            rx_expected.read(expected, (bit<32>)meta.conn);
            rx_bitmap.read(bits, (bit<32>)meta.conn);
            meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
            report_window(expected, bits, expected - 1);
            meta.fb_pr = 1;
            nic_counter.count(NIC_RX_PROBE);
        } else if (hdr.meth.isValid()) {
            bit<6> dscp = hdr.outer_ipv6.dscp;
            meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
            if (dscp == meta.dscp_trimmed || dscp == meta.dscp_trimmed_lasthop) {
                // The payload was cut on the way: ask for this PSN again at once.
                meta.rx_nack = true;
                meta.nack_reason = dscp == meta.dscp_trimmed ? NACK_TRIMMED : NACK_TRIMMED_LASTHOP;
                nic_counter.count(NIC_RX_TRIMMED);
            } else {
                // The receiver's window: PSNs relative to the connection's initial PSN.
                bit<32> rc = (bit<32>)meta.conn;
                bit<24> psn = hdr.bth.psn - meta.rx_initial_psn;
                bit<24> expected;
                bit<64> bits;
                rx_expected.read(expected, rc);
                rx_bitmap.read(bits, rc);
                bit<24> ahead = psn - expected;
                bool duplicate = false;
                if (ahead == 0) {
                    meta.rx_bits = bits | 1;
                    rx_trailing_ones.apply();
                    expected = expected + (bit<24>)meta.trailing_ones;
                    bits = meta.trailing_ones == 64 ? 64w0 : meta.rx_bits >> meta.trailing_ones;
                } else if (ahead < 64) {
                    duplicate = ((bits >> (bit<8>)ahead) & 1) == 1;
                    bits = bits | (64w1 << (bit<8>)ahead);
                } else if (ahead >= 0x800000) {
                    duplicate = true;   // behind the window: acknowledged already
                } else {
                    meta.rx_nack = true;   // beyond the bitmap
                    meta.nack_reason = NACK_PSN_OOR_WINDOW;
                    nic_counter.count(NIC_RX_OUT_OF_WINDOW);
                }
                if (!meta.rx_nack) {
                    rx_expected.write(rc, expected);
                    rx_bitmap.write(rc, bits);
                    report_window(expected, bits, psn);
                    // Duplicates are SACKed (the first SACK may have been lost), not delivered.
                    meta.rx_deliver = !duplicate;
                    nic_counter.count(duplicate ? NIC_RX_DUPLICATE : NIC_RX_DATA);
                }
            }
        } else {
            meta.malformed = true;   // not an MRC data or feedback packet
        }
        if (meta.rx_sack) {
            meta.fb_m = hdr.outer_ipv6.ecn == ECN_CE ? SACK_M_SKIP_ONCE : SACK_M_NONE;
        }
        if (meta.rx_nack || meta.rx_sack) {
            // Feedback goes back the way the packet came: its outer source is the sender's
            // return address through the same plane and T1 (path.p4), so a SACK or NACK fails
            // exactly when its data's path does, and the receiver needs no path table.
            meta.reflect = true;
            meta.return_addr = hdr.outer_ipv6.src_addr;
            meta.plane = meta.rx_plane;
            meta.need_path = true;
        }
    }
}

#endif
