// Functions with directionless parameters (read-only, passed like in) and generic functions, specialised per call: type arguments inferred from the arguments or given explicitly, over bit<W>, struct and header types.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> w;
    bit<8>  c;
    bit<8>  d;
}

header tag_t {
    bit<8> t;
}

struct pair_t {
    bit<8> x;
    bit<8> y;
}

struct headers_t {
    h_t   h;
    tag_t tag;
}

struct meta_t { }

bit<8> add(bit<8> x, bit<8> y) {   // directionless parameters
    return x + y;
}

T id<T>(in T v) {
    return v;
}

void swap<T>(inout T p, inout T q) {
    T tmp = p;
    p = q;
    q = tmp;
}

T pick<T>(in bool first, in T p, in T q) {
    if (first) {
        return p;
    }
    return q;
}

void put<T>(out T dst, T src) {    // a directionless parameter of a type variable
    dst = src;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action flip() {
        swap(hdr.h.c, hdr.h.d);        // a generic function called from an action
    }

    apply {
        hdr.h.c = add(hdr.h.a, 1);
        swap(hdr.h.a, hdr.h.b);                                  // T = bit<8>
        hdr.h.w = pick(hdr.h.c > 0x80, hdr.h.w, 16w0xbeef);      // T = bit<16>
        pair_t p1 = { 1, 2 };
        pair_t p2 = { 3, 4 };
        swap(p1, p2);                                            // T = pair_t
        hdr.h.d = id(p1.x) + p2.y * 16 + id<bit<8>>(1);          // 3 + 32 + 1
        tag_t t;
        put(t, { 0x77 });                                        // T = tag_t: a valid header
        hdr.tag = id(t);
        if (hdr.h.b == 0x90) {
            flip();
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.tag);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
