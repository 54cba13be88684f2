// `(int)` casts of a loop index that the body itself advances: p4c folds them after unrolling, by
// constant propagation through each iteration's copy, so a cast after `i = i + 2` reads the new
// value, and one after an `if` whose branch writes the index and breaks reads the old one.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
}

struct headers_t { h_t[8] s; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
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
        for (bit<8> i = 0; i < 6; ) {
            hdr.s[(int)i].a = 0xa0;             // the iteration's value: 0, 2, 4
            if (hdr.s[7].a == 0x77) {
                i = 5;                          // a write a break always follows
                break;
            }
            hdr.s[(int)i + 1].a = 0xb0;         // still the iteration's value: 1, 3, 5
            i = i + 2;
            hdr.s[(int)i].a = i;                // the value just written: 2, 4, 6
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.s); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
