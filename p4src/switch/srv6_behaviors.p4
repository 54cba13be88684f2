// The SRv6 behaviours a `my_sid` hit selected (RFC 8986, RFC 9800 NEXT-C-SID, F3216).
// uN / uA with an argument left shift the carrier; with the argument exhausted they fall back
// to End on the SRH, then to USD (decapsulation), then drop. The hop limit is not touched
// here: routing.p4 decrements it once for every forwarded packet.
#ifndef P4SRC_SWITCH_SRV6_BEHAVIORS_P4
#define P4SRC_SWITCH_SRV6_BEHAVIORS_P4

#include "../include/headers.p4"

control Srv6Behaviors(inout headers_t hdr, inout metadata_t meta) {
    // Mask after shifting, so the active uSID never leaks into the block bits.
    action shift_usid_16() {
        hdr.ipv6.dst_addr = (hdr.ipv6.dst_addr & SID_BLOCK_MASK) |
                            ((hdr.ipv6.dst_addr << 16) & ~SID_BLOCK_MASK);
    }

    action shift_usid_32() {
        hdr.ipv6.dst_addr = (hdr.ipv6.dst_addr & SID_BLOCK_MASK) |
                            ((hdr.ipv6.dst_addr << 32) & ~SID_BLOCK_MASK);
    }

    // Strip the outer IPv6 header and its SRH; the inner header becomes the one routed.
    action decap() {
        hdr.ipv6 = hdr.inner_ipv6;
        hdr.inner_ipv6.setInvalid();
        hdr.srh.setInvalid();
        hdr.srh_segments.pop_front(SRH_MAX_SEGMENTS);
    }

    apply {
        // End on the SRH: the parser guaranteed segments_left <= last_entry + 1 <= stack size,
        // so the index below is always inside the stack.
        bool srh_next = hdr.srh.isValid() && hdr.srh.segments_left != 0;
        if (meta.sid_behavior == SID_UN || meta.sid_behavior == SID_UA ||
                meta.sid_behavior == SID_UA_COMBINED) {
            bool argument_left;
            if (meta.sid_behavior == SID_UA_COMBINED) {
                argument_left = hdr.ipv6.dst_addr[63:0] != 0;
            } else {
                argument_left = hdr.ipv6.dst_addr[79:0] != 0;
            }
            if (argument_left) {
                if (meta.sid_behavior == SID_UA_COMBINED) {
                    shift_usid_32();
                } else {
                    shift_usid_16();
                }
            } else if (srh_next) {
                hdr.srh.segments_left = hdr.srh.segments_left - 8w1;
                hdr.ipv6.dst_addr = hdr.srh_segments[(bit<32>)hdr.srh.segments_left].sid;
            } else if (hdr.inner_ipv6.isValid()) {
                decap();
            } else {
                meta.drop_reason = DROP_SID_NO_NEXT;
            }
        } else if (meta.sid_behavior == SID_END || meta.sid_behavior == SID_END_X) {
            if (srh_next) {
                hdr.srh.segments_left = hdr.srh.segments_left - 8w1;
                hdr.ipv6.dst_addr = hdr.srh_segments[(bit<32>)hdr.srh.segments_left].sid;
            } else {
                meta.drop_reason = DROP_SID_NO_NEXT;
            }
        } else if (meta.sid_behavior == SID_END_DT6) {
            if (srh_next || !hdr.inner_ipv6.isValid()) {
                meta.drop_reason = DROP_DECAP;
            } else {
                decap();
            }
        }
    }
}

#endif
