// A value set whose element is a struct of one bit<16> field, matched against a single bit<16> select
// key: p4c flattens the struct into the select's one-element key tuple (P4Info: one match field "ab",
// 16 bits). Empty, as BMv2's P4Runtime server leaves it, it never matches.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> ab;
    bit<8>  hit;
}

struct ab_t {
    bit<16> ab;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<ab_t>(4) pvs;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.ab) {
            pvs: in_set;
            0x0101: in_case;
            default: accept;
        }
    }
    state in_set {
        hdr.h.hit = 1;
        transition accept;
    }
    state in_case {
        hdr.h.hit = 2;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
