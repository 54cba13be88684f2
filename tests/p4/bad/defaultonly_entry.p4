// expect-error: Action marked with @defaultonly used in table
// expect-line: 20
// A (non-const) initial entry running an action the actions list marks @defaultonly: refused as for const entries.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; int<8> s; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.b = v; }
    action miss() { hdr.h.b = 0; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set; @defaultonly miss; }
        entries = {
            1 : set(2);
            2 : miss();   // <- error
        }
        default_action = miss;
    }
    apply { t.apply(); }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
