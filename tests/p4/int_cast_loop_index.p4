// `(int)` casts of loop indices, which p4c folds after unrolling: each iteration's copy of the body has
// the index's value there, so it can form slice bounds (word[(int)i * 8 + 7 : (int)i * 8]), constant
// stack indices ((int)j + 2, an int<8> index from -2) and compile-time comparisons; a continue in one
// iteration, and a for-in loop.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t { h_t[4] s; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bit<32> word = 0x11223344;
        for (bit<8> i = 0; i < 4; i = i + 1) {
            hdr.s[(int)i].b = word[(int)i * 8 + 7 : (int)i * 8];   // byte i from the low end
            if ((int)i == 2) {
                continue;
            }
            hdr.s[i].a = hdr.s[i].a + 1;
        }
        for (int<8> j in -2 .. 1) {
            hdr.s[(int)j + 2].a = hdr.s[(int)j + 2].a + 0x10;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.s); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
