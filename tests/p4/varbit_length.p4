// varbit extract with length expressions (in bits, and bytes * 8) and BMv2's error order: a length that is not whole bytes is ParserInvalidArgument, a packet that ends first is PacketTooShort, a length over the varbit's maximum is HeaderTooShort; the failed header stays invalid.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> bits;    // length of v.data in bits
    bit<8> bytes;   // length of w.data in bytes
    bit<8> err;     // written by ingress: the parser error, bit 7 v invalid, bit 6 w invalid
}

header v_t {
    bit<8>     f;
    varbit<32> data;
}

header w_t {
    varbit<16> data;
}

struct headers_t {
    h_t h;
    v_t v;
    w_t w;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.v, (bit<32>)hdr.h.bits);
        pkt.extract(hdr.w, (bit<32>)hdr.h.bytes * 8);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bit<8> e = 4;
        if (sm.parser_error == error.NoError) {
            e = 0;
        } else if (sm.parser_error == error.ParserInvalidArgument) {
            e = 1;
        } else if (sm.parser_error == error.HeaderTooShort) {
            e = 2;
        } else if (sm.parser_error == error.PacketTooShort) {
            e = 3;
        }
        if (!hdr.v.isValid()) {
            e = e | 0x80;
        }
        if (!hdr.w.isValid()) {
            e = e | 0x40;
        }
        hdr.h.err = e;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.v);
        pkt.emit(hdr.w);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
