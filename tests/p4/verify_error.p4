// A failing verify() stops the parser, but the packet still goes through ingress with parser_error set.
#include <core.p4>
#include <v1model.p4>

error { BadVersion }

header v_t {
    bit<8>  version;
    bit<8>  flag;
    bit<16> data;
}

header z_t {
    bit<8> z;
}

struct headers_t {
    v_t v;
    z_t z;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.v);
        verify(hdr.v.version == 4, error.BadVersion);
        pkt.extract(hdr.z);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.BadVersion) {
            hdr.v.flag = 0xbb;
        } else if (sm.parser_error == error.NoError) {
            hdr.v.flag = 0x00;
        }
        if (hdr.z.isValid()) {
            hdr.z.z = hdr.z.z + 1;
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
        pkt.emit(hdr.v);
        pkt.emit(hdr.z);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
