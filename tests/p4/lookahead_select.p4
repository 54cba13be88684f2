// select on lookahead values: a 4-bit version nibble and a whole header type peeked before extracting; masks in the select cases.
#include <core.p4>
#include <v1model.p4>

header pre_t {
    bit<4>  ver;
    bit<4>  flags;
    bit<16> tag;
}

header four_t {
    bit<8> a;
}

header six_t {
    bit<24> b;
}

header res_t {
    bit<8> path;
}

struct headers_t {
    res_t  r;
    four_t f;
    six_t  s;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        hdr.r.setValid();
        // a header made valid has unspecified fields: set them
        hdr.r.path = 0;
        transition select(pkt.lookahead<bit<4>>()) {
            4: v4;
            6: v6;
            default: by_tag;
        }
    }
    state v4 {
        hdr.r.path = 4;
        pkt.extract(hdr.f);
        transition accept;
    }
    state v6 {
        hdr.r.path = 6;
        pkt.extract(hdr.s);
        transition accept;
    }
    state by_tag {
        transition select(pkt.lookahead<pre_t>().tag) {
            0xab00 &&& 0xff00: tagged;
            default: accept;
        }
    }
    state tagged {
        hdr.r.path = 0xab;
        pkt.extract(hdr.s);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.r);
        pkt.emit(hdr.f);
        pkt.emit(hdr.s);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
