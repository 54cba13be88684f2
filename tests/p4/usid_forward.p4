// SRv6 uSID shift-and-forward (F3216: 32-bit block, 16-bit uSIDs): my_sid (lpm on dst) runs uN, which shifts the uSIDs after the block left by 16 and decrements the hop limit; route_v6 (lpm) picks the port and MACs.
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

const bit<128> BLOCK_MASK = 0xffffffff000000000000000000000000;

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
    action uN() {
        hdr.ipv6.dst_addr = (hdr.ipv6.dst_addr & BLOCK_MASK)
                            | ((hdr.ipv6.dst_addr << 16) & ~BLOCK_MASK);
        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
    }
    table my_sid {
        key = { hdr.ipv6.dst_addr : lpm; }
        actions = { uN; NoAction; }
        default_action = NoAction();
    }
    action set_next_hop(bit<9> port, bit<48> smac, bit<48> dmac) {
        sm.egress_spec = port;
        hdr.eth.src_addr = smac;
        hdr.eth.dst_addr = dmac;
    }
    action drop() {
        mark_to_drop(sm);
    }
    table route_v6 {
        key = { hdr.ipv6.dst_addr : lpm; }
        actions = { set_next_hop; drop; }
        default_action = drop();
    }
    apply {
        if (hdr.ipv6.isValid()) {
            my_sid.apply();
            route_v6.apply();
        } else {
            drop();
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
