// Direct invocation of parsers and controls (T.apply(...) without an instance): p4c instantiates T in the calling block under T's own name, so its tables are <block>.T.<table>; a directly invoked control invoking another, the same control invoked from ingress and egress, and table-less blocks invoked twice.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
header o_t { bit<8> c; }

struct headers_t {
    h_t h;
    h_t h2;
    o_t o;
}
struct meta_t { }

parser Sub(packet_in pkt, out h_t x) {
    state start {
        pkt.extract(x);
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        Sub.apply(pkt, hdr.h);
        transition select(hdr.h.a) {
            1: more;
            default: accept;
        }
    }
    state more {
        Sub.apply(pkt, hdr.h2);  // Sub names nothing, so invoking it twice is allowed
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control Mark(inout h_t x) {
    apply { x.b = x.b + 1; }
}

control Fwd(inout h_t x, inout standard_metadata_t sm) {
    action set(bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { x.a : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
        Mark.apply(x);
    }
}

control Tagger(inout o_t o, in h_t x) {
    action tag(bit<8> v) { o.c = v; }
    table tags {
        key = { x.a : exact; }
        actions = { tag; NoAction; }
        default_action = tag(0xee);
    }
    apply { tags.apply(); }
}

control Both(inout headers_t hdr, inout standard_metadata_t sm) {
    apply { Tagger.apply(hdr.o, hdr.h); }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.setValid();
        Fwd.apply(hdr.h, sm);
        Mark.apply(hdr.h);
        Mark.apply(hdr.h);
        Both.apply(hdr, sm);
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { Tagger.apply(hdr.o, hdr.h); }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.h2);
        pkt.emit(hdr.o);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
