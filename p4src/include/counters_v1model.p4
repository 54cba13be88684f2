// Counter declarations for the v1model programs. Shared controls declare their counters with
// these macros, so one control source serves v1model (this file) and TNA (counters_tna.p4);
// the P4Info (names, sizes, packets-and-bytes) is the same on both.
#ifndef P4SRC_COUNTERS_V1MODEL_P4
#define P4SRC_COUNTERS_V1MODEL_P4

// An indexed packets-and-bytes counter of `size` cells.
#define PKT_BYTE_COUNTER(name, size) counter(size, CounterType.packets_and_bytes) name
// A packets-and-bytes counter with one cell per entry of the table whose `counters` names it.
#define PKT_BYTE_DIRECT_COUNTER(name) direct_counter(CounterType.packets_and_bytes) name
// Called in each action of a table with a direct counter. v1model counts every hit of the
// table by itself, so the call is left out (an empty statement remains).
#define DIRECT_COUNT(name)

#endif
