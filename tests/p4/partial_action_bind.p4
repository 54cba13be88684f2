// Actions bound partly in the table's action list: a directional argument (out / inout) fixed per table, the remaining argument from the control plane.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> k;
    bit<8> f1;
    bit<8> f2;
    bit<8> f3;
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
    action set_byte(out bit<8> dst, bit<8> val) {
        dst = val;
    }
    action add_byte(inout bit<8> dst, bit<8> val) {
        dst = dst + val;
    }
    table ta {
        key = { hdr.h.k : exact; }
        actions = { set_byte(hdr.h.f1); NoAction; }
        default_action = NoAction();
    }
    table tb {
        key = { hdr.h.k : exact; }
        actions = { set_byte(hdr.h.f2); add_byte(hdr.h.f3); NoAction; }
        default_action = add_byte(hdr.h.f3, 0x10);
    }
    apply {
        ta.apply();
        tb.apply();
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
