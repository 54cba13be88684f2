// Table keys with side effects: each key expression is evaluated once per apply, in the order the keys are written, before the lookup; the action sees the side effects.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> c;
    bit<8> res;
}

struct headers_t { h_t h; }
struct meta_t {
    bit<8> c;
}

// Increments c and returns the new value.
bit<8> bump(inout bit<8> c) {
    c = c + 1;
    return c;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_out(bit<8> v) {
        // the keys were computed before the action runs: meta.c is already bumped twice
        hdr.h.res = v + meta.c;
    }
    action none() {
        hdr.h.res = 0xee;
    }
    table t {
        key = {
            bump(meta.c) : exact @name("first");
            bump(meta.c) : exact @name("second");
        }
        actions = { set_out; none; }
        default_action = none();
    }
    apply {
        meta.c = hdr.h.c;
        t.apply();
        hdr.h.c = meta.c;
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
