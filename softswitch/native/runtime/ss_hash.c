/* softswitch native runtime: v1model hash algorithms and checksums, bit-exact with
 * engine/hashes.py (which documents what BMv2 computes), and the hash input buffer.
 *
 * CRC tables depend only on (width, polynomial, direction); the standard CRC-16/ARC and CRC-32
 * tables are built at load time, others on first use into a small lock-free cache (a table is
 * published with a release store, so concurrent callers either see it whole or build their own
 * copy on the stack).
 */
#include <stdatomic.h>

#include "ss_rt.h"

static const ss_crc_config CRC16_CONFIG = {16, 0x8005, 0x0000, 0x0000, 1, 1};
static const ss_crc_config CRC32_CONFIG = {32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, 1, 1};

static uint64_t reflect(uint64_t value, unsigned nbits) {
    uint64_t r = 0;
    for (unsigned i = 0; i < nbits; i++) {
        r = (r << 1) | (value & 1);
        value >>= 1;
    }
    return r;
}

static uint8_t REFLECT8[256];

/* lsb: the table of the reflected (LSB-first) algorithm, else of the MSB-first one */
static void build_table(uint64_t *table, unsigned width, uint64_t poly, int lsb) {
    uint64_t mask = ss_mask64(width);
    if (lsb) {
        uint64_t rpoly = reflect(poly, width);
        for (unsigned d = 0; d < 256; d++) {
            uint64_t rem = d;
            for (int k = 0; k < 8; k++) rem = (rem & 1) ? (rem >> 1) ^ rpoly : rem >> 1;
            table[d] = rem;
        }
    } else {
        uint64_t top = (uint64_t)1 << (width - 1);
        for (unsigned d = 0; d < 256; d++) {
            uint64_t rem = (uint64_t)d << (width - 8);
            for (int k = 0; k < 8; k++) rem = (rem & top) ? (rem << 1) ^ poly : rem << 1;
            table[d] = rem & mask;
        }
    }
}

static uint64_t CRC16_TABLE[256], CRC32_TABLE[256];

__attribute__((constructor)) static void ss_hash_init(void) {
    for (unsigned b = 0; b < 256; b++) REFLECT8[b] = (uint8_t)reflect(b, 8);
    build_table(CRC16_TABLE, 16, CRC16_CONFIG.polynomial, 1);
    build_table(CRC32_TABLE, 32, CRC32_CONFIG.polynomial, 1);
}

#define CRC_CACHE 16
typedef struct crc_cache_slot {
    atomic_int state; /* 0 free, 1 being filled, 2 ready */
    unsigned width;
    uint64_t poly;
    int lsb;
    uint64_t table[256];
} crc_cache_slot;
static crc_cache_slot crc_cache[CRC_CACHE];

static const uint64_t *crc_table(unsigned width, uint64_t poly, int lsb, uint64_t *scratch) {
    if (width == 16 && poly == 0x8005 && lsb) return CRC16_TABLE;
    if (width == 32 && poly == 0x04C11DB7 && lsb) return CRC32_TABLE;
    for (int i = 0; i < CRC_CACHE; i++) {
        crc_cache_slot *s = &crc_cache[i];
        int st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == 2 && s->width == width && s->poly == poly && s->lsb == lsb) return s->table;
        if (st == 0) {
            int expected = 0;
            if (atomic_compare_exchange_strong(&s->state, &expected, 1)) {
                s->width = width;
                s->poly = poly;
                s->lsb = lsb;
                build_table(s->table, width, poly, lsb);
                atomic_store_explicit(&s->state, 2, memory_order_release);
                return s->table;
            }
        }
    }
    build_table(scratch, width, poly, lsb);
    return scratch;
}

uint64_t ss_crc(const ss_crc_config *c, const uint8_t *data, size_t len) {
    unsigned width = c->width;
    if (width != 8 && width != 16 && width != 32 && width != 64) return 0;
    uint64_t mask = ss_mask64(width), poly = c->polynomial & mask;
    uint64_t scratch[256];
    if (c->data_reflected && c->remainder_reflected) {
        const uint64_t *table = crc_table(width, poly, 1, scratch);
        uint64_t rem = reflect(c->initial_remainder & mask, width);
        for (size_t i = 0; i < len; i++)
            rem = table[(rem ^ data[i]) & 0xFF] ^ (width > 8 ? rem >> 8 : 0);
        return rem ^ (c->final_xor_value & mask);
    }
    const uint64_t *table = crc_table(width, poly, 0, scratch);
    unsigned shift = width - 8;
    uint64_t rem = c->initial_remainder & mask;
    for (size_t i = 0; i < len; i++) {
        uint8_t byte = c->data_reflected ? REFLECT8[data[i]] : data[i];
        rem = table[(byte ^ (rem >> shift)) & 0xFF] ^ ((width > 8 ? rem << 8 : 0) & mask);
    }
    if (c->remainder_reflected) rem = reflect(rem, width);
    return rem ^ (c->final_xor_value & mask);
}

uint16_t ss_csum16(const uint8_t *data, size_t len) {
    /* Big-endian 32-bit words first: their sum folds to the same one's-complement sum as the
       16-bit words' (2^16 = 1 mod 0xFFFF, and only all-zero data sums to 0 either way), in half
       the loads; a NIC's payload checksum runs over every byte of every packet. */
    uint64_t sum = 0;
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        uint32_t w;
        memcpy(&w, data + i, 4);
        sum += __builtin_bswap32(w);
    }
    for (; i + 1 < len; i += 2) sum += ((uint64_t)data[i] << 8) | data[i + 1];
    if (i < len) sum += (uint64_t)data[i] << 8;
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return (uint16_t)~sum;
}

static uint64_t xor16(const uint8_t *data, size_t len) {
    unsigned r = 0;
    size_t i = 0;
    for (; i + 1 < len; i += 2) r ^= ((unsigned)data[i] << 8) | data[i + 1];
    if (i < len) r ^= (unsigned)data[i] << 8;
    return r;
}

static uint64_t identity(const uint8_t *data, size_t len) {
    uint64_t r = 0;
    for (size_t i = 0; i < len && i < 8; i++) r = (r << 8) | data[i];
    return r;
}

uint64_t ss_hash(int algo, const ss_crc_config *custom, const uint8_t *data, size_t len) {
    switch (algo) {
    case SS_HASH_CRC32: return ss_crc(&CRC32_CONFIG, data, len);
    case SS_HASH_CRC32_CUSTOM: return ss_crc(custom ? custom : &CRC32_CONFIG, data, len);
    case SS_HASH_CRC16: return ss_crc(&CRC16_CONFIG, data, len);
    case SS_HASH_CRC16_CUSTOM: return ss_crc(custom ? custom : &CRC16_CONFIG, data, len);
    case SS_HASH_IDENTITY: return identity(data, len);
    case SS_HASH_CSUM16: return ss_csum16(data, len);
    case SS_HASH_XOR16: return xor16(data, len);
    default: return 0; /* random: refused at compile time, as simple_switch refuses it */
    }
}

/* ---- the calculation input buffer -------------------------------------------------- */

typedef struct bitbuf {
    uint8_t *out;
    size_t cap, pos; /* bytes */
    uint64_t acc;    /* nacc < 8 pending bits after each push */
    unsigned nacc;
} bitbuf;

static inline void push(bitbuf *b, uint64_t chunk, unsigned n) { /* n <= 56 */
    b->acc = (b->acc << n) | chunk;
    b->nacc += n;
    while (b->nacc >= 8) {
        b->nacc -= 8;
        if (b->pos < b->cap) b->out[b->pos] = (uint8_t)(b->acc >> b->nacc);
        b->pos++;
    }
    b->acc &= ss_mask64(b->nacc);
}

size_t ss_fields_to_bytes(const u128 *values, const uint16_t *widths, int n, uint8_t *out,
                          size_t cap) {
    bitbuf b = {out, cap, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        unsigned w = widths[i];
        for (; w > 128; w -= w - 128 > 56 ? 56 : w - 128) /* zero extension past 128 bits */
            push(&b, 0, w - 128 > 56 ? 56 : w - 128);
        u128 v = values[i] & ss_mask128(w);
        while (w) {
            unsigned c = w > 56 ? 56 : w;
            w -= c;
            push(&b, (uint64_t)(v >> w) & ss_mask64(c), c);
        }
    }
    if (b.nacc) push(&b, 0, 8 - b.nacc);
    return b.pos < cap ? b.pos : cap;
}

size_t ss_fields_to_bytes_words(const uint64_t *value_words, const uint16_t *widths, int n,
                                uint8_t *out, size_t cap) {
    u128 values[256];
    if (n < 0 || n > 256) return 0;
    for (int i = 0; i < n; i++)
        values[i] = ((u128)value_words[2 * i + 1] << 64) | value_words[2 * i];
    return ss_fields_to_bytes(values, widths, n, out, cap);
}
