// The plane side (v1model; tna/plane_rx.p4 is TNA's): what arrives from the fabric. Classified by
// the outer DSCP before anything else (a trimmed packet has lost its payload: it is NACKed, never
// delivered); data is acknowledged with a SACK (per-connection cumulative PSN + 64-bit bitmap, in
// registers); SACKs and NACKs for this NIC's own sends update its EV state; everything the host
// needs is decapsulated and delivered to the host port.
#ifndef P4SRC_NIC_V1MODEL_PLANE_RX_P4
#define P4SRC_NIC_V1MODEL_PLANE_RX_P4

#include "nic_state.p4"
#include "ev_state_change.p4"
#include "loss_injector.p4"
#include "ev_set.p4"

control PlaneRx(inout nic_headers_t hdr, inout nic_metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    LossInjector() loss_injector_stage;
    EvMarkBad() mark_bad;
    EvProbeAnswered() probe_answered;
    EvLateArrival() late_arrival;
#include "../rx_tables.p4"

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
        } else if (standard_metadata.checksum_error == 1
                   && hdr.outer_ipv6.dscp != meta.dscp_trimmed
                   && hdr.outer_ipv6.dscp != meta.dscp_trimmed_lasthop) {
            // Corrupt on the way (NicVerifyChecksum): not acknowledged, not delivered; the
            // sender's loss detection resends it. (A trimmed packet's checksum is 0: its payload
            // is gone. It only asks for a resend.)
            nic_counter.count(NIC_RX_CORRUPT);
        } else if (!known_qp) {
            nic_counter.count(NIC_RX_UNKNOWN_QP);
        } else if (hdr.seth.isValid() || hdr.neth.isValid()) {
            // Feedback for what this NIC sent: the reflected compact EV names the slot, and
            // the peer's port-state bitmap says which of its planes can still receive (a port
            // back up is simply a bit clear in the next SACK or NACK).
            bit<32> entropy = hdr.seth.isValid() ? hdr.seth.entropy : hdr.neth.entropy;
            // Nothing is believed that names what this NIC never sent: a PSN at or past the one
            // after the furthest PSN the host handed over (a probe's answer before any data
            // names the PSN before the first: nothing), or an EV outside the connection's set.
            bit<32> sent;
            tx_psn_next.read(sent, (bit<32>)meta.conn);
            bool ghost = nic_ghost_feedback(
                sent, hdr.seth.isValid() ? hdr.seth.cack_psn : hdr.neth.nack_psn,
                hdr.seth.isValid() && hdr.seth.probe_response == 1);
            if (ghost || !nic_ev_in_set(meta.ev_mask, meta.backups, meta.planes,
                                        (bit<16>)entropy[7:0])) {
                nic_counter.count(NIC_RX_FORGED);   // not delivered, no EV state touched
            } else {
                peer_port_state.write((bit<32>)meta.conn, hdr.seth.isValid()
                                      ? hdr.seth.port_state : hdr.neth.port_state);
                meta.ev = entropy[7:0];
                cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
                bit<2> state;
                ev_state.read(state, cell);
                bool skip = (hdr.seth.isValid() && hdr.seth.m == SACK_M_SKIP_ONCE) ||
                            (hdr.neth.isValid() && hdr.neth.nack_reason == NACK_TRIMMED);
                bool bad = hdr.seth.isValid() && hdr.seth.m == SACK_M_ALWAYS_SKIP;
                if (hdr.seth.isValid() && hdr.seth.m == SACK_M_SKIP_ONCE) {
                    ev_ce_at.write(cell, meta.now_us);   // its path queues (the bad path's test)
                }
                if (skip) {
                    // Told to step aside now (the SKIP below; a probe answer or a late
                    // arrival with CE).
                    ev_skip_at.write(cell, meta.now_us);
                }
                bool undone = false;
                bit<16> lost_gap = 0;
                if (hdr.seth.isValid() && hdr.seth.probe_response == 0 && !bad) {
                    // The packet it acknowledges came over this EV: was its loss reported?
                    bit<24> acked = nic_sack_psn(hdr.seth.cack_psn, hdr.seth.ack_psn_offset);
                    late_arrival.apply(meta, acked, hdr.seth.m, state, undone);
                    // And the PSN this EV carried just before it (the path keeps their order):
                    // not arrived by the SACK's own account, it is lost. The host is told, in
                    // the SETH's spdcid (0 on the wire: MRC has no PDCs), as the gap back to
                    // it. (Not for a connection that never passes an EV over: oblivious
                    // spraying keeps no path's order.)
                    bit<16> gap;
                    psn_gap.read(gap, (bit<32>)meta.conn * PSN_WINDOW + (bit<32>)acked[9:0]);
                    bit<8> place = nic_sack_place(nic_gap_back(acked, gap), hdr.seth.cack_psn);
                    if (nic_overtaken(hdr.seth, gap, place != 0,
                                      ((hdr.seth.sack_bitmap >> (place - 1)) & 1) == 1,
                                      meta.ev_min_active, meta.ev_mask)) {
                        lost_gap = gap;   // (counted by the host: TNA counts one event a pass)
                    }
                }
                if (hdr.seth.isValid() && hdr.seth.probe_response == 1) {
                    probe_answered.apply(meta, hdr.seth.m);
                } else if (undone) {
                    // back in service (GOOD, or SKIP for an ECN echo)
                } else if (skip && state == EV_GOOD && meta.ev_min_active <= meta.ev_mask) {
                    // (A connection whose floor is its whole EV set never passes one over.)
                    to_skip();
                } else if (bad) {
                    mark_bad.apply(meta, false, 0);
                }
                nic_counter.count(hdr.seth.isValid() ? NIC_RX_SACK : NIC_RX_NACK);
                meta.rx_deliver = true;   // the host transport retransmits and completes
                if (hdr.seth.isValid()) {
                    hdr.seth.spdcid = lost_gap;   // (whatever the wire said: 0 but this note)
                }
            }
        } else if (hdr.peth.isValid() && hdr.bth.opcode == OP_PROBE) {
            // (An EV report, OP_EV_REPORT, is the host's to its own NIC: malformed here.)
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
            } else if (!rx_r_key.apply().hit) {
                nic_counter.count(NIC_RX_BAD_R_KEY);   // not its QP's memory: not acknowledged
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
