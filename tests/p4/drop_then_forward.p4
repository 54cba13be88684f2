// mark_to_drop only writes egress_spec: a later egress_spec write sends the packet; egress_spec = 511 after a port drops; mark_to_drop in egress drops.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> mode;
    bit<8> seen;
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
    apply {
        if (hdr.h.mode == 1) {
            mark_to_drop(sm);
            sm.egress_spec = 2;
        } else if (hdr.h.mode == 2) {
            sm.egress_spec = 2;
            mark_to_drop(sm);
        } else if (hdr.h.mode == 3) {
            sm.egress_spec = 2;
            sm.egress_spec = 511;
        } else if (hdr.h.mode == 4) {
            mark_to_drop(sm);
            // the drop port is visible in the field
            hdr.h.seen = (bit<8>)(sm.egress_spec >> 1);
            sm.egress_spec = 3;
        } else {
            sm.egress_spec = 5;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.h.mode == 5) {
            mark_to_drop(sm);
        } else if (hdr.h.mode == 6) {
            mark_to_drop(sm);
            sm.egress_spec = 0;
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
