// hash() with crc16, crc32 and identity over header fields, with a base and a modulus, written into the packet.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> x;
    bit<16> y;
    bit<16> crc16;
    bit<32> crc32;
    bit<16> ident;
    bit<8>  modv;
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
        hash(hdr.h.crc16, HashAlgorithm.crc16, 16w0, { hdr.h.x, hdr.h.y }, 32w65536);
        hash(hdr.h.crc32, HashAlgorithm.crc32, 32w0, { hdr.h.x, hdr.h.y }, 32w0xffffffff);
        hash(hdr.h.ident, HashAlgorithm.identity, 16w0, { hdr.h.y }, 32w65536);
        hash(hdr.h.modv, HashAlgorithm.crc16, 8w10, { hdr.h.x }, 16w7);
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
