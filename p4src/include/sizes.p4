// Every table and counter size, and the SRH segment-list bound, in one place.
#ifndef P4SRC_SIZES_P4
#define P4SRC_SIZES_P4

// Segments the parser accepts in one SRH; more is a StackOutOfBounds parser error
// (DROP_SRH_TOO_LONG). A macro because it sizes a header stack.
#define SRH_MAX_SEGMENTS 4

#define PORT_COUNT 512              // bit<9> ports
#define PORT_ROLE_TABLE_SIZE 512
#define SID_BLOCK_TABLE_SIZE 16
#define MY_SID_TABLE_SIZE 1024
#define ROUTE_V6_TABLE_SIZE 4096
#define ENCAP_V6_TABLE_SIZE 1024
#define DSCP_TABLE_SIZE 64
#define PORT_CONFIG_TABLE_SIZE 512  // trim_config, ecn_config
#define DROP_COUNTER_SIZE 8192      // PORT_COUNT * DROP_REASONS

#endif
