// hit and miss of table applies inside nested if/else and a switch on action_run inside an if branch; tables run in sequence, one keyed on metadata the previous wrote.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> path;
    bit<8> cls;
}

struct headers_t { h_t h; }
struct meta_t {
    bit<8> cls;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action classify(bit<8> c) {
        meta.cls = c;
    }
    action act_x() {
        hdr.h.path = hdr.h.path | 0x10;
    }
    action act_y() {
        hdr.h.path = hdr.h.path | 0x20;
    }
    table first {
        key = { hdr.h.a : exact; }
        actions = { classify; NoAction; }
        default_action = NoAction();
    }
    table second {
        key = { meta.cls : exact; }
        actions = { act_x; act_y; NoAction; }
        default_action = NoAction();
    }
    table third {
        key = { hdr.h.b : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    apply {
        if (first.apply().hit) {
            hdr.h.path = 0x01;
            switch (second.apply().action_run) {
                act_x: {
                    if (hdr.h.b == 0) {
                        hdr.h.path = hdr.h.path + 1;
                    } else if (hdr.h.b == 1) {
                        hdr.h.path = hdr.h.path + 2;
                    } else {
                        hdr.h.path = hdr.h.path + 3;
                    }
                }
                act_y: { }
                NoAction: {
                    hdr.h.path = 0x0f;
                }
            }
        } else if (!third.apply().miss) {
            hdr.h.path = 0x02;
        } else {
            hdr.h.path = 0x03;
        }
        hdr.h.cls = meta.cls;
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
