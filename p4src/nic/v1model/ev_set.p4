// Which EV numbers a connection has (v1model; TNA's check is a const table in tna/ev_set.p4):
// feedback, probes and loss reports that name any other EV are refused, so that nothing can put
// a non-existent EV ASSUMED_BAD (it would count against ev_min_active for good: a probe of it is
// never answered).
#ifndef P4SRC_NIC_V1MODEL_EV_SET_P4
#define P4SRC_NIC_V1MODEL_EV_SET_P4

// The ev_count active EVs (ev_mask + 1), then `backups` per plane for each of `planes` planes.
bool nic_ev_in_set(in bit<8> ev_mask, in bit<8> backups, in bit<8> planes, in bit<16> ev) {
    return ev < (bit<16>)ev_mask + 1 + (bit<16>)backups * (bit<16>)planes;
}

#endif
