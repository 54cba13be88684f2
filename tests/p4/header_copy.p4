// Header assignment copies fields and validity: copying a valid header makes the target valid, copying an invalid one makes it invalid.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  kind;
}

header d_t {
    bit<16> x;
}

struct headers_t {
    h_t h;
    d_t a;
    d_t b;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) {
            0x01: only_a;
            0x02: only_b;
            0x03: both;
            default: accept;
        }
    }
    state only_a { pkt.extract(hdr.a); transition accept; }
    state only_b { pkt.extract(hdr.b); transition accept; }
    state both { pkt.extract(hdr.a); pkt.extract(hdr.b); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        // b becomes a copy of a (valid or not); a local copy is independent of a
        d_t saved = hdr.a;
        hdr.b = hdr.a;
        if (hdr.a.isValid()) {
            hdr.a.x = 0xffff;
        }
        if (saved.isValid()) {
            hdr.h.kind = hdr.h.kind | 0x80;
            hdr.b.x = hdr.b.x + saved.x;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
