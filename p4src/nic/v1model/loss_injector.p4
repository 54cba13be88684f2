// The loss injector (v1model; tna/loss_injector.p4 is TNA's): an inline stage at the start of the
// NIC's receive path that drops packets at a rate set by table entry, per plane or per EV (the MRC
// paper's method for its 0.1% and 1% loss experiments). For tests and scenarios; with no entry
// nothing is dropped.
#ifndef P4SRC_NIC_V1MODEL_LOSS_INJECTOR_P4
#define P4SRC_NIC_V1MODEL_LOSS_INJECTOR_P4

#include "nic_state.p4"

control LossInjector(in nic_headers_t hdr, in nic_metadata_t meta,
                     inout standard_metadata_t standard_metadata, out bool dropped) {
    bool meta_drop = false;

#include "../loss_injector_table.p4"

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
