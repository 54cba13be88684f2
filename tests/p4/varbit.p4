// A varbit field extracted with a length from an earlier field, and emitted again.
#include <core.p4>
#include <v1model.p4>

header len_t {
    bit<8> len;
}

header opts_t {
    varbit<64> data;
}

header tail_t {
    bit<8> t;
}

struct headers_t {
    len_t  len;
    opts_t opts;
    tail_t tail;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.opts, ((bit<32>) hdr.len.len) * 8);
        pkt.extract(hdr.tail);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.tail.t = hdr.len.len;
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
        pkt.emit(hdr.len);
        pkt.emit(hdr.opts);
        pkt.emit(hdr.tail);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
