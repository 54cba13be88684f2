// expect-error: conflicting control plane name
// expect-line: 15
// Two actions of one control with the same @name: p4c's DuplicateActionControlPlaneNameCheck refuses the second (one name, two actions in the P4Info).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @name("set") action set_a(bit<8> v) { hdr.h.a = v; }
    @name("set") action set_b(bit<8> v) { hdr.h.b = v; }   // <- error
    table t {
        key = { hdr.h.a : exact; }
        actions = { set_a; set_b; }
    }
    apply { t.apply(); }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
