// P4Runtime entity tests: an action profile table and an action selector table.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action_profile(8) prof;
    action_selector(HashAlgorithm.identity, 16, 16) sel;

    action set_port(bit<9> port) {
        sm.egress_spec = port;
    }
    action set_b(bit<8> v) {
        hdr.h.b = v;
    }

    table indirect {
        key = { hdr.h.a : exact; }
        actions = { set_b; NoAction; }
        implementation = prof;
    }
    table ecmp {
        key = {
            hdr.h.a : exact;
            hdr.h.c : selector;
        }
        actions = { set_port; NoAction; }
        implementation = sel;
    }

    apply {
        sm.egress_spec = 9;
        indirect.apply();
        ecmp.apply();
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
