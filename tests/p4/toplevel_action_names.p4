// Top-level actions used by an ingress and an egress table: p4c copies a top-level action into each control using it, so one with a relative @name("set_tag") is I.set_tag in ingress and E.set_tag in egress; one without @name keeps its own name (bump).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> k;
    bit<8> i_tag;
    bit<8> e_tag;
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

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

@name("set_tag") action tag_it(out bit<8> dst, bit<8> val) {
    dst = val;
}

action bump(inout bit<8> n, bit<8> by) {
    n = n + by;
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    table ti {
        key = { hdr.h.k : exact; }
        actions = { tag_it(hdr.h.i_tag); bump(hdr.h.n); NoAction; }
        default_action = NoAction();
    }
    apply {
        ti.apply();
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    table te {
        key = { hdr.h.k : exact; }
        actions = { tag_it(hdr.h.e_tag); bump(hdr.h.n); NoAction; }
        default_action = NoAction();
    }
    apply {
        te.apply();
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
