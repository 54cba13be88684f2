// sm.parser_error for each way a parser can fail: NoError, PacketTooShort, NoMatch (select without default), a user error from verify; ingress runs every time.
#include <core.p4>
#include <v1model.p4>

error { BadByte }

header m_t {
    bit<8> mode;
    bit<8> code;
}

header b_t {
    bit<8> v;
}

header d_t {
    bit<32> v;
}

struct headers_t {
    m_t m;
    b_t b;
    d_t d;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.m);
        transition select(hdr.m.mode) {
            1: need_d;
            2: must_match;
            3: must_verify;
            default: accept;
        }
    }
    state need_d {
        pkt.extract(hdr.d);
        transition accept;
    }
    state must_match {
        pkt.extract(hdr.b);
        transition select(hdr.b.v) {
            0x01: accept;
            0x02: need_d;
        }
    }
    state must_verify {
        pkt.extract(hdr.b);
        verify(hdr.b.v == 0, error.BadByte);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.NoError) {
            hdr.m.code = 0;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.m.code = 1;
        } else if (sm.parser_error == error.NoMatch) {
            hdr.m.code = 2;
        } else if (sm.parser_error == error.BadByte) {
            hdr.m.code = 3;
        } else {
            hdr.m.code = 0xff;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.m);
        pkt.emit(hdr.b);
        pkt.emit(hdr.d);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
