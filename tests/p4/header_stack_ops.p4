// Header stack operations in a control: push_front, pop_front and writes by constant index.
#include <core.p4>
#include <v1model.p4>

header op_t {
    bit<8> op;
}

header item_t {
    bit<8> v;
}

struct headers_t {
    op_t      op;
    item_t[3] items;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.op.op == 1) {
            hdr.items.push_front(1);
            hdr.items[0].setValid();
            hdr.items[0].v = 0xaa;
        } else if (hdr.op.op == 2) {
            hdr.items.pop_front(1);
        } else if (hdr.op.op == 4) {
            hdr.items[2].setValid();
            hdr.items[2].v = 0x33;
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
        pkt.emit(hdr.op);
        pkt.emit(hdr.items);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
