// expect-error: hdr.h.x / 3: could not evaluate expression at compilation time
// expect-line: 36
// Division and modulo by a constant that is not a power of two: BMv2 has no division, so p4c keeps only what it can turn into shifts and masks.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  x;
    bit<8>  n;
    int<8>  s;
    bit<8>  q;
    bit<8>  r;
    bit<8>  q16;
    bit<8>  r16;
    bit<8>  shl_c;
    bit<8>  shl_n;
    bit<8>  shr_n;
    int<8>  sshr_n;
    bit<16> wide;
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
        hdr.h.q = hdr.h.x / 3;  // <- error
        hdr.h.r = hdr.h.x % 3;
        hdr.h.q16 = hdr.h.x / 16;
        hdr.h.r16 = hdr.h.x % 16;
        hdr.h.shl_c = hdr.h.x << 9;
        hdr.h.shl_n = hdr.h.x << hdr.h.n;
        hdr.h.shr_n = hdr.h.x >> hdr.h.n;
        hdr.h.sshr_n = hdr.h.s >> hdr.h.n;
        hdr.h.wide = ((bit<16>)hdr.h.x) << hdr.h.n;
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
