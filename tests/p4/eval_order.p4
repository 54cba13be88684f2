// Evaluation order with side effects: operands and function/action/extern arguments left to right, && || and ?: evaluate only what they must, a table applied inside a condition only when reached.
#include <core.p4>
#include <v1model.p4>

header io_t {
    bit<8> n;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
    bit<8> r8;
    bit<8> r9;
    bit<8> r10;
    bit<8> r11;
}

struct headers_t { io_t io; }
struct meta_t { }

// Returns the old value of x and increments x: a call with a side effect on its argument.
bit<8> post_inc(inout bit<8> x) {
    bit<8> old = x;
    x = x + 1;
    return old;
}

bit<16> pair(in bit<8> x, in bit<8> y) {
    return x ++ y;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.io);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(256) r;

    action record(bit<8> first, bit<8> second) {
        hdr.io.r5 = first;
        hdr.io.r6 = second;
    }
    action hit_mark() { hdr.io.r10 = 0x01; }
    action miss_mark() { hdr.io.r10 = 0x20; }
    table t {
        key = { hdr.io.n : exact; }
        actions = { hit_mark; miss_mark; }
        default_action = miss_mark();
        const entries = { 0x05 : hit_mark(); }
    }

    apply {
        bit<8> n = hdr.io.n;
        // the left operand is read before the call on the right changes n
        hdr.io.r1 = (n << 4) + post_inc(n);
        // the call on the left runs before n is read on the right
        hdr.io.r2 = post_inc(n) - n;
        // function arguments: x is copied in before the second argument's call
        bit<16> p = pair(n, post_inc(n));
        hdr.io.r3 = p[15:8];
        hdr.io.r4 = p[7:0];
        // directionless action arguments, in order too
        record(n, post_inc(n));
        // && and || evaluate their right side only when the left does not decide
        bool z = hdr.io.n == 0 && post_inc(n) == 0;
        bool o = hdr.io.n != 0 || post_inc(n) == 5;
        hdr.io.r7 = (z ? 8w1 : 8w0) | (o ? 8w2 : 8w0);
        // ?: evaluates only the branch it picks
        hdr.io.r8 = hdr.io.n == 3 ? post_inc(n) : 8w0x33;
        // an extern method's arguments: the index (with its call) before the value
        r.write((bit<32>) post_inc(n), n);
        r.read(hdr.io.r11, (bit<32>) (n - 1));
        // how many calls ran
        hdr.io.r9 = n;
        // the table is applied only when the left side of && holds
        hdr.io.r10 = 0;
        if (hdr.io.n[0:0] == 1 && t.apply().hit) {
            hdr.io.r10 = hdr.io.r10 | 0x10;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.io); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
