// Header stack elements indexed by a run-time value in a control: in-range writes land in that element; an out-of-range write changes nothing (p4c turns the index into a chain of ifs over the valid indices).
#include <core.p4>
#include <v1model.p4>

header idx_t {
    bit<8> i;
}

header e_t {
    bit<8> v;
}

struct headers_t {
    idx_t  x;
    e_t[3] s;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.x);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.s[hdr.x.i].v = 0xaa;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.x);
        pkt.emit(hdr.s);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
