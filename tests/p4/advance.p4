// advance skips bits in the parser: the skipped bytes are not part of the output.
#include <core.p4>
#include <v1model.p4>

header one_t {
    bit<8> x;
}

struct headers_t {
    one_t first;
    one_t second;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.first);
        pkt.advance(16);
        pkt.extract(hdr.second);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.second.x = hdr.second.x + hdr.first.x;
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
        pkt.emit(hdr.first);
        pkt.emit(hdr.second);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
