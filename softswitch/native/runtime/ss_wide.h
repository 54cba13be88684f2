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

/* ---- bit<W> / int<W> with W > 128: W_K {l[K]} (K = limbs), reduced to W bits; an int<W> is
 * its W-bit two's complement (the sign is bit W-1). The arithmetic P4 defines, on limbs. */
static inline void ss_wmask(uint64_t *r, unsigned k, unsigned w) {
    for (unsigned i = 0; i < k; i++) {
        unsigned lo = 64u * i;
        r[i] &= lo >= w ? 0 : ss_mask64(w - lo);
    }
}
/* bits above w set to the sign bit (bit w-1): the full-width view of an int<w> */
static inline void ss_wsext(uint64_t *r, unsigned k, unsigned w) {
    if (!w || !((r[(w - 1) >> 6] >> ((w - 1) & 63)) & 1)) return;
    for (unsigned i = 0; i < k; i++) {
        unsigned lo = 64u * i;
        if (lo + 64 <= w) continue;
        r[i] |= lo >= w ? ~(uint64_t)0 : ~ss_mask64(w - lo);
    }
}
static inline void ss_wfrom(uint64_t *r, unsigned k, u128 v, int negative) {
    for (unsigned i = 0; i < k; i++) r[i] = negative ? ~(uint64_t)0 : 0;
    r[0] = (uint64_t)v;
    if (k > 1) r[1] = (uint64_t)(v >> 64);
}
static inline void ss_wadd(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned k) {
    u128 c = 0;
    for (unsigned i = 0; i < k; i++) { c += (u128)a[i] + b[i]; r[i] = (uint64_t)c; c >>= 64; }
}
static inline void ss_wsub(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned k) {
    uint64_t borrow = 0;
    for (unsigned i = 0; i < k; i++) {
        u128 d = (u128)a[i] - b[i] - borrow;
        r[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
}
static inline void ss_wmul(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned k) {
    uint64_t t[k];
    memset(t, 0, sizeof t);
    for (unsigned i = 0; i < k; i++) {
        u128 c = 0;
        for (unsigned j = 0; i + j < k; j++) {
            c += (u128)a[i] * b[j] + t[i + j];
            t[i + j] = (uint64_t)c;
            c >>= 64;
        }
    }
    memcpy(r, t, sizeof t);
}
/* a << n (left) or a >> n (logical) over k limbs; n past the end gives 0 */
static inline void ss_wshift(uint64_t *r, const uint64_t *a, unsigned k, uint64_t n, int left) {
    uint64_t t[k];
    int q = n >= 64u * k ? (int)k : (int)(n >> 6);
    unsigned s = (unsigned)(n & 63);
    for (int i = 0; i < (int)k; i++) {
        /* the limb landing on i, and its neighbour whose bits the shift carries in */
        int src = left ? i - q : i + q, nb = left ? src - 1 : src + 1;
        uint64_t v = 0;
        if (src >= 0 && src < (int)k) {
            v = left ? a[src] << s : a[src] >> s;
            if (s && nb >= 0 && nb < (int)k) v |= left ? a[nb] >> (64 - s) : a[nb] << (64 - s);
        }
        t[i] = v;
    }
    memcpy(r, t, sizeof t);
}
static inline void ss_wshl(uint64_t *r, const uint64_t *a, unsigned k, uint64_t n) {
    ss_wshift(r, a, k, n, 1);
}
static inline void ss_wshr(uint64_t *r, const uint64_t *a, unsigned k, uint64_t n) {
    ss_wshift(r, a, k, n, 0);
}
static inline int ss_wcmp(const uint64_t *a, const uint64_t *b, unsigned k) {
    for (unsigned i = k; i-- > 0;)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}
static inline int ss_wscmp(const uint64_t *a, const uint64_t *b, unsigned k, unsigned w) {
    int sa = (int)((a[(w - 1) >> 6] >> ((w - 1) & 63)) & 1);
    int sb = (int)((b[(w - 1) >> 6] >> ((w - 1) & 63)) & 1);
    if (sa != sb) return sa ? -1 : 1;
    return ss_wcmp(a, b, k);
}
/* bits [lo, lo + n) of a (n <= 128) */
static inline u128 ss_wbits(const uint64_t *a, unsigned k, unsigned lo, unsigned n) {
    uint64_t t[k];
    ss_wshr(t, a, k, lo);
    u128 v = (u128)t[0] | (k > 1 ? (u128)t[1] << 64 : 0);
    return v & ss_mask128(n);
}
/* r (kr limbs) = bits [lo, lo + n) of a (ka limbs) */
static inline void ss_wslice(uint64_t *r, unsigned kr, const uint64_t *a, unsigned ka,
                             unsigned lo, unsigned n) {
    uint64_t t[ka];
    ss_wshr(t, a, ka, lo);
    for (unsigned i = 0; i < kr; i++) r[i] = i < ka ? t[i] : 0;
    ss_wmask(r, kr, n);
}
/* a shift amount held in limbs: past 64 bits it is "very large" */
static inline uint64_t ss_wamount(const uint64_t *a, unsigned k) {
    for (unsigned i = 1; i < k; i++) if (a[i]) return ~(uint64_t)0;
    return a[0];
}

/* W_K and its value operations (cgen_types emits SS_WIDE(K) once per limb count) */
#define SS_WIDE(K) \
typedef struct { uint64_t l[K]; } W_##K; \
static inline int EQ_W_##K(const W_##K *a, const W_##K *b) { return !memcmp(a->l, b->l, sizeof a->l); } \
static inline W_##K W_##K##_u(u128 v, unsigned w) { W_##K r; ss_wfrom(r.l, K, v, 0); ss_wmask(r.l, K, w); return r; } \
static inline W_##K W_##K##_s(s128 v, unsigned w) { W_##K r; ss_wfrom(r.l, K, (u128)v, v < 0); ss_wmask(r.l, K, w); return r; } \
static inline W_##K W_##K##_add(W_##K a, W_##K b, unsigned w) { W_##K r; ss_wadd(r.l, a.l, b.l, K); ss_wmask(r.l, K, w); return r; } \
static inline W_##K W_##K##_sub(W_##K a, W_##K b, unsigned w) { W_##K r; ss_wsub(r.l, a.l, b.l, K); ss_wmask(r.l, K, w); return r; } \
static inline W_##K W_##K##_mul(W_##K a, W_##K b, unsigned w) { W_##K r; ss_wmul(r.l, a.l, b.l, K); ss_wmask(r.l, K, w); return r; } \
static inline W_##K W_##K##_and(W_##K a, W_##K b) { for (int i = 0; i < K; i++) a.l[i] &= b.l[i]; return a; } \
static inline W_##K W_##K##_or(W_##K a, W_##K b) { for (int i = 0; i < K; i++) a.l[i] |= b.l[i]; return a; } \
static inline W_##K W_##K##_xor(W_##K a, W_##K b) { for (int i = 0; i < K; i++) a.l[i] ^= b.l[i]; return a; } \
static inline W_##K W_##K##_not(W_##K a, unsigned w) { for (int i = 0; i < K; i++) a.l[i] = ~a.l[i]; ss_wmask(a.l, K, w); return a; } \
static inline W_##K W_##K##_neg(W_##K a, unsigned w) { W_##K z = {{0}}; return W_##K##_sub(z, a, w); } \
static inline W_##K W_##K##_shl(W_##K a, uint64_t n, unsigned w) { ss_wshl(a.l, a.l, K, n); ss_wmask(a.l, K, w); return a; } \
static inline W_##K W_##K##_shr(W_##K a, uint64_t n) { ss_wshr(a.l, a.l, K, n); return a; } \
static inline W_##K W_##K##_sar(W_##K a, uint64_t n, unsigned w) { ss_wsext(a.l, K, w); \
    int neg = (int)(a.l[K - 1] >> 63); ss_wshr(a.l, a.l, K, n); \
    if (neg) { W_##K m; for (int i = 0; i < K; i++) m.l[i] = ~(uint64_t)0; \
        ss_wshl(m.l, m.l, K, n >= 64u * K ? 0 : 64u * K - n); for (int i = 0; i < K; i++) a.l[i] |= m.l[i]; } \
    ss_wmask(a.l, K, w); return a; } \
static inline int W_##K##_cmp(W_##K a, W_##K b) { return ss_wcmp(a.l, b.l, K); } \
static inline int W_##K##_scmp(W_##K a, W_##K b, unsigned w) { return ss_wscmp(a.l, b.l, K, w); } \
static inline u128 W_##K##_bits(W_##K a, unsigned lo, unsigned n) { return ss_wbits(a.l, K, lo, n); } \
static inline uint64_t W_##K##_amount(W_##K a) { return ss_wamount(a.l, K); } \
static inline W_##K W_##K##_sext(W_##K a, unsigned from, unsigned w) { ss_wsext(a.l, K, from); ss_wmask(a.l, K, w); return a; }

#endif
