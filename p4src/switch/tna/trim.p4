// Trimming on TNA (../trim.p4 decides and fixes up), as Tofino does it: the original is
// dropped in egress and the egress deparser mirrors it, with the trim mirror header
// (headers.p4: this DSCP, this length), to the port's trim session TRIM_SESSION_BASE + port
// (include/defines.p4). The session's replica is the same port, its class of service the
// highest queue and its truncation length trim_bytes + TRIM_MIRROR_BYTES, so the traffic
// manager cuts the copy to trim_bytes of packet and queues it ahead of the data; the copy's
// egress pass (SwitchEgressParser reads the mirror header) runs TrimFixup. Tofino mirrors the
// packet as the egress deparser emits it, so the copy has every ingress rewrite.
#ifndef P4SRC_SWITCH_TNA_TRIM_P4
#define P4SRC_SWITCH_TNA_TRIM_P4

#include "headers.p4"

// Egress, when TrimDecide chose to trim: drop the original, mirror a copy.
control TrimMirror(inout tna_metadata_t md,
                   inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        eg_dprsr_md.drop_ctl = 1;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_TRIM;
        md.trim_session = TRIM_SESSION_BASE + (MirrorId_t)md.sw.egress_port;
        md.trim_mirror.setValid();
        md.trim_mirror.kind = PKT_KIND_TRIM;
        md.trim_mirror.trim_dscp = md.sw.trim_dscp;
        md.trim_mirror.pad = 0;
        md.trim_mirror.trim_bytes = md.sw.trim_bytes;
    }
}

#endif
