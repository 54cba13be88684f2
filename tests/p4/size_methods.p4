// minSizeInBits / minSizeInBytes / maxSizeInBits / maxSizeInBytes: compile-time int constants
// p4c computes for an expression or a type name of any fixed-width type -- bit, int, bool,
// serializable enum, typedef, struct, header (varbit fields count 0 for min, their maximum for
// max) -- not only headers.
#include <core.p4>
#include <v1model.p4>

typedef bit<32> word_t;
enum bit<16> Kind { A = 1 }

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
    bit<8> g;
    bit<8> h;
}

header opt_t {
    bit<4>     len;
    bit<4>     flags;
    varbit<24> data;
}

struct flags_t {
    bit<3> x;
    bool   y;
    int<6> z;
}

struct headers_t {
    h_t   h;
    opt_t o;
}
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
    apply {
        sm.egress_spec = 1;
        bit<16> v = 0;
        flags_t fl = { 1, true, -1 };
        hdr.h.a = (bit<8>)v.minSizeInBits();          // 16
        hdr.h.b = (bit<8>)word_t.maxSizeInBytes();    // 4
        hdr.h.c = (bit<8>)fl.minSizeInBits();         // 3 + 1 + 6 = 10
        hdr.h.d = (bit<8>)flags_t.minSizeInBytes();   // 10 bits -> 2 bytes
        hdr.h.e = (bit<8>)Kind.A.maxSizeInBits();     // 16
        hdr.h.f = (bit<8>)hdr.o.minSizeInBits();      // 8 (the varbit counts 0)
        hdr.h.g = (bit<8>)opt_t.maxSizeInBits();      // 8 + 24 = 32
        hdr.h.h = (bit<8>)hdr.o.maxSizeInBytes();     // 4
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
