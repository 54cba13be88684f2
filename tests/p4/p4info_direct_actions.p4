// Actions called directly from an apply block (P4Info as p4c writes it): p4c's frontend binds every parameter of such an action at the call (RemoveActionParameters), so P4Info lists mark and top_mark without parameters; fwd, also listed by a table, keeps its parameter (the table's use comes first); mark called twice with different arguments is one action.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> k;
    bit<8> a;
    bit<8> b;
    bit<8> c;
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

action top_mark(inout bit<8> dst, bit<8> v) {
    dst = v;
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) {
        sm.egress_spec = port;
    }
    action mark(bit<8> v) {
        hdr.h.a = v;
    }
    table t {
        key = { hdr.h.k : exact; }
        actions = { fwd; }
    }
    apply {
        fwd(2);
        t.apply();
        if (hdr.h.k == 1) {
            mark(0x11);
        } else {
            mark(0x22);
        }
        top_mark(hdr.h.b, 0x33);
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
