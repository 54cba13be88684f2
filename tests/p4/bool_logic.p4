// Boolean operators with short-circuit, bitwise ~ & | ^, equality, local variables and if/else chains.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bool big = hdr.h.a > 0x80;
        bool odd = hdr.h.a[0:0] == 1;
        bit<8> r = 0;
        if (big && odd) {
            r = 1;
        } else if (big || odd) {
            r = 2;
        } else if (!(hdr.h.a == 0)) {
            r = 3;
        } else {
            r = 4;
        }
        hdr.h.b = r;
        hdr.h.c = ~hdr.h.c;
        hdr.h.d = (hdr.h.d & 0xffff0000) | (hdr.h.d ^ 0x000000ff) & 0x0000ffff;
        if (hdr.h.a != 0x42 && hdr.h.c == 0xffff) {
            hdr.h.a = 0x42;
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
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
