// Local SIDs. A hit only records which behaviour applies (and, for uA / End.X, the
// adjacency); srv6_behaviors.p4 carries it out, because what happens depends on the argument,
// the SRH and the inner header — decisions made in apply blocks, not in actions.
#ifndef P4SRC_SWITCH_MY_SID_P4
#define P4SRC_SWITCH_MY_SID_P4

#include "../include/headers.p4"

control MySid(in headers_t hdr, inout metadata_t meta) {
    @name(".my_sid_counter")
    PKT_BYTE_DIRECT_COUNTER(my_sid_counter);

    @name(".usid_un")
    action usid_un() {
        meta.sid_behavior = SID_UN;
        DIRECT_COUNT(my_sid_counter);
    }

    @name(".usid_ua")
    action usid_ua(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        meta.sid_behavior = SID_UA;
        meta.direct_forward = true;
        meta.fwd_port = port;
        meta.fwd_smac = smac;
        meta.fwd_dmac = dmac;
        DIRECT_COUNT(my_sid_counter);
    }

    @name(".usid_ua_combined")
    action usid_ua_combined(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        meta.sid_behavior = SID_UA_COMBINED;
        meta.direct_forward = true;
        meta.fwd_port = port;
        meta.fwd_smac = smac;
        meta.fwd_dmac = dmac;
        DIRECT_COUNT(my_sid_counter);
    }

    @name(".end")
    action end() {
        meta.sid_behavior = SID_END;
        DIRECT_COUNT(my_sid_counter);
    }

    @name(".end_x")
    action end_x(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        meta.sid_behavior = SID_END_X;
        meta.direct_forward = true;
        meta.fwd_port = port;
        meta.fwd_smac = smac;
        meta.fwd_dmac = dmac;
        DIRECT_COUNT(my_sid_counter);
    }

    @name(".end_dt6")
    action end_dt6() {
        meta.sid_behavior = SID_END_DT6;
        DIRECT_COUNT(my_sid_counter);
    }

    // Control plane (F3216): block:uN::/48 -> usid_un; local uA block:uA::/48 -> usid_ua;
    // combined block:uN:uA::/64 -> usid_ua_combined; classic 128-bit SIDs /128 -> end / end_x;
    // decapsulation SIDs -> end_dt6. No hit: transit, routed as it is.
    @name(".my_sid")
    table my_sid {
        key = { hdr.ipv6.dst_addr : lpm @name("dst_addr"); }
        actions = { usid_un; usid_ua; usid_ua_combined; end; end_x; end_dt6; NoAction; }
        default_action = NoAction();
        counters = my_sid_counter;
        size = MY_SID_TABLE_SIZE;
    }

    apply {
        my_sid.apply();
    }
}

#endif
