// Bit slices read and written, concatenation with ++, and shifts.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> x;
    bit<8>  y;
    bit<8>  hi;
    bit<8>  lo;
    bit<24> cat;
    bit<16> shl;
    bit<16> shr;
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
        hdr.h.hi = hdr.h.x[15:8];
        hdr.h.lo = hdr.h.x[7:0];
        hdr.h.cat = hdr.h.y ++ hdr.h.x;
        hdr.h.shl = hdr.h.x << 4;
        hdr.h.shr = hdr.h.x >> 4;
        hdr.h.x[3:0] = 4w0xf;
        hdr.h.y[7:4] = hdr.h.y[3:0];
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
