// Packet trimming: the decision and the trimmed copy's fix-up, shared by both architectures.
// A real switch trims a packet its buffer cannot admit; neither BMv2 nor softswitch can see an
// admission failure, so a queue deeper than the port's threshold stands in for one.
//   1. TrimDecide (egress): a trimmable DSCP, a `trim_config` entry for the port and
//      enq_qdepth > threshold -> meta.trim, with "this length, this DSCP" in meta.trim_bytes /
//      meta.trim_dscp. The original is not sent: the architecture makes a copy cut to
//      trim_bytes that goes back to the same port on the highest priority —
//      v1model by recirculation + truncate (v1model/trim.p4), TNA by mirroring to the port's
//      truncating trim session (tna/trim.p4).
//   2. TrimFixup (the copy's egress pass, meta.trim_pass == 1): IPv6 payload lengths (outer
//      and inner) and the UDP length match the truncated size, the UDP checksum is zeroed (the
//      payload it covered is gone), the outer DSCP becomes the configured TRIMMED /
//      TRIMMED_LASTHOP; `trim_counter`.
// So the trimmed header travels the high-priority queue, as on real switches.
#ifndef P4SRC_SWITCH_TRIM_P4
#define P4SRC_SWITCH_TRIM_P4

#include "../include/headers.p4"

control TrimDecide(in headers_t hdr, inout metadata_t meta) {
    @name(".trimmable_dscp_counter")
    PKT_BYTE_DIRECT_COUNTER(trimmable_dscp_counter);
    @name(".trim_config_counter")
    PKT_BYTE_DIRECT_COUNTER(trim_config_counter);

    @name(".set_trimmable")
    action set_trimmable() {
        meta.trimmable = true;
        DIRECT_COUNT(trimmable_dscp_counter);
    }

    @name(".set_trim")
    action set_trim(bit<19> threshold, bit<16> trim_bytes, bit<6> trimmed_dscp) {
        meta.trim_threshold = threshold;
        meta.trim_bytes = trim_bytes;
        meta.trim_dscp = trimmed_dscp;
        DIRECT_COUNT(trim_config_counter);
    }

    // Control plane: the DSCPs that may be trimmed (TRIMMABLE, TRIMMABLE_RETX) -> set_trimmable.
    @name(".trimmable_dscp")
    table trimmable_dscp {
        key = { hdr.ipv6.dscp : exact @name("dscp"); }
        actions = { set_trimmable; NoAction; }
        default_action = NoAction();
        counters = trimmable_dscp_counter;
        size = DSCP_TABLE_SIZE;
    }

    // Control plane: per egress port, set_trim(threshold in packets of enq_qdepth, length to
    // cut to — enough to keep every header through RETH —, TRIMMED on fabric ports or
    // TRIMMED_LASTHOP on host-facing ports). No entry: never trim on that port. On TNA the
    // port also needs its trim session (p4src/README.md, "Trimming on TNA").
    @name(".trim_config")
    table trim_config {
        key = { meta.egress_port : exact @name("port"); }
        actions = { set_trim; NoAction; }
        default_action = NoAction();
        counters = trim_config_counter;
        size = PORT_CONFIG_TABLE_SIZE;
    }

    apply {
        trimmable_dscp.apply();
        if (meta.trimmable) {
            if (trim_config.apply().hit) {
                if (meta.enq_qdepth > meta.trim_threshold) {
                    meta.trim = true;
                }
            }
        }
    }
}

control TrimFixup(inout headers_t hdr, in metadata_t meta) {
    @name(".trim_counter")
    PKT_BYTE_COUNTER(trim_counter, PORT_COUNT);

    apply {
        // The length on the wire after the cut: trim_bytes, unless the packet was shorter.
        bit<16> length = meta.trim_bytes;
        bit<16> whole = ETHERNET_HEADER_BYTES + IPV6_HEADER_BYTES + hdr.ipv6.payload_len;
        if (whole < length) {
            length = whole;
        }
        // Bytes before the inner IPv6 header (or the UDP header when there is none).
        bit<16> offset = ETHERNET_HEADER_BYTES + IPV6_HEADER_BYTES;
        hdr.ipv6.payload_len = length - offset;
        if (hdr.srh.isValid()) {
            offset = offset + SRH_FIXED_BYTES + ((bit<16>)hdr.srh.hdr_ext_len << 3);
        }
        if (hdr.inner_ipv6.isValid()) {
            offset = offset + IPV6_HEADER_BYTES;
            hdr.inner_ipv6.payload_len = length - offset;
        }
        if (hdr.udp.isValid()) {
            hdr.udp.length = length - offset;
            hdr.udp.checksum = 0;
        }
        hdr.ipv6.dscp = meta.trim_dscp;
        trim_counter.count((bit<32>)meta.egress_port);
    }
}

#endif
