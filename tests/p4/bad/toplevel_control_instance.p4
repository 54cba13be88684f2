// expect-error: cannot instantiate at top-level
// expect-line: 13
// A control instantiated at the top level: P4_16 allows only packages and extern objects there (p4c's TypeInference: cannot instantiate at top-level).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; int<8> s; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Inner(inout headers_t hdr) { apply { hdr.h.b = 1; } }
Inner() inner;   // <- error
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
