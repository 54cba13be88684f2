// lookahead of a header type (a valid header), of a struct, of bit<16> and int<8>, and a header lookahead inside select; nothing is consumed, and a packet too short for the lookahead ends the parser with PacketTooShort.
#include <core.p4>
#include <v1model.p4>

header pre_t {
    bit<4> kind;
    bit<4> len;
    bit<8> v;
}

struct peek_t {
    bit<4> kind;
    bit<4> len;
    bool   flag;
    bit<7> rest;
}

header out_t {
    bit<8> kind;
    bit<8> len;
    bit<8> flag;
    bit<8> v;
    bit<8> valid;
    bit<8> word_hi;
    bit<8> s;
}

header data_t {
    bit<8> d0;
    bit<8> d1;
}

struct headers_t {
    out_t  o;
    data_t data;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pre_t p = pkt.lookahead<pre_t>();
        peek_t s = pkt.lookahead<peek_t>();
        bit<16> word = pkt.lookahead<bit<16>>();
        int<8> first = pkt.lookahead<int<8>>();
        hdr.o.setValid();
        hdr.o.kind = (bit<8>)p.kind;
        hdr.o.len = (bit<8>)s.len;
        hdr.o.flag = s.flag ? 8w1 : 8w0;
        hdr.o.v = p.v;
        hdr.o.valid = p.isValid() ? 8w1 : 8w0;
        hdr.o.word_hi = word[15:8];
        hdr.o.s = (bit<8>)(first >> 4);   // arithmetic shift keeps the sign
        transition select(pkt.lookahead<pre_t>().kind) {
            1: one;
            default: accept;
        }
    }
    state one {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.o);
        pkt.emit(hdr.data);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
