// The v1model deparser and the (empty) checksum controls: IPv6 has no header checksum, and the
// fabric leaves UDP checksums alone (RoCEv2 senders use 0; a trimmed packet's is zeroed).
#ifndef P4SRC_SWITCH_V1MODEL_DEPARSER_P4
#define P4SRC_SWITCH_V1MODEL_DEPARSER_P4

#include "../../include/headers.p4"

control SwitchVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SwitchComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SwitchDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.srh);
        packet.emit(hdr.srh_segments);
        packet.emit(hdr.inner_ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.bth);
    }
}

#endif
