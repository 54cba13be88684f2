// standard_metadata: ingress_port and packet_length echoed in ingress; egress_port, egress_spec (reset to 0 by BMv2), packet_length and instance_type in egress; egress_spec written in egress does not move the packet.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> dst;
    bit<16> in_port;
    bit<32> len_in;
    bit<16> eg_port;
    bit<16> eg_spec;
    bit<32> len_eg;
    bit<32> itype;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.in_port = (bit<16>)sm.ingress_port;
        hdr.h.len_in = sm.packet_length;
        sm.egress_spec = (bit<9>)hdr.h.dst;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.eg_port = (bit<16>)sm.egress_port;
        hdr.h.eg_spec = (bit<16>)sm.egress_spec;
        hdr.h.len_eg = sm.packet_length;
        hdr.h.itype = sm.instance_type;
        if (hdr.h.dst == 7) {
            // too late: the port was chosen at the end of ingress
            sm.egress_spec = 9;
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
