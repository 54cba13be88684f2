// Generic parsers and controls, specialised per instantiation as p4c does: a generic control instantiated with bit<8> and with bit<16> (each copy has its own table whose action parameter has the type argument's width); a generic sub-parser instantiated for two header types.
#include <core.p4>
#include <v1model.p4>

header a_t {
    bit<8> k;
    bit<8> v;
}

header b_t {
    bit<8> k;
    bit<16> v;
}

struct headers_t {
    a_t a;
    b_t b;
}
struct meta_t { }

// extracts one header of any header type
parser One<H>(packet_in pkt, out H h) {
    state start {
        pkt.extract(h);
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    One<a_t>() one_a;
    One<b_t>() one_b;
    state start {
        one_a.apply(pkt, hdr.a);
        one_b.apply(pkt, hdr.b);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

// sets x to the action argument of the entry matching k
control Set<T>(in bit<8> k, inout T x) {
    action set(T value) { x = value; }
    table t {
        key = { k : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Set<bit<8>>() s8;
    Set<bit<16>>() s16;
    apply {
        s8.apply(hdr.a.k, hdr.a.v);
        s16.apply(hdr.b.k, hdr.b.v);
        sm.egress_spec = 1;
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
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
