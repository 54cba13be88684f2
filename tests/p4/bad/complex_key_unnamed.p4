// expect-error: complex key expression requires a @name annotation
// expect-line: 23
// A key that is a sum without @name: p4c names only fields, slices, indices, `&` and isValid().
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> p) { sm.egress_spec = p; }
    table named {
        key = { hdr.h.a + hdr.h.b : exact @name("sum"); }   // fine: named
        actions = { set_port; }
    }
    table unnamed {
        key = {
            hdr.h.a + hdr.h.b : exact;   // <- error
        }
        actions = { set_port; }
    }
    apply { named.apply(); unnamed.apply(); }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
