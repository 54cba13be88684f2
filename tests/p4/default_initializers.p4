// Default initializers (P4_16 1.2.5 §8.26) and default values (§7.3): `...` alone is the default
// value of the type its context gives; last in `{f = v, ...}` or `{v, ...}` it stands for the
// default values of the fields not written. Defaults: 0 for bit/int, false for bool, the first
// member of a plain enum, 0 for a serializable enum (even when no member is 0), error.NoError,
// an invalid header, and structs/tuples field by field. A header built from a struct or list
// expression is valid; a header that is `...` is invalid.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Ser { A = 3, B = 5 }
enum Plain { First, Second }

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}

header o_t {
    bit<8> x;
    bit<8> y;
}

struct inner_t {
    bit<4> n;
    bool   f;
    o_t    o;
}

struct s_t {
    bit<8>  a;
    bit<16> b;
    bool    c;
    Ser     e;
    Plain   p;
    error   err;
    inner_t inner;
    int<8>  i;
}

struct pair_t {
    bit<8> lo;
    bit<8> hi;
}

struct headers_t {
    h_t h;
    o_t o;
    o_t p;
    o_t q;
}
struct meta_t { }

bit<8> total(in pair_t v) {
    return v.lo + v.hi;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.p);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        s_t k = { a = 1, ... };
        const pair_t kp = { hi = 2, ... };
        s_t s = { i = -1, c = true, ... };
        tuple<bit<8>, bool, Plain> tp = { 7, ... };
        // byte a: k.a = 1 and every other field of k at its default (all checks true: 0x80)
        hdr.h.a = k.a;
        if (k.b == 0 && !k.c && (bit<8>)k.e == 0 && k.p == Plain.First
                && k.err == error.NoError && k.inner.n == 0 && !k.inner.f
                && !k.inner.o.isValid() && k.i == 0) {
            hdr.h.a = hdr.h.a | 0x80;
        }
        // byte b: the fields written are there, the others default
        hdr.h.b = (bit<8>)s.i;
        if (s.c && s.a == 0) {
            hdr.h.b = hdr.h.b ^ 0x0f;
        }
        // byte c: a tuple's remaining elements, function arguments, assignment of `...`
        hdr.h.c = tp[0] + total(...) + total({ 0x10, ... }) + total(kp);
        if (!tp[1] && tp[2] == Plain.First) {
            hdr.h.c = hdr.h.c | 0x80;
        }
        s = ...;
        if (s == { 0, ... } && !s.c) {
            hdr.h.d = 0x5d;
        }
        // headers: from a struct expression and from a list (valid), and `...` (invalid)
        hdr.o = (o_t){ y = 0x99, ... };
        hdr.q = { 0x42, ... };
        hdr.p = ...;
        o_t z = (o_t){...};  // a valid header with every field 0
        if (z.isValid() && z.x == 0 && z.y == 0) {
            hdr.h.d = hdr.h.d | 0x80;
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
        pkt.emit(hdr.o);
        pkt.emit(hdr.p);
        pkt.emit(hdr.q);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
