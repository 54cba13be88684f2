// A control instantiated twice inside ingress: each instance has its own table.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> x;
    bit<8> y;
}

control Inner(inout bit<8> v, in bit<8> k) {
    action add_n(bit<8> n) {
        v = v + n;
    }
    table ti {
        key = { k : exact; }
        actions = { add_n; NoAction; }
        default_action = NoAction();
    }
    apply {
        ti.apply();
        v = v ^ 0x01;
    }
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Inner() inner1;
    Inner() inner2;
    apply {
        inner1.apply(hdr.h.x, hdr.h.a);
        inner2.apply(hdr.h.y, hdr.h.b);
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
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
