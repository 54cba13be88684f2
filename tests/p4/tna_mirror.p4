// TNA mirroring: an ingress mirror copies the packet as it arrived (not ingress's changes)
// behind the mirror header, an egress mirror the packet the egress deparser emitted (egress's
// changes included); a session's truncation length counts the mirror header; the copy goes
// through the egress parser (mirror header first); a mirror survives drop_ctl bit 0 and not
// bit 2; an unconfigured session mirrors nothing.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ctl_t {
    bit<8> op;   // 1 mirror, 2 mirror and drop, 4 mirror with drop_ctl 5, 5 egress mirror
    bit<8> sid;  // the mirror session
}

header bridge_t {
    bit<8> kind;     // 0xB1
    bit<8> egr_sid;  // != 0: egress mirrors to this session
}

header mirror_h {
    bit<8> kind;  // 0xA1 ingress mirror, 0xE1 egress mirror
    bit<8> info;
}

// Added by egress to a mirrored copy.
header report_t {
    bit<8>  kind;
    bit<8>  info;
    bit<16> pkt_length;
    bit<16> egress_port;
}

struct ig_headers_t {
    bridge_t   bridge;
    ethernet_t eth;
    ctl_t      ctl;
}

struct ig_md_t {
    MirrorId_t sid;
}

struct eg_headers_t {
    report_t   report;
    ethernet_t eth;
    ctl_t      ctl;
}

struct eg_md_t {
    bridge_t   bridge;
    mirror_h   mirror;
    MirrorId_t sid;
}

parser IgParser(packet_in pkt, out ig_headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        transition accept;
    }
}

control Ig(inout ig_headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.bridge.setValid();
        hdr.bridge.kind = 0xB1;
        hdr.bridge.egr_sid = 0;
        ig_tm_md.ucast_egress_port = 2;
        hdr.eth.dst = 0x0000000000DD;
        md.sid = (MirrorId_t)hdr.ctl.sid;
        if (hdr.ctl.op == 1) {
            ig_dprsr_md.mirror_type = 1;
        } else if (hdr.ctl.op == 2) {
            ig_dprsr_md.mirror_type = 1;
            ig_dprsr_md.drop_ctl = 1;
        } else if (hdr.ctl.op == 4) {
            ig_dprsr_md.mirror_type = 1;
            ig_dprsr_md.drop_ctl = 5;
        } else if (hdr.ctl.op == 5) {
            hdr.bridge.egr_sid = hdr.ctl.sid;
        }
    }
}

control IgDeparser(packet_out pkt, inout ig_headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit<mirror_h>(md.sid, {0xA1, 0x11});
        }
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out eg_headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bit<8>>()) {
            0xB1: parse_bridge;
            0xA1: parse_mirror;
            0xE1: parse_mirror;
            default: reject;
        }
    }
    state parse_bridge {
        pkt.extract(md.bridge);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        transition accept;
    }
    state parse_mirror {
        pkt.extract(md.mirror);
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control Eg(inout eg_headers_t hdr, inout eg_md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (md.mirror.isValid()) {
            hdr.report.setValid();
            hdr.report.kind = md.mirror.kind;
            hdr.report.info = md.mirror.info;
            hdr.report.pkt_length = eg_intr_md.pkt_length;
            hdr.report.egress_port = (bit<16>)eg_intr_md.egress_port;
        } else {
            hdr.eth.src = 0x0000000000EE;
            if (md.bridge.egr_sid != 0) {
                eg_dprsr_md.mirror_type = 1;
                md.sid = (MirrorId_t)md.bridge.egr_sid;
            }
        }
    }
}

control EgDeparser(packet_out pkt, inout eg_headers_t hdr, in eg_md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == 1) {
            mirror.emit<mirror_h>(md.sid, {0xE1, 0x22});
        }
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;

Switch(pipe) main;
