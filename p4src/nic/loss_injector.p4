// The loss injector: an inline stage at the start of the NIC's receive path that drops packets
// at a rate set by table entry, per plane or per EV (the MRC paper's method for its 0.1% and 1%
// loss experiments). For tests and scenarios; with no entry nothing is dropped.
#ifndef P4SRC_NIC_LOSS_INJECTOR_P4
#define P4SRC_NIC_LOSS_INJECTOR_P4

#include "nic_state.p4"

control LossInjector(in nic_headers_t hdr, in nic_metadata_t meta,
                     inout standard_metadata_t standard_metadata, out bool dropped) {
    bool meta_drop = false;

    @name(".drop_randomly")
    action drop_randomly(bit<32> threshold) {
        bit<32> draw;
        random(draw, 0, 0xFFFFFFFE);
        // threshold = rate * 2^32: 0 never drops, 0xFFFFFFFF always does
        meta_drop = draw < threshold;
    }

    // Why: reproducible loss on chosen planes or EVs, inside the NIC (no fabric change).
    // Installs: ternary on (plane, slot of the arriving packet's compact EV), with a priority;
    // e.g. plane 1 / slot *, or plane * / slot 5, threshold = drop rate * 2^32.
    @name(".loss_injector")
    table loss_injector {
        key = {
            meta.rx_plane                   : ternary @name("plane");
            hdr.outer_ipv6.flow_label[7:0]  : ternary @name("slot");
        }
        actions = { drop_randomly; @defaultonly NoAction; }
        default_action = NoAction();
        size = 64;
    }

    apply {
        meta_drop = false;
        loss_injector.apply();
        if (meta_drop) {
            mark_to_drop(standard_metadata);
            nic_counter.count(NIC_RX_INJECTED_DROP);
        }
        dropped = meta_drop;
    }
}

#endif
