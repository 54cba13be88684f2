// expect-error: Parser never reaches accept or reject state
// expect-line: 9
// A parser whose states only loop among themselves: p4c's RemoveUnreachableStates refuses a parser from whose start neither accept nor reject is reachable.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; int<8> s; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {   // <- error
    state start { pkt.extract(hdr.h); transition next; }
    state next { transition select(hdr.h.b) { 1: start; default: next; } }
}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
