// Tables and actions p4c's frontend removes before writing P4Info: RemoveReturns drops the statements of a block after one that always returns or exits (both arms of an if; never a switch), but only in an apply block with a return in it, so I.dead_ret, I.dead_exit, I.dead_both and I.dead_direct are not listed while E.kept_after_exit (E has no return) and I.after_switch are. A table whose actions all exit (I.exits) and the table after it stay: p4c removes exits only in its midend.
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

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_a(bit<8> v) { hdr.h.a = v; }
    action set_b(bit<8> v) { hdr.h.b = v; }
    action stop() { exit; }
    action stop_marked(bit<8> v) {
        hdr.h.b = v;
        exit;
    }
    action dead_direct(bit<8> v) { hdr.h.b = v; }
    table exits {
        key = { hdr.h.k : exact; }
        actions = { stop; stop_marked; NoAction; }
        default_action = NoAction();
    }
    table after { key = { hdr.h.k : exact; } actions = { set_a; } }
    table sw { key = { hdr.h.k : exact; } actions = { set_b; } }
    table after_switch { key = { hdr.h.k : exact; } actions = { set_b; } }
    table dead_ret { key = { hdr.h.k : exact; } actions = { set_a; } }
    table dead_exit { key = { hdr.h.k : exact; } actions = { set_a; } }
    table dead_both { key = { hdr.h.k : exact; } actions = { set_a; } }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k == 7) {
            return;
            dead_ret.apply();
            dead_direct(1);
        }
        if (hdr.h.k == 6) {
            hdr.h.a = 0x66;
            exit;
            dead_exit.apply();
        }
        if (hdr.h.k == 5) {
            if (hdr.h.a == 1) {
                return;
            } else {
                exit;
            }
            dead_both.apply();
        }
        exits.apply();
        after.apply();
        switch (sw.apply().action_run) {
            default: {
                return;
            }
        }
        after_switch.apply();
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_b(bit<8> v) { hdr.h.b = v; }
    table kept_after_exit { key = { hdr.h.k : exact; } actions = { set_b; } }
    apply {
        if (hdr.h.k == 3) {
            exit;
            kept_after_exit.apply();
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
