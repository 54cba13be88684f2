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
    // The UDP checksum of what arrives from a plane port, over every byte the parser reads: the
    // whole of a SACK, NACK or probe (checked in PlaneRx), not a data packet's payload, which
    // a Tofino parser never reaches (p4src/README.md). The pseudo-header's next header sits
    // in the high byte of IPv6's word; it is 17 here, so FB_CSUM_OK leaves it out instead.
    Checksum() fb_csum;
    // From the host: its UDP checksum less the source port this NIC rewrites (the compact EV),
    // so that the deparser can add the new one back (Tofino's residual: v1model recomputes).
    Checksum() host_csum;

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
        // The pseudo-header (payload_len stands for the UDP length: no extension headers).
        fb_csum.add({hdr.ipv6.src_addr, hdr.ipv6.dst_addr, hdr.ipv6.payload_len});
        transition select(hdr.ipv6.next_hdr) {
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        fb_csum.add(hdr.udp);
        host_csum.subtract({hdr.udp.src_port, hdr.udp.checksum});
        host_csum.subtract_all_and_deposit(meta.udp_residual);
        transition select(hdr.udp.dst_port) {
            MRC_UDP_PORT: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        packet.extract(hdr.bth);
        fb_csum.add(hdr.bth);
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
        fb_csum.add({hdr.seth, hdr.cc_state});
        meta.fb_csum = fb_csum.get();
        transition accept;
    }

    state parse_neth {
        packet.extract(hdr.neth);
        fb_csum.add(hdr.neth);
        meta.fb_csum = fb_csum.get();
        transition accept;
    }

    state parse_peth {
        packet.extract(hdr.peth);
        fb_csum.add(hdr.peth);
        meta.fb_csum = fb_csum.get();
        transition accept;
    }
}

// The resubmit header (a second pass), the SACK/NACK copy (Mirror, from the mirror header the
// ingress filled), the EV event (Digest: its P4Info name is v1model's digest's, the type's
// name), then the headers; what leaves for the fabric from the host gets its UDP checksum back
// with the new source port (the parser's residual).
control NicIngressDeparser(packet_out packet, inout nic_headers_t hdr, in nic_metadata_t meta,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;
    Mirror() mirror;
    @name(".ev_event_t") Digest<ev_event_t>() ev_event;
    Checksum() udp_csum;

    apply {
        if (hdr.outer_ipv6.isValid()) {   // (only what goes to the fabric has one)
            hdr.udp.checksum = udp_csum.update({hdr.udp.src_port, meta.udp_residual});
        }
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

// A SACK or NACK is all headers: its UDP checksum is theirs (v1model's NicComputeChecksum).
control NicEgressDeparser(packet_out packet, inout nic_headers_t hdr, in nic_metadata_t meta) {
    Checksum() udp_csum;

    apply {
        hdr.udp.checksum = udp_csum.update({
            hdr.ipv6.src_addr, hdr.ipv6.dst_addr, 16w0, hdr.udp.length, 24w0, hdr.ipv6.next_hdr,
            hdr.udp.src_port, hdr.udp.dst_port, hdr.udp.length,
            hdr.bth, hdr.seth, hdr.cc_state, hdr.neth});
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
