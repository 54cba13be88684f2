// A header union: the parser fills one member; making another member valid invalidates the first.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> kind;
}

header a4_t {
    bit<32> addr;
}

header a8_t {
    bit<64> addr;
}

header_union addr_u {
    a4_t a4;
    a8_t a8;
}

struct headers_t {
    tag_t  tag;
    addr_u u;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            4: parse_a4;
            8: parse_a8;
            default: accept;
        }
    }
    state parse_a4 {
        pkt.extract(hdr.u.a4);
        transition accept;
    }
    state parse_a8 {
        pkt.extract(hdr.u.a8);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.u.a4.isValid()) {
            hdr.u.a4.addr = hdr.u.a4.addr + 1;
        } else if (hdr.u.a8.isValid()) {
            bit<32> low = hdr.u.a8.addr[31:0];
            hdr.u.a4.setValid();
            hdr.u.a4.addr = low;
            hdr.tag.kind = 4;
        }
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
        pkt.emit(hdr.tag);
        pkt.emit(hdr.u);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
