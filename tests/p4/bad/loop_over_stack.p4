// expect-error: p4c unrolls only a for-in over a constant range
// expect-line: 19
// A for-in loop over a header stack: p4c's UnrollLoops unrolls constant ranges only.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> v; }
struct headers_t { h_t[2] s; }
struct meta_t { bit<8> sum; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        for (h_t e in hdr.s) {   // <- error
            meta.sum = meta.sum + e.v;
        }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.s); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
