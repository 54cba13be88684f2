// Forwarding: uA / End.X go out their adjacency; everything else is looked up in `route_v6`
// on the (possibly rewritten) destination. The one hop-limit decrement of the switch is here.
#ifndef P4SRC_SWITCH_ROUTING_P4
#define P4SRC_SWITCH_ROUTING_P4

#include "../include/headers.p4"

control Routing(inout headers_t hdr, inout metadata_t meta) {
    @name(".route_v6_counter")
    PKT_BYTE_DIRECT_COUNTER(route_v6_counter);

    @name(".forward")
    action forward(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        meta.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        DIRECT_COUNT(route_v6_counter);
    }

    @name(".drop")
    action drop() {
        meta.drop_reason = DROP_NO_ROUTE;
        DIRECT_COUNT(route_v6_counter);
    }

    // Control plane: static /48 uSID routes to neighbours (block:uSID::/48), host routes of
    // attached NICs (/128 or /64, used after decapsulation), and block::/32 -> drop, so nothing
    // in the SID block is forwarded by a shorter default. Miss: drop.
    @name(".route_v6")
    table route_v6 {
        key = { hdr.ipv6.dst_addr : lpm @name("dst_addr"); }
        actions = { forward; drop; }
        default_action = drop();
        counters = route_v6_counter;
        size = ROUTE_V6_TABLE_SIZE;
    }

    apply {
        // Only a decapsulated inner header can get here with hop limit <= 1: the arriving
        // header was checked before any SID processing.
        if (hdr.ipv6.hop_limit <= 1) {
            meta.drop_reason = DROP_HOP_LIMIT;
        } else if (meta.direct_forward) {
            meta.egress_spec = meta.fwd_port;
            hdr.ethernet.src_addr = meta.fwd_smac;
            hdr.ethernet.dst_addr = meta.fwd_dmac;
        } else {
            route_v6.apply();
        }
        if (meta.drop_reason == DROP_NONE) {
            hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 8w1;
        }
    }
}

#endif
