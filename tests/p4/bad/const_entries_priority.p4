// expect-error: Table with 'const' entries cannot have priorities
// expect-line: 36
// p4c refuses explicit entry priorities inside 'const entries' (its EntryPriorities pass).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    table tern {
        key = { hdr.h.a : ternary; }
        actions = { set_b; }
        const entries = {
            priority = 10 : 0x00 &&& 0xf0 : set_b(2);  // <- error
            priority = 20 : 0x01 &&& 0xff : set_b(1);
            priority = 1 : _ : set_b(3);
        }
    }
    apply {
        tern.apply();
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
