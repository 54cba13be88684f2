// H.Encaps.Red (RFC 8986 §5.2) for plain IPv6 from HOST ports: the host's packet becomes the
// inner header; the outer carries one uSID carrier as destination, and optionally a reduced
// one-segment SRH holding the next carrier. The outer copies the inner's traffic class, flow
// label and hop limit (routing.p4 then decrements the outer's once).
#ifndef P4SRC_SWITCH_ENCAP_P4
#define P4SRC_SWITCH_ENCAP_P4

#include "../include/headers.p4"

control Encap(inout headers_t hdr) {
    @name(".encap_v6_counter")
    PKT_BYTE_DIRECT_COUNTER(encap_v6_counter);

    @name(".encap_usid")
    action encap_usid(ipv6_addr_t src, ipv6_addr_t carrier) {
        hdr.inner_ipv6 = hdr.ipv6;
        hdr.ipv6.payload_len = hdr.inner_ipv6.payload_len + IPV6_HEADER_BYTES;
        hdr.ipv6.next_hdr = PROTO_IPV6;
        hdr.ipv6.src_addr = src;
        hdr.ipv6.dst_addr = carrier;
        DIRECT_COUNT(encap_v6_counter);
    }

    // Reduced SRH (RFC 8754 §4.1.1): the first carrier sits only in the destination, so the
    // list holds one segment: last entry 0, segments left 1.
    @name(".encap_usid_srh")
    action encap_usid_srh(ipv6_addr_t src, ipv6_addr_t carrier, ipv6_addr_t next_carrier) {
        hdr.inner_ipv6 = hdr.ipv6;
        hdr.ipv6.payload_len = hdr.inner_ipv6.payload_len + IPV6_HEADER_BYTES +
                               SRH_FIXED_BYTES + 16w16;
        hdr.ipv6.next_hdr = PROTO_IPV6_ROUTE;
        hdr.ipv6.src_addr = src;
        hdr.ipv6.dst_addr = carrier;
        hdr.srh.setValid();
        hdr.srh.next_hdr = PROTO_IPV6;
        hdr.srh.hdr_ext_len = 2;
        hdr.srh.routing_type = SRH_ROUTING_TYPE;
        hdr.srh.segments_left = 1;
        hdr.srh.last_entry = 0;
        hdr.srh.flags = 0;
        hdr.srh.tag = 0;
        hdr.srh_segments[0].setValid();
        hdr.srh_segments[0].sid = next_carrier;
        DIRECT_COUNT(encap_v6_counter);
    }

    // Control plane: H.Encaps.Red policies, destination prefix -> encap_usid(src, carrier) or
    // encap_usid_srh(src, carrier, next_carrier). No hit: the packet is routed as it is.
    @name(".encap_v6")
    table encap_v6 {
        key = { hdr.ipv6.dst_addr : lpm @name("dst_addr"); }
        actions = { encap_usid; encap_usid_srh; NoAction; }
        default_action = NoAction();
        counters = encap_v6_counter;
        size = ENCAP_V6_TABLE_SIZE;
    }

    apply {
        encap_v6.apply();
    }
}

#endif
