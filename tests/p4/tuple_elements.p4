// Tuples: elements read and written by constant index (an element is an l-value), a nested
// tuple, a tuple copied (value semantics), passed to a function and compared.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  c;
    bit<8>  d;
    bit<16> e;
}

struct headers_t { h_t h; }
struct meta_t { }

bit<8> second(in tuple<bit<8>, bit<8>> t) {
    return t[1];
}

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
    apply {
        sm.egress_spec = 1;
        tuple<bit<8>, tuple<bit<8>, bit<8>>, bit<16>> t = { hdr.h.a, { hdr.h.b, 0x22 }, 0x0102 };
        tuple<bit<8>, tuple<bit<8>, bit<8>>, bit<16>> copy = t;
        t[0] = t[0] + 1;        // a scalar element
        t[1][1] = hdr.h.c;      // an element of a nested tuple
        t[2][15:8] = 0xff;      // a slice of an element
        hdr.h.a = t[0];
        hdr.h.b = second(t[1]);
        hdr.h.c = copy[0];      // the copy kept the old values
        hdr.h.e = t[2];
        if (copy != t && copy[1] == { hdr.h.d, 0x22 }) {
            hdr.h.d = 0xdd;
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
    apply { pkt.emit(hdr.h); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
