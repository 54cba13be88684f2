// expect-error: no default value for type varbit<32>
// expect-line: 28
// A struct initializer whose `...` stands for a varbit field: varbit types have no default
// value (p4c: "default values for varbit types" are not supported).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> x;
    bit<8> n;
}

struct opts_t {
    bit<8>     kind;
    varbit<32> data;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { opts_t o = { kind = 1, ... }; } }  // <- error

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
