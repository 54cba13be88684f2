// A table keyed on two header stack elements (hdr.s[0].v, hdr.s[1].v); STF names them s$0.v and hdr.s$1.v.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> v;
}

header out_t {
    bit<8> result;
}

struct headers_t {
    out_t    o;
    tag_t[2] s;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.o);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_result(bit<8> r, bit<9> port) {
        hdr.o.result = r;
        sm.egress_spec = port;
    }
    table by_stack {
        key = {
            hdr.s[0].v : exact;
            hdr.s[1].v : ternary;
        }
        actions = { set_result; NoAction; }
        default_action = NoAction();
    }
    apply {
        by_stack.apply();
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.o);
        pkt.emit(hdr.s);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
