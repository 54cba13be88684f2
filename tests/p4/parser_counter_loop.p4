// A parser loop driven by a counter in metadata: the first byte says how many 1-byte items follow; the state loops, decrementing the counter, until it reaches 0.
#include <core.p4>
#include <v1model.p4>

header len_t {
    bit<8> n;
}

header item_t {
    bit<8> v;
}

header sum_t {
    bit<8> total;
    bit<8> count;
}

struct headers_t {
    len_t     len;
    item_t[4] items;
    sum_t     sum;
}
struct meta_t {
    bit<8> left;
    bit<8> total;
    bit<8> count;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        meta.left = hdr.len.n;
        meta.total = 0;
        meta.count = 0;
        transition check;
    }
    state check {
        transition select(meta.left) {
            0: accept;
            default: one_item;
        }
    }
    state one_item {
        pkt.extract(hdr.items.next);
        meta.total = meta.total + hdr.items.last.v;
        meta.left = meta.left - 1;
        meta.count = meta.count + 1;
        transition check;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.sum.setValid();
        hdr.sum.total = meta.total;
        hdr.sum.count = meta.count;
        if (sm.parser_error == error.StackOutOfBounds) {
            hdr.sum.count = 0xee;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.sum);
        pkt.emit(hdr.len);
        pkt.emit(hdr.items);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
