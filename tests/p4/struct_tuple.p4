// Struct initializers by name and by position, header assignment from a list, and the ?: operator.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
}

header x_t {
    bit<8> p;
    bit<8> q;
}

struct pair_t {
    bit<8> first;
    bit<8> second;
}

struct headers_t {
    h_t h;
    x_t x;
}
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
    apply {
        pair_t p = { first = hdr.h.b, second = hdr.h.a };
        pair_t q = { 8w3, 8w4 };
        hdr.h.a = p.first;
        hdr.h.b = p.second;
        hdr.h.c = (hdr.h.a > 8w0x10) ? 16w1 : 16w2;
        hdr.x = { q.second, q.first };
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
        pkt.emit(hdr.x);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
