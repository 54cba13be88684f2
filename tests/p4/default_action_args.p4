// default_action with arguments on every match kind (exact, lpm, ternary, range, optional,
// keyless), a const default action, a default action with a directional argument bound in the
// actions list, and const entries whose actions take directionless arguments of several kinds
// (an expression, a cast, a serializable enum member, a bool, a negative int).
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

enum bit<8> Kind { LOW = 0x40, HIGH = 0x80 }
const bit<8> BASE = 0x10;

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
    // each table's default adds its own bit to b, so one packet shows which defaults ran
    action add_b(bit<8> v) {
        hdr.h.b = hdr.h.b | v;
    }
    // a directional parameter (bound in the actions list) before directionless ones
    action put(inout bit<16> dst, bit<8> hi, bit<8> lo) {
        dst = hi ++ lo;
    }
    action flags(bool on, Kind k, int<8> delta) {
        hdr.h.d = (on ? (bit<8>)k : 8w0) ++ 16w0 ++ (bit<8>)delta;
    }
    table t_exact {
        key = { hdr.h.a : exact; }
        actions = { add_b; }
        default_action = add_b(0x01);
    }
    table t_lpm {
        key = { hdr.h.a : lpm; }
        actions = { add_b; }
        default_action = add_b(0x02);
    }
    table t_ternary {
        key = { hdr.h.a : ternary; }
        actions = { add_b; }
        default_action = add_b(0x04);
    }
    table t_range {
        key = { hdr.h.a : range; }
        actions = { add_b; }
        default_action = add_b(0x08);
    }
    table t_optional {
        key = { hdr.h.a : optional; }
        actions = { add_b; }
        default_action = add_b(0x10);
    }
    table t_keyless {
        actions = { add_b; }
        const default_action = add_b(0x20);
    }
    table t_put {
        key = { hdr.h.a : exact; }
        actions = { put(hdr.h.c); flags; }
        const entries = {
            0x01 : put(hdr.h.c, BASE + 1, (bit<8>)0x2ff);
            0x02 : flags(true, Kind.HIGH, -2);
            0x03 : flags(false, Kind.LOW, 5);
        }
        default_action = put(hdr.h.c, 0xde, 0xad);
    }
    apply {
        t_exact.apply();
        t_lpm.apply();
        t_ternary.apply();
        t_range.apply();
        t_optional.apply();
        t_keyless.apply();
        t_put.apply();
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
