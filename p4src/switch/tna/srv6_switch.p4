// The fabric switch for TNA (Tofino 1): the same program as ../srv6_switch.p4 (v1model), with
// the same control-plane API (p4src/README.md) — the same architecture-neutral feature controls
// of ../, applied in the same order (keep the two tops in step) — and Tofino's own pieces from
// this folder: the parsers, the uSID shift as 32-bit funnel shifts, trimming by mirroring to a
// truncating session, the bridged header, the deparsers. Each control copies Tofino's intrinsic
// metadata into the architecture-neutral fields of metadata_t and back.
//
// Built for Tofino with `bf-p4c --arch tna -g --p4runtime-files P4INFO
// --p4runtime-force-std-externs -o OUT p4src/switch/tna/srv6_switch.p4` (`make tna`); with
// softswitch, `softswitch compile p4src/switch/tna/srv6_switch.p4` (the arch from the include).
#include <core.p4>
#include <tna.p4>

#include "../../include/counters_tna.p4"
#include "../../include/defines.p4"
#include "../../include/sizes.p4"
#include "../../include/headers.p4"
#include "headers.p4"
#include "parser.p4"
#include "deparser.p4"
#include "trim.p4"
#include "usid_shift.p4"
#include "../packet_io.p4"
#include "../port_role.p4"
#include "../sr_domain.p4"
#include "../encap.p4"
#include "../my_sid.p4"
#include "../srv6_behaviors.p4"
#include "../routing.p4"
#include "../qos.p4"
#include "../trim.p4"
#include "../ecn.p4"
#include "../drop_stats.p4"

control SwitchIngress(inout headers_t hdr, inout tna_metadata_t md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    TnaHeaderChecks() header_checks;
    PacketOutIngress() packet_out_ingress;
    PortRoleIngress() port_role_ingress;
    SrDomain() sr_domain;
    Encap() encap;
    MySid() my_sid_stage;
    Srv6Behaviors() srv6_behaviors;
    Routing() routing;
    Qos() qos;
    DropStats() drop_stats;

    apply {
        md.sw.ingress_port = ig_intr_md.ingress_port;
        if (hdr.packet_out.isValid()) {
            md.sw.from_cpu = true;
            packet_out_ingress.apply(hdr, md.sw);
        } else {
            port_role_ingress.apply(md.sw);
            header_checks.apply(hdr, md, ig_prsr_md);
            if (md.sw.drop_reason == DROP_NONE) {
                sr_domain.apply(hdr, md.sw);
            }
            if (md.sw.drop_reason == DROP_NONE && hdr.ipv6.hop_limit <= 1) {
                md.sw.drop_reason = DROP_HOP_LIMIT;
            }
            if (md.sw.drop_reason == DROP_NONE) {
                // Only plain IPv6 from a NIC enters the SR domain here.
                if (md.sw.port_role == ROLE_HOST && !md.sw.in_sid_block &&
                        !hdr.srh.isValid() && !hdr.inner_ipv6.isValid()) {
                    encap.apply(hdr);
                }
                my_sid_stage.apply(hdr, md.sw);
                srv6_behaviors.apply(hdr, md.sw);
            }
            if (md.sw.drop_reason == DROP_NONE) {
                routing.apply(hdr, md.sw);
            }
        }
        drop_stats.apply(hdr, md.sw);   // a PacketOut's too (DROP_PACKET_OUT_PORT)
        // The egress queue by DSCP, the controller's packets too: its link probes carry the
        // control DSCP and must overtake data as feedback does (a probe queued behind a
        // congested cable's data would look lost). A trimmed packet's second pass keeps the
        // priority its first gave it.
        if (md.sw.drop_reason == DROP_NONE && hdr.ipv6.isValid()) {
            qos.apply(hdr, md.sw);
        }
        ig_tm_md.ucast_egress_port = md.sw.egress_spec;
        ig_tm_md.qid = (QueueId_t)md.sw.priority;
        if (md.sw.drop) {
            ig_dprsr_md.drop_ctl = 1;
        }
        md.bridged.setValid();
        md.bridged.kind = PKT_KIND_BRIDGED;
        md.bridged.from_cpu = md.sw.from_cpu ? 1w1 : 1w0;
        md.bridged.to_cpu = hdr.packet_in.isValid() ? 1w1 : 1w0;
        md.bridged.pad = 0;
    }
}

control SwitchEgress(inout headers_t hdr, inout tna_metadata_t md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    PortRoleEgress() port_role_egress;
    TrimDecide() trim_decide;
    TrimMirror() trim_mirror;
    TrimFixup() trim_fixup;
    Ecn() ecn;

    apply {
        md.sw.egress_port = eg_intr_md.egress_port;
        md.sw.enq_qdepth = eg_intr_md.enq_qdepth;
        if (md.trim_mirror.isValid()) {
            // A trimmed copy: what the mirror header says.
            md.sw.trim_pass = 1;
            md.sw.trim_dscp = md.trim_mirror.trim_dscp;
            md.sw.trim_bytes = md.trim_mirror.trim_bytes;
        }
        md.sw.from_cpu = md.bridged.isValid() && md.bridged.from_cpu == 1;
        if (md.sw.trim_pass == 1) {
            trim_fixup.apply(hdr, md.sw);
        } else if (!md.sw.from_cpu && md.sw.egress_port != CPU_PORT && hdr.ipv6.isValid()) {
            port_role_egress.apply(md.sw);
            trim_decide.apply(hdr, md.sw);
            if (md.sw.trim) {
                trim_mirror.apply(md, eg_dprsr_md);
            } else {
                ecn.apply(hdr, md.sw);
            }
        }
    }
}

Pipeline(SwitchIngressParser(), SwitchIngress(), SwitchIngressDeparser(), SwitchEgressParser(),
         SwitchEgress(), SwitchEgressDeparser()) pipe;

// Metadata starts zeroed, as the shared controls (and v1model) expect.
@pa_auto_init_metadata
Switch(pipe) main;
