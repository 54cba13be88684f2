// expect-error: expected bit<8>, got bit<16>
// expect-line: 27
// Two independent errors in two controls (a bit<16> value into a bit<8> field; a table size
// that is a bool): both are reported, in order.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<16> c;
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
        hdr.h.a = hdr.h.c;  // <- error
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action mark() { hdr.h.a = 1; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { mark; }
        size = false;  // <- error
    }
    apply { t.apply(); }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
