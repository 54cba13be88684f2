// Header and metadata types.
#ifndef P4SRC_HEADERS_P4
#define P4SRC_HEADERS_P4

#include "defines.p4"
#include "sizes.p4"

typedef bit<48> mac_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<9> port_t;

// Parser errors of our own, one per SRH consistency check (each its own drop reason).
error {
    SrhRoutingType,      // routing header whose type is not 4
    SrhLength,           // HdrExtLen != 2 * (LastEntry + 1): TLVs are not supported
    SrhSegmentsLeft      // SegmentsLeft > LastEntry + 1
}

@controller_header("packet_in")
header packet_in_t {
    port_t ingress_port;
    bit<8> reason;
    bit<7> pad;
}

@controller_header("packet_out")
header packet_out_t {
    port_t egress_port;
    bit<7> pad;
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv6_t {
    bit<4>      version;
    bit<6>      dscp;           // traffic class, split: DSCP then ECN
    bit<2>      ecn;
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

// RFC 8754 SRH: the fixed part; the segment list is a separate header stack.
header srh_t {
    bit<8>  next_hdr;
    bit<8>  hdr_ext_len;
    bit<8>  routing_type;
    bit<8>  segments_left;
    bit<8>  last_entry;
    bit<8>  flags;
    bit<16> tag;
}

header srh_segment_t {
    ipv6_addr_t sid;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

// RoCEv2 / MRC base transport header (12 bytes).
header bth_t {
    bit<8>  opcode;
    bit<1>  solicited_event;
    bit<1>  mig_req;
    bit<2>  pad_count;
    bit<4>  transport_version;
    bit<16> partition_key;
    bit<8>  reserved0;
    bit<24> dest_qp;
    bit<1>  ack_req;
    bit<1>  reliable;
    bit<1>  retransmit;
    bit<1>  timestamp;
    bit<4>  reserved1;
    bit<24> psn;
}

struct headers_t {
    packet_in_t                     packet_in;
    packet_out_t                    packet_out;
    ethernet_t                      ethernet;
    ipv6_t                          ipv6;        // the outer IPv6 header (after decap: the inner)
    srh_t                           srh;
    srh_segment_t[SRH_MAX_SEGMENTS] srh_segments;
    ipv6_t                          inner_ipv6;
    udp_t                           udp;
    bth_t                           bth;
}

struct metadata_t {
    // The architecture's intrinsic metadata, as the shared controls of p4src/switch/ see it:
    // each architecture's top copies its own metadata into these fields before the shared
    // controls run and back out after them (switch/srv6_switch.p4, switch/tna/srv6_switch.p4).
    port_t      ingress_port;      // the port the packet arrived on
    bit<4>      parser_drop;       // the drop reason of a failed parser check, else DROP_NONE
    port_t      egress_spec;       // ingress: the port chosen for it
    bool        drop;              // ingress: drop it
    bit<3>      priority;          // ingress: its egress queue (larger is served first)
    port_t      egress_port;       // egress: the port it leaves on
    bit<19>     enq_qdepth;        // egress: the depth of its queue when it was enqueued
    bool        trim;              // egress: TrimDecide chose to trim it (the architecture does)
    // Parser bookkeeping: SRH segments still to extract.
    bit<8>      srh_segments_to_parse;
    // Ingress decisions.
    bool        from_cpu;          // a PacketOut: sent as it is, no egress features
    bit<2>      port_role;
    bool        in_sid_block;
    bit<4>      drop_reason;
    bool        punt;
    bit<3>      sid_behavior;
    bool        need_route;        // route_v6 on the (new) destination
    bool        direct_forward;    // uA / End.X: the port and MACs below, no route lookup
    port_t      fwd_port;
    mac_addr_t  fwd_smac;
    mac_addr_t  fwd_dmac;
    // Egress decisions.
    bit<2>      egress_role;
    bool        trimmable;
    bit<19>     trim_threshold;
    bit<19>     ecn_threshold;
    // The trimmed copy's state: carried through recirculation on v1model (the @field_list),
    // in the trim mirror header on TNA (switch/v1model/trim.p4, switch/tna/trim.p4).
    @field_list(FIELD_LIST_TRIM)
    bit<1>      trim_pass;
    @field_list(FIELD_LIST_TRIM)
    port_t      trim_port;
    @field_list(FIELD_LIST_TRIM)
    bit<16>     trim_bytes;
    @field_list(FIELD_LIST_TRIM)
    bit<6>      trim_dscp;
}

#endif
