// bit<W> and int<W> wider than 128 bits: extracted, computed with every operator P4 defines on
// them, hashed and emitted, and random() wider than 64 bits (tests/native/test_engine_wide.py compares both engines).
#include <core.p4>
#include <v1model.p4>

header in_t {
    bit<200> a;
    bit<200> b;
    bit<8>   n;      // a shift amount
    bit<8>   op;
}
header out_t {
    bit<200> sum;
    bit<200> diff;
    bit<200> prod;
    bit<200> bits;   // a & b ^ (a | ~b)
    bit<200> shl;
    bit<200> shr;
    int<200> sar;
    bit<256> cat;    // a[127:0] ++ b[127:0]
    bit<136> mid;    // a[170:35]
    bit<64>  lo;     // (bit<64>)a
    bit<120> hi;     // b[199:80]
    int<192> neg;
    bit<8>   cmp;
    bit<32>  h;
    bit<200> misc;
    bit<128> r1;     // random() wider than 64 bits: between a and b's low halves,
    bit<128> r2;     // over the whole range,
    bit<104> r3;     // up to b's low bits
}
struct headers_t {
    in_t  i;
    out_t o;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        transition accept;
    }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        bit<200> a = hdr.i.a;
        bit<200> b = hdr.i.b;
        hdr.o.sum = a + b;
        hdr.o.diff = a - b;
        hdr.o.prod = a * b;
        hdr.o.bits = a & b ^ (a | ~b);
        hdr.o.shl = a << hdr.i.n;
        hdr.o.shr = b >> hdr.i.n;
        int<200> sa = (int<200>)a;
        hdr.o.sar = sa >> hdr.i.n;
        hdr.o.cat = a[127:0] ++ b[127:0];
        hdr.o.mid = a[170:35];
        hdr.o.lo = (bit<64>)a;
        hdr.o.hi = b[199:80];
        int<192> s192 = (int<192>)(int<200>)(int<8>)hdr.i.op;
        hdr.o.neg = -s192 + (int<192>)(bit<192>)b[191:0];
        bit<8> c = 0;
        if (a < b) { c = c | 1; }
        if (a >= b) { c = c | 2; }
        if (sa < (int<200>)b) { c = c | 4; }
        if (a == b) { c = c | 8; }
        if (a != 200w0) { c = c | 16; }
        if ((int<200>)b > -1) { c = c | 32; }
        hdr.o.cmp = c;
        hash(hdr.o.h, HashAlgorithm.crc32, 32w0, { a, hdr.i.n, b }, 32w0);
        bit<200> m = a / 8 + b % 1024 + (bit<200>)hdr.i.n + 200w0x1234567890abcdef1234567890abcdef1234;
        m[150:20] = b[130:0];
        m[199:192] = hdr.i.op;
        if (hdr.i.op[0:0] == 1) { m = m << 199; }
        hdr.o.misc = m;
        random(hdr.o.r1, a[127:0], b[127:0]);
        random(hdr.o.r2, 128w0, 128w0xffffffffffffffffffffffffffffffff);
        random(hdr.o.r3, 104w0, b[103:0]);
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.o);
        pkt.emit(hdr.i);
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
