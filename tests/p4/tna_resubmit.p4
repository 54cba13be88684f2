// TNA resubmit: Resubmit.emit(hdr) in the ingress deparser (when resubmit_type is non-zero)
// sends the packet as it arrived back to the ingress parser with resubmit_flag 1 and the
// resubmit header in place of the port metadata; the first pass's changes and forwarding are
// gone; a resubmitted packet asking again is not resubmitted a second time.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ctl_t {
    bit<8>  op;     // 1: resubmit once, 2: ask to resubmit in both passes
    bit<16> value;  // carried in the resubmit header
}

header seen_t {
    bit<8>  flag;
    bit<8>  kind;
    bit<16> value;
}

header resub_h {
    bit<8>  kind;
    bit<16> value;
    bit<40> pad;
}

struct headers_t {
    ethernet_t eth;
    ctl_t      ctl;
    seen_t     seen;
}

struct ig_md_t {
    resub_h resub;
}

struct eg_md_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            0: parse_port_metadata;
        }
    }
    state parse_resubmit {
        pkt.extract(md.resub);
        transition parse_packet;
    }
    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_packet;
    }
    state parse_packet {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        pkt.extract(hdr.seen);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.seen.flag = (bit<8>)ig_intr_md.resubmit_flag;
        if (ig_intr_md.resubmit_flag == 0) {
            hdr.eth.dst = 0x0000000000DD;
            ig_tm_md.ucast_egress_port = 2;
            if (hdr.ctl.op != 0) {
                ig_dprsr_md.resubmit_type = 1;
            }
        } else {
            hdr.seen.kind = md.resub.kind;
            hdr.seen.value = md.resub.value;
            ig_tm_md.ucast_egress_port = 3;
            if (hdr.ctl.op == 2) {
                ig_dprsr_md.resubmit_type = 1;
            }
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;
    apply {
        if (ig_dprsr_md.resubmit_type == 1) {
            resubmit.emit<resub_h>({0x5A, hdr.ctl.value, 0});
        }
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;

Switch(pipe) main;
