// A small program for driving softswitch with an unmodified p4runtime-shell: an exact L2 table
// whose actions forward or punt to the CPU, and packet_in/packet_out controller headers.
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> pad;
}

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

struct metadata_t { }

parser DemoParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
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

control DemoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DemoIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    action to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
    }

    // Where each destination MAC goes; the controller installs one entry per MAC.
    table fwd {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { set_port; to_cpu; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            fwd.apply();
        }
    }
}

control DemoEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
            hdr.packet_in.pad = 0;
        }
    }
}

control DemoComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DemoDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(DemoParser(), DemoVerifyChecksum(), DemoIngress(), DemoEgress(), DemoComputeChecksum(),
         DemoDeparser()) main;
