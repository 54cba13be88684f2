// DSCP -> egress priority queue. Control, trimmed and feedback traffic must overtake data.
#ifndef P4SRC_SWITCH_QOS_P4
#define P4SRC_SWITCH_QOS_P4

#include "../include/headers.p4"

control Qos(in headers_t hdr, inout metadata_t meta) {
    @name(".dscp_priority_counter")
    PKT_BYTE_DIRECT_COUNTER(dscp_priority_counter);

    @name(".set_priority")
    action set_priority(bit<3> prio) {
        meta.priority = prio;
        DIRECT_COUNT(dscp_priority_counter);
    }

    // Control plane: outer DSCP -> set_priority(prio): CONTROL, TRIMMED, TRIMMED_LASTHOP and
    // feedback high (e.g. 7), data 0. Miss: priority 0.
    @name(".dscp_priority")
    table dscp_priority {
        key = { hdr.ipv6.dscp : exact @name("dscp"); }
        actions = { set_priority; }
        default_action = set_priority(0);
        counters = dscp_priority_counter;
        size = DSCP_TABLE_SIZE;
    }

    apply {
        dscp_priority.apply();
    }
}

#endif
