// Arithmetic: wrap-around + - *, saturating |+| |-| on bit and int, signed and unsigned comparisons.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> add;
    bit<8> sub;
    bit<8> sadd;
    bit<8> ssub;
    bit<8> mul;
    int<8> sa;
    int<8> sb;
    int<8> ssat;
    bit<8> cmp;
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
    apply {
        hdr.h.add = hdr.h.a + hdr.h.b;
        hdr.h.sub = hdr.h.a - hdr.h.b;
        hdr.h.sadd = hdr.h.a |+| hdr.h.b;
        hdr.h.ssub = hdr.h.a |-| hdr.h.b;
        hdr.h.mul = hdr.h.a * hdr.h.b;
        hdr.h.ssat = hdr.h.sa |+| hdr.h.sb;
        bit<8> c = 0;
        if (hdr.h.sa < hdr.h.sb) {
            c = c | 1;
        }
        if (hdr.h.a < hdr.h.b) {
            c = c | 2;
        }
        hdr.h.cmp = c;
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
