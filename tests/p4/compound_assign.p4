// Compound assignments (spec 12.1): all twelve operators (+= -= *= /= %= &= |= ^= <<= >>= |+|= |-|=) on bit and int fields and on a slice; `a op= b` evaluates a's location once (a side-effecting or changing stack index) and reads a before b.
#include <core.p4>
#include <v1model.p4>

header ops_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
    bit<8> g;
    bit<8> h;
    bit<8> k;
    bit<8> l;
    bit<8> m;
    bit<8> p;
    bit<8> n;
    int<8> sa;
    int<8> sb;
    bit<8> w;
    bit<8> i;
    bit<8> q;
    bit<8> j;
    bit<8> r;
}

header elem_t {
    bit<8> x;
}

struct headers_t {
    ops_t     o;
    elem_t[3] s;
}
struct meta_t { }

// Returns c and increments it: an index with a side effect.
bit<8> next_index(inout bit<8> c) {
    c = c + 1;
    return c - 1;
}

// Increments a and returns 5.
bit<8> take(inout bit<8> a) {
    a = a + 1;
    return 5;
}

// Increments v and returns 0x10.
bit<8> ret10(inout bit<8> v) {
    v = v + 1;
    return 0x10;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.o);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.a += 0x10;
        hdr.o.b -= 0x10;
        hdr.o.c *= 3;
        hdr.o.d /= 4;
        hdr.o.e %= 8;
        hdr.o.f &= 0x0f;
        hdr.o.g |= 0x0f;
        hdr.o.h ^= 0xff;
        hdr.o.k <<= hdr.o.n;
        hdr.o.l >>= 2;
        hdr.o.m |+|= 0x80;
        hdr.o.p |-|= 0x80;
        hdr.o.sa >>= 2;
        hdr.o.sb |+|= 100;
        hdr.o.w[7:4] += 1;
        // the index call runs once: s[c] is read and written, c goes up by one
        bit<8> c = hdr.o.i;
        hdr.s[next_index(c)].x += 1;
        hdr.o.q = c;
        // the location s[j] is fixed before take() changes j
        hdr.s[hdr.o.j].x += take(hdr.o.j);
        // v is read before ret10() changes it; the assignment then overwrites that change
        bit<8> v = hdr.o.r;
        v += ret10(v);
        hdr.o.r = v;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.o);
        pkt.emit(hdr.s);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
