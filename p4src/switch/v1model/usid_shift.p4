// The uN / uA carrier shift (srv6_behaviors.p4) on v1model: keep the block, shift what follows
// it left by one uSID (16 bits) or two (32), zero-filling. BMv2 and softswitch shift all 128
// bits at once; mask after shifting, so the active uSID never leaks into the block bits.
#ifndef P4SRC_SWITCH_V1MODEL_USID_SHIFT_P4
#define P4SRC_SWITCH_V1MODEL_USID_SHIFT_P4

#include "../../include/headers.p4"

void usid_shift_16(inout ipv6_addr_t dst) {
    dst = (dst & SID_BLOCK_MASK) | ((dst << 16) & ~SID_BLOCK_MASK);
}

void usid_shift_32(inout ipv6_addr_t dst) {
    dst = (dst & SID_BLOCK_MASK) | ((dst << 32) & ~SID_BLOCK_MASK);
}

#endif
