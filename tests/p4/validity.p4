// isValid, setValid and setInvalid: an optional header is removed when present and added when absent.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

header opt_t {
    bit<8> v;
}

struct headers_t {
    h_t   h;
    opt_t opt;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            1: parse_opt;
            default: accept;
        }
    }
    state parse_opt {
        pkt.extract(hdr.opt);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.opt.isValid()) {
            hdr.opt.setInvalid();
            hdr.h.b = 1;
        } else {
            hdr.opt.setValid();
            hdr.opt.v = 0x77;
            hdr.h.b = 2;
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
        pkt.emit(hdr.h);
        pkt.emit(hdr.opt);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
