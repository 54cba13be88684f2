// extract past the end of the packet: PacketTooShort, the header stays invalid, the packet is still forwarded.
#include <core.p4>
#include <v1model.p4>

header s_t {
    bit<16> x;
}

header l_t {
    bit<64> y;
}

struct headers_t {
    s_t s;
    l_t l;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s);
        pkt.extract(hdr.l);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.PacketTooShort) {
            hdr.s.x = 0xeeee;
        } else if (hdr.l.isValid()) {
            hdr.s.x = hdr.s.x + 1;
        }
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
        pkt.emit(hdr.s);
        pkt.emit(hdr.l);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
