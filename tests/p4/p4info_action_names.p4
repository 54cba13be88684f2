// An absolute @name and a top-level action next to a local action of the same name (P4Info as p4c writes it): the local set is I.set (alias I.set: the top-level set already has the suffix set), the top-level set, named .set in the table, is set; the local @name(".tag") action is tag, listed once although Sub is instantiated twice, both Sub tables referring to its one id.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> k;
    bit<8> a;
    bit<8> b;
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

action set(inout bit<8> dst, bit<8> v) {
    dst = v + 1;
}

control Sub(inout headers_t hdr) {
    @name(".tag") action tag_b(bit<8> v) {
        hdr.h.b = v;
    }
    table st {
        key = { hdr.h.k : exact; }
        actions = { tag_b; NoAction; }
        default_action = NoAction();
    }
    apply { st.apply(); }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() s1;
    Sub() s2;
    action set(bit<8> v) {
        hdr.h.a = v;
    }
    table t {
        key = { hdr.h.k : exact; }
        actions = { set; .set(hdr.h.a); }
        default_action = .set(hdr.h.a, 0x40);
    }
    apply {
        t.apply();
        s1.apply(hdr);
        s2.apply(hdr);
        sm.egress_spec = 1;
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
