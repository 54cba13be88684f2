// A table keyed on hdr.opt.isValid() (exact) and a ternary field, the keys written as bmv2stf names them (opt.$valid$, base.port).
#include <core.p4>
#include <v1model.p4>

header base_t {
    bit<8>  kind;
    bit<8>  tag;
    bit<16> port;
}

header opt_t {
    bit<16> data;
}

struct headers_t {
    base_t base;
    opt_t  opt;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.base);
        transition select(hdr.base.kind) {
            1: parse_opt;
            default: accept;
        }
    }
    state parse_opt {
        pkt.extract(hdr.opt);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_tag(bit<8> tag) {
        hdr.base.tag = tag;
    }
    table t {
        key = {
            hdr.opt.isValid() : exact;
            hdr.base.port     : ternary;
        }
        actions = { set_tag; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.base);
        pkt.emit(hdr.opt);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
