// Arbitrary-precision int at compile time: values beyond 64 bits, shifts, / and % of positive values, negation, slices of an int, casts int <-> bit<W>/int<W>/bool, an int constant as a width and as a select label.
#include <core.p4>
#include <v1model.p4>

const int BIG = 1 << 70;                        // wider than any machine word
const int K = (BIG >> 66) * 3 + 5;              // 16 * 3 + 5 = 53
const int Q = K / 4;                            // 13
const int R = K % 4;                            // 1
const bit<8> WRAP = (bit<8>)(5 + 300);          // 305 truncated to 8 bits: 49
const int NEG = -K;                             // -53
const bit<8> NEG8 = (bit<8>)NEG;                // two's complement: 203
const int<8> S8 = (int<8>)200;                  // -56
const int FROM_BITS = (int)8w200 + (int)(-8s3); // 200 - 3 = 197
const bool B1 = (bool)1;
const int SHIFTED = 1 << 8w4;                   // a bit<8> shift amount: 16

header h_t {
    bit<8>          x;
    bit<(K - 45)>   wrap;    // bit<8>
    bit<8>          q;
    bit<8>          r;
    bit<8>          neg;
    bit<8>          s8;
    bit<8>          from_bits;
    bit<8>          b1;
    bit<8>          slice;
    bit<8>          shifted;
    bit<8>          sum;
    bit<8>          label;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.x) {
            K: labelled;             // the int constant 53 as a bit<8> label
            default: accept;
        }
    }
    state labelled {
        hdr.h.label = 0xff;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.wrap = WRAP;
        hdr.h.q = (bit<8>)Q;
        hdr.h.r = (bit<8>)R;
        hdr.h.neg = NEG8;
        hdr.h.s8 = (bit<8>)S8;
        hdr.h.from_bits = (bit<8>)FROM_BITS;
        hdr.h.b1 = B1 ? 8w1 : 8w0;
        hdr.h.slice = BIG[71:64];      // bits 71..64 of 2**70: 0x40
        hdr.h.shifted = (bit<8>)SHIFTED;
        hdr.h.sum = hdr.h.x + K;       // K becomes bit<8> 53
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
