// int<8> edge cases: wrap-around of + - * and unary minus at -128, saturating |+| |-|, signed <, arithmetic >> and sign-extending casts.
#include <core.p4>
#include <v1model.p4>

header h_t {
    int<8>  a;
    int<8>  b;
    int<8>  sum;
    int<8>  diff;
    int<8>  prod;
    int<8>  neg;
    bit<8>  lt;
    int<8>  sat_add;
    int<8>  sat_sub;
    int<8>  shr;
    int<16> wide;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.sum = hdr.h.a + hdr.h.b;
        hdr.h.diff = hdr.h.a - hdr.h.b;
        hdr.h.prod = hdr.h.a * hdr.h.b;
        hdr.h.neg = -hdr.h.a;
        hdr.h.lt = hdr.h.a < hdr.h.b ? 8w1 : 8w0;
        hdr.h.sat_add = hdr.h.a |+| hdr.h.b;
        hdr.h.sat_sub = hdr.h.a |-| hdr.h.b;
        hdr.h.shr = hdr.h.a >> 2;
        hdr.h.wide = ((int<16>)hdr.h.a) << 4;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
