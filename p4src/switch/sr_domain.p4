// The SR domain boundary (RFC 8754 §5.1): SR traffic — a destination inside the SID block, or
// an SRH — is accepted only from HOST and FABRIC ports; from EXTERNAL ports it is dropped.
#ifndef P4SRC_SWITCH_SR_DOMAIN_P4
#define P4SRC_SWITCH_SR_DOMAIN_P4

#include "../include/headers.p4"

control SrDomain(in headers_t hdr, inout metadata_t meta) {
    @name(".sid_block_counter")
    PKT_BYTE_DIRECT_COUNTER(sid_block_counter);

    @name(".in_sid_block")
    action in_sid_block() {
        meta.in_sid_block = true;
        DIRECT_COUNT(sid_block_counter);
    }

    // Control plane: the SID block, e.g. fcbb:bbbb::/32 -> in_sid_block.
    @name(".sid_block")
    table sid_block {
        key = { hdr.ipv6.dst_addr : lpm @name("dst_addr"); }
        actions = { in_sid_block; NoAction; }
        default_action = NoAction();
        counters = sid_block_counter;
        size = SID_BLOCK_TABLE_SIZE;
    }

    apply {
        sid_block.apply();
        if (meta.port_role == ROLE_EXTERNAL && (meta.in_sid_block || hdr.srh.isValid())) {
            meta.drop_reason = DROP_EXTERNAL_SR;
        }
    }
}

#endif
