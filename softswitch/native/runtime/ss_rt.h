/* softswitch native runtime: what generated program C (softswitch/native/cgen*.py) calls.
 *
 * The contract between the C code generator and the runtime library (ss_tables.c, ss_hash.c).
 * Values of P4 bit<W>/int<W> with W <= 64 are uint64_t, 64 < W <= 128 are u128, always kept
 * reduced to their width (an int<W> is stored as its W-bit two's complement, as the Python
 * engine's generated code stores it). Across the cffi boundary (where __int128 is not known)
 * a 128-bit value is two uint64_t words, low word first ("u128 pairs").
 */
#ifndef SS_RT_H
#define SS_RT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;

#define SS_MAX_KEY_FIELDS 32
#define SS_MAX_ARGS 64

static inline u128 ss_mask128(unsigned w) {
    return w >= 128 ? ~(u128)0 : (((u128)1 << w) - 1);
}
static inline uint64_t ss_mask64(unsigned w) {
    return w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
}

/* Read `w` (1..128) bits at bit offset `pos` of `buf`, most significant first (network order).
 * The caller has checked that pos + w bits lie within the buffer. */
static inline u128 ss_read_bits(const uint8_t *buf, uint32_t pos, unsigned w) {
    uint32_t first = pos >> 3, last = (pos + w - 1) >> 3;
    unsigned tail = (unsigned)(((last + 1) << 3) - (pos + w)); /* bits after the field */
    u128 acc = 0;
    unsigned lead = pos & 7;
    /* up to 17 bytes: accumulate the first 16 in acc, handle a 17th separately */
    uint32_t n = last - first + 1;
    if (n <= 16) {
        for (uint32_t i = first; i <= last; i++) acc = (acc << 8) | buf[i];
        return (acc >> tail) & ss_mask128(w);
    }
    /* 17 bytes: a 128-bit field not byte aligned */
    for (uint32_t i = first; i < last; i++) acc = (acc << 8) | buf[i];
    acc &= ss_mask128(128 - lead);
    return (acc << (8 - tail)) | (buf[last] >> tail);
}

/* Write the low `w` (1..128) bits of `v` at bit offset `pos` of `buf` (bits around it
 * unchanged). Works from the last byte back: the partial last byte, whole bytes, the partial
 * first byte. */
static inline void ss_write_bits(uint8_t *buf, uint32_t pos, unsigned w, u128 v) {
    uint32_t first = pos >> 3, last = (pos + w - 1) >> 3;
    unsigned tail = (unsigned)(((last + 1) << 3) - (pos + w)); /* bits after the field */
    v &= ss_mask128(w);
    if (first == last) {
        unsigned m = (unsigned)(ss_mask64(w) << tail) & 0xFF;
        buf[first] = (uint8_t)((buf[first] & ~m) | (((unsigned)v << tail) & m));
        return;
    }
    unsigned m = (0xFFu << tail) & 0xFF;
    buf[last] = (uint8_t)((buf[last] & ~m) | (((unsigned)(uint8_t)v << tail) & m));
    v >>= 8 - tail;
    for (uint32_t i = last - 1; i > first; i--) {
        buf[i] = (uint8_t)v;
        v >>= 8;
    }
    m = 0xFFu >> (pos & 7);
    buf[first] = (uint8_t)((buf[first] & ~m) | ((unsigned)v & m));
}

/* ---- tables: the lookup index of one P4 table (mirrors engine/tables.py's index) ----------
 * mode SS_MODE_EXACT: every key field exact; a key is the field values.
 * mode SS_MODE_LPM: one lpm field (lpm_field), the others exact; an entry is stored under its
 *   prefix length with the lpm field's value masked; lookup tries the longest prefix first.
 * mode SS_MODE_SCAN: ternary/range/optional/mixed; an entry holds two values per field,
 *   (mask, value) or, for a range field, (low, high); a key matches when, field by field,
 *   (k & mask) == value, or low <= k <= high; entries are tried by priority, larger first, then
 *   by handle, smaller first (as tables.py sorts its scan list).
 * An entry carries the action the table runs (the ActionSpec.aid the generated code switches
 * on), its arguments, and its direct counter (packets, bytes). The Python Table keeps the
 * control-plane record of each entry (P4Runtime reads); the counters live here only. */
enum { SS_MODE_EXACT = 0, SS_MODE_LPM = 1, SS_MODE_SCAN = 2 };
enum { SS_KIND_EXACT = 0, SS_KIND_LPM = 1, SS_KIND_TERNARY = 2, SS_KIND_RANGE = 3,
       SS_KIND_OPTIONAL = 4 };

/* BMv2's two-rate three-colour meter (engine/meters.py): bucket 0 the peak (RED when short),
 * 1 the committed (YELLOW); rates in tokens per microsecond, refilled from one time origin:
 * `last` is the bucket's int(now_us * rate) at the previous packet (an integer-valued double,
 * so the difference to the next is exact as Python's ints). An unconfigured meter is GREEN. */
typedef struct ss_meter {
    double rate[2];
    uint64_t burst[2];
    uint64_t tokens[2];
    double last[2];
    int64_t configured;
    int64_t reserved;  /* keeps the size a multiple of 16 (ss_entry's layout for cffi) */
} ss_meter;
enum { SS_GREEN = 0, SS_YELLOW = 1, SS_RED = 2 };

typedef struct ss_entry {
    int64_t handle;   /* the Python Table's entry handle; -1 for the default action */
    int32_t action;   /* ActionSpec.aid; -1: no action */
    int32_t nargs;
    u128 args[SS_MAX_ARGS];
    uint64_t packets; /* direct counter */
    uint64_t bytes;
    ss_meter meter;   /* direct meter */
    int64_t member;   /* action profile member the entry points to, or -1 */
    int64_t group;    /* action selector group, or -1 */
    uint64_t dreg[2]; /* TNA DirectRegister cell (low word first), when dreg_set */
    int64_t dreg_set; /* 0: the cell still holds the register's initial value */
    int64_t dreg_pad; /* keeps the size a multiple of 16 */
} ss_entry;

typedef struct ss_table ss_table;

/* Generated code and the runtime, in C: */
ss_entry *ss_table_lookup(ss_table *t, const u128 *key); /* NULL on a miss */
ss_entry *ss_table_default(ss_table *t);

/* ---- the cffi boundary (u128 pairs: 2 words per value, low first) ---------------------- */
ss_table *ss_table_new(int mode, int nfields, const uint16_t *widths, const uint8_t *kinds);
void ss_table_free(ss_table *t);
/* key: nfields values (EXACT/LPM; the lpm field's value already masked to its prefix) or
 * 2*nfields values (SCAN: per field mask, value / low, high). Returns the new entry, or NULL
 * when an entry with the same key (and, SCAN, the same priority) exists. */
ss_entry *ss_table_insert(ss_table *t, int64_t handle, int32_t priority, int32_t prefix_len,
                          const uint64_t *key_words, int32_t action, int32_t nargs,
                          const uint64_t *arg_words);
int ss_table_remove(ss_table *t, int64_t handle);            /* 0 ok, -1 unknown handle */
ss_entry *ss_table_entry(ss_table *t, int64_t handle);       /* NULL: unknown handle */
void ss_entry_set_action(ss_entry *e, int32_t action, int32_t nargs, const uint64_t *arg_words);
void ss_table_clear(ss_table *t);                            /* every entry; keeps default */
int64_t ss_table_size(ss_table *t);
/* lookup from Python (tests): nfields u128 pairs; returns the handle, -1 default/miss */
int64_t ss_table_lookup_words(ss_table *t, const uint64_t *key_words);

/* ---- meters (ss_meters.c) ---------------------------------------------------------------
 * configure from rates per microsecond (both buckets full); `need` is 1 (packets meters) or the
 * packet's bytes; returns the colour */
void ss_meter_set(ss_meter *m, double cir, uint64_t cburst, double pir, uint64_t pburst);
int ss_meter_execute(ss_meter *m, uint64_t now_us, uint64_t need);

/* ---- action profiles and selectors (ss_profile.c) ------------------------------------
 * members are entries (handle = member id) of an exact index on the id; a group is its member
 * ids in handle order, and a selector picks members[hash % n] (engine/tables.py choose) */
typedef struct ss_profile ss_profile;
ss_profile *ss_profile_new(void);
void ss_profile_free(ss_profile *p);
ss_entry *ss_profile_member_set(ss_profile *p, int64_t member, int32_t action, int32_t nargs,
                                const uint64_t *arg_words);
void ss_profile_member_del(ss_profile *p, int64_t member);
int ss_profile_group_set(ss_profile *p, int64_t group, int32_t n, const int64_t *members);
void ss_profile_group_del(ss_profile *p, int64_t group);
ss_entry *ss_profile_member(ss_profile *p, int64_t member);           /* NULL: none */
ss_entry *ss_profile_choose(ss_profile *p, int64_t group, uint64_t hash); /* NULL: empty */

/* ---- hashes and checksums, bit-exact with engine/hashes.py ------------------------------ */
enum { SS_HASH_CRC32 = 0, SS_HASH_CRC32_CUSTOM = 1, SS_HASH_CRC16 = 2, SS_HASH_CRC16_CUSTOM = 3,
       SS_HASH_RANDOM = 4, SS_HASH_IDENTITY = 5, SS_HASH_CSUM16 = 6, SS_HASH_XOR16 = 7 };
typedef struct ss_crc_config {
    unsigned width; uint64_t polynomial, initial_remainder, final_xor_value;
    int data_reflected, remainder_reflected;
} ss_crc_config;
uint64_t ss_crc(const ss_crc_config *c, const uint8_t *data, size_t len);
uint64_t ss_hash(int algo, const ss_crc_config *custom, const uint8_t *data, size_t len);
/* fields concatenated bit-wise, last byte zero-padded on the right (hashes.fields_to_bytes);
 * returns the bytes written into out (cap bytes available) */
size_t ss_fields_to_bytes(const u128 *values, const uint16_t *widths, int n, uint8_t *out,
                          size_t cap);
/* the Internet checksum, as hashes.csum16: the complement of the ones'-complement sum */
uint16_t ss_csum16(const uint8_t *data, size_t len);
/* ss_fields_to_bytes across the cffi boundary: n (at most 256) values as u128 pairs */
size_t ss_fields_to_bytes_words(const uint64_t *value_words, const uint16_t *widths, int n,
                                uint8_t *out, size_t cap);

#endif
