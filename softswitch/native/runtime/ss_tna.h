/* softswitch native engine: the TNA externs' helpers (softswitch/native/cgen_tna_externs.py),
 * bit-exact with engine/tna_externs.py: Hash<W> (bf-utils CRCs, IDENTITY, the RANDOM matrix),
 * the parser Checksum and the deparser's Checksum.update, ParserCounter.set. */
#ifndef SS_TNA_H
#define SS_TNA_H

#include "ss_prog.h"

/* the field list as one integer, zero-extended on the left to whole bytes (tna_externs'
 * `_concat` then to_bytes); returns the bytes written (cap must hold them) */
static inline size_t ss_tna_concat(const u128 *v, const uint16_t *w, int n, uint8_t *out,
                                   size_t cap) {
    size_t bits = 0;
    for (int i = 0; i < n; i++) bits += w[i];
    size_t len = (bits + 7) >> 3;
    if (len > cap) return 0;
    memset(out, 0, len);
    uint32_t pos = (uint32_t)((len << 3) - bits);
    for (int i = 0; i < n; i++) {
        unsigned k = w[i];
        if (k > 128) { pos += k - 128; k = 128; } /* wider than a value: leading zeros */
        if (k) ss_write_bits(out, pos, k, v[i]);
        pos += k;
    }
    return len;
}

/* TnaHash over the `bits`-bit integer whose bytes (big-endian, zero-extended on the left to
 * whole bytes) are buf[0..len): `cfg` the CRC (NULL: IDENTITY or RANDOM); `cols` the RANDOM
 * matrix state (cols[0] the columns made so far, then the columns), grown as TnaHash._random */
static inline uint64_t ss_tna_hash_bytes(const ss_crc_config *cfg, int random, unsigned width,
                                         int msb, int extend, uint64_t *cols,
                                         const uint8_t *buf, size_t len, size_t bits) {
    uint64_t out = 0;
    if (cfg) {
        uint64_t crc = ss_crc(cfg, buf, len);
        unsigned cw = cfg->width;
        if (width > cw && extend) {
            u128 acc = crc;
            for (unsigned k = cw; k < width; k += cw) acc = (acc << cw) | crc;
            out = (uint64_t)acc & ss_mask64(width);
        } else if (width < cw && msb) {
            out = crc >> (cw - width);
        } else {
            out = crc & ss_mask64(width);
        }
    } else if (!random) {
        for (size_t i = len > 8 ? len - 8 : 0; i < len; i++) out = (out << 8) | buf[i];
        out &= ss_mask64(width);
    } else {
        uint64_t have = cols[0];
        if (have < bits) { /* random.Random(0x7F4A7C15 ^ len(cols)).getrandbits(width) each */
            ss_mt mt;
            ss_mt_seed(&mt, (uint32_t)(0x7F4A7C15u ^ (uint32_t)have));
            for (uint64_t c = have; c < bits; c++) cols[1 + c] = (uint64_t)ss_mt_bits(&mt, width);
            cols[0] = bits;
        }
        for (size_t b = 0; b < bits; b++) /* bit b of the integer: from the last byte */
            if ((buf[len - 1 - (b >> 3)] >> (b & 7)) & 1) out ^= cols[1 + b];
    }
    return out;
}

/* Hash<W>.get (TnaHash.get) over a field list */
static inline uint64_t ss_tna_hash(const ss_crc_config *cfg, int random, unsigned width,
                                   int msb, int extend, uint64_t *cols, const u128 *v,
                                   const uint16_t *w, int n) {
    uint8_t small[512];
    size_t bits = 0;
    for (int i = 0; i < n; i++) bits += w[i];
    size_t cap = (bits + 7) >> 3;
    uint8_t *buf = cap <= sizeof small ? small : (uint8_t *)malloc(cap ? cap : 1);
    size_t len = ss_tna_concat(v, w, n, buf, cap);
    uint64_t out = ss_tna_hash_bytes(cfg, random, width, msb, extend, cols, buf, len, bits);
    if (buf != small) free(buf);
    return out;
}

/* the bytes of a field list as ss_fields_to_bytes makes them, in `small` when they fit, else
 * in a buffer the caller frees (when it is not `small`) */
static inline uint8_t *ss_tna_field_bytes(const u128 *v, const uint16_t *w, int n,
                                          uint8_t *small, size_t room, size_t *len) {
    size_t bits = 0;
    for (int i = 0; i < n; i++) bits += w[i];
    size_t cap = (bits + 7) / 8;
    uint8_t *buf = cap <= room ? small : (uint8_t *)malloc(cap ? cap : 1);
    *len = ss_fields_to_bytes(v, w, n, buf, cap);
    return buf;
}

/* an ActionSelector's hash (TnaHash.__call__): over the selector fields' bytes as
 * ss_fields_to_bytes makes them (the last byte zero-padded on the right), taken as one
 * integer of 8 * len bits */
static inline uint64_t ss_tna_select(const ss_crc_config *cfg, int random, unsigned width,
                                     int msb, int extend, uint64_t *cols, const u128 *v,
                                     const uint16_t *w, int n) {
    uint8_t small[512];
    size_t len;
    uint8_t *buf = ss_tna_field_bytes(v, w, n, small, sizeof small, &len);
    uint64_t out = ss_tna_hash_bytes(cfg, random, width, msb, extend, cols, buf, len, len * 8);
    if (buf != small) free(buf);
    return out;
}

/* the parser Checksum (ParserChecksum): st[0] the ones'-complement sum, st[1] bytes fed */
static inline void ss_tna_csum_feed(uint64_t *st, const u128 *v, const uint16_t *w, int n,
                                    int negate) {
    uint8_t small[512];
    size_t len;
    uint8_t *buf = ss_tna_field_bytes(v, w, n, small, sizeof small, &len);
    uint64_t sum = 0;
    int odd = (int)(st[1] & 1); /* the first byte is the low half of a word */
    for (size_t i = 0; i < len; i++)
        sum += ((i + (size_t)odd) & 1) ? buf[i] : (uint64_t)buf[i] << 8;
    uint64_t part = sum % 0xFFFF;
    if (part == 0 && sum) part = 0xFFFF;
    if (negate) part = ~part & 0xFFFF;
    uint64_t s = st[0] + part;
    st[0] = (s & 0xFFFF) + (s >> 16);
    st[1] += len;
    if (buf != small) free(buf);
}

/* Checksum.update in a deparser (csum_update) over the fields of valid headers */
static inline uint64_t ss_tna_csum_update(const u128 *v, const uint16_t *w, int n, int zao) {
    uint8_t small[512];
    size_t len;
    uint8_t *buf = ss_tna_field_bytes(v, w, n, small, sizeof small, &len);
    uint64_t r = ss_csum16(buf, len);
    if (buf != small) free(buf);
    return zao && r == 0 ? 0xFFFF : r;
}

/* ParserCounter.set(field, max, rotate, mask, add) (ParserCounterState.set_field) */
static inline uint64_t ss_tna_pcnt_set(uint64_t field, uint64_t max, uint64_t rotate,
                                       uint64_t mask, uint64_t add) {
    field &= 0xFF;
    rotate &= 7;
    uint64_t rotated = ((field >> rotate) | (field << (8 - rotate))) & 0xFF;
    uint64_t value = (rotated & (((uint64_t)1 << ((mask & 7) + 1)) - 1)) + (add & 0xFF);
    uint64_t m = max & 0xFF;
    return (value < m ? value : m) & 0xFF;
}

#endif
