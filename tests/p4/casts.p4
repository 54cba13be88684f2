// Casts: widening (zero and sign extension), narrowing, bool to bit, and an arithmetic shift of a signed value.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  u8;
    int<8>  s8;
    bit<16> widen_u;
    bit<16> widen_s;
    bit<4>  narrow;
    bit<4>  flag;
    int<16> s16;
    bit<8>  half;
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
        hdr.h.widen_u = (bit<16>) hdr.h.u8;
        hdr.h.widen_s = (bit<16>) ((int<16>) hdr.h.s8);
        hdr.h.narrow = (bit<4>) hdr.h.u8;
        hdr.h.flag = (bit<4>) ((bit<1>) (hdr.h.u8 == 0x80));
        hdr.h.s16 = (int<16>) hdr.h.s8;
        hdr.h.half = (bit<8>) (hdr.h.s8 >> 1);
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
