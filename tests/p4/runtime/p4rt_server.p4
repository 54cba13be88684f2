// P4Runtime server tests: controller headers whose fields are not byte-aligned (bit packing of
// packet_out/packet_in metadata), an exact table that forwards or punts, and a digest.
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 64;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<3> tag;
    bit<4> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9>  ingress_port;
    bit<12> reason;
    bit<3>  pad;
}

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
}

struct metadata_t { }

struct learn_t {
    bit<48> src_addr;
    bit<9>  port;
}

parser P(packet_in packet, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action drop() {
        mark_to_drop(sm);
    }
    action set_port(bit<9> port) {
        sm.egress_spec = port;
    }
    action punt(bit<12> reason) {
        sm.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = sm.ingress_port;
        hdr.packet_in.reason = reason;
    }
    table fwd {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { set_port; punt; drop; }
        default_action = drop();
        size = 64;
    }
    apply {
        if (hdr.packet_out.isValid()) {
            // The tag rides in the low bits of the ether type, so tests can see it decoded.
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.ethernet.ether_type = hdr.ethernet.ether_type | (bit<16>)hdr.packet_out.tag;
            hdr.packet_out.setInvalid();
        } else {
            if (hdr.ethernet.ether_type == 0x88b5) {
                digest<learn_t>(1, { hdr.ethernet.src_addr, sm.ingress_port });
            }
            fwd.apply();
        }
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control D(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
