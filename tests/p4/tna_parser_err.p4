// TNA parser errors when the program reads parser_err: the packet is not dropped; ingress sees
// PARSER_ERROR_PARTIAL_HDR (2) for a header cut short, PARSER_ERROR_NO_MATCH (1) for a select
// without a matching case and for an explicit reject; the headers extracted before the error
// stay valid and the bytes from the error on are the payload.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header a_t {
    bit<32> v;
}

struct headers_t {
    ethernet_t eth;
    a_t        a;
}

struct ig_md_t { }

struct eg_md_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x88b5: parse_a;
            0x88b6: parse_b;
            default: reject;
        }
    }
    state parse_a {
        pkt.extract(hdr.a);
        transition accept;
    }
    state parse_b {
        transition select(pkt.lookahead<bit<8>>()) {
            1: parse_a;
        }
    }
}

control Ig(inout headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.eth.src[15:0] = ig_prsr_md.parser_err;
        if (hdr.a.isValid()) {
            hdr.a.v = hdr.a.v + 1;
        }
        ig_tm_md.ucast_egress_port = 1;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;

Switch(pipe) main;
