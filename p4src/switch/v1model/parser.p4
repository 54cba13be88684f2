// The v1model parser: [packet_out] Ethernet, IPv6, [SRH + segment list], [inner IPv6], [UDP
// [BTH]]. A failed check ends parsing with parser_error set; BMv2 still runs ingress, which
// turns the error into a drop reason (parser_drop_reason below) and a counted drop
// (drop_stats.p4).
// No `if` here: p4c's BMv2 backend forbids it.
#ifndef P4SRC_SWITCH_V1MODEL_PARSER_P4
#define P4SRC_SWITCH_V1MODEL_PARSER_P4

#include "../../include/headers.p4"

// An IPv6 EtherType or next header whose header says another version: not IPv6
// (DROP_IP_VERSION), neither as the outer header nor as the inner one.
error {
    Ipv6Version
}

parser SwitchParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        verify(hdr.ipv6.version == 4w6, error.Ipv6Version);
        transition select(hdr.ipv6.next_hdr) {
            PROTO_IPV6_ROUTE: parse_srh;
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_srh {
        packet.extract(hdr.srh);
        verify(hdr.srh.routing_type == SRH_ROUTING_TYPE, error.SrhRoutingType);
        // Widened so that LastEntry 255 cannot wrap around to a match.
        verify((bit<16>)hdr.srh.hdr_ext_len == ((bit<16>)hdr.srh.last_entry + 16w1) << 1,
               error.SrhLength);
        verify((bit<16>)hdr.srh.segments_left <= (bit<16>)hdr.srh.last_entry + 16w1,
               error.SrhSegmentsLeft);
        meta.srh_segments_to_parse = hdr.srh.last_entry + 8w1;
        transition parse_srh_segment;
    }

    // One segment per visit; a list longer than the stack ends in StackOutOfBounds.
    state parse_srh_segment {
        packet.extract(hdr.srh_segments.next);
        meta.srh_segments_to_parse = meta.srh_segments_to_parse - 8w1;
        transition select(meta.srh_segments_to_parse) {
            0: parse_after_srh;
            default: parse_srh_segment;
        }
    }

    state parse_after_srh {
        transition select(hdr.srh.next_hdr) {
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_inner_ipv6 {
        packet.extract(hdr.inner_ipv6);
        verify(hdr.inner_ipv6.version == 4w6, error.Ipv6Version);
        transition select(hdr.inner_ipv6.next_hdr) {
            PROTO_UDP: parse_udp;
            default: accept;
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

// The drop reason of each parser check that failed; DROP_NONE for the rest.
bit<4> parser_drop_reason(in error parser_error) {
    if (parser_error == error.PacketTooShort) {
        return DROP_TRUNCATED;
    } else if (parser_error == error.SrhRoutingType) {
        return DROP_SRH_TYPE;
    } else if (parser_error == error.SrhLength) {
        return DROP_SRH_LENGTH;
    } else if (parser_error == error.SrhSegmentsLeft) {
        return DROP_SRH_SEGMENTS_LEFT;
    } else if (parser_error == error.StackOutOfBounds) {
        return DROP_SRH_TOO_LONG;
    } else if (parser_error == error.Ipv6Version) {
        return DROP_IP_VERSION;
    }
    return DROP_NONE;
}

#endif
