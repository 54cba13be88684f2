// The NIC's parser and deparser (v1model; tna/nic_parser.p4 is TNA's). From the host port: Ethernet
// | IPv6 | UDP | BTH | MRC headers, what the host transport sends. From a plane port: Ethernet |
// outer IPv6 (the SRv6 carrier) | IPv6 | UDP | BTH | MRC headers. The UDP port of MRC is
// MRC_UDP_PORT (compile with -DMRC_UDP_PORT=4971 for the port two third-party MRC models use): a
// parser value set would let the controller choose, but BMv2's P4Runtime server refuses value-set
// writes. Anything else is accepted as it is and dropped by ingress (counted); a header cut short
// ends in PacketTooShort, dropped likewise.
#ifndef P4SRC_NIC_V1MODEL_PARSER_P4
#define P4SRC_NIC_V1MODEL_PARSER_P4

#include "nic_arch.p4"
#include "../nic_types.p4"

#ifndef MRC_UDP_PORT
#define MRC_UDP_PORT 4791
#endif

parser NicParser(packet_in packet, out nic_headers_t hdr, inout nic_metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    // A resubmitted packet (instance type 6) has lost its ingress port, as in BMv2 (all
    // metadata is reset); only the host's packets are resubmitted (DENIED slots, host_tx.p4).
    state start {
        transition select(standard_metadata.instance_type, standard_metadata.ingress_port) {
            (PKT_INSTANCE_RESUBMIT, _): parse_host_ethernet;
            (_, NIC_HOST_PORT): parse_host_ethernet;
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

// The inner UDP checksum covers what the fabric must not change, end to end: the IPv6
// pseudo-header, UDP, the BTH and every MRC header after it (invalid ones are skipped), and for
// data the payload (the ICRC's role in RoCEv2). The outer header is the fabric's to rewrite.
#define NIC_UDP_CHECKSUM_FIELDS { \
        hdr.ipv6.src_addr, hdr.ipv6.dst_addr, 16w0, hdr.udp.length, 24w0, \
        hdr.ipv6.next_hdr, hdr.udp.src_port, hdr.udp.dst_port, hdr.udp.length, \
        hdr.bth, hdr.meth, hdr.reth, hdr.immdt, hdr.seth, hdr.cc_state, hdr.neth, hdr.peth }

// What arrives from the fabric is checked (a failure sets checksum_error; the plane side drops
// the packet unless a switch trimmed it, which zeroes the checksum of a payload it cut off).
control NicVerifyChecksum(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    apply {
        verify_checksum_with_payload(
            hdr.outer_ipv6.isValid() && hdr.udp.isValid() && hdr.bth.isValid(),
            NIC_UDP_CHECKSUM_FIELDS, hdr.udp.checksum, HashAlgorithm.csum16);
    }
}

// What leaves for the fabric gets its checksum here: data and probes over their payload (this
// NIC rewrote the UDP source port: the compact EV); SACKs and NACKs over their headers only,
// which is the whole of them once truncated (SACK_FRAME_BYTES, NACK_FRAME_BYTES) — the payload
// still behind them here is the packet they were made of.
control NicComputeChecksum(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    apply {
        update_checksum_with_payload(
            hdr.outer_ipv6.isValid() && hdr.udp.isValid() && hdr.bth.isValid()
                && !hdr.seth.isValid() && !hdr.neth.isValid(),
            NIC_UDP_CHECKSUM_FIELDS, hdr.udp.checksum, HashAlgorithm.csum16);
        update_checksum(
            hdr.outer_ipv6.isValid() && hdr.udp.isValid() && hdr.bth.isValid()
                && (hdr.seth.isValid() || hdr.neth.isValid()),
            NIC_UDP_CHECKSUM_FIELDS, hdr.udp.checksum, HashAlgorithm.csum16);
    }
}

control NicDeparser(packet_out packet, in nic_headers_t hdr) {
    apply {
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

#endif
