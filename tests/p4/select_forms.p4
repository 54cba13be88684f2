// select on a tuple with exact values, masks, ranges, don't-care and default; the state taken is recorded in a new header.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

header res_t {
    bit<8> which;
}

struct headers_t {
    h_t   h;
    res_t res;
}
struct meta_t {
    bit<8> which;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) {
            (0x01, 0x02): s_exact;
            (0x10 &&& 0xf0, _): s_mask;
            (0x20 .. 0x2f, 0x00 .. 0x0f): s_range;
            (_, 0xff): s_dontcare;
            default: s_default;
        }
    }
    state s_exact {
        meta.which = 1;
        transition accept;
    }
    state s_mask {
        meta.which = 2;
        transition accept;
    }
    state s_range {
        meta.which = 3;
        transition accept;
    }
    state s_dontcare {
        meta.which = 4;
        transition accept;
    }
    state s_default {
        meta.which = 5;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.which = meta.which;
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
        pkt.emit(hdr.res);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
