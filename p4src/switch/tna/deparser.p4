// The TNA deparsers of the fabric switch. Ingress emits the bridged header in front of the
// packet for the egress parser; egress emits the headers it parsed (the rest is payload) and,
// for a packet TrimMirror chose to trim, mirrors it with the trim mirror header to the port's
// trim session. IPv6 has no header checksum and the fabric leaves UDP checksums alone (RoCEv2
// senders use 0; a trimmed copy's is zeroed), so there is no Checksum here.
#ifndef P4SRC_SWITCH_TNA_DEPARSER_P4
#define P4SRC_SWITCH_TNA_DEPARSER_P4

#include "headers.p4"

control SwitchIngressDeparser(packet_out packet, inout headers_t hdr, in tna_metadata_t md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        packet.emit(md.bridged);
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

control SwitchEgressDeparser(packet_out packet, inout headers_t hdr, in tna_metadata_t md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_TRIM) {
            mirror.emit(md.trim_session, md.trim_mirror);
        }
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.srh);
        packet.emit(hdr.srh_segments);
        packet.emit(hdr.inner_ipv6);
        packet.emit(hdr.udp);
    }
}

#endif
