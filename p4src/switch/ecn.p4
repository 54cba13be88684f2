// ECN: an ECN-capable packet (ECT(0) or ECT(1)) that met a queue deeper than its egress port's
// threshold leaves with CE in the outer header. Fabric-facing ports only: MRC reads marks as
// fabric congestion, so ports with a HOST egress role never mark, whatever is configured.
#ifndef P4SRC_SWITCH_ECN_P4
#define P4SRC_SWITCH_ECN_P4

#include "../include/headers.p4"

const bit<2> ECN_ECT1 = 1;
const bit<2> ECN_ECT0 = 2;
const bit<2> ECN_CE = 3;

control Ecn(inout headers_t hdr, inout metadata_t meta) {
    @name(".ecn_config_counter")
    PKT_BYTE_DIRECT_COUNTER(ecn_config_counter);
    @name(".ecn_counter")
    PKT_BYTE_COUNTER(ecn_counter, PORT_COUNT);

    @name(".set_ecn_threshold")
    action set_ecn_threshold(bit<19> threshold) {
        meta.ecn_threshold = threshold;
        DIRECT_COUNT(ecn_config_counter);
    }

    // Control plane: fabric-facing egress ports -> set_ecn_threshold(packets of enq_qdepth).
    // No entry (host-facing ports): never mark.
    @name(".ecn_config")
    table ecn_config {
        key = { meta.egress_port : exact @name("port"); }
        actions = { set_ecn_threshold; NoAction; }
        default_action = NoAction();
        counters = ecn_config_counter;
        size = PORT_CONFIG_TABLE_SIZE;
    }

    apply {
        if (meta.egress_role != ROLE_HOST &&
                (hdr.ipv6.ecn == ECN_ECT0 || hdr.ipv6.ecn == ECN_ECT1)) {
            if (ecn_config.apply().hit) {
                if (meta.enq_qdepth > meta.ecn_threshold) {
                    hdr.ipv6.ecn = ECN_CE;
                    ecn_counter.count((bit<32>)meta.egress_port);
                }
            }
        }
    }
}

#endif
