// TNA intrinsic metadata and the traffic manager: the ingress parser's intrinsic header and
// (zero) port metadata, bridged metadata from the ingress deparser to the egress parser, the
// egress intrinsic header (egress_port, egress_rid, egress_qid, pkt_length counting the FCS),
// unicast only when ucast_egress_port was written (a sub-control's copy-in/copy-out of the TM
// metadata does not write it), drop_ctl, multicast replicas with their rid, bypass_egress, a
// port that does not exist, and parser errors dropping the packet in ingress and in egress
// (the program reads neither parser_err).
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

// What the test packet asks of ingress.
header ctl_t {
    bit<8>  op;    // 1 unicast, 2 no port, 3 drop_ctl, 4 multicast, 5 bypass egress, 6 bad bridge
    bit<16> port;  // the unicast port, or the multicast group
    bit<8>  qid;
}

// Written by ingress.
header ig_seen_t {
    bit<8>  resubmit_flag;
    bit<16> ingress_port;
    bit<16> port_md;
}

// Written by egress.
header eg_seen_t {
    bit<16> egress_port;
    bit<16> egress_rid;
    bit<8>  qid;
    bit<16> pkt_length;
}

header bridge_t {
    bit<8>  kind;
    bit<16> ig_port;
}

struct port_md_t {
    bit<16> a;
    bit<48> b;
}

struct ig_headers_t {
    bridge_t   bridge;
    ethernet_t eth;
    ctl_t      ctl;
    ig_seen_t  ig_seen;
    eg_seen_t  eg_seen;
}

struct ig_md_t {
    port_md_t port_md;
}

struct eg_headers_t {
    ethernet_t eth;
    ctl_t      ctl;
    ig_seen_t  ig_seen;
    eg_seen_t  eg_seen;
}

struct eg_md_t {
    bridge_t bridge;
}

parser IgParser(packet_in pkt, out ig_headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        md.port_md = port_metadata_unpack<port_md_t>(pkt);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        pkt.extract(hdr.ig_seen);
        pkt.extract(hdr.eg_seen);
        transition accept;
    }
}

// Takes the TM metadata inout and writes only qid: the copy-in/copy-out leaves
// ucast_egress_port unwritten.
control SetQid(inout ingress_intrinsic_metadata_for_tm_t tm, in bit<8> q) {
    apply {
        tm.qid = (QueueId_t)q;
    }
}

control Ig(inout ig_headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    SetQid() set_qid;
    apply {
        hdr.ig_seen.resubmit_flag = (bit<8>)ig_intr_md.resubmit_flag;
        hdr.ig_seen.ingress_port = (bit<16>)ig_intr_md.ingress_port;
        hdr.ig_seen.port_md = md.port_md.a;
        hdr.bridge.setValid();
        hdr.bridge.kind = 0xB1;
        hdr.bridge.ig_port = (bit<16>)ig_intr_md.ingress_port;
        set_qid.apply(ig_tm_md, hdr.ctl.qid);
        if (hdr.ctl.op == 1) {
            ig_tm_md.ucast_egress_port = (PortId_t)hdr.ctl.port;
        } else if (hdr.ctl.op == 3) {
            ig_tm_md.ucast_egress_port = (PortId_t)hdr.ctl.port;
            ig_dprsr_md.drop_ctl = 1;
        } else if (hdr.ctl.op == 4) {
            ig_tm_md.mcast_grp_a = hdr.ctl.port;
        } else if (hdr.ctl.op == 5) {
            ig_tm_md.ucast_egress_port = (PortId_t)hdr.ctl.port;
            ig_tm_md.bypass_egress = 1;
        } else if (hdr.ctl.op == 6) {
            ig_tm_md.ucast_egress_port = (PortId_t)hdr.ctl.port;
            hdr.bridge.kind = 0;
        }
    }
}

control IgDeparser(packet_out pkt, inout ig_headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out eg_headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(md.bridge);
        transition select(md.bridge.kind) {
            0xB1: parse_rest;
            default: reject;
        }
    }
    state parse_rest {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        pkt.extract(hdr.ig_seen);
        pkt.extract(hdr.eg_seen);
        transition accept;
    }
}

control Eg(inout eg_headers_t hdr, inout eg_md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        hdr.eg_seen.egress_port = (bit<16>)eg_intr_md.egress_port;
        hdr.eg_seen.egress_rid = eg_intr_md.egress_rid;
        hdr.eg_seen.qid = (bit<8>)eg_intr_md.egress_qid;
        hdr.eg_seen.pkt_length = eg_intr_md.pkt_length;
    }
}

control EgDeparser(packet_out pkt, inout eg_headers_t hdr, in eg_md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;

Switch(pipe) main;
