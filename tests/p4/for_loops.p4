// for loops: three-clause loops (continue still runs the updates, break does not), a decrementing loop, for-in over constant ranges (one indexing a header stack, one picking from three values), nested loops, a loop in a function and one in a table action.
#include <core.p4>
#include <v1model.p4>

header item_t {
    bit<8> v;
}

header out_t {
    bit<8> sum;        // 0 + 1 + 3 + ... until an item's value is reached
    bit<8> steps;      // how many times the updates ran
    bit<8> down;       // 9 + 6 + 3
    bit<8> range_sum;  // squares of 1..5 except 3
    bit<8> valid;      // valid elements of the stack
    bit<8> stack_sum;  // their values added up
    bit<8> list_max;   // the largest of {items[0], 7, items[1]}
    bit<8> pairs;      // nested loops, the inner one broken off
    bit<8> act;        // the table action's loop
    bit<8> pop;        // a function's loop: bits set in items[0]
}

struct headers_t {
    item_t[4] items;
    out_t     res;
}

struct meta_t { }

bit<8> popcount(in bit<8> x) {
    bit<8> c = 0;
    for (bit<8> i = 0; i < 8; i = i + 1) {
        c = c + ((x >> i) & 1);
    }
    return c;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        transition select(hdr.items.last.v) {
            0: accept;
            default: more;
        }
    }
    state more {
        pkt.extract(hdr.items.next);
        transition select(hdr.items.last.v) {
            0: accept;
            default: more;
        }
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action times_first(bit<8> times) {
        bit<8> acc = 0;
        for (bit<8> i = 0; i < 8; i = i + 1) {
            if (i == times) {
                break;
            }
            acc = acc + hdr.items[0].v;
        }
        hdr.res.act = acc;
    }
    table t {
        key = { hdr.items[0].v : exact @name("first"); }
        actions = { times_first; NoAction; }
        default_action = times_first(2);
    }
    apply {
        hdr.res.setValid();
        sm.egress_spec = 1;

        bit<8> s = 0;
        bit<8> n = 0;
        for (bit<8> i = 0; i < 10; i = i + 1, n = n + 1) {
            if (i == 2) {
                continue;
            }
            if (i == hdr.items[0].v) {
                break;
            }
            s = s + i;
        }
        hdr.res.sum = s;
        hdr.res.steps = n;

        bit<8> d = 0;
        for (bit<8> j = 9; j > 0; j = j - 3) {
            d = d + j;
        }
        hdr.res.down = d;

        bit<8> r = 0;
        for (bit<8> k in 1 .. 5) {
            if (k == 3) {
                continue;
            }
            r = r + k * k;
        }
        hdr.res.range_sum = r;

        bit<8> cnt = 0;
        bit<8> total = 0;
        for (bit<8> j in 0 .. 3) {  // unrolled: hdr.items[j] has a constant index each time
            if (hdr.items[j].isValid()) {
                cnt = cnt + 1;
                total = total + hdr.items[j].v;
            }
        }
        hdr.res.valid = cnt;
        hdr.res.stack_sum = total;

        bit<8> m = 0;
        for (bit<8> k in 0 .. 2) {
            bit<8> x = k == 0 ? hdr.items[0].v : (k == 1 ? 8w7 : hdr.items[1].v);
            if (x > m) {
                m = x;
            }
        }
        hdr.res.list_max = m;

        bit<8> p = 0;
        for (bit<8> a = 0; a < 4; a = a + 1) {
            for (bit<8> b = 0; b < 4; b = b + 1) {
                if (b == a) {
                    break;
                }
                p = p + 1;
            }
        }
        hdr.res.pairs = p;

        t.apply();
        hdr.res.pop = popcount(hdr.items[0].v);
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
        pkt.emit(hdr.items);
        pkt.emit(hdr.res);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
