// The loss injector (TNA; v1model/loss_injector.p4 is v1model's): an inline stage at the start of
// the NIC's receive path that drops packets at a rate set by table entry, per plane or per EV.
// The same table (loss_injector_table.p4); the draw is TNA's Random extern. It runs on a
// packet's first pass only (a resubmitted packet has been drawn for already).
#ifndef P4SRC_NIC_TNA_LOSS_INJECTOR_P4
#define P4SRC_NIC_TNA_LOSS_INJECTOR_P4

#include "nic_state.p4"

control LossInjector(in nic_headers_t hdr, inout nic_metadata_t meta, out bool dropped) {
    Random<bit<32>>() rng;
    bool meta_drop = false;

#include "../loss_injector_table.p4"

    apply {
        meta_drop = false;
        loss_injector.apply();
        if (meta_drop) {
            NIC_DROP();
            NIC_COUNT(NIC_RX_INJECTED_DROP);
        }
        dropped = meta_drop;
    }
}

#endif
