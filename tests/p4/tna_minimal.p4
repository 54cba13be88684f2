// The smallest TNA program softswitch checks end to end: intrinsic and port metadata in the
// ingress parser, a forwarding table setting the unicast egress port, a per-port packet count
// kept in a Register through a RegisterAction (its value written into the packet), and the
// egress parser starting at the egress intrinsic metadata.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t ethernet;
}

struct ig_metadata_t {
    bit<32> seen;
}

struct eg_metadata_t { }

parser SwitchIngressParser(packet_in pkt, out headers_t hdr, out ig_metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchIngress(inout headers_t hdr, inout ig_metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<32>>(512) packets;
    RegisterAction<bit<32>, bit<32>, bit<32>>(packets) count_packet = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };

    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }
    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }
    table fwd {
        key = { hdr.ethernet.dst : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 64;
    }

    apply {
        fwd.apply();
        ig_md.seen = count_packet.execute((bit<32>)ig_intr_md.ingress_port);
        hdr.ethernet.src[31:0] = ig_md.seen;
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_metadata_t eg_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         SwitchEgressParser(),
         SwitchEgress(),
         SwitchEgressDeparser()) pipe;

Switch(pipe) main;
