// bool fields: one bit on the wire in a header (not byte-aligned), in metadata structs, as select and table keys (exact and ternary), as action parameters (from const entries and from the control plane), and cast to bit<1>.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<3> a;
    bool   f;
    bool   g;
    bit<3> c;
    bit<8> b;
}

struct headers_t { h_t h; }

struct meta_t {
    bool m;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.f, hdr.h.g) {
            (true, false): accept;
            (false, true): accept;
            default: both;
        }
    }
    state both {
        meta.m = true;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) {
        hdr.h.b = v;
    }
    action setg(bool v) {
        hdr.h.g = v;
    }
    action set2(bit<8> v, bool w) {
        hdr.h.b = v;
        hdr.h.f = w;
    }

    table t {
        key = {
            hdr.h.f : exact;
            meta.m  : exact;
        }
        actions = { set; setg; NoAction; }
        const entries = {
            (true, false) : set(1);
            (false, true) : setg(true);
        }
        default_action = NoAction();
    }

    table t2 {
        key = { hdr.h.g : ternary; }
        actions = { set2; NoAction; }
        default_action = NoAction();
    }

    apply {
        t.apply();
        t2.apply();
        if (meta.m) {
            hdr.h.c = 7;
        }
        hdr.h.a = (bit<1>)meta.m ++ (bit<1>)hdr.h.f ++ (bit<1>)hdr.h.g;
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
