// expect-error: BMV2 does not support loops
// expect-line: 26
// A three-clause loop bounded by a packet field: p4c cannot unroll it, and BMv2 runs only unrolled loops.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> n;
    bit<8> sum;
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
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {  // <- error
            hdr.h.sum = hdr.h.sum + i;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
