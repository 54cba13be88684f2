// Counter declarations for the TNA programs (see counters_v1model.p4): Tofino's Counter and
// DirectCounter externs, 32-bit cells (the control plane reads them as 64-bit P4Runtime data).
#ifndef P4SRC_COUNTERS_TNA_P4
#define P4SRC_COUNTERS_TNA_P4

#define PKT_BYTE_COUNTER(name, size) \
    Counter<bit<32>, bit<32>>(size, CounterType_t.PACKETS_AND_BYTES) name
#define PKT_BYTE_DIRECT_COUNTER(name) \
    DirectCounter<bit<32>>(CounterType_t.PACKETS_AND_BYTES) name
// A TNA direct counter counts in the actions that call count(): every action of a counted
// table calls it (NoAction cannot, so an entry installed with NoAction is not counted).
#define DIRECT_COUNT(name) name.count()

#endif
