// Copy-in/copy-out (spec 6.8): an out/inout argument's location, including a run-time stack index, is evaluated once at copy-in and the copy-out writes there, even when the call or a later argument changes the index; for actions, functions and extern methods, on exit and for a whole header.
#include <core.p4>
#include <v1model.p4>

header ctl_t {
    bit<8> op;
    bit<8> i;
    bit<8> c;
}

header elem_t {
    bit<8> x;
}

struct headers_t {
    ctl_t     ctl;
    elem_t[4] s;
}
struct meta_t { }

// Returns c and increments it: an index with a side effect.
bit<8> next_index(inout bit<8> c) {
    c = c + 1;
    return c - 1;
}

// Increments a and returns 5: changes the index variable of an earlier argument.
bit<8> take(inout bit<8> a) {
    a = a + 1;
    return 5;
}

bit<8> advance_out(inout bit<8> i, out bit<8> o) {
    i = i + 1;
    o = 0x77;
    return i;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(8) r;

    action bump(inout bit<8> x) {
        x = x + 1;
    }
    action move_and_bump(inout bit<8> i, inout bit<8> v) {
        i = i + 1;
        v = v + 0x10;
    }
    action add_to(inout bit<8> z, in bit<8> y) {
        z = z + y;
    }
    action move_and_flip(inout bit<8> i, inout elem_t e) {
        i = i + 1;
        e.x = e.x ^ 0xff;
    }
    action move_and_exit(inout bit<8> i, inout bit<8> v) {
        i = i + 1;
        v = 0x99;
        exit;
    }

    apply {
        sm.egress_spec = 1;
        if (hdr.ctl.op == 1) {
            // the index call runs once; bump's result goes back to the same element
            bit<8> c = hdr.ctl.i;
            bump(hdr.s[next_index(c)].x);
            hdr.ctl.c = c;
        } else if (hdr.ctl.op == 2) {
            // i is copied out first, then v to s[old i]
            move_and_bump(hdr.ctl.i, hdr.s[hdr.ctl.i].x);
        } else if (hdr.ctl.op == 3) {
            // the spec's example: the second argument changes the first one's index
            add_to(hdr.s[hdr.ctl.i].x, take(hdr.ctl.i));
        } else if (hdr.ctl.op == 4) {
            // a function with an out argument into s[i] while it changes i
            hdr.ctl.c = advance_out(hdr.ctl.i, hdr.s[hdr.ctl.i].x);
        } else if (hdr.ctl.op == 5) {
            // a whole header element as an inout argument
            move_and_flip(hdr.ctl.i, hdr.s[hdr.ctl.i]);
        } else if (hdr.ctl.op == 6) {
            // an extern method's out argument: its location is taken before the index call
            r.write(5, 0x55);
            r.read(hdr.s[hdr.ctl.i].x, (bit<32>) take(hdr.ctl.i));
        } else if (hdr.ctl.op == 7) {
            // copy-out also happens when the action exits
            move_and_exit(hdr.ctl.i, hdr.s[hdr.ctl.i].x);
        }
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
