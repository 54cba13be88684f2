// Entry priorities as BMv2 runs them: p4c checks `priority = N :` (non-const entries only) but its
// BMv2 back end gives BMv2 each entry's @priority(N) or else its position, and BMv2 lets the
// smallest number win (the earlier entry on a tie). largest_priority_wins and priority_delta
// only shape the P4Runtime view.
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
    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    action set_c(bit<16> v) {
        hdr.h.c = v;
    }
    // non-const entries with explicit priorities; by P4Runtime's numbers (smallest wins here)
    // the second entry (20) would beat the first (50) and the third (30 = 20 + delta)
    table ord {
        key = { hdr.h.a : ternary; }
        actions = { set_b; }
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            priority = 50 : 0x00 &&& 0xf0 : set_b(1);
            priority = 20 : 0x01 &&& 0xff : set_b(2);
            0x00 &&& 0x00 : set_b(3);
        }
    }
    // const entries ranked by @priority (BMv2: smallest wins); the third entry has none, so
    // its position (3) is its priority
    table ann {
        key = { hdr.h.a : ternary; }
        actions = { set_c; }
        const entries = {
            0x00 &&& 0xf0 : set_c(0x0001) @priority(3);
            0x01 &&& 0xff : set_c(0x0002) @priority(1);
            _ : set_c(0x0003);
            0x02 &&& 0xff : set_c(0x0004) @priority(2);
        }
    }
    apply {
        ord.apply();
        ann.apply();
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
