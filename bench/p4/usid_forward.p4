// Benchmark (b): SRv6 uSID (F3216) shift-and-forward. A packet whose destination carries this
// switch's uSID right after the 32-bit block is shifted (uN), then routed on the new destination.
#include <core.p4>
#include <v1model.p4>
#include "headers.p4"

const ipv6_addr_t USID_BLOCK_MASK = 0xffffffff000000000000000000000000;

control Usid(inout headers_t hdr, inout metadata_t meta,
             inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    // uN: drop the active uSID and pull the rest of the carrier forward by 16 bits.
    action usid_un() {
        hdr.ipv6.dst_addr = (hdr.ipv6.dst_addr & USID_BLOCK_MASK) |
                            ((hdr.ipv6.dst_addr << 16) & ~USID_BLOCK_MASK);
    }

    action forward(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
    }

    // This switch's local uSIDs: block:uSID/48 -> usid_un.
    table my_sid {
        key = { hdr.ipv6.dst_addr : lpm; }
        actions = { usid_un; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    // Static per-plane /48 routes towards the next uSID's owner.
    table route_v6 {
        key = { hdr.ipv6.dst_addr : lpm; }
        actions = { forward; drop; }
        default_action = drop();
        size = 65536;
    }

    apply {
        if (!hdr.ipv6.isValid() || hdr.ipv6.hop_limit <= 1) {
            drop();
        } else {
            my_sid.apply();
            route_v6.apply();
        }
    }
}

V1Switch(BenchParser(), BenchVerifyChecksum(), Usid(), BenchEgress(), BenchComputeChecksum(),
         BenchDeparser()) main;
