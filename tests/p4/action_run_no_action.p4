// switch (t.apply().action_run) when t has an action profile or selector and misses: p4c's BMv2
// back end gives such a table no default action, so the miss runs no action at all, and BMv2
// goes on at the table's base_default_next -- the statement after the switch. No case runs, not
// even `default:`. An ordinary table's miss runs its default action (NoAction here), whose
// label is `default:`.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
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
    action_selector(HashAlgorithm.crc16, 16, 4) sel;

    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    table prof {
        key = { hdr.h.a : exact; }
        actions = { set_b; NoAction; }
        implementation = action_profile(4);
    }
    table selt {
        key = {
            hdr.h.a : exact;
            hdr.h.d : selector;
        }
        actions = { set_b; }
        implementation = sel;
    }
    table prof2 {
        key = { hdr.h.b : exact; }
        actions = { set_b; NoAction; }
        implementation = action_profile(2);
    }
    table plain {
        key = { hdr.h.a : exact; }
        actions = { set_b; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        switch (prof.apply().action_run) {
            set_b: { hdr.h.c = 0x01; }
            default: { hdr.h.c = 0x02; }
        }
        switch (selt.apply().action_run) {
            default: { hdr.h.c = hdr.h.c | 0x10; }
        }
        switch (prof2.apply().action_run) {
            NoAction: { hdr.h.c = hdr.h.c | 0x20; }
        }
        hdr.h.d = 0xdd;  // the statement after the switches runs
        switch (plain.apply().action_run) {
            set_b: { hdr.h.b = 0x0b; }
            default: { hdr.h.b = 0x0d; }
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
    apply { pkt.emit(hdr.h); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
