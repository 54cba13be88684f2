// Forms p4c-bm2-ss compiles: a table key written as a one-element list ({hdr.s[0].a}, matched as the
// element itself, named hdr.s[0].a), and header-stack indices of serializable enum types (bit<8> and
// int<8> underlying types) in extract, in reads and in writes: an enum member indexes by its value.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Index_t { FIRST = 0, SECOND = 1 }
enum int<8> SIndex_t { A = 0, B = 1 }

header h_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    h_t[2] s;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s[Index_t.FIRST]);
        pkt.extract(hdr.s[SIndex_t.B]);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { {hdr.s[0].a} : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
        hdr.s[SIndex_t.A].b = hdr.s[Index_t.SECOND].a;
        hdr.s[Index_t.SECOND].b = hdr.s[SIndex_t.A].a;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.s); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
