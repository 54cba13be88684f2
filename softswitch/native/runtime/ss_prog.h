/* softswitch native engine: helpers the generated program C (softswitch/native/cgen*.py) uses
 * on top of ss_rt.h — status codes, signed views, byte-aligned fast paths, the Mersenne
 * Twister Python's random.Random uses (so `random()` draws the Python engine's numbers).
 * Everything is static inline: each program's translation unit gets its own copy. */
#ifndef SS_PROG_H
#define SS_PROG_H

#include <stdlib.h>
#include "ss_rt.h"
#include "ss_wide.h"

typedef __int128 s128;

/* what a generated block/action/function returns */
#define SS_OK 0
#define SS_EXIT 1   /* `exit`: unwinds to the top-level control, which ends normally */
#define SS_PERR 2   /* a parser error: code in R->perr (-1: reject), position in R->ppos */
#define SS_ASSERT 3 /* assert/assume failed: the packet is dropped */
#define SS_FULL 4   /* the deparser's output buffer is full (an engine limit) */

/* end-of-pass requests (R->req bits) the Python walk acts on */
#define SS_REQ_CLONE 1u
#define SS_REQ_RESUBMIT 2u
#define SS_REQ_RECIRC 4u
#define SS_REQ_DIGEST 8u
#define SS_REQ_TRUNCATE 16u

#define SS_U128(hi, lo) ((((u128)(hi)) << 64) | (u128)(uint64_t)(lo))

/* int<W> values are stored as their W-bit two's complement: the signed views */
static inline int64_t ss_sx64(uint64_t v, unsigned w) {
    if (w >= 64) return (int64_t)v;
    uint64_t m = (uint64_t)1 << (w - 1);
    return (int64_t)((v ^ m) - m);
}
static inline s128 ss_sx128(u128 v, unsigned w) {
    if (w >= 128) return (s128)v;
    u128 m = (u128)1 << (w - 1);
    return (s128)((v ^ m) - m);
}

/* saturating arithmetic (bit<W> and int<W>, W <= 64; wider is refused at generation) */
static inline uint64_t ss_usat_add(uint64_t a, uint64_t b, unsigned w) {
    u128 s = (u128)a + b;
    uint64_t m = ss_mask64(w);
    return s > m ? m : (uint64_t)s;
}
static inline uint64_t ss_usat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }
static inline uint64_t ss_ssat(s128 v, unsigned w) {
    s128 hi = ((s128)1 << (w - 1)) - 1, lo = -((s128)1 << (w - 1));
    if (v > hi) v = hi;
    if (v < lo) v = lo;
    return (uint64_t)v & ss_mask64(w);
}

/* a field of a packet, `w` <= 64 bits at bit `pos` */
static inline uint64_t ss_get(const uint8_t *buf, uint32_t pos, unsigned w) {
    if (!((pos | w) & 7)) {
        const uint8_t *p = buf + (pos >> 3);
        uint64_t v = 0;
        for (unsigned i = 0; i < (w >> 3); i++) v = (v << 8) | p[i];
        return v;
    }
    return (uint64_t)ss_read_bits(buf, pos, w);
}
static inline u128 ss_get128(const uint8_t *buf, uint32_t pos, unsigned w) {
    if (!((pos | w) & 7)) {
        const uint8_t *p = buf + (pos >> 3);
        u128 v = 0;
        for (unsigned i = 0; i < (w >> 3); i++) v = (v << 8) | p[i];
        return v;
    }
    return ss_read_bits(buf, pos, w);
}
/* write a field into a zeroed output buffer */
static inline void ss_put(uint8_t *buf, uint32_t pos, unsigned w, u128 v) {
    if (!((pos | w) & 7)) {
        uint8_t *p = buf + (pos >> 3);
        for (int i = (int)(w >> 3) - 1; i >= 0; i--) { p[i] = (uint8_t)v; v >>= 8; }
        return;
    }
    ss_write_bits(buf, pos, w, v);
}

/* ---- Python's random.Random (MT19937, seeded as Random(0)), getrandbits and randint ---- */
typedef struct ss_mt { uint32_t mt[624]; int32_t mti; } ss_mt;

static inline void ss_mt_init_genrand(ss_mt *s, uint32_t seed) {
    s->mt[0] = seed;
    for (int i = 1; i < 624; i++)
        s->mt[i] = 1812433253u * (s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) + (uint32_t)i;
    s->mti = 624;
}
/* init_by_array with the key Python derives from an int seed (0 → {0}) */
static inline void ss_mt_seed(ss_mt *s, uint32_t seed) {
    uint32_t key[1] = {seed};
    int i = 1, j = 0, k = 624;
    ss_mt_init_genrand(s, 19650218u);
    for (; k; k--) {
        s->mt[i] = (s->mt[i] ^ ((s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++; j++;
        if (i >= 624) { s->mt[0] = s->mt[623]; i = 1; }
        if (j >= 1) j = 0;
    }
    for (k = 623; k; k--) {
        s->mt[i] = (s->mt[i] ^ ((s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= 624) { s->mt[0] = s->mt[623]; i = 1; }
    }
    s->mt[0] = 0x80000000u;
}
static inline uint32_t ss_mt_next(ss_mt *s) {
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    uint32_t y;
    if (s->mti >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (s->mt[kk] & 0x80000000u) | (s->mt[kk + 1] & 0x7fffffffu);
            s->mt[kk] = s->mt[kk + 397] ^ (y >> 1) ^ mag01[y & 1u];
        }
        for (; kk < 623; kk++) {
            y = (s->mt[kk] & 0x80000000u) | (s->mt[kk + 1] & 0x7fffffffu);
            s->mt[kk] = s->mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1u];
        }
        y = (s->mt[623] & 0x80000000u) | (s->mt[0] & 0x7fffffffu);
        s->mt[623] = s->mt[396] ^ (y >> 1) ^ mag01[y & 1u];
        s->mti = 0;
    }
    y = s->mt[s->mti++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}
static inline u128 ss_mt_bits(ss_mt *s, unsigned k) {   /* getrandbits(k), 1 <= k <= 128 */
    if (k <= 32) return ss_mt_next(s) >> (32 - k);
    u128 r = 0;
    for (unsigned i = 0; k; i++) {
        uint32_t w = ss_mt_next(s);
        unsigned take = k < 32 ? k : 32;
        if (k < 32) w >>= (32 - k);
        r |= (u128)w << (32 * i);
        k -= take;
    }
    return r;
}
/* randint(lo, hi) for lo <= hi < 2**64 (random.Random._randbelow_with_getrandbits) */
static inline uint64_t ss_randint(ss_mt *s, uint64_t lo, uint64_t hi) {
    u128 n = (u128)hi - lo + 1;
    unsigned k = 0;
    for (u128 x = n; x; x >>= 1) k++;
    u128 r = ss_mt_bits(s, k);
    while (r >= n) r = ss_mt_bits(s, k);
    return lo + (uint64_t)r;
}

/* randint(lo, hi) for 64 < width <= 128: n = hi - lo + 1 may be 2**128, whose bit length 129
 * makes getrandbits draw a fifth word (its one bit set means r >= n: drawn again) */
static inline u128 ss_randint128(ss_mt *s, u128 lo, u128 hi) {
    u128 span = hi - lo;
    if (span == ~(u128)0) {
        for (;;) {
            u128 r = ss_mt_bits(s, 128);
            if (!(ss_mt_next(s) >> 31)) return lo + r;
        }
    }
    u128 n = span + 1;
    unsigned k = 0;
    for (u128 x = n; x; x >>= 1) k++;
    u128 r = ss_mt_bits(s, k);
    while (r >= n) r = ss_mt_bits(s, k);
    return lo + r;
}

/* v1model hash(): base + (h % max) (max 0 acts as 1), in 64 bits, then the result's width */
static inline uint64_t ss_hash_offset(uint64_t h, uint64_t base, uint64_t max, unsigned w) {
    uint64_t d = max ? max : 1;
    return (h % d + base) & ss_mask64(w);
}

/* a parser value set's cells (native/valuesets.py writes them): cells[0] the member count,
 * then per member `ncomp` components of 4 words (value lo, hi, mask lo, hi; value already
 * masked); a key matches a member when every component both have matches (ValueSet.match) */
static inline int ss_vset_match(const uint64_t *cells, int ncomp, const u128 *key, int nkey) {
    int n = (int)cells[0], m = ncomp < nkey ? ncomp : nkey;
    const uint64_t *c = cells + 1;
    for (int i = 0; i < n; i++, c += 4 * ncomp) {
        int j = 0;
        for (; j < m; j++) {
            u128 v = ((u128)c[4 * j + 1] << 64) | c[4 * j];
            u128 mask = ((u128)c[4 * j + 3] << 64) | c[4 * j + 2];
            if ((key[j] & mask) != v) break;
        }
        if (j == m) return 1;
    }
    return 0;
}

/* a calculation (hash, checksum) over a field list, then `payload` (the _with_payload forms) */
static inline uint64_t ss_calc(int algo, const u128 *v, const uint16_t *w, int n,
                               const uint8_t *payload, uint32_t paylen) {
    size_t bits = 0;
    for (int i = 0; i < n; i++) bits += w[i];
    size_t cap = (bits + 7) / 8 + paylen;
    uint8_t small[512];
    uint8_t *buf = cap <= sizeof small ? small : (uint8_t *)malloc(cap);
    size_t len = ss_fields_to_bytes(v, w, n, buf, cap);
    if (paylen) memcpy(buf + len, payload, paylen);
    uint64_t h = ss_hash(algo, NULL, buf, len + paylen);
    if (buf != small) free(buf);
    return h;
}

#endif
