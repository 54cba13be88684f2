// switch on action_run when the table misses: the default action's label runs; setdefault (with an argument) changes which label runs; two labels share one block.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> k;
    bit<8> arg;
    bit<8> label;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action on_miss() {
        hdr.h.arg = 0xdd;
    }
    action with_arg(bit<8> v) {
        hdr.h.arg = v;
    }
    action other() { }
    action third() { }
    table t {
        key = { hdr.h.k : exact; }
        actions = { on_miss; with_arg; other; third; }
        default_action = on_miss();
    }
    apply {
        switch (t.apply().action_run) {
            on_miss: { hdr.h.label = 1; }
            with_arg: { hdr.h.label = 2; }
            other:
            third: { hdr.h.label = 3; }
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
