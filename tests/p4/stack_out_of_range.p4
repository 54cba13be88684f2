// Run-time header-stack indices past the end in a control, as p4c-bm2-ss compiles them (its HSIndexContretizer pass): a read gives the whole assigned value 0, an if takes its else branch, a switch runs no case, an extern call is skipped, an action argument and a table key become 0, a ?: branch is an assignment of its own, a write is lost.
#include <core.p4>
#include <v1model.p4>

header ctl_t {
    bit<8> op;
    bit<8> i;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<8> r8;
}

header elem_t {
    bit<8> x;
}

struct headers_t {
    ctl_t     ctl;
    elem_t[3] s;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;

    action set_r5(bit<8> v) {
        hdr.ctl.r5 = v;
    }
    action mark(bit<8> v) {
        hdr.ctl.r6 = v;
    }
    table t {
        key = { hdr.s[hdr.ctl.i].x : exact; }
        actions = { mark; }
        default_action = mark(0x11);
        const entries = { 0x00 : mark(0x5a); }
    }

    apply {
        sm.egress_spec = 1;
        hdr.ctl.r1 = hdr.s[hdr.ctl.i].x + 1;
        if (hdr.s[hdr.ctl.i].x == 0) {
            hdr.ctl.r2 = 0xaa;
        } else {
            hdr.ctl.r2 = 0xbb;
        }
        hdr.ctl.r3 = 0xcc;
        switch (hdr.s[hdr.ctl.i].x) {
            0: { hdr.ctl.r3 = 0x01; }
            default: { hdr.ctl.r3 = 0x02; }
        }
        r.write(0, hdr.s[hdr.ctl.i].x);
        r.read(hdr.ctl.r4, 0);
        set_r5(hdr.s[hdr.ctl.i].x + 2);
        t.apply();
        hdr.ctl.r7 = hdr.ctl.op == 9 ? 8w1 : hdr.s[hdr.ctl.i].x + 3;
        hdr.ctl.r8 = hdr.s[hdr.ctl.i].x == 0 ? 8w0x10 : 8w0x20;
        hdr.s[hdr.ctl.i].x = 0xee;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ctl);
        pkt.emit(hdr.s);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
