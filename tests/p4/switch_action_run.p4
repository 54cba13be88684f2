// switch on t.apply().action_run, and .hit / .miss of other tables.
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
    action a1() {
        hdr.h.b = 1;
    }
    action a2() {
        hdr.h.b = 2;
    }
    action a3() {
        hdr.h.b = 3;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { a1; a2; a3; NoAction; }
        default_action = NoAction();
    }
    table t2 {
        key = { hdr.h.b : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    table t3 {
        key = { hdr.h.a : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    apply {
        switch (t.apply().action_run) {
            a1: { hdr.h.c = 0x0001; }
            a2: { hdr.h.c = 0x0002; }
            default: { hdr.h.c = 0x00ff; }
        }
        if (t2.apply().hit) {
            hdr.h.d = 0x11111111;
        } else {
            hdr.h.d = 0x22222222;
        }
        if (t3.apply().miss) {
            hdr.h.a = 0xee;
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
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
