// expect-error: ro_value
// expect-line: 27
// Writing to a parameter declared 'in'.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Inner(in bit<8> ro_value, inout bit<8> y) {
    apply {
        ro_value = y;  // <- error
    }
}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    Inner() inner;
    apply {
        inner.apply(hdr.h.a, hdr.h.b);
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
