// Struct copies have value semantics: a copied metadata struct (with a nested header) does not follow later writes to the source.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}

header inner_t {
    bit<8> v;
}

struct pair_t {
    bit<8>  x;
    inner_t in_h;
}

struct headers_t { h_t h; }
struct meta_t {
    pair_t p1;
    pair_t p2;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.p1.x = hdr.h.a;
        meta.p1.in_h.setValid();
        meta.p1.in_h.v = hdr.h.b;
        meta.p2 = meta.p1;
        meta.p1.x = 0x11;
        meta.p1.in_h.v = 0x22;
        if (hdr.h.a == 0) {
            meta.p1.in_h.setInvalid();
        }
        hdr.h.a = meta.p2.x;
        hdr.h.b = meta.p2.in_h.v;
        hdr.h.c = meta.p2.in_h.isValid() ? 8w1 : 8w0;
        hdr.h.d = meta.p1.in_h.isValid() ? meta.p1.x : 8w0xee;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
