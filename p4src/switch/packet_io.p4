// Controller packets: PacketOut (from the CPU port, `packet_out` header first) goes straight
// to the port it names; punted packets (hop limit, per `hop_limit_policy`) go to the CPU port
// with a `packet_in` header saying where they came from and why. A PacketOut naming the CPU
// port or port 511 is dropped and counted (DROP_PACKET_OUT_PORT): sent to the CPU port, BMv2
// (and Tofino) would hand it back to the controller as a PacketIn whose metadata is the first
// bytes of its Ethernet header; 511 is BMv2's drop port, which drops it uncounted.
#ifndef P4SRC_SWITCH_PACKET_IO_P4
#define P4SRC_SWITCH_PACKET_IO_P4

#include "../include/headers.p4"

control PacketOutIngress(inout headers_t hdr, inout metadata_t meta) {
    apply {
        meta.egress_spec = hdr.packet_out.egress_port;
        hdr.packet_out.setInvalid();
        if (meta.egress_spec == CPU_PORT || meta.egress_spec == BMV2_DROP_PORT) {
            meta.drop_reason = DROP_PACKET_OUT_PORT;
        }
    }
}

control PuntToCpu(inout headers_t hdr, inout metadata_t meta) {
    apply {
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = meta.ingress_port;
        hdr.packet_in.reason = (bit<8>)meta.drop_reason;
        hdr.packet_in.pad = 0;
        meta.egress_spec = CPU_PORT;
    }
}

#endif
