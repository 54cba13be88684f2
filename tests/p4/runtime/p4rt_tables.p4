// P4Runtime entity tests: one table per match kind, direct counter/meter, const entries,
// a keyless table and a top-level action with a relative @name.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

struct headers_t { h_t h; }
struct meta_t { bit<8> color; }

@name("set_d_top")
action set_d(bit<32> v) { }

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
    direct_counter(CounterType.packets_and_bytes) ex_ctr;
    direct_meter<bit<8>>(MeterType.packets) lpm_meter;

    action set_port(bit<9> port) {
        sm.egress_spec = port;
    }
    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    action set_b_counted(bit<8> v) {
        hdr.h.b = v;
        ex_ctr.count();
    }
    action set_c(bit<16> v) {
        hdr.h.c = v;
    }
    action set_c_metered(bit<16> v) {
        hdr.h.c = v;
        lpm_meter.read(meta.color);
    }
    action drop() {
        mark_to_drop(sm);
    }

    table ex {
        key = { hdr.h.a : exact; }
        actions = { set_b_counted; @defaultonly NoAction; }
        counters = ex_ctr;
        size = 4;
    }
    table lpm {
        key = { hdr.h.d : lpm @name("dst"); }
        actions = { set_c_metered; NoAction; }
        meters = lpm_meter;
    }
    table tern {
        key = {
            hdr.h.a : ternary;
            hdr.h.b : exact;
        }
        actions = { set_port; drop; }
        default_action = set_port(1);
    }
    table rng {
        key = { hdr.h.c : range; }
        actions = { set_b; }
    }
    table opt {
        key = { hdr.h.a : optional; hdr.h.b : optional; }
        actions = { set_b; }
    }
    table fixed {
        key = { hdr.h.a : exact; }
        actions = { set_c; }
        const entries = {
            0x07 : set_c(0x0707);
        }
    }
    table keyless {
        actions = { set_c; set_d; }
        default_action = set_c(0);
    }
    table cdef {
        key = { hdr.h.b : exact; }
        actions = { set_c; }
        const default_action = set_c(0xcdef);
    }

    apply {
        sm.egress_spec = 2;
        ex.apply();
        lpm.apply();
        tern.apply();
        rng.apply();
        opt.apply();
        fixed.apply();
        if (hdr.h.a == 0xee) {
            keyless.apply();
            cdef.apply();
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
