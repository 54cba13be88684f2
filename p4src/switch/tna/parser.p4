// The TNA parsers of the fabric switch.
//
// Ingress: the intrinsic metadata and the port metadata Tofino puts in front of every packet,
// then what v1model/parser.p4 parses — [packet_out] Ethernet, IPv6, [SRH + segments], [inner
// IPv6], [UDP [BTH]] — with v1model's checks made the Tofino way: no verify(), no parser loop,
// no arithmetic. The SRH's routing type, its length against its last entry and its segments
// left against its last entry are selected on, for the lists the parser unrolls (1 to
// SRH_MAX_SEGMENTS segments); a failed check sets its drop reason and accepts. Any other SRH
// (longer than the parser unrolls, or whose length does not match its last entry) is left to
// TnaHeaderChecks in ingress, which sorts it into the same reasons v1model's parser gives, in the same
// order. A header cut short is Tofino's PARSER_ERROR_PARTIAL_HDR (DROP_TRUNCATED, in ingress).
//
// Egress: the egress intrinsic metadata, then either the bridged header (a packet from ingress)
// or the trim mirror header (a trimmed copy), then the headers egress rewrites — up to UDP: the
// BTH stays payload, as nothing in egress reads it and a trimmed copy may end inside it.
#ifndef P4SRC_SWITCH_TNA_PARSER_P4
#define P4SRC_SWITCH_TNA_PARSER_P4

#include "headers.p4"
#include "../drop_stats.p4"   // HeaderChecks, which TnaHeaderChecks ends with

parser SwitchIngressParser(packet_in packet, out headers_t hdr, out tna_metadata_t md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        packet.extract(ig_intr_md);
        packet.advance(PORT_METADATA_SIZE);
        transition select(ig_intr_md.ingress_port) {
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
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    // An IPv6 header of another version is not IPv6 (v1model's verify: DROP_IP_VERSION).
    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        transition select(hdr.ipv6.version, hdr.ipv6.next_hdr) {
            (6, PROTO_IPV6_ROUTE): parse_srh;
            (6, PROTO_IPV6): parse_inner_ipv6;
            (6, PROTO_UDP): parse_udp;
            (6, _): accept;
            default: bad_ip_version;
        }
    }

    state bad_ip_version {
        md.sw.parser_drop = DROP_IP_VERSION;
        transition accept;
    }

    // HdrExtLen must be 2 * (LastEntry + 1): one (last entry, length) pair per unrolled size.
    state parse_srh {
        packet.extract(hdr.srh);
        transition select(hdr.srh.routing_type, hdr.srh.last_entry, hdr.srh.hdr_ext_len) {
            (SRH_ROUTING_TYPE, 0, 2): check_segments_left_1;
            (SRH_ROUTING_TYPE, 1, 4): check_segments_left_2;
            (SRH_ROUTING_TYPE, 2, 6): check_segments_left_3;
            (SRH_ROUTING_TYPE, 3, 8): check_segments_left_4;
            (SRH_ROUTING_TYPE, _, _): srh_unchecked;
            default: srh_bad_type;
        }
    }

    state srh_bad_type {
        md.sw.parser_drop = DROP_SRH_TYPE;
        transition accept;
    }

    // v1model extracts a list before it finds it too long, so a list cut short within its first
    // SRH_MAX_SEGMENTS segments is DROP_TRUNCATED there: extract as many here (a cut is then
    // PARTIAL_HDR), for TnaHeaderChecks to sort in v1model's order.
    state srh_unchecked {
        md.srh_unchecked = true;
        packet.extract(hdr.srh_segments.next);
        packet.extract(hdr.srh_segments.next);
        packet.extract(hdr.srh_segments.next);
        packet.extract(hdr.srh_segments.next);
        transition accept;
    }

    // Segments left may be at most last entry + 1.
    state check_segments_left_1 {
        transition select(hdr.srh.segments_left) {
            0: parse_segment_1;
            1: parse_segment_1;
            default: srh_bad_segments_left;
        }
    }

    state check_segments_left_2 {
        transition select(hdr.srh.segments_left) {
            0: parse_segment_2;
            1: parse_segment_2;
            2: parse_segment_2;
            default: srh_bad_segments_left;
        }
    }

    state check_segments_left_3 {
        transition select(hdr.srh.segments_left) {
            0: parse_segment_3;
            1: parse_segment_3;
            2: parse_segment_3;
            3: parse_segment_3;
            default: srh_bad_segments_left;
        }
    }

    state check_segments_left_4 {
        transition select(hdr.srh.segments_left) {
            0: parse_segment_4;
            1: parse_segment_4;
            2: parse_segment_4;
            3: parse_segment_4;
            4: parse_segment_4;
            default: srh_bad_segments_left;
        }
    }

    state srh_bad_segments_left {
        md.sw.parser_drop = DROP_SRH_SEGMENTS_LEFT;
        transition accept;
    }

    // parse_segment_N extracts the N segments still to come, one state each.
    state parse_segment_4 {
        packet.extract(hdr.srh_segments.next);
        transition parse_segment_3;
    }

    state parse_segment_3 {
        packet.extract(hdr.srh_segments.next);
        transition parse_segment_2;
    }

    state parse_segment_2 {
        packet.extract(hdr.srh_segments.next);
        transition parse_segment_1;
    }

    state parse_segment_1 {
        packet.extract(hdr.srh_segments.next);
        transition select(hdr.srh.next_hdr) {
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_inner_ipv6 {
        packet.extract(hdr.inner_ipv6);
        transition select(hdr.inner_ipv6.version, hdr.inner_ipv6.next_hdr) {
            (6, PROTO_UDP): parse_udp;
            (6, _): accept;
            default: bad_ip_version;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            UDP_PORT_ROCEV2: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        packet.extract(hdr.bth);
        transition accept;
    }
}

// HeaderChecks (drop_stats.p4) on TNA, with the SRH checks the ingress parser leaves to ingress
// (an SRH it did not unroll) first, in v1model's order: the length against the last entry,
// then segments left (both before v1model extracts the list), then the list cut short, then a
// list longer than SRH_MAX_SEGMENTS; then any other header cut short; then HeaderChecks'
// (the parser's own reasons, not IPv6). One control, so the reason is known one stage earlier
// than a copy through md.sw.parser_drop would make it.
control TnaHeaderChecks(in headers_t hdr, inout tna_metadata_t md,
                        in ingress_intrinsic_metadata_from_parser_t ig_prsr_md) {
    HeaderChecks() header_checks;

    apply {
        bool cut_short = (ig_prsr_md.parser_err & PARSER_ERROR_PARTIAL_HDR) != 0;
        if (md.srh_unchecked) {
            if ((bit<16>)hdr.srh.hdr_ext_len != ((bit<16>)hdr.srh.last_entry + 16w1) << 1) {
                md.sw.drop_reason = DROP_SRH_LENGTH;
            } else if ((bit<16>)hdr.srh.segments_left > (bit<16>)hdr.srh.last_entry + 16w1) {
                md.sw.drop_reason = DROP_SRH_SEGMENTS_LEFT;
            } else if (cut_short) {
                md.sw.drop_reason = DROP_TRUNCATED;
            } else {
                md.sw.drop_reason = DROP_SRH_TOO_LONG;
            }
        } else if (cut_short) {
            md.sw.drop_reason = DROP_TRUNCATED;
        } else {
            header_checks.apply(hdr, md.sw);
        }
    }
}

parser SwitchEgressParser(packet_in packet, out headers_t hdr, out tna_metadata_t md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        packet.extract(eg_intr_md);
        transition select(packet.lookahead<bit<8>>()) {
            PKT_KIND_TRIM: parse_trim_mirror;
            default: parse_bridged;
        }
    }

    state parse_trim_mirror {
        packet.extract(md.trim_mirror);
        transition parse_ethernet;
    }

    // Controller packets (PacketOut, punts) leave as they came: nothing more to parse.
    state parse_bridged {
        packet.extract(md.bridged);
        transition select(md.bridged.from_cpu, md.bridged.to_cpu) {
            (0, 0): parse_ethernet;
            default: accept;
        }
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        transition select(hdr.ipv6.next_hdr) {
            PROTO_IPV6_ROUTE: parse_srh;
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    // Ingress let through only SRHs of 1 to SRH_MAX_SEGMENTS segments.
    state parse_srh {
        packet.extract(hdr.srh);
        transition select(hdr.srh.last_entry) {
            0: parse_segment_1;
            1: parse_segment_2;
            2: parse_segment_3;
            3: parse_segment_4;
            default: accept;
        }
    }

    state parse_segment_4 {
        packet.extract(hdr.srh_segments.next);
        transition parse_segment_3;
    }

    state parse_segment_3 {
        packet.extract(hdr.srh_segments.next);
        transition parse_segment_2;
    }

    state parse_segment_2 {
        packet.extract(hdr.srh_segments.next);
        transition parse_segment_1;
    }

    state parse_segment_1 {
        packet.extract(hdr.srh_segments.next);
        transition select(hdr.srh.next_hdr) {
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_inner_ipv6 {
        packet.extract(hdr.inner_ipv6);
        transition select(hdr.inner_ipv6.next_hdr) {
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition accept;
    }
}

#endif
