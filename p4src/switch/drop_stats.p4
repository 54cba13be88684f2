// Drop classification and accounting. HeaderChecks turns a failed parser check (the reason
// the architecture's parser adapter put in meta.parser_drop) and non-IPv6 packets into drop
// reasons; DropStats, at the end of ingress, counts every drop in `drop_counter` (index
// ingress_port * 16 + reason) and either drops the packet or, for hop-limit drops when
// `hop_limit_policy` says so, punts it to the CPU port.
#ifndef P4SRC_SWITCH_DROP_STATS_P4
#define P4SRC_SWITCH_DROP_STATS_P4

#include "../include/headers.p4"
#include "packet_io.p4"

control HeaderChecks(in headers_t hdr, inout metadata_t meta) {
    apply {
        if (meta.parser_drop != DROP_NONE) {
            meta.drop_reason = meta.parser_drop;
        } else if (!hdr.ipv6.isValid()) {
            meta.drop_reason = DROP_NOT_IPV6;
        }
    }
}

control DropStats(inout headers_t hdr, inout metadata_t meta) {
    @name(".drop_counter")
    PKT_BYTE_COUNTER(drop_counter, DROP_COUNTER_SIZE);

    PuntToCpu() punt_to_cpu;

    @name(".drop_hop_limit")
    action drop_hop_limit() {
        meta.punt = false;
    }

    @name(".punt_hop_limit")
    action punt_hop_limit() {
        meta.punt = true;
    }

    // Control plane: only the default action — drop_hop_limit (count and drop) or
    // punt_hop_limit (count and send to the CPU port). No direct counter: a keyless table has
    // no entries to read one from; `drop_counter` counts these packets.
    @name(".hop_limit_policy")
    table hop_limit_policy {
        actions = { drop_hop_limit; punt_hop_limit; }
        default_action = drop_hop_limit();
    }

    apply {
        if (meta.drop_reason != DROP_NONE) {
            drop_counter.count((bit<32>)meta.ingress_port * DROP_REASONS +
                               (bit<32>)meta.drop_reason);
            if (meta.drop_reason == DROP_HOP_LIMIT) {
                hop_limit_policy.apply();
            }
            if (meta.punt) {
                punt_to_cpu.apply(hdr, meta);
            } else {
                meta.drop = true;
            }
        }
    }
}

#endif
