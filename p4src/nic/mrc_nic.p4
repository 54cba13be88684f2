// The MRC SmartNIC (v1model): one connection sprayed per packet over the slots of its EV set
// (paths over every plane), SRv6 encapsulation (H.Encaps.Red, no SRH), SACKs and NACKs built in
// the data plane, EV states from feedback, EV events for the controller.
// The control-plane API (every table, action, parameter, register and digest) is p4src/README.md.
#include <core.p4>
#include <v1model.p4>

#include "nic_types.p4"
#include "nic_state.p4"
#include "nic_parser.p4"
#include "host_tx.p4"
#include "path.p4"
#include "plane_rx.p4"
#include "ev_state_change.p4"

control NicIngress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    HostTx() host_tx;
    HostTxEncap() host_tx_encap;
    PlaneRx() plane_rx;
    PathStage() path_stage;
    FeedbackHeaders() nack_headers;
    EvMarkBad() report_loss;
    EvRefill() refill_denied;

    @name(".set_dscp")
    action set_dscp(bit<6> trimmable, bit<6> trimmable_retx, bit<6> control_dscp, bit<6> trimmed,
                    bit<6> trimmed_lasthop) {
        meta.dscp_trimmable = trimmable;
        meta.dscp_retx = trimmable_retx;
        meta.dscp_control = control_dscp;
        meta.dscp_trimmed = trimmed;
        meta.dscp_trimmed_lasthop = trimmed_lasthop;
    }

    // Why: DSCP values are the operator's (UET fixes none). Installs: the default action, with
    // the fabric's values (topology qos); until then the MRC emulator's defaults below.
    @name(".nic_dscp")
    table nic_dscp {
        actions = { set_dscp; }
        default_action = set_dscp(4, 8, 46, 12, 16);
    }

    @name(".set_port_state")
    action set_port_state(bit<8> down_planes) {
        meta.local_down = down_planes;
    }

    // Why: v1model has no port-status signal, so this NIC's agent tells the data plane which of
    // its own ports are down (bit p set = plane p's port is down). Nothing is sent on a down
    // port, the EV choice passes over that plane, and every SACK and NACK this NIC sends carries
    // the bitmap (SETH/NETH port_state) so that the peer stops sending to it on that plane.
    // Installs: the default action, rewritten whenever a NIC port goes down or comes back up;
    // until then every port is up. (A table, not a register: BMv2's P4Runtime server refuses
    // register writes.)
    @name(".local_port_state")
    table local_port_state {
        actions = { set_port_state; }
        default_action = set_port_state(0);
    }

    action drop_malformed() {
        mark_to_drop(standard_metadata);
        nic_counter.count(NIC_RX_MALFORMED);
    }

    apply {
        nic_dscp.apply();
        local_port_state.apply();
        meta.fb_dscp = meta.dscp_control;   // feedback's DSCP, carried to egress for SACKs
        if (standard_metadata.parser_error != error.NoError) {
            drop_malformed();
        } else if (meta.from_host) {
            if (!hdr.ipv6.isValid() || !hdr.bth.isValid() ||
                    !(hdr.meth.isValid() || hdr.peth.isValid())) {
                drop_malformed();   // the host sends MRC writes, probes and reports only
            } else {
                host_tx.apply(hdr, meta, standard_metadata);
                if (meta.host_report) {
                    report_loss.apply(meta, true);
                    // Back to the host, naming the EV (the host knows PSNs, not EVs), so that
                    // it can pace probes of it.
                    hdr.peth.probe_id = (bit<16>)meta.ev;
                    standard_metadata.egress_spec = NIC_HOST_PORT;
                    nic_counter.count(NIC_HOST_REPORT);
                } else if (meta.no_port) {
                    mark_to_drop(standard_metadata);   // every port of this NIC is down
                    nic_counter.count(NIC_PORT_DOWN_DROP);
                } else if (meta.denied && meta.host_probe) {
                    mark_to_drop(standard_metadata);   // a DENIED slot is not probed
                } else if (meta.denied) {
                    // A DENIED EV: its slot takes a backup, and the whole choice runs again
                    // (the cursor has moved on), a bounded number of times.
                    refill_denied.apply(meta);
                    if (meta.resubmits < TX_RESUBMITS) {
                        meta.resubmits = meta.resubmits + 1;
                        resubmit_preserving_field_list(FL_NIC_RESUBMIT);
                    } else {
                        mark_to_drop(standard_metadata);
                        nic_counter.count(NIC_TX_DENIED_DROP);
                    }
                } else if (meta.slot_chosen) {
                    if (meta.fallback) { nic_counter.count(NIC_TX_FALLBACK); }
                    meta.need_path = true;
                }
            }
        } else {
            plane_rx.apply(hdr, meta, standard_metadata);
            if (meta.malformed) {
                drop_malformed();
            }
        }
        if (meta.need_path) {
            path_stage.apply(meta);
            if (((meta.local_down >> meta.plane) & 1) == 1) {
                // This NIC's own port of that plane is down: nothing leaves on it (a probe of
                // an EV there, feedback for a packet that came in on it; data never chooses it).
                // No path: the packet is dropped, no SACK is cloned, data is still delivered.
                meta.path_found = false;
                nic_counter.count(NIC_PORT_DOWN_DROP);
            }
        }
        if (meta.need_path && !meta.path_found) {
            mark_to_drop(standard_metadata);   // no template or plane port: nowhere to go
        } else if (meta.from_host && meta.need_path) {
            host_tx_encap.apply(hdr, meta, standard_metadata);
            standard_metadata.egress_spec = meta.path_port;
        } else if (meta.rx_nack) {
            // The trimmed (or out-of-window) packet itself becomes the NACK.
            hdr.neth.setValid();
            hdr.neth.header_type = 0;
            hdr.neth.next_header = 0;
            hdr.neth.reserved0 = 0;
            hdr.neth.nack_reason = meta.nack_reason;
            hdr.neth.vendor_info = 0;
            hdr.neth.entropy = meta.fb_entropy;
            hdr.neth.spdcid = 0;
            hdr.neth.dpdcid = 0;
            hdr.neth.port_state = meta.local_down;
            hdr.neth.nack_psn = hdr.bth.psn;
            hdr.neth.cc_type = 0;
            hdr.neth.cc_flags = 0;
            hdr.neth.reserved2 = 0;
            hdr.neth.tx_timestamp = 0;
            nack_headers.apply(hdr, meta, OP_NACK, NACK_EXT_BYTES);
            truncate(NACK_FRAME_BYTES);
            standard_metadata.egress_spec = meta.path_port;
            nic_counter.count(NIC_NACK_SENT);
        }
        if (meta.rx_sack && !meta.rx_nack && meta.path_found) {
            clone_preserving_field_list(CloneType.I2E,
                                        SACK_SESSION_BASE + (bit<32>)meta.rx_plane, FL_NIC_SACK);
        }
        if (meta.rx_deliver && !meta.rx_nack) {
            hdr.outer_ipv6.setInvalid();
            standard_metadata.egress_spec = NIC_HOST_PORT;
        } else if (!meta.from_host && !meta.rx_nack) {
            mark_to_drop(standard_metadata);   // nothing for the host (a duplicate, an unknown QP)
        }
    }
}

control NicEgress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    FeedbackHeaders() sack_headers;

    apply {
        // The I2E clone of a data packet this NIC received becomes its SACK.
        if (standard_metadata.instance_type == PKT_INSTANCE_INGRESS_CLONE) {
            hdr.seth.setValid();
            hdr.seth.header_type = 0;
            hdr.seth.next_header = 0;
            hdr.seth.m = meta.fb_m;
            hdr.seth.reserved0 = 0;
            hdr.seth.probe_response = meta.fb_pr;
            hdr.seth.reserved1 = 0;
            hdr.seth.ack_psn_offset = meta.fb_ack_offset;
            hdr.seth.entropy = meta.fb_entropy;
            hdr.seth.spdcid = 0;
            hdr.seth.dpdcid = 0;
            hdr.seth.port_state = meta.local_down;   // this NIC's ports, for the peer
            hdr.seth.cack_psn = meta.fb_cack;
            hdr.seth.cc_type = 0;
            hdr.seth.cc_flags = 0;
            hdr.seth.mpr = 0;
            hdr.seth.sack_offset = 1;
            hdr.seth.sack_bitmap = meta.fb_bitmap;
            hdr.cc_state.setValid();
            hdr.cc_state.tx_timestamp = 0;
            hdr.cc_state.reserved = 0;
            hdr.cc_state.ooo_count = 0;
            hdr.cc_state.restore_window = 0;
            hdr.cc_state.rcv_cwnd_pen = 0;
            hdr.cc_state.rcvd_bytes = 0;
            sack_headers.apply(hdr, meta, OP_SACK, SACK_EXT_BYTES);
            truncate(SACK_FRAME_BYTES);
            nic_counter.count(NIC_SACK_SENT);
        }
    }
}

V1Switch(NicParser(), NicVerifyChecksum(), NicIngress(), NicEgress(), NicComputeChecksum(),
         NicDeparser()) main;
