// lookahead<T>() of a struct longer than the rest of the packet: p4c reads it as one lookahead of the
// struct's whole width (ExpandLookahead), which BMv2 refuses with PacketTooShort when fewer bytes remain,
// before anything is assigned; the parser stops there, the headers extracted before stay valid and the
// ingress sees parser_error PacketTooShort. Also lookahead<T>() of a header type whose field is a struct
// (the header becomes valid, the struct's fields sliced from the bits in place).
#include <core.p4>
#include <v1model.p4>

struct row_t {
    bit<4> x;
    bit<4> y;
}

header pre_t {
    bit<8>  kind;
}

header peek_t {
    bit<8> a;
    row_t  r;
}

struct big_t {
    bit<16> a;
    bit<16> b;
    bit<8>  c;
}

header out_t {
    bit<8> err;
    bit<8> c;
    bit<8> peek_valid;
}

struct headers_t {
    out_t  o;
    pre_t  pre;
    peek_t peek;
}

struct meta_t {
    big_t big;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.pre);
        hdr.peek = pkt.lookahead<peek_t>();
        meta.big = pkt.lookahead<big_t>();   // 5 bytes
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.setValid();
        hdr.o.err = sm.parser_error == error.PacketTooShort ? 8w1 :
                    (sm.parser_error == error.NoError ? 8w0 : 8w2);
        hdr.o.c = meta.big.c;
        hdr.o.peek_valid = hdr.peek.isValid() ? 8w1 : 8w0;
        if (hdr.peek.isValid()) {
            hdr.peek.r.x = hdr.peek.r.y;   // swap-free: x takes y
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.o);
        pkt.emit(hdr.pre);
        pkt.emit(hdr.peek);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
