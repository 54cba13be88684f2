// The NIC's parsers and deparsers (TNA; v1model/nic_parser.p4 is v1model's). The ingress
// parser reads the intrinsic metadata, then the resubmit header of a resubmitted packet (or
// skips the port metadata), then the packet as v1model's parser does: from the host port,
// Ethernet | IPv6 | UDP | BTH | MRC headers; from a plane port, Ethernet | outer IPv6 | IPv6 |
// UDP | BTH | MRC headers (a resubmitted packet keeps its ingress port). Everything the ingress
// forwards bypasses the egress; the egress sees only SACK/NACK copies: the mirror header, then
// the packet as it arrived, truncated after RETH by its session (tna/nic_arch.p4).
#ifndef P4SRC_NIC_TNA_PARSER_P4
#define P4SRC_NIC_TNA_PARSER_P4

#include "nic_state.p4"

#ifndef MRC_UDP_PORT
#define MRC_UDP_PORT 4791
#endif

parser NicIngressParser(packet_in packet, out nic_headers_t hdr, out nic_metadata_t meta,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        packet.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }

    state parse_resubmit {
        packet.extract(meta.resub);
        transition parse_packet;
    }

    state parse_port_metadata {
        packet.advance(PORT_METADATA_SIZE);
        transition parse_packet;
    }

    state parse_packet {
        transition select(ig_intr_md.ingress_port) {
            NIC_HOST_PORT: parse_host_ethernet;
            default: parse_plane_ethernet;
        }
    }

    state parse_host_ethernet {
        packet.extract(hdr.ethernet);
        meta.from_host = true;
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_plane_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_outer_ipv6;
            default: accept;
        }
    }

    state parse_outer_ipv6 {
        packet.extract(hdr.outer_ipv6);
        transition select(hdr.outer_ipv6.next_hdr) {
            PROTO_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        transition select(hdr.ipv6.next_hdr) {
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            MRC_UDP_PORT: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        packet.extract(hdr.bth);
        transition select(hdr.bth.opcode) {
            OP_WRITE_FIRST: parse_meth;
            OP_WRITE_MIDDLE: parse_meth;
            OP_WRITE_LAST: parse_meth;
            OP_WRITE_LAST_IMM: parse_meth;
            OP_WRITE_ONLY: parse_meth;
            OP_WRITE_ONLY_IMM: parse_meth;
            OP_SACK: parse_seth;
            OP_NACK: parse_neth;
            OP_PROBE: parse_peth;
            OP_EV_REPORT: parse_peth;
            default: accept;
        }
    }

    state parse_meth {
        packet.extract(hdr.meth);
        packet.extract(hdr.reth);
        transition select(hdr.bth.opcode) {
            OP_WRITE_LAST_IMM: parse_immdt;
            OP_WRITE_ONLY_IMM: parse_immdt;
            default: accept;
        }
    }

    state parse_immdt {
        packet.extract(hdr.immdt);
        transition accept;
    }

    state parse_seth {
        packet.extract(hdr.seth);
        packet.extract(hdr.cc_state);
        transition accept;
    }

    state parse_neth {
        packet.extract(hdr.neth);
        transition accept;
    }

    state parse_peth {
        packet.extract(hdr.peth);
        transition accept;
    }
}

// The resubmit header (a second pass), the SACK/NACK copy (Mirror, from the mirror header the
// ingress filled), the EV event (Digest: its P4Info name is v1model's digest's, the type's
// name), then the headers. No checksums: UDP checksums are zero (v1model/nic_parser.p4).
control NicIngressDeparser(packet_out packet, inout nic_headers_t hdr, in nic_metadata_t meta,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;
    Mirror() mirror;
    @name(".ev_event_t") Digest<ev_event_t>() ev_event;

    apply {
        if (ig_dprsr_md.resubmit_type == NIC_RESUBMIT) {
            resubmit.emit(meta.resub);
        }
        if (ig_dprsr_md.mirror_type == NIC_MIRROR_FEEDBACK) {
            mirror.emit(meta.mirror_session, meta.fb_mirror);
        }
        if (ig_dprsr_md.digest_type == NIC_DIGEST_EV_EVENT) {
            ev_event.pack({meta.conn, meta.profile, meta.ev, meta.digest_state,
                           meta.digest_drops});
        }
        packet.emit(hdr.ethernet);
        packet.emit(hdr.outer_ipv6);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.bth);
        packet.emit(hdr.meth);
        packet.emit(hdr.reth);
        packet.emit(hdr.immdt);
        packet.emit(hdr.seth);
        packet.emit(hdr.cc_state);
        packet.emit(hdr.neth);
        packet.emit(hdr.peth);
    }
}

// A SACK/NACK copy: its mirror header, then the data packet or probe as it arrived, up to RETH
// (the session cut the payload; an immediate after RETH is cut too).
parser NicEgressParser(packet_in packet, out nic_headers_t hdr, out nic_metadata_t meta,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        packet.extract(eg_intr_md);
        packet.extract(meta.fb_mirror);
        packet.extract(hdr.ethernet);
        packet.extract(hdr.outer_ipv6);
        packet.extract(hdr.ipv6);
        packet.extract(hdr.udp);
        packet.extract(hdr.bth);
        transition select(hdr.bth.opcode) {
            OP_PROBE: parse_peth;
            default: parse_meth;
        }
    }

    state parse_meth {
        packet.extract(hdr.meth);
        packet.extract(hdr.reth);
        transition accept;
    }

    state parse_peth {
        packet.extract(hdr.peth);
        transition accept;
    }
}

control NicEgressDeparser(packet_out packet, inout nic_headers_t hdr, in nic_metadata_t meta) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.outer_ipv6);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.bth);
        packet.emit(hdr.seth);
        packet.emit(hdr.cc_state);
        packet.emit(hdr.neth);
    }
}

#endif
