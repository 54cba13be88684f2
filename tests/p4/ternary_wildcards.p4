// Ternary and lpm keys written with STF don't-care digits (0x**0*, 0b1*0*, short values) and &&& masks.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> t16;
    bit<8>  t8;
    bit<32> addr;
    bit<8>  which;
    bit<8>  route;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action mark(bit<8> w) {
        hdr.h.which = w;
    }
    action route(bit<8> r) {
        hdr.h.route = r;
    }
    table tern {
        key = {
            hdr.h.t16 : ternary;
            hdr.h.t8  : ternary;
        }
        actions = { mark; NoAction; }
        default_action = mark(0xff);
    }
    table pfx {
        key = { hdr.h.addr : lpm; }
        actions = { route; NoAction; }
        default_action = route(0xee);
    }
    apply {
        tern.apply();
        pfx.apply();
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
