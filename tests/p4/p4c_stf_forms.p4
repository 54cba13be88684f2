// STF forms p4c's own scripts use: controls named ingress/egress, table and action names qualified or not, key names with and without the parameter name (h.h.a / h.a), expect before packet, * nibbles and no $.
#include <core.p4>
#include <v1model.p4>

header hh_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
}

struct Headers { hh_t h; }
struct Meta { }

parser p(packet_in pkt, out Headers h, inout Meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.h);
        transition accept;
    }
}

control vrfy(inout Headers h, inout Meta m) { apply { } }

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    action fwd(bit<9> port, bit<8> b) {
        sm.egress_spec = port;
        h.h.b = b;
    }
    table t {
        key = { h.h.a : exact; }
        actions = { fwd; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
    }
}

control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    action stamp(bit<16> c) {
        h.h.c = c;
    }
    table e_t {
        key = { sm.egress_port : exact; }
        actions = { stamp; NoAction; }
        default_action = NoAction();
    }
    apply {
        e_t.apply();
    }
}

control update(inout Headers h, inout Meta m) { apply { } }

control deparser(packet_out pkt, in Headers h) {
    apply {
        pkt.emit(h.h);
    }
}

V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
