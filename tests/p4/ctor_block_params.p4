// Parsers and controls passed as constructor arguments: a sub-parser given to the main parser (P(OneH())); controls given to a control as a new instance (Twice(AddK(1))), as an existing instance (Twice(tag) applies tag itself), passed on to a nested instance, and through a generic control type. An instance built for an argument is named after the constructor parameter: its table is I.fresh.s.t.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    h_t h;
    h_t h2;
}
struct meta_t { }

parser SubT(packet_in pkt, out h_t x);

parser OneH(packet_in pkt, out h_t x) {
    state start {
        pkt.extract(x);
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm)
        (SubT sub) {
    state start {
        sub.apply(pkt, hdr.h);
        transition select(hdr.h.a) {
            0: accept;
            default: more;
        }
    }
    state more {
        sub.apply(pkt, hdr.h2);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control Step(inout h_t x);
control StepOf<T>(inout T x);

control AddK(inout h_t x)(bit<8> k) {
    apply { x.b = x.b + k; }
}

control Tag(inout h_t x) {
    action set_b(bit<8> v) { x.b = v; }
    table t {
        key = { x.a : exact; }
        actions = { set_b; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); }
}

control Twice(inout h_t x)(Step s) {
    apply {
        s.apply(x);
        s.apply(x);
    }
}

control Outer(inout h_t x)(Step s) {
    Twice(s) inner;  // Outer's own argument, passed on
    apply { inner.apply(x); }
}

control Gen(inout h_t x)(StepOf<h_t> s) {
    apply { s.apply(x); }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Tag() tag;
    Twice(AddK(1)) plus2;
    Outer(AddK(4)) outer;
    Gen(AddK(0x10)) gen;
    Twice(tag) shared;
    Twice(Tag()) fresh;
    apply {
        sm.egress_spec = 1;
        plus2.apply(hdr.h);
        outer.apply(hdr.h);
        gen.apply(hdr.h);
        shared.apply(hdr.h);
        if (hdr.h2.isValid()) {
            tag.apply(hdr.h2);
            fresh.apply(hdr.h2);
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.h2);
    }
}

V1Switch(P(OneH()), VC(), I(), E(), CC(), D()) main;
