// expect-error: Division is not defined for negative numbers
// expect-line: 15
// Division of a negative arbitrary-precision int: / and % are defined for positive values only.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> x;
    bit<8> n;
}

struct headers_t { h_t h; }
struct meta_t { }

const int HALF = -7 / 2;  // <- error

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.n = (bit<8>)HALF;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
