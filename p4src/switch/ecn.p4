// ECN: an ECN-capable packet (ECT(0) or ECT(1)) that met a queue deeper than its egress port's
// threshold leaves with CE in the outer header. Fabric-facing ports only: MRC reads marks as
// fabric congestion, so ports with a HOST egress role never mark, whatever is configured.
#ifndef P4SRC_SWITCH_ECN_P4
#define P4SRC_SWITCH_ECN_P4

#include "../include/headers.p4"

const bit<2> ECN_ECT1 = 1;
const bit<2> ECN_ECT0 = 2;
const bit<2> ECN_CE = 3;

control Ecn(inout headers_t hdr, inout metadata_t meta,
            in standard_metadata_t standard_metadata) {
    @name(".ecn_config_counter")
    direct_counter(CounterType.packets_and_bytes) ecn_config_counter;
    @name(".ecn_counter")
    counter(PORT_COUNT, CounterType.packets_and_bytes) ecn_counter;

    @name(".set_ecn_threshold")
    action set_ecn_threshold(bit<19> threshold) {
        meta.ecn_threshold = threshold;
    }

    // Control plane: fabric-facing egress ports -> set_ecn_threshold(packets of enq_qdepth).
    // No entry (host-facing ports): never mark.
    @name(".ecn_config")
    table ecn_config {
        key = { standard_metadata.egress_port : exact @name("port"); }
        actions = { set_ecn_threshold; NoAction; }
        default_action = NoAction();
        counters = ecn_config_counter;
        size = PORT_CONFIG_TABLE_SIZE;
    }

    apply {
        if (meta.egress_role != ROLE_HOST &&
                (hdr.ipv6.ecn == ECN_ECT0 || hdr.ipv6.ecn == ECN_ECT1)) {
            if (ecn_config.apply().hit) {
                if (standard_metadata.enq_qdepth > meta.ecn_threshold) {
                    hdr.ipv6.ecn = ECN_CE;
                    ecn_counter.count((bit<32>)standard_metadata.egress_port);
                }
            }
        }
    }
}

#endif
