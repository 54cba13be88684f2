// expect-error: needs integer operands
// expect-line: 25
// A compound assignment is checked as `a = a op b`: `|=` on a bool is `|` on bools, which P4 does not have.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
}

struct headers_t { h_t h; }
struct meta_t { bool seen; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.seen |= hdr.h.a == 1; // <- error
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
