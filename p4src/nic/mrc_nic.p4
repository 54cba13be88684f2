// The MRC SmartNIC (v1model): one connection sprayed per packet over the slots of its EV set
// (paths over every plane), SRv6 encapsulation (H.Encaps.Red, no SRH), SACKs and NACKs built in
// the data plane, EV states from feedback, EV events for the controller.
// The control-plane API (every table, action, parameter, register and digest) is p4src/README.md.
#include <core.p4>
#include <v1model.p4>

// Shared with tna/mrc_nic.p4: nic_types.p4 (headers, metadata, constants), path.p4 (path stage,
// SACK/NACK headers), settings.p4 (DSCP values, local port state) and the table fragments
// (tx_tables.p4, rx_tables.p4, loss_injector_table.p4) the per-architecture controls include.
// v1model's own: v1model/port_state.p4 (the EV choice's port-state step, with shifts by the plane
// count; TNA's tna/port_state.p4 does it with const tables) and v1model/ (macros, parser,
// registers, the host and plane sides' state).
#include "v1model/nic_arch.p4"
#include "nic_types.p4"
#include "v1model/nic_state.p4"
#include "v1model/nic_parser.p4"
#include "v1model/host_tx.p4"
#include "path.p4"
#include "settings.p4"
#include "v1model/plane_rx.p4"
#include "v1model/ev_state_change.p4"

control NicIngress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    HostTx() host_tx;
    HostQuery() host_query;
    HostTxEncap() host_tx_encap;
    PlaneRx() plane_rx;
    PathStage() path_stage;
    NackHeaders() nack_headers;
    SackHeaders() sack_headers;
    EvMarkBad() report_loss;
    EvRefill() refill_denied;
    NicSettings() settings;

    action drop_malformed() {
        mark_to_drop(standard_metadata);
        nic_counter.count(NIC_RX_MALFORMED);
    }

    apply {
        settings.apply(meta);
        meta.now_us = (bit<32>)standard_metadata.ingress_global_timestamp;
        meta.fb_dscp = meta.dscp_control;   // feedback's DSCP
        if (standard_metadata.parser_error != error.NoError || NIC_NOT_IPV6(hdr)) {
            drop_malformed();
        } else if (meta.from_host) {
            if (!hdr.ipv6.isValid() || !hdr.bth.isValid() ||
                    !(hdr.meth.isValid() || hdr.peth.isValid())) {
                drop_malformed();   // the host sends MRC writes, probes and reports only
            } else {
                host_tx.apply(hdr, meta, standard_metadata);
                if (meta.malformed) {
                    drop_malformed();   // a probe or report naming an EV the connection lacks
                } else if (meta.host_query) {
                    host_query.apply(hdr, meta, standard_metadata);
                } else if (meta.host_report && meta.report_port_down) {
                    mark_to_drop(standard_metadata);   // not the EV's loss: nothing to probe
                    nic_counter.count(NIC_REPORT_PORT_DOWN);
                } else if (meta.host_report) {
                    // A loss by PSN may be undone by that PSN's late arrival; an unanswered
                    // probe may not.
                    report_loss.apply(meta, true,
                                      (hdr.peth.probe_id & REPORT_PROBE_FLAG) != 0
                                      ? 32w0 : nic_psn_mark(hdr.bth.psn));
                    // Back to the host, naming the EV (the host knows PSNs, not EVs), so that
                    // it can pace probes of it; and whether this report took it out of service
                    // (then the host asks which of its packets in flight went on it).
                    hdr.peth.probe_id = (bit<16>)meta.ev;
                    if (meta.report_took_out) {
                        hdr.peth.probe_id = hdr.peth.probe_id | ECHO_TOOK_OUT;
                    }
                    standard_metadata.egress_spec = NIC_HOST_PORT;
                    nic_counter.count(NIC_HOST_REPORT);
                } else if (meta.no_port) {
                    mark_to_drop(standard_metadata);   // every port of this NIC is down
                    nic_counter.count(NIC_PORT_DOWN_DROP);
                } else if (meta.denied && meta.host_probe) {
                    mark_to_drop(standard_metadata);   // a DENIED slot is not probed
                    nic_counter.count(NIC_TX_PROBE_DENIED_DROP);
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
                // No path: the packet is dropped, no SACK is sent, data is still delivered.
                meta.path_found = false;
                nic_counter.count(NIC_PORT_DOWN_DROP);
            } else if (!meta.path_found) {
                // No template or plane port (feedback: or a return address outside the SID
                // block): the same drop, counted apart from a port down.
                nic_counter.count(NIC_TX_NO_PATH_DROP);
            }
        }
        // A SACK leaves as the packet it answers (below), as a NACK does: then the host gets
        // a clone, if anything.
        bool sack_out = meta.rx_sack && !meta.rx_nack && meta.path_found;
        bool answered = meta.rx_nack || sack_out;
        if (meta.need_path && !meta.path_found) {
            mark_to_drop(standard_metadata);   // no template or plane port: nowhere to go
        } else if (meta.from_host && meta.need_path) {
            host_tx_encap.apply(hdr, meta, standard_metadata);
            standard_metadata.egress_spec = meta.path_port;
        } else if (meta.rx_nack) {
            // The trimmed (or out-of-window) packet itself becomes the NACK.
            nack_headers.apply(hdr, meta);
            truncate(NACK_FRAME_BYTES);
            standard_metadata.egress_spec = meta.path_port;
            standard_metadata.priority = NIC_FEEDBACK_PRIORITY;
            nic_counter.count(NIC_NACK_SENT);
        } else if (sack_out) {
            // The data packet (or probe) itself becomes its SACK, so that the SACK takes the
            // control queue of its port: an ingress clone starts at priority 0 on BMv2 (no
            // field list carries standard_metadata.priority), behind the data queued there.
            // The host gets the data as the clone: the packet as it arrived, which the egress
            // strips of its carrier.
            if (meta.rx_deliver) {
                clone(CloneType.I2E, NIC_HOST_SESSION);
            }
            sack_headers.apply(hdr, meta);
            truncate(SACK_FRAME_BYTES);
            standard_metadata.egress_spec = meta.path_port;
            standard_metadata.priority = NIC_FEEDBACK_PRIORITY;
            nic_counter.count(NIC_SACK_SENT);
        }
        if (meta.rx_deliver && !answered) {
            hdr.outer_ipv6.setInvalid();
            standard_metadata.egress_spec = NIC_HOST_PORT;
        } else if (!meta.from_host && !answered) {
            mark_to_drop(standard_metadata);   // nothing for the host (a duplicate, an unknown QP)
        }
    }
}

control NicEgress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == PKT_INSTANCE_INGRESS_CLONE) {
            // The host's copy of a data packet this NIC received (the packet became its SACK).
            hdr.outer_ipv6.setInvalid();
        } else if (standard_metadata.egress_port != NIC_HOST_PORT &&
                   standard_metadata.priority != NIC_FEEDBACK_PRIORITY) {
            // What is still queued for data at this plane's port (data and probes share that
            // queue; feedback has its own): meta.plane is the plane of each.
            plane_backlog.write((bit<32>)meta.plane, standard_metadata.deq_qdepth);
        }
    }
}

V1Switch(NicParser(), NicVerifyChecksum(), NicIngress(), NicEgress(), NicComputeChecksum(),
         NicDeparser()) main;
