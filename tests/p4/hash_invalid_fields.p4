// hash() over field lists holding fields of invalid headers: p4c-bm2-ss turns the list into a
// BMv2 calculation, whose input (BufBuilder, as for checksums) leaves out every field of an
// invalid header -- the bytes are not zeroes, they are absent. A whole header in the list is
// left out the same way; metadata and local variables are always there.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> r1;
    bit<16> r2;
    bit<16> r3;
}

header opt_t {
    bit<8> x;
    bit<8> y;
}

struct headers_t {
    h_t   h;
    opt_t opt;
}

struct meta_t {
    bit<8> m;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            1: parse_opt;
            2: parse_opt;
            default: accept;
        }
    }
    state parse_opt {
        pkt.extract(hdr.opt);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        meta.m = 0x05;
        if (hdr.h.a == 2) {
            hdr.opt.setInvalid();  // parsed, so its fields hold values: still left out
        }
        // a field after one of the optional header
        hash(hdr.h.r1, HashAlgorithm.identity, 16w0, { hdr.h.b, hdr.opt.x }, 32w0x10000);
        // a whole header after a metadata field
        hash(hdr.h.r2, HashAlgorithm.identity, 16w0, { meta.m, hdr.opt }, 32w0x10000);
        // fields of both kinds interleaved, one's complement sum of 16-bit words
        bit<8> local = 0x05;
        hash(hdr.h.r3, HashAlgorithm.csum16, 16w0, { hdr.h.b, hdr.opt.y, local, hdr.opt.x },
             32w0x10000);
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
        pkt.emit(hdr.opt);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
