/* softswitch native runtime: the lookup index of a P4 table (see ss_rt.h).
 *
 * Mirrors engine/tables.py's index and the lookups engine/codegen_tables.py generates:
 * - exact: one hash table on the key's values;
 * - lpm: one hash table per prefix length (the lpm field stored masked), lengths kept sorted
 *   longest first, a length dropped when its last entry goes (Table._rebuild_lpm);
 * - scan: rows sorted by (-priority, handle), the first row whose fields all match wins;
 *   a second hash table on (row, priority) refuses duplicates as Table._by_key does.
 * Hash tables use open addressing with linear probing and backward-shift deletion (no
 * tombstones, so lookups never slow down after removals). Entries are allocated one by one:
 * an ss_entry pointer stays valid until its entry is removed (Python keeps them for counters).
 */
#include <stdlib.h>

#include "ss_rt.h"

typedef struct ss_node {
    ss_entry e;          /* first: an ss_entry* is an ss_node* */
    int32_t priority;
    int32_t prefix_len;
    uint64_t hash;       /* of the key (and priority, scan mode) */
    u128 key[];          /* nfields (exact, lpm) or 2*nfields (scan) values */
} ss_node;

typedef struct ss_slot {
    uint64_t hash;
    ss_node *node; /* NULL: empty */
} ss_slot;

typedef struct ss_ht {
    ss_slot *slots;
    size_t mask; /* capacity - 1 (a power of two); 0 when nothing is allocated */
    size_t count;
} ss_ht;

typedef struct ss_bucket { /* lpm: the entries of one prefix length */
    int plen;
    u128 mask;   /* of the lpm field */
    ss_ht ht;
} ss_bucket;

struct ss_table {
    int mode, nfields, nkw;      /* nkw: key values per entry */
    int lpm_field;
    uint16_t widths[SS_MAX_KEY_FIELDS];
    uint8_t is_range[SS_MAX_KEY_FIELDS];
    int64_t size;
    ss_node *deflt;
    ss_ht by_handle;             /* hash = mixed handle */
    ss_ht exact;                 /* exact: the index; scan: (row, priority) → entry */
    ss_bucket *by_len[129];      /* lpm: bucket of each prefix length, or NULL */
    ss_bucket *order[129];       /* lpm: the non-empty buckets, longest prefix first */
    int nbuckets;
    ss_node **rows;              /* scan: entries by (-priority, handle) */
    u128 *row_keys;              /* scan: their keys, contiguous (2*nfields per row) */
    size_t nrows, rows_cap;
};

/* ---- hashing ------------------------------------------------------------------------ */

static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* One field's contribution, position-dependent; a key's hash XORs them, so an lpm lookup
 * rehashes only its lpm field per prefix length. */
static inline uint64_t field_hash(int i, u128 v) {
    uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
    return fmix64(lo ^ fmix64(hi + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL));
}

static inline uint64_t key_hash(const u128 *key, int n) {
    uint64_t h = 0;
    for (int i = 0; i < n; i++) h ^= field_hash(i, key[i]);
    return h;
}

static inline uint64_t scan_hash(const u128 *key, int n, int32_t priority) {
    return key_hash(key, n) ^ fmix64((uint64_t)(uint32_t)priority ^ 0x5bd1e9955bd1e995ULL);
}

static inline uint64_t handle_hash(int64_t handle) {
    return fmix64((uint64_t)handle + 0x9E3779B97F4A7C15ULL);
}

static inline int keys_equal(const u128 *a, const u128 *b, int n) {
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* ---- open-addressing hash table ------------------------------------------------------ */

static inline ss_node *ht_find_key(const ss_ht *ht, uint64_t hash, const u128 *key, int n,
                                   int32_t priority) {
    if (!ht->mask) return NULL;
    for (size_t i = hash & ht->mask;; i = (i + 1) & ht->mask) {
        ss_node *node = ht->slots[i].node;
        if (!node) return NULL;
        if (ht->slots[i].hash == hash && node->priority == priority &&
            keys_equal(node->key, key, n))
            return node;
    }
}

static ss_node *ht_find_handle(const ss_ht *ht, int64_t handle) {
    if (!ht->mask) return NULL;
    uint64_t hash = handle_hash(handle);
    for (size_t i = hash & ht->mask;; i = (i + 1) & ht->mask) {
        ss_node *node = ht->slots[i].node;
        if (!node) return NULL;
        if (node->e.handle == handle) return node;
    }
}

static void ht_put(ss_slot *slots, size_t mask, uint64_t hash, ss_node *node) {
    size_t i = hash & mask;
    while (slots[i].node) i = (i + 1) & mask;
    slots[i].hash = hash;
    slots[i].node = node;
}

/* Room for one more (load factor at most 1/2). 0 ok, -1 out of memory. */
static int ht_reserve(ss_ht *ht) {
    size_t cap = ht->mask ? ht->mask + 1 : 0;
    if ((ht->count + 1) * 2 <= cap) return 0;
    size_t ncap = cap ? cap * 2 : 16;
    ss_slot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < cap; i++)
        if (ht->slots[i].node) ht_put(ns, ncap - 1, ht->slots[i].hash, ht->slots[i].node);
    free(ht->slots);
    ht->slots = ns;
    ht->mask = ncap - 1;
    return 0;
}

static int ht_insert(ss_ht *ht, uint64_t hash, ss_node *node) {
    if (ht_reserve(ht)) return -1;
    ht_put(ht->slots, ht->mask, hash, node);
    ht->count++;
    return 0;
}

/* Remove `node` (stored under `hash`), shifting the following run back over the hole. */
static void ht_remove(ss_ht *ht, uint64_t hash, const ss_node *node) {
    size_t mask = ht->mask;
    if (!mask) return;
    size_t i = hash & mask;
    while (ht->slots[i].node != node) {
        if (!ht->slots[i].node) return;
        i = (i + 1) & mask;
    }
    for (size_t j = (i + 1) & mask; ht->slots[j].node; j = (j + 1) & mask) {
        size_t home = ht->slots[j].hash & mask;
        /* the entry at j may move to the hole i unless its home lies in (i, j] cyclically */
        int stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            ht->slots[i] = ht->slots[j];
            i = j;
        }
    }
    ht->slots[i].node = NULL;
    ht->count--;
}

static void ht_free(ss_ht *ht) {
    free(ht->slots);
    ht->slots = NULL;
    ht->mask = ht->count = 0;
}

/* ---- table ------------------------------------------------------------------------- */

static inline u128 prefix_mask(unsigned width, int plen) {
    if (plen <= 0) return 0;
    return ss_mask128((unsigned)plen) << (width - (unsigned)plen);
}

static ss_node *node_new(int nkw) {
    /* calloc on the platforms we build for returns 16-byte aligned memory (max_align_t) */
    ss_node *n = calloc(1, sizeof(ss_node) + (size_t)nkw * sizeof(u128));
    if (n) n->e.member = n->e.group = -1;
    return n;
}

static void words_to_u128(u128 *out, const uint64_t *words, int n) {
    for (int i = 0; i < n; i++) out[i] = ((u128)words[2 * i + 1] << 64) | words[2 * i];
}

ss_table *ss_table_new(int mode, int nfields, const uint16_t *widths, const uint8_t *kinds) {
    if (nfields < 0 || nfields > SS_MAX_KEY_FIELDS || mode < SS_MODE_EXACT || mode > SS_MODE_SCAN)
        return NULL;
    ss_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->mode = mode;
    t->nfields = nfields;
    t->nkw = mode == SS_MODE_SCAN ? 2 * nfields : nfields;
    t->lpm_field = -1;
    for (int i = 0; i < nfields; i++) {
        t->widths[i] = widths[i];
        t->is_range[i] = kinds[i] == SS_KIND_RANGE;
        if (kinds[i] == SS_KIND_LPM && t->lpm_field < 0) t->lpm_field = i;
    }
    if (mode == SS_MODE_LPM && t->lpm_field < 0) {
        free(t);
        return NULL;
    }
    t->deflt = node_new(0);
    if (!t->deflt) {
        free(t);
        return NULL;
    }
    t->deflt->e.handle = -1;
    t->deflt->e.action = -1;
    return t;
}

void ss_table_clear(ss_table *t) {
    ss_ht *h = &t->by_handle;
    for (size_t i = 0; h->mask && i <= h->mask; i++) free(h->slots[i].node);
    ht_free(&t->by_handle);
    ht_free(&t->exact);
    for (int p = 0; p < 129; p++) {
        if (t->by_len[p]) {
            ht_free(&t->by_len[p]->ht);
            free(t->by_len[p]);
            t->by_len[p] = NULL;
        }
    }
    t->nbuckets = 0;
    free(t->rows);
    free(t->row_keys);
    t->rows = NULL;
    t->row_keys = NULL;
    t->nrows = t->rows_cap = 0;
    t->size = 0;
}

void ss_table_free(ss_table *t) {
    if (!t) return;
    ss_table_clear(t);
    free(t->deflt);
    free(t);
}

ss_entry *ss_table_default(ss_table *t) { return &t->deflt->e; }

int64_t ss_table_size(ss_table *t) { return t->size; }

void ss_entry_set_action(ss_entry *e, int32_t action, int32_t nargs, const uint64_t *arg_words) {
    if (nargs < 0) nargs = 0;
    if (nargs > SS_MAX_ARGS) nargs = SS_MAX_ARGS;
    e->action = action;
    e->nargs = nargs;
    words_to_u128(e->args, arg_words, nargs);
    for (int i = nargs; i < SS_MAX_ARGS; i++) e->args[i] = 0;
}

/* scan rows: position of (priority, handle) in the (-priority, handle) order */
static inline int row_before(const ss_node *a, int32_t priority, int64_t handle) {
    return a->priority > priority || (a->priority == priority && a->e.handle < handle);
}

static size_t row_position(const ss_table *t, int32_t priority, int64_t handle) {
    size_t lo = 0, hi = t->nrows;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (row_before(t->rows[mid], priority, handle)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int rows_reserve(ss_table *t) {
    if (t->nrows < t->rows_cap) return 0;
    size_t ncap = t->rows_cap ? t->rows_cap * 2 : 16;
    ss_node **nr = realloc(t->rows, ncap * sizeof *nr);
    if (!nr) return -1;
    t->rows = nr;
    size_t kw = (size_t)(t->nkw ? t->nkw : 1);
    u128 *nk = realloc(t->row_keys, ncap * kw * sizeof *nk);
    if (!nk) return -1;
    t->row_keys = nk;
    t->rows_cap = ncap;
    return 0;
}

static ss_bucket *lpm_bucket(ss_table *t, int plen) {
    ss_bucket *b = t->by_len[plen];
    if (b) return b;
    b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->plen = plen;
    b->mask = prefix_mask(t->widths[t->lpm_field], plen);
    t->by_len[plen] = b;
    int i = t->nbuckets++;
    while (i > 0 && t->order[i - 1]->plen < plen) {
        t->order[i] = t->order[i - 1];
        i--;
    }
    t->order[i] = b;
    return b;
}

static void lpm_drop_bucket(ss_table *t, ss_bucket *b) {
    int i = 0;
    while (t->order[i] != b) i++;
    for (; i + 1 < t->nbuckets; i++) t->order[i] = t->order[i + 1];
    t->nbuckets--;
    t->by_len[b->plen] = NULL;
    ht_free(&b->ht);
    free(b);
}

ss_entry *ss_table_insert(ss_table *t, int64_t handle, int32_t priority, int32_t prefix_len,
                          const uint64_t *key_words, int32_t action, int32_t nargs,
                          const uint64_t *arg_words) {
    if (nargs < 0 || nargs > SS_MAX_ARGS || handle < 0) return NULL;
    if (ht_find_handle(&t->by_handle, handle)) return NULL;
    ss_node *n = node_new(t->nkw);
    if (!n) return NULL;
    n->e.handle = handle;
    words_to_u128(n->key, key_words, t->nkw);
    ss_entry_set_action(&n->e, action, nargs, arg_words);
    ss_bucket *b = NULL;
    if (t->mode == SS_MODE_EXACT) {
        n->hash = key_hash(n->key, t->nkw);
        if (ht_find_key(&t->exact, n->hash, n->key, t->nkw, 0) || ht_reserve(&t->by_handle) ||
            ht_insert(&t->exact, n->hash, n))
            goto fail;
    } else if (t->mode == SS_MODE_LPM) {
        int width = t->widths[t->lpm_field];
        if (prefix_len < 0 || prefix_len > width) goto fail;
        n->prefix_len = prefix_len;
        n->key[t->lpm_field] &= prefix_mask((unsigned)width, prefix_len);
        n->hash = key_hash(n->key, t->nkw);
        int fresh = t->by_len[prefix_len] == NULL;
        b = lpm_bucket(t, prefix_len);
        if (!b || ht_find_key(&b->ht, n->hash, n->key, t->nkw, 0) ||
            ht_reserve(&t->by_handle) || ht_insert(&b->ht, n->hash, n)) {
            if (b && fresh) lpm_drop_bucket(t, b);
            goto fail;
        }
    } else {
        n->priority = priority;
        n->hash = scan_hash(n->key, t->nkw, priority);
        if (ht_find_key(&t->exact, n->hash, n->key, t->nkw, priority) || rows_reserve(t) ||
            ht_reserve(&t->by_handle) || ht_insert(&t->exact, n->hash, n))
            goto fail;
        size_t pos = row_position(t, priority, handle), kw = (size_t)t->nkw;
        memmove(&t->rows[pos + 1], &t->rows[pos], (t->nrows - pos) * sizeof *t->rows);
        memmove(&t->row_keys[(pos + 1) * kw], &t->row_keys[pos * kw],
                (t->nrows - pos) * kw * sizeof *t->row_keys);
        t->rows[pos] = n;
        memcpy(&t->row_keys[pos * kw], n->key, kw * sizeof *t->row_keys);
        t->nrows++;
    }
    ht_insert(&t->by_handle, handle_hash(handle), n); /* reserved above: cannot fail */
    t->size++;
    return &n->e;
fail:
    free(n);
    return NULL;
}

int ss_table_remove(ss_table *t, int64_t handle) {
    ss_node *n = ht_find_handle(&t->by_handle, handle);
    if (!n) return -1;
    ht_remove(&t->by_handle, handle_hash(handle), n);
    if (t->mode == SS_MODE_EXACT) {
        ht_remove(&t->exact, n->hash, n);
    } else if (t->mode == SS_MODE_LPM) {
        ss_bucket *b = t->by_len[n->prefix_len];
        ht_remove(&b->ht, n->hash, n);
        if (!b->ht.count) lpm_drop_bucket(t, b);
    } else {
        ht_remove(&t->exact, n->hash, n);
        size_t pos = row_position(t, n->priority, handle), kw = (size_t)t->nkw;
        memmove(&t->rows[pos], &t->rows[pos + 1], (t->nrows - pos - 1) * sizeof *t->rows);
        memmove(&t->row_keys[pos * kw], &t->row_keys[(pos + 1) * kw],
                (t->nrows - pos - 1) * kw * sizeof *t->row_keys);
        t->nrows--;
    }
    free(n);
    t->size--;
    return 0;
}

ss_entry *ss_table_entry(ss_table *t, int64_t handle) {
    ss_node *n = ht_find_handle(&t->by_handle, handle);
    return n ? &n->e : NULL;
}

ss_entry *ss_table_lookup(ss_table *t, const u128 *key) {
    int nf = t->nfields;
    if (t->mode == SS_MODE_EXACT) {
        ss_node *n = ht_find_key(&t->exact, key_hash(key, nf), key, nf, 0);
        return n ? &n->e : NULL;
    }
    if (t->mode == SS_MODE_LPM) {
        int li = t->lpm_field;
        u128 k[SS_MAX_KEY_FIELDS];
        memcpy(k, key, (size_t)nf * sizeof *k);
        uint64_t rest = key_hash(key, nf) ^ field_hash(li, key[li]);
        for (int i = 0; i < t->nbuckets; i++) {
            const ss_bucket *b = t->order[i];
            k[li] = key[li] & b->mask;
            ss_node *n = ht_find_key(&b->ht, rest ^ field_hash(li, k[li]), k, nf, 0);
            if (n) return &n->e;
        }
        return NULL;
    }
    const u128 *row = t->row_keys;
    const uint8_t *is_range = t->is_range;
    for (size_t r = 0; r < t->nrows; r++, row += 2 * nf) {
        int f = 0;
        for (; f < nf; f++) {
            u128 k = key[f], a = row[2 * f], b = row[2 * f + 1];
            if (is_range[f] ? (k < a || k > b) : ((k & a) != b)) break;
        }
        if (f == nf) return &t->rows[r]->e;
    }
    return NULL;
}

int64_t ss_table_lookup_words(ss_table *t, const uint64_t *key_words) {
    u128 key[SS_MAX_KEY_FIELDS];
    words_to_u128(key, key_words, t->nfields);
    ss_entry *e = ss_table_lookup(t, key);
    return e ? e->handle : -1;
}
