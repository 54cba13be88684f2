// Const entries: ternary entries win in the order written; an exact table keyed on a tuple.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
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
    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    action set_c(bit<16> v) {
        hdr.h.c = v;
    }
    table tern {
        key = { hdr.h.a : ternary; }
        actions = { set_b; }
        const entries = {
            0x01 &&& 0xff : set_b(1);
            0x00 &&& 0xf0 : set_b(2);
            _ : set_b(3);
        }
    }
    table pair {
        key = {
            hdr.h.a : exact;
            hdr.h.b : exact;
        }
        actions = { set_c; NoAction; }
        const entries = {
            (0x01, 0x01) : set_c(0x0101);
            (0x05, 0x02) : set_c(0x0502);
        }
        const default_action = NoAction();
    }
    apply {
        tern.apply();
        pair.apply();
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
