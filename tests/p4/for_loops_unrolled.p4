// for loops current p4c unrolls for BMv2 beyond `index < constant` with one write of the index: the
// index's values computed in its own width (bit<8> `i + 1` wraps from 255 to 0, so `i != 2` ends), and an
// index also written in the body where a break always follows the write (p4c's def-use: that write never
// reaches the condition; later reads see the written value).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> n;
    bit<8> wraps;
    bit<8> sum;
    bit<8> last;
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
        hdr.h.wraps = 0;
        for (bit<8> w = 250; w != 2; w = w + 1) {   // 250 .. 255, 0, 1: 8 iterations
            hdr.h.wraps = hdr.h.wraps + 1;
        }
        bit<8> i;
        hdr.h.sum = 0;
        for (i = 0; i < 8; i = i + 1) {
            if (hdr.h.n == i) {
                i = i + 100;
                break;
            }
            hdr.h.sum = hdr.h.sum + i;
        }
        hdr.h.last = i;
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
