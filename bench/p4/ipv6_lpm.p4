// Benchmark (a): an IPv6 LPM forwarder. One LPM lookup on the destination, MAC rewrite,
// hop-limit decrement; packets with hop limit <= 1 or no route are dropped.
#include <core.p4>
#include <v1model.p4>
#include "headers.p4"

control Lpm(inout headers_t hdr, inout metadata_t meta,
            inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action set_nexthop(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
    }

    // Routes to every destination prefix; the controller installs one entry per prefix.
    table route_v6 {
        key = { hdr.ipv6.dst_addr : lpm; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 65536;
    }

    apply {
        if (!hdr.ipv6.isValid() || hdr.ipv6.hop_limit <= 1) {
            drop();
        } else {
            route_v6.apply();
        }
    }
}

V1Switch(BenchParser(), BenchVerifyChecksum(), Lpm(), BenchEgress(), BenchComputeChecksum(),
         BenchDeparser()) main;
