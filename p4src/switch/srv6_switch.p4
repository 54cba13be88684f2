// The fabric switch (T0 and T1 run the same program): SRv6 uSID shift-and-forward (F3216),
// static routes, H.Encaps.Red at host ports, trimming, ECN, per-reason drop counters.
// The control-plane API (every table, action, parameter and counter name) is p4src/README.md.
#include <core.p4>
#include <v1model.p4>

#include "../include/defines.p4"
#include "../include/sizes.p4"
#include "../include/headers.p4"
#include "../include/parser.p4"
#include "../include/deparser.p4"
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
        if (hdr.packet_out.isValid()) {
            meta.from_cpu = true;
            packet_out_ingress.apply(hdr, standard_metadata);
        } else if (meta.trim_pass == 1) {
            // Second pass of a trimmed packet: everything was decided on the first.
            trim_ingress.apply(meta, standard_metadata);
        } else {
            port_role_ingress.apply(meta, standard_metadata);
            header_checks.apply(hdr, meta, standard_metadata);
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
                routing.apply(hdr, meta, standard_metadata);
            }
            if (meta.drop_reason == DROP_NONE) {
                qos.apply(hdr, standard_metadata);
            }
            drop_stats.apply(hdr, meta, standard_metadata);
        }
    }
}

control SwitchEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    PortRoleEgress() port_role_egress;
    TrimDecide() trim_decide;
    TrimFixup() trim_fixup;
    Ecn() ecn;

    apply {
        if (meta.trim_pass == 1) {
            trim_fixup.apply(hdr, meta, standard_metadata);
        } else if (!meta.from_cpu && standard_metadata.egress_port != CPU_PORT &&
                   hdr.ipv6.isValid()) {
            port_role_egress.apply(meta, standard_metadata);
            trim_decide.apply(hdr, meta, standard_metadata);
            if (meta.trim_pass == 0) {
                ecn.apply(hdr, meta, standard_metadata);
            }
        }
    }
}

V1Switch(SwitchParser(), SwitchVerifyChecksum(), SwitchIngress(), SwitchEgress(),
         SwitchComputeChecksum(), SwitchDeparser()) main;
