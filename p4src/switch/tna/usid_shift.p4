// The uN / uA carrier shift (srv6_behaviors.p4) on TNA: Tofino has no 128-bit shifter, so the
// address is moved as its 32-bit words below the block (bits 95..64, 63..32, 31..0): a 16-bit
// shift is a funnel shift of each word with the next one ((hi ++ lo) >> 16, cast to 32 bits,
// which bf-p4c turns into one funnel-shift instruction), a 32-bit shift a move of each word.
// Each statement reads only words not yet written, so sequential and parallel execution agree.
#ifndef P4SRC_SWITCH_TNA_USID_SHIFT_P4
#define P4SRC_SWITCH_TNA_USID_SHIFT_P4

#include "../../include/headers.p4"

void usid_shift_16(inout ipv6_addr_t dst) {
    dst[95:64] = (bit<32>)((dst[95:64] ++ dst[63:32]) >> 16);
    dst[63:32] = (bit<32>)((dst[63:32] ++ dst[31:0]) >> 16);
    dst[31:0] = dst[31:0] << 16;
}

void usid_shift_32(inout ipv6_addr_t dst) {
    dst[95:64] = dst[63:32];
    dst[63:32] = dst[31:0];
    dst[31:0] = 0;
}

#endif
