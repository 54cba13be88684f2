// expect-error: Only registers with bit or int types are currently supported
// expect-line: 14
// A v1model register of a struct type, written whole with .write(i, s): p4c's BMv2 back end (ExternConverter_register) takes only bit<W>/int<W> cells and refuses the declaration.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct pair_t { bit<8> x; bit<8> y; }
struct meta_t { bit<8> m; int<8> s; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<pair_t>(4) r;   // <- error
    apply {
        pair_t p = { hdr.h.a, hdr.h.b };
        r.write(0, p);
    }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
