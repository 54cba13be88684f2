// The fabric switch (T0 and T1 run the same program) for v1model: SRv6 uSID shift-and-forward
// (F3216), static routes, H.Encaps.Red at host ports, trimming, ECN, per-reason drop counters.
// The control-plane API (every table, action, parameter and counter name) is p4src/README.md;
// the TNA variant (tna/srv6_switch.p4) has the same one. The feature controls in this folder
// are architecture-neutral and shared with it; this file applies them in order with v1model's
// own pieces from v1model/ (the parser and its drop reasons, trimming by recirculation, the
// uSID shift, the deparser), copying standard_metadata into the neutral fields of metadata_t
// (include/headers.p4) and back. tna/srv6_switch.p4 applies the same controls in the same order:
// keep the two in step. The copies are statements here, not controls of their own: every
// control call copies its arguments in and out, and that is the cost on softswitch's path.
#include <core.p4>
#include <v1model.p4>

#include "../include/counters_v1model.p4"
#include "../include/defines.p4"
#include "../include/sizes.p4"
#include "../include/headers.p4"
#include "v1model/parser.p4"
#include "v1model/deparser.p4"
#include "v1model/trim.p4"
#include "v1model/usid_shift.p4"
#include "packet_io.p4"
#include "port_role.p4"
#include "sr_domain.p4"
#include "encap.p4"
#include "my_sid.p4"
#include "srv6_behaviors.p4"
#include "routing.p4"
#include "qos.p4"
#include "trim.p4"
#include "ecn.p4"
#include "drop_stats.p4"

control SwitchIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    PacketOutIngress() packet_out_ingress;
    TrimIngress() trim_ingress;
    PortRoleIngress() port_role_ingress;
    HeaderChecks() header_checks;
    SrDomain() sr_domain;
    Encap() encap;
    MySid() my_sid_stage;
    Srv6Behaviors() srv6_behaviors;
    Routing() routing;
    Qos() qos;
    DropStats() drop_stats;

    apply {
        meta.ingress_port = standard_metadata.ingress_port;
        meta.egress_spec = standard_metadata.egress_spec;
        meta.priority = standard_metadata.priority;
        meta.parser_drop = parser_drop_reason(standard_metadata.parser_error);
        if (hdr.packet_out.isValid()) {
            meta.from_cpu = true;
            packet_out_ingress.apply(hdr, meta);
        } else if (meta.trim_pass == 1) {
            // Second pass of a trimmed packet: everything was decided on the first.
            trim_ingress.apply(meta);
        } else {
            port_role_ingress.apply(meta);
            header_checks.apply(hdr, meta);
            if (meta.drop_reason == DROP_NONE) {
                sr_domain.apply(hdr, meta);
            }
            if (meta.drop_reason == DROP_NONE && hdr.ipv6.hop_limit <= 1) {
                meta.drop_reason = DROP_HOP_LIMIT;
            }
            if (meta.drop_reason == DROP_NONE) {
                // Only plain IPv6 from a NIC enters the SR domain here.
                if (meta.port_role == ROLE_HOST && !meta.in_sid_block && !hdr.srh.isValid() &&
                        !hdr.inner_ipv6.isValid()) {
                    encap.apply(hdr);
                }
                my_sid_stage.apply(hdr, meta);
                srv6_behaviors.apply(hdr, meta);
            }
            if (meta.drop_reason == DROP_NONE) {
                routing.apply(hdr, meta);
            }
        }
        drop_stats.apply(hdr, meta);   // a PacketOut's too (DROP_PACKET_OUT_PORT)
        // The egress queue by DSCP, the controller's packets too: its link probes carry the
        // control DSCP and must overtake data as feedback does (a probe queued behind a
        // congested cable's data would look lost). A trimmed packet's second pass keeps the
        // priority its first gave it.
        if (meta.trim_pass != 1 && meta.drop_reason == DROP_NONE && hdr.ipv6.isValid()) {
            qos.apply(hdr, meta);
        }
        standard_metadata.egress_spec = meta.egress_spec;
        standard_metadata.priority = meta.priority;
        if (meta.drop) {
            mark_to_drop(standard_metadata);
        }
    }
}

control SwitchEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    PortRoleEgress() port_role_egress;
    TrimDecide() trim_decide;
    TrimRecirculate() trim_recirculate;
    TrimFixup() trim_fixup;
    Ecn() ecn;

    apply {
        meta.egress_port = standard_metadata.egress_port;
        meta.enq_qdepth = standard_metadata.enq_qdepth;
        if (meta.trim_pass == 1) {
            trim_fixup.apply(hdr, meta);
        } else if (!meta.from_cpu && meta.egress_port != CPU_PORT && hdr.ipv6.isValid()) {
            port_role_egress.apply(meta);
            trim_decide.apply(hdr, meta);
            if (meta.trim) {
                trim_recirculate.apply(meta);
            } else {
                ecn.apply(hdr, meta);
            }
        }
    }
}

V1Switch(SwitchParser(), SwitchVerifyChecksum(), SwitchIngress(), SwitchEgress(),
         SwitchComputeChecksum(), SwitchDeparser()) main;
