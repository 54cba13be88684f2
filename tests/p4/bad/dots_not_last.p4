// expect-error: '...' must be the last element of the list
// expect-line: 23
// A list initializer with `...` before an explicit element: the default values can only stand
// for the elements after the written ones (spec 8.26).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> x;
    bit<8> n;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { tuple<bit<8>, bit<8>> t = { ..., 1 }; } }  // <- error

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
