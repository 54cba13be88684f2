// Serializable enums in select and assignments, a plain enum in a local variable, and a user error code.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind {
    PING = 1,
    PONG = 2
}

enum Color { RED, GREEN }

header h_t {
    Kind    kind;
    bit<8>  color;
    bit<16> c;
}

struct headers_t { h_t h; }
struct meta_t {
    bit<1> ping;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) {
            Kind.PING: is_ping;
            default: accept;
        }
    }
    state is_ping {
        meta.ping = 1;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        Color col = Color.RED;
        if (meta.ping == 1) {
            hdr.h.kind = Kind.PONG;
            col = Color.GREEN;
        }
        if (col == Color.GREEN) {
            hdr.h.color = 0x99;
        }
        hdr.h.c = (bit<16>) ((bit<8>) hdr.h.kind);
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
