// Trimming on v1model (../trim.p4 decides and fixes up): v1model can truncate only a whole
// packet on its way out and cannot move a packet in egress to another queue, so the original
// is recirculated instead of sent, carrying "trim, to this port, this length, this DSCP" in
// @field_list(FIELD_LIST_TRIM) metadata; its second ingress pass skips every lookup, sends it
// to the same port on the highest priority and truncates it to trim_bytes; its second egress
// pass runs TrimFixup. BMv2 truncates on transmission, so trim_counter counts the bytes before
// the cut.
#ifndef P4SRC_SWITCH_V1MODEL_TRIM_P4
#define P4SRC_SWITCH_V1MODEL_TRIM_P4

#include "../../include/headers.p4"

// Egress, when TrimDecide chose to trim: recirculate instead of sending.
control TrimRecirculate(inout metadata_t meta) {
    apply {
        meta.trim_pass = 1;
        meta.trim_port = meta.egress_port;
        recirculate_preserving_field_list(FIELD_LIST_TRIM);
    }
}

// The second ingress pass: no lookups; same port, highest priority, truncate.
control TrimIngress(inout metadata_t meta) {
    apply {
        meta.egress_spec = meta.trim_port;
        meta.priority = PRIORITY_HIGHEST;
        truncate((bit<32>)meta.trim_bytes);
    }
}

#endif
