// Header unions in emit (the valid member, or nothing) and a stack of header unions: extract into us.next.<member>, lastIndex, element members read by index, StackOutOfBounds when the union stack overflows; setValid on one member invalidates the other.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> kind;    // 1: an a_t follows, 2: a b_t follows, else: the last a_t
}

header a_t {
    bit<8> x;
}

header b_t {
    bit<16> y;
}

header_union ab_t {
    a_t a;
    b_t b;
}

header cnt_t {
    bit<8> n;       // unions extracted into the stack
    bit<8> flags;   // bit 2i: us[i].a valid, bit 2i+1: us[i].b valid
}

struct headers_t {
    cnt_t   cnt;
    ab_t[3] us;
    ab_t    single;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        transition select(pkt.lookahead<tag_t>().kind) {
            1: pa;
            2: pb;
            default: finish;
        }
    }
    state pa {
        pkt.advance(8);
        pkt.extract(hdr.us.next.a);
        transition start;
    }
    state pb {
        pkt.advance(8);
        pkt.extract(hdr.us.next.b);
        transition start;
    }
    state finish {
        pkt.advance(8);
        pkt.extract(hdr.single.a);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.cnt.setValid();
        hdr.cnt.n = 0;
        if (hdr.us[0].isValid()) {
            hdr.cnt.n = (bit<8>)(hdr.us.lastIndex + 1);
        }
        bit<8> f = 0;
        if (hdr.us[0].a.isValid()) { f = f | 0x01; }
        if (hdr.us[0].b.isValid()) { f = f | 0x02; }
        if (hdr.us[1].a.isValid()) { f = f | 0x04; }
        if (hdr.us[1].b.isValid()) { f = f | 0x08; }
        if (hdr.us[2].a.isValid()) { f = f | 0x10; }
        if (hdr.us[2].b.isValid()) { f = f | 0x20; }
        hdr.cnt.flags = f;
        if (hdr.single.a.isValid()) {
            hdr.single.b.setValid();    // single.a becomes invalid
            hdr.single.b.y = 0xabcd;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.cnt);
        pkt.emit(hdr.us);
        pkt.emit(hdr.single);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
