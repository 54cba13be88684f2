// Serializable enums as table keys: exact, ternary (with a mask on an enum member) and lpm keys, const entries naming members, and entries from the control plane given as numbers.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind_t {
    PING = 1,
    PONG = 2,
    DATA = 3,
    BULK = 0x40
}

header h_t {
    Kind_t kind;
    bit<8> via;     // which table set out
    bit<8> res;
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
    action set(bit<8> via, bit<8> v) {
        hdr.h.via = via;
        hdr.h.res = v;
    }

    table by_mask {
        key = { hdr.h.kind : ternary; }
        actions = { set; NoAction; }
        const entries = {
            Kind_t.PING : set(1, 0x10);
            Kind_t.PONG &&& 0xfe : set(1, 0x20);   // PONG (2) and DATA (3)
        }
        default_action = NoAction();
    }

    table by_prefix {
        key = { hdr.h.kind : lpm; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }

    table by_value {
        key = { hdr.h.kind : exact; }
        actions = { set; NoAction; }
        const entries = {
            Kind_t.BULK : set(3, 0x40);
        }
        default_action = set(3, 0xee);
    }

    apply {
        if (!by_mask.apply().hit) {
            if (!by_prefix.apply().hit) {
                by_value.apply();
            }
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
