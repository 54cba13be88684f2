// The SRv6 behaviours a `my_sid` hit selected (RFC 8986, RFC 9800 NEXT-C-SID, F3216).
// uN / uA with an argument left shift the carrier; with the argument exhausted they fall back
// to End on the SRH, then to USD (decapsulation), then drop. The hop limit is not touched
// here: routing.p4 decrements it once for every forwarded packet.
#ifndef P4SRC_SWITCH_SRV6_BEHAVIORS_P4
#define P4SRC_SWITCH_SRV6_BEHAVIORS_P4

#include "../include/headers.p4"

#if SRH_MAX_SEGMENTS != 4
#error "srv6_behaviors.p4 and tna/parser.p4 spell out SRH_MAX_SEGMENTS (4) segments"
#endif

// End on the SRH: segments left - 1, destination <- the segment it now points to. The parser
// guaranteed segments_left <= last_entry + 1 <= SRH_MAX_SEGMENTS. An if chain in an apply
// block, not a run-time stack index, which Tofino cannot do.
control SrhNextSegment(inout headers_t hdr) {
    apply {
        hdr.srh.segments_left = hdr.srh.segments_left - 8w1;
        if (hdr.srh.segments_left == 0) {
            hdr.ipv6.dst_addr = hdr.srh_segments[0].sid;
        } else if (hdr.srh.segments_left == 1) {
            hdr.ipv6.dst_addr = hdr.srh_segments[1].sid;
        } else if (hdr.srh.segments_left == 2) {
            hdr.ipv6.dst_addr = hdr.srh_segments[2].sid;
        } else if (hdr.srh.segments_left == 3) {
            hdr.ipv6.dst_addr = hdr.srh_segments[3].sid;
        }
    }
}

control Srv6Behaviors(inout headers_t hdr, inout metadata_t meta) {
    SrhNextSegment() srh_next_segment;

    // uN / uA: keep the block, shift what follows it by one uSID (16 bits) or two (32), with
    // the architecture's usid_shift_16/32 (v1model/usid_shift.p4: one 128-bit expression;
    // tna/usid_shift.p4: 32-bit funnel shifts). These helper actions are in the P4Info too (as
    // every action no table uses); their @names are the ones they always had, on both
    // architectures.
    @name(".SwitchIngress.srv6_behaviors.shift_usid_16")
    action shift_usid_16() {
        usid_shift_16(hdr.ipv6.dst_addr);
    }

    @name(".SwitchIngress.srv6_behaviors.shift_usid_32")
    action shift_usid_32() {
        usid_shift_32(hdr.ipv6.dst_addr);
    }

    // Strip the outer IPv6 header and its SRH; the inner header becomes the one routed.
    @name(".SwitchIngress.srv6_behaviors.decap")
    action decap() {
        hdr.ipv6 = hdr.inner_ipv6;
        hdr.inner_ipv6.setInvalid();
        hdr.srh.setInvalid();
        hdr.srh_segments[0].setInvalid();
        hdr.srh_segments[1].setInvalid();
        hdr.srh_segments[2].setInvalid();
        hdr.srh_segments[3].setInvalid();
    }

    apply {
        bool srh_next = hdr.srh.isValid() && hdr.srh.segments_left != 0;
        if (meta.sid_behavior == SID_UN || meta.sid_behavior == SID_UA ||
                meta.sid_behavior == SID_UA_COMBINED) {
            bool argument_left;
            // In 32-bit pieces, as Tofino compares them.
            if (meta.sid_behavior == SID_UA_COMBINED) {
                argument_left = hdr.ipv6.dst_addr[63:32] != 0 || hdr.ipv6.dst_addr[31:0] != 0;
            } else {
                argument_left = hdr.ipv6.dst_addr[79:64] != 0 || hdr.ipv6.dst_addr[63:32] != 0 ||
                                hdr.ipv6.dst_addr[31:0] != 0;
            }
            if (argument_left) {
                if (meta.sid_behavior == SID_UA_COMBINED) {
                    shift_usid_32();
                } else {
                    shift_usid_16();
                }
            } else if (srh_next) {
                srh_next_segment.apply(hdr);
            } else if (hdr.inner_ipv6.isValid()) {
                decap();
            } else {
                meta.drop_reason = DROP_SID_NO_NEXT;
            }
        } else if (meta.sid_behavior == SID_END || meta.sid_behavior == SID_END_X) {
            if (srh_next) {
                srh_next_segment.apply(hdr);
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
