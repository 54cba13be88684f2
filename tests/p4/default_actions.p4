// A const default action (fixed) and a plain default action (replaceable by setdefault).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action act_b(bit<8> v) {
        hdr.h.b = v;
    }
    action act_c(bit<16> v) {
        hdr.h.c = v;
    }
    table t1 {
        key = { hdr.h.a : exact; }
        actions = { act_b; }
        const default_action = act_b(0xcc);
    }
    table t2 {
        key = { hdr.h.a : exact; }
        actions = { act_c; NoAction; }
        default_action = act_c(0x0bad);
    }
    apply {
        t1.apply();
        t2.apply();
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
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
