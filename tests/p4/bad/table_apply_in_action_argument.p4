// expect-error: table invocation in action argument
// expect-line: 20
// A table's actions list binding an action's in argument to another table's apply().hit: p4c's SideEffectOrdering (TablesInActions) does not support a table invocation there.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; int<8> s; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(in bool v) { hdr.h.b = (bit<8>)(bit<1>)v; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { NoAction; }
    }
    table u {
        key = { hdr.h.b : exact; }
        actions = { set(t.apply().hit); }   // <- error
    }
    apply { u.apply(); }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
