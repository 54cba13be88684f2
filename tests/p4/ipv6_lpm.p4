// IPv6 LPM forwarder: longest prefix picks port and next-hop MAC; hop limit decremented; hop limit 1 or less is dropped.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv6_t {
    bit<4>   version;
    bit<8>   traffic_class;
    bit<20>  flow_label;
    bit<16>  payload_len;
    bit<8>   next_hdr;
    bit<8>   hop_limit;
    bit<128> src_addr;
    bit<128> dst_addr;
}

struct headers_t {
    ethernet_t eth;
    ipv6_t     ipv6;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x86dd: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action forward(bit<9> port, bit<48> dmac) {
        sm.egress_spec = port;
        hdr.eth.src_addr = hdr.eth.dst_addr;
        hdr.eth.dst_addr = dmac;
        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
    }
    action drop() {
        mark_to_drop(sm);
    }
    table ipv6_lpm {
        key = { hdr.ipv6.dst_addr : lpm; }
        actions = { forward; drop; }
        default_action = drop();
        size = 1024;
    }
    apply {
        if (!hdr.ipv6.isValid() || hdr.ipv6.hop_limit <= 1) {
            drop();
        } else {
            ipv6_lpm.apply();
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv6);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
