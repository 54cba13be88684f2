// Extracting the same header twice: the second extract overwrites the first, both consume bytes, and the header is emitted once.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> v;
}

header cnt_t {
    bit<8> first;
}

struct headers_t {
    cnt_t c;
    h_t   h;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        hdr.c.setValid();
        hdr.c.first = hdr.h.v;
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.c);
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
