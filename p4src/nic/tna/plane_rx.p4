// The plane side (TNA; v1model/plane_rx.p4 is v1model's): what arrives from the fabric, with the
// same tables (rx_tables.p4) and the same decisions as v1model's. Each packet that v1model counts
// twice, or whose state v1model reads and writes more than once, takes two ingress passes: the
// first classifies it and changes the state it can, the second (resubmitted, meta.pass_kind)
// finishes: the SACK or NACK (a mirrored copy the egress builds), the EV's move to ASSUMED_BAD,
// the second count. tna/mrc_nic.p4 has the whole design.
#ifndef P4SRC_NIC_TNA_PLANE_RX_P4
#define P4SRC_NIC_TNA_PLANE_RX_P4

#include "nic_state.p4"
#include "ev_state_change.p4"
#include "loss_injector.p4"

control PlaneRx(inout nic_headers_t hdr, inout nic_metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md) {
    LossInjector() loss_injector_stage;
    EvMarkBadBegin() mark_bad;
    EvMarkBadEnd() mark_bad_end;
    EvProbeAnswered() probe_answered;
#include "../rx_tables.p4"

    bit<32> cell;
    bit<8>  state;            // to_skip: the EV's state before
    bit<8>  port_state;       // the peer's port-state bitmap in its SACK or NACK
    bit<24> rx_psn;           // the arriving PSN, relative to the connection's initial PSN
    bit<64> set_mask;         // its bit in the receive ring (PSN mod 64)
    bit<64> clear_mask;       // the ring bits the cumulative point moved past

    RegisterAction<bit<8>, bit<32>, bit<8>>(peer_port_state) peer_write = {
        void apply(inout bit<8> value) {
            value = port_state;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(ev_state) state_skip = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if (value == (bit<8>)EV_GOOD) {
                value = (bit<8>)EV_SKIP;
            }
        }
    };
    // The cumulative point moves on by one when the PSN it waits for arrives; the PSNs after it
    // that had arrived already are passed in the second pass (expected_catch_up).
    RegisterAction<bit<32>, bit<32>, bit<32>>(rx_expected) expected_advance = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (value == (bit<32>)rx_psn) {
                value = (bit<32>)((bit<24>)value + 1);
            }
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(rx_expected) expected_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(rx_expected) expected_catch_up = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = (bit<32>)((bit<24>)value + (bit<24>)meta.resub.count);
            rv = value;
        }
    };
    // The ring: set the arriving PSN's bit (rv: the ring before), read it, clear the run the
    // cumulative point passed (rv: the ring after). 32-bit operations on each half.
    RegisterAction<rx_ring_t, bit<32>, bit<64>>(rx_bitmap) ring_set = {
        void apply(inout rx_ring_t value, out bit<64> rv) {
            rv = value.hi ++ value.lo;
            value.lo = value.lo | set_mask[31:0];
            value.hi = value.hi | set_mask[63:32];
        }
    };
    RegisterAction<rx_ring_t, bit<32>, bit<64>>(rx_bitmap) ring_read = {
        void apply(inout rx_ring_t value, out bit<64> rv) {
            rv = value.hi ++ value.lo;
        }
    };
    RegisterAction<rx_ring_t, bit<32>, bit<64>>(rx_bitmap) ring_clear = {
        void apply(inout rx_ring_t value, out bit<64> rv) {
            value.lo = value.lo & ~clear_mask[31:0];
            value.hi = value.hi & ~clear_mask[63:32];
            rv = value.hi ++ value.lo;
        }
    };

    // An EV set to SKIP (ECN echo, TRIMMED NACK) if it was GOOD; `state` is its state before.
    action to_skip() {
        state = state_skip.execute(cell);
    }

    // The receiver's cumulative point and bitmap as a SACK reports them (as v1model's).
    action report_window(bit<24> expected, bit<64> bits, bit<24> psn) {
        meta.fb_cack = expected - 1 + meta.rx_initial_psn;
        meta.fb_bitmap = bits;
        meta.fb_ack_offset = (bit<16>)(psn - (expected - 1));
        meta.rx_sack = true;
    }

    // The first pass asks for a second: why, and what it needs.
    @hidden
    action again(bit<4> kind, bit<8> count) {
        meta.resubmit = true;
        meta.resub.setValid();
        meta.resub.kind = kind;
        meta.resub.move = 0;
        meta.resub.flag = 0;
        meta.resub.slot = 0;
        meta.resub.ev = meta.ev;
        meta.resub.count = count;
        meta.resub.drops = 0;
    }

    apply {
        port_plane.apply();
        bool known_qp = local_qp.apply().hit;
        bool injected = false;
        if (meta.plane_port && meta.pass_kind == RESUB_NONE) {
            loss_injector_stage.apply(hdr, meta, injected);
        }
        rx_psn = hdr.bth.psn - meta.rx_initial_psn;
        set_mask = 64w1 << rx_psn[5:0];
        if (injected) {
            // dropped on arrival, as a lossy link would
        } else if (!meta.plane_port || !hdr.outer_ipv6.isValid() || !hdr.bth.isValid()) {
            meta.malformed = true;
        } else if (!known_qp) {
            NIC_COUNT(NIC_RX_UNKNOWN_QP);
        } else if (meta.pass_kind == RESUB_FB_MARK) {
            // Pass 2 of an ALWAYS_SKIP SACK: ASSUMED_BAD unless the floor says no.
            meta.ev = meta.resub.ev;
            mark_bad_end.apply(meta);
            meta.rx_deliver = true;
        } else if (meta.pass_kind == RESUB_FB_COUNT) {
            // Pass 2 of feedback that moved an EV: its count, and the host gets the feedback.
            NIC_COUNT((bit<32>)meta.resub.count);
            meta.rx_deliver = true;
        } else if (meta.pass_kind == RESUB_RX_NACK) {
            meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
            meta.rx_nack = true;
            meta.nack_reason = meta.resub.count;
        } else if (meta.pass_kind == RESUB_RX_PROBE) {
            // The SACK (PR=1) of the window as it is.
            bit<24> expected = expected_read.execute((bit<32>)meta.conn)[23:0];
            bit<64> ring = ring_read.execute((bit<32>)meta.conn);
            bit<8> at = (bit<8>)expected[5:0];
            meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
            report_window(expected, (ring >> at) | (ring << (64 - at)), expected - 1);
            meta.fb_pr = 1;
        } else if (meta.pass_kind == RESUB_RX_DATA) {
            // Pass 2 of data: the cumulative point moves past the PSNs after this one that had
            // arrived (clearing their ring bits), and the SACK reports the window.
            bit<32> now;
            bit<64> ring;
            if (meta.resub.count != 0) {
                bit<64> run = (64w1 << meta.resub.count) - 1;
                bit<8> from = meta.resub.slot;
                clear_mask = (run << from) | (run >> (64 - from));
                now = expected_catch_up.execute((bit<32>)meta.conn);
                ring = ring_clear.execute((bit<32>)meta.conn);
            } else {
                now = expected_read.execute((bit<32>)meta.conn);
                ring = ring_read.execute((bit<32>)meta.conn);
            }
            bit<24> expected = now[23:0];
            bit<8> at = (bit<8>)expected[5:0];
            meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
            report_window(expected, (ring >> at) | (ring << (64 - at)), rx_psn);
            // Duplicates are SACKed (the first SACK may have been lost), not delivered.
            meta.rx_deliver = meta.resub.flag == 0;
        } else if (hdr.seth.isValid() || hdr.neth.isValid()) {
            // Feedback for what this NIC sent: the reflected compact EV names the EV, and the
            // peer's port-state bitmap says which of its planes can still receive.
            bit<32> entropy = hdr.seth.isValid() ? hdr.seth.entropy : hdr.neth.entropy;
            port_state = hdr.seth.isValid() ? hdr.seth.port_state : hdr.neth.port_state;
            peer_write.execute((bit<32>)meta.conn);
            meta.ev = entropy[7:0];
            cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
            bool skip = (hdr.seth.isValid() && hdr.seth.m == SACK_M_SKIP_ONCE) ||
                        (hdr.neth.isValid() && hdr.neth.nack_reason == NACK_TRIMMED);
            bool bad = hdr.seth.isValid() && hdr.seth.m == SACK_M_ALWAYS_SKIP;
            if (hdr.seth.isValid() && hdr.seth.probe_response == 1) {
                bool recovered;
                probe_answered.apply(meta, hdr.seth.m, recovered);
                if (recovered) {
                    again(RESUB_FB_COUNT, (bit<8>)NIC_EV_RECOVERED);
                }
            } else if (skip) {
                to_skip();
                if (state == (bit<8>)EV_GOOD) {
                    again(RESUB_FB_COUNT, (bit<8>)NIC_EV_SKIPPED);
                }
            } else if (bad) {
                bool needed;
                mark_bad.apply(meta, false, needed);
                if (needed) {
                    again(RESUB_FB_MARK, 0);
                    meta.resub.drops = meta.digest_drops;
                }
            }
            if (hdr.seth.isValid()) {
                NIC_COUNT(NIC_RX_SACK);
            } else {
                NIC_COUNT(NIC_RX_NACK);
            }
            meta.rx_deliver = !meta.resubmit;   // the host transport retransmits and completes
        } else if (hdr.peth.isValid()) {
            // A probe of one of the peer's paths: answered in pass 2; it consumes no PSN and
            // carries nothing for the host.
            NIC_COUNT(NIC_RX_PROBE);
            again(RESUB_RX_PROBE, 0);
        } else if (hdr.meth.isValid()) {
            bit<6> dscp = hdr.outer_ipv6.dscp;
            if (dscp == meta.dscp_trimmed || dscp == meta.dscp_trimmed_lasthop) {
                // The payload was cut on the way: ask for this PSN again at once.
                NIC_COUNT(NIC_RX_TRIMMED);
                again(RESUB_RX_NACK,
                      dscp == meta.dscp_trimmed ? NACK_TRIMMED : NACK_TRIMMED_LASTHOP);
            } else {
                // The receiver's window: PSNs relative to the connection's initial PSN.
                bit<24> expected = expected_advance.execute((bit<32>)meta.conn)[23:0];
                bit<24> ahead = rx_psn - expected;
                bool duplicate = false;
                bool in_window = true;
                bit<8> passed = 0;
                if (ahead == 0) {
                    bit<64> ring = ring_read.execute((bit<32>)meta.conn);
                    bit<8> at = (bit<8>)expected[5:0];
                    meta.rx_bits = (ring >> at) | (ring << (64 - at)) | 1;
                    rx_trailing_ones.apply();
                    passed = meta.trailing_ones - 1;
                } else if (ahead < 64) {
                    duplicate = (ring_set.execute((bit<32>)meta.conn) & set_mask) != 0;
                } else if (ahead >= 0x800000) {
                    duplicate = true;   // behind the window: acknowledged already
                } else {
                    in_window = false;   // beyond the bitmap
                    NIC_COUNT(NIC_RX_OUT_OF_WINDOW);
                    again(RESUB_RX_NACK, NACK_PSN_OOR_WINDOW);
                }
                if (in_window) {
                    if (duplicate) {
                        NIC_COUNT(NIC_RX_DUPLICATE);
                    } else {
                        NIC_COUNT(NIC_RX_DATA);
                    }
                    again(RESUB_RX_DATA, passed);
                    meta.resub.slot = (bit<8>)(expected + 1)[5:0];
                    meta.resub.flag = duplicate ? 1w1 : 1w0;
                }
            }
        } else {
            meta.malformed = true;   // not an MRC data or feedback packet
        }
        if (meta.rx_sack) {
            meta.fb_m = hdr.outer_ipv6.ecn == ECN_CE ? SACK_M_SKIP_ONCE : SACK_M_NONE;
        }
        if (meta.rx_nack || meta.rx_sack) {
            // Feedback goes back the way the packet came (path.p4's return address).
            meta.reflect = true;
            meta.return_addr = hdr.outer_ipv6.src_addr;
            meta.plane = meta.rx_plane;
            meta.need_path = true;
        }
    }
}

#endif
