// Division and modulo that p4c-bm2-ss keeps for BMv2: by powers of two (shifts and masks), of constants (folded), of zero; shifts by a constant >= the width, and shifts by run-time amounts up to 200 (bit and int).
#include <core.p4>
#include <v1model.p4>

const bit<8> FOUR = 4;

header h_t {
    bit<8>  x;
    bit<8>  n;
    int<8>  s;
    bit<8>  q16;
    bit<8>  r16;
    bit<8>  q4;
    bit<8>  r1;
    bit<8>  folded;
    bit<8>  zero;
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
        hdr.h.q16 = hdr.h.x / 16;            // x >> 4
        hdr.h.r16 = hdr.h.x % 16;            // x & 15
        hdr.h.q4 = hdr.h.x / FOUR;           // a constant power of two
        hdr.h.r1 = hdr.h.x % 1;              // always 0
        hdr.h.folded = 8w200 / 3 + 8w200 % 7;  // both constant: 66 + 4
        hdr.h.zero = 8w0 / hdr.h.n;          // 0 divided by anything (p4c folds it)
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
