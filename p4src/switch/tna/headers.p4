// What the TNA fabric switch carries besides the shared headers and metadata: the bridged
// header (ingress -> egress), the trim mirror header (a trimmed copy's egress pass) and the
// metadata struct holding both around the shared metadata_t.
#ifndef P4SRC_SWITCH_TNA_HEADERS_P4
#define P4SRC_SWITCH_TNA_HEADERS_P4

#include "../../include/headers.p4"

// The first byte after the egress intrinsic metadata says which of the two follows.
const bit<8> PKT_KIND_BRIDGED = 1;
const bit<8> PKT_KIND_TRIM = 2;

// The egress deparser's mirror type for a trimmed copy (eg_intr_md_for_dprsr.mirror_type).
const bit<3> MIRROR_TYPE_TRIM = 1;

// Ingress -> egress: what egress needs to know of ingress's decisions.
header bridged_h {
    bit<8> kind;         // PKT_KIND_BRIDGED
    bit<1> from_cpu;     // a PacketOut: sent as it is, no egress features
    bit<1> to_cpu;       // punted: a packet_in header comes first, no egress features
    bit<6> pad;
}

// Prepended to a trimmed copy by the egress deparser's mirror; TRIM_MIRROR_BYTES long.
header trim_mirror_h {
    bit<8>  kind;        // PKT_KIND_TRIM
    bit<6>  trim_dscp;   // the DSCP the copy gets (TRIMMED / TRIMMED_LASTHOP)
    bit<2>  pad;
    bit<16> trim_bytes;  // the length it was cut to (TrimFixup's lengths)
}

struct tna_metadata_t {
    metadata_t    sw;            // the shared controls' metadata (include/headers.p4)
    bridged_h     bridged;
    trim_mirror_h trim_mirror;   // egress: the copy's (parsed) or the one to mirror with
    MirrorId_t    trim_session;  // egress: TRIM_SESSION_BASE + egress port
    bool          srh_unchecked; // ingress: an SRH the parser left for TnaHeaderChecks
}

#endif
