// varbit locals: a header's varbit field assigned to a local and back carries its current width (BMv2's
// assign_VL copies width and value, and the header's emitted length follows), so a swap of two varbit
// fields of different widths swaps their lengths on the wire; locals declared in the apply block, in the
// control (shared with an action); a plain copy between fields.
#include <core.p4>
#include <v1model.p4>

header len_t {
    bit<8> l1;
    bit<8> l2;
    bit<8> op;
}

header v_t {
    bit<8>     tag;
    varbit<32> d;
}

struct headers_t {
    len_t len;
    v_t   a;
    v_t   b;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.a, (bit<32>)hdr.len.l1 * 8);
        pkt.extract(hdr.b, (bit<32>)hdr.len.l2 * 8);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    varbit<32> saved;
    action swap_by_action() {
        saved = hdr.a.d;
        hdr.a.d = hdr.b.d;
        hdr.b.d = saved;
    }
    apply {
        if (hdr.len.op == 1) {
            varbit<32> tmp = hdr.a.d;
            hdr.a.d = hdr.b.d;
            hdr.b.d = tmp;
        } else if (hdr.len.op == 2) {
            swap_by_action();
        } else if (hdr.len.op == 3) {
            hdr.b.d = hdr.a.d;    // a plain copy: b takes a's width
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.len);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
