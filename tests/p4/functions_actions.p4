// Functions with return values and an inout parameter; actions called from the apply block with directionless and inout arguments.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

bit<8> max8(in bit<8> x, in bit<8> y) {
    return x > y ? x : y;
}

bit<16> add_twice(in bit<16> v, inout bit<8> calls) {
    calls = calls + 1;
    return v + v;
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
    action bump(bit<8> amount) {
        hdr.h.a = hdr.h.a + amount;
    }
    action incr(inout bit<8> x) {
        x = x + 1;
    }
    apply {
        bump(3);
        incr(hdr.h.b);
        hdr.h.c = (bit<16>) max8(hdr.h.a, hdr.h.b);
        bit<8> calls = 0;
        bit<16> twice = add_twice(hdr.h.c, calls);
        hdr.h.d = ((bit<8>) 0 ++ calls) ++ twice;
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
