// Action parameters of odd widths (bit<1>, bit<3>, bit<9>, bit<48>, bit<128>) from add and setdefault; an exact key of 48 bits.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<48>  mac;
    bit<1>   flag;
    bit<3>   prio;
    bit<3>   pad0;
    bit<9>   port;
    bit<128> addr;
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
    action rewrite(bit<48> mac, bit<1> flag, bit<3> prio, bit<9> port, bit<128> addr) {
        hdr.h.mac = mac;
        hdr.h.flag = flag;
        hdr.h.prio = prio;
        hdr.h.port = port;
        hdr.h.addr = addr;
        sm.egress_spec = port;
    }
    action only_addr(bit<128> addr) {
        hdr.h.addr = addr;
    }
    table t {
        key = { hdr.h.mac : exact; }
        actions = { rewrite; only_addr; }
        default_action = only_addr(0);
    }
    apply {
        t.apply();
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
