/* softswitch native engine: values held as 64-bit limbs, least significant first — varbit
 * data (V_N.d, cgen_types.py) and, through the same helpers, anything wider than 128 bits.
 * Limbs above a value's width are zero. Static inline, included by ss_prog.h. */
#ifndef SS_WIDE_H
#define SS_WIDE_H

#include "ss_rt.h"

/* `w` bits of the packet at bit `pos` into limbs d[0..k) (the caller checked the bounds) */
static inline void ss_get_limbs(uint64_t *d, unsigned k, const uint8_t *buf, uint32_t pos,
                                unsigned w) {
    memset(d, 0, k * sizeof *d);
    for (unsigned lo = 0; lo < w; lo += 64) {
        unsigned n = w - lo < 64 ? w - lo : 64;
        d[lo >> 6] = (uint64_t)ss_read_bits(buf, pos + w - lo - n, n);
    }
}

/* write the low `w` bits of limbs `d` at bit `pos` of a zeroed output buffer */
static inline void ss_put_limbs(uint8_t *buf, uint32_t pos, unsigned w, const uint64_t *d) {
    for (unsigned lo = 0; lo < w; lo += 64) {
        unsigned n = w - lo < 64 ? w - lo : 64;
        ss_write_bits(buf, pos + w - lo - n, n, d[lo >> 6] & ss_mask64(n));
    }
}

/* append the `w`-bit limb value `d` to a calculation's field list (_fv, _fw, _fn), most
 * significant chunk first: bit-wise concatenation makes the chunks the same bytes */
static inline void ss_push_limbs(u128 *fv, uint16_t *fw, int *fn, const uint64_t *d,
                                 unsigned w) {
    if (!w) return;
    int k = (int)((w + 63) >> 6);
    for (int i = k - 1; i >= 0; i--) {
        unsigned n = i == k - 1 ? w - 64u * (unsigned)i : 64u;
        fv[*fn] = (u128)(d[i] & ss_mask64(n));
        fw[(*fn)++] = (uint16_t)n;
    }
}

#endif
