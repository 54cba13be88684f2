// A fragment, included inside the body of each architecture's LossInjector control
// (v1model/loss_injector.p4, tna/loss_injector.p4), which declares `bool meta_drop`: the loss
// injector's table and action, the same text in both programs. Uses the architecture's
// NIC_DRAW_BELOW (v1model/nic_arch.p4, tna/nic_arch.p4).
    @name(".drop_randomly")
    action drop_randomly(bit<32> threshold) {
        // threshold = rate * 2^32: 0 never drops, 0xFFFFFFFF always does
        NIC_DRAW_BELOW(meta_drop, threshold);
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
