// Entries and a default action on tables with an action profile or selector: p4c's BMv2 back end
// writes neither (it warns "Target does not support default_action ... (due to action
// profiles)"), so BMv2 starts these tables empty and a miss runs no action at all.
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
    action_selector(HashAlgorithm.identity, 16, 4) sel;

    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    action set_c(bit<16> v) {
        hdr.h.c = v;
    }
    // an anonymous action_profile, const entries and a default action with an argument
    table prof {
        key = { hdr.h.a : exact; }
        actions = { set_b; }
        implementation = action_profile(4);
        const entries = {
            0x01 : set_b(0x11);
            0x02 : set_b(0x22);
        }
        default_action = set_b(0x99);
    }
    // a named action_selector with non-const entries and a const default action
    table ecmp {
        key = {
            hdr.h.a : ternary;
            hdr.h.d : selector;
        }
        actions = { set_c; }
        implementation = sel;
        entries = {
            (0x01 &&& 0xff, _) : set_c(0x0101);
            (_, _) : set_c(0x0202);
        }
        const default_action = set_c(0x0bad);
    }
    apply {
        sm.egress_spec = 1;
        if (prof.apply().hit) {
            hdr.h.d = 0xaaaaaaaa;
        } else {
            hdr.h.d = 0x0000dead;
        }
        if (ecmp.apply().miss) {
            sm.egress_spec = 2;
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
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
