/* softswitch native engine: the state of the v1model walk's end-of-pass decisions in C
 * (native/cgen_ends.py generates the program's part): a packet's job FIFO, a pool of PHVs,
 * the packet replication engine's mirror, the digest queue Python drains, and the output
 * area. `ss_ctx` itself is declared by the generated code (cgen_ends.CTX_CDEF, which cffi sees
 * too) before this header is included. Everything is static inline: one copy per program. */
#ifndef SS_WALK_H
#define SS_WALK_H

#include <stdlib.h>
#include <string.h>

#include "ss_pre.h"

#define SS_MAX_JOBS 256u      /* engine/pipeline.py's MAX_JOBS: passes per input packet */
#define SS_OUT_HEAD 65536u    /* deparser bytes an output may take (pipeline.OUT_CAPACITY) */

static void *ss_grow(void *p, int32_t *cap, int32_t need, size_t size) {
    if (need <= *cap) return p;
    int32_t n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *q = realloc(p, (size_t)n * size);
    if (q) *cap = n;
    return q;
}

static inline uint32_t ss_phv_size(const ss_ctx *c) { return c->hsize + c->msize + c->smsize; }

/* a PHV (headers | metadata | standard_metadata) from the pool, zeroed; NULL: out of memory */
static uint8_t *ss_phv_new(ss_ctx *c) {
    uint8_t *p = c->npool ? c->pool[--c->npool] : malloc(ss_phv_size(c) + 16);
    if (p) memset(p, 0, ss_phv_size(c));
    return p;
}

static void ss_phv_free(ss_ctx *c, uint8_t *p) {
    if (!p) return;
    uint8_t **pool = ss_grow(c->pool, &c->cappool, c->npool + 1, sizeof *pool);
    if (!pool) { free(p); return; }
    c->pool = pool;
    pool[c->npool++] = p;
}

/* a copy of `len` bytes that lives until the walk ends (a recirculated packet) */
static uint8_t *ss_keep(ss_ctx *c, const uint8_t *a, uint32_t na, const uint8_t *b,
                        uint32_t nb) {
    uint8_t **bufs = ss_grow(c->bufs, &c->capbufs, c->nbufs + 1, sizeof *bufs);
    if (!bufs) return NULL;
    c->bufs = bufs;
    uint8_t *p = malloc((size_t)na + nb + 1);
    if (!p) return NULL;
    if (na) memcpy(p, a, na);
    if (nb) memcpy(p + na, b, nb);
    bufs[c->nbufs++] = p;
    return p;
}

/* queue job `j` (its PHV now the queue's). With `bounded` (a whole input's walk), a job that
 * could never run (V1Pipeline's loop stops after SS_MAX_JOBS passes: this one would come
 * later) is only counted in `nd`, as the Python deque would hold it; 0 queued, -1 no memory */
static int ss_push(ss_ctx *c, const ss_job *j, int bounded) {
    if (bounded && (uint32_t)(c->count + c->qn + c->nd) + 1 > SS_MAX_JOBS) {
        c->nd++;
        ss_phv_free(c, j->phv);
        return 0;
    }
    if (c->qhead + c->qn == c->qcap && c->qhead) {
        memmove(c->q, c->q + c->qhead, (size_t)c->qn * sizeof *c->q);
        c->qhead = 0;
    }
    ss_job *q = ss_grow(c->q, &c->qcap, c->qhead + c->qn + 1, sizeof *q);
    if (!q) { ss_phv_free(c, j->phv); c->errors++; return -1; }
    c->q = q;
    q[c->qhead + c->qn++] = *j;
    return 0;
}

/* the walk's state back to empty: the queued jobs and the pass handed back (Python has
 * copied what it needs), the walk's packet copies; outputs and digests stay for Python */
static void ss_walk_clear(ss_ctx *c) {
    for (int32_t k = 0; k < c->qn; k++) ss_phv_free(c, c->q[c->qhead + k].phv);
    ss_phv_free(c, c->cur.phv);
    c->cur.phv = NULL;
    c->qhead = c->qn = c->nd = 0;
    for (int32_t k = 0; k < c->nbufs; k++) free(c->bufs[k]);
    c->nbufs = 0;
}

/* the PRE mirror (ss_pre.h) */
static void ss_sets_clear(ss_ctx *c) {
    ss_sets_free(&c->groups, &c->ngroups);
    ss_sets_free(&c->sessions, &c->nsessions);
}

static int ss_set_add(ss_ctx *c, int kind, uint64_t id, uint32_t trunc, uint32_t n,
                      const uint32_t *port, const uint32_t *rid) {
    return kind ? ss_set_push(&c->sessions, &c->nsessions, id, trunc, n, port, rid)
                : ss_set_push(&c->groups, &c->ngroups, id, trunc, n, port, rid);
}

/* a pass's digests onto the queue: n records of (site, receiver, dstride value words), each
 * 2 + dstride words (Python reads them as they are: native/pipeline.py's c_queued_digests) */
static int ss_digests_queue(ss_ctx *c, int32_t n, const int32_t *site, const uint64_t *recv,
                            const uint64_t *vals) {
    if (n <= 0) return 0;
    uint32_t rec = 2 + c->dstride;
    uint64_t *q = ss_grow(c->dq, &c->capdq, c->ndq + n, rec * sizeof *q);
    if (!q) return -1;
    c->dq = q;
    for (int32_t k = 0; k < n; k++) {
        uint64_t *d = q + (size_t)(c->ndq + k) * rec;
        d[0] = (uint64_t)(int64_t)site[k]; d[1] = recv[k];
        memcpy(d + 2, vals + (size_t)k * c->dstride, c->dstride * sizeof *d);
    }
    c->ndq += n;
    return 0;
}

/* room in the output area for an egress pass of a `paylen`-byte payload */
static inline int ss_out_room(const ss_ctx *c, uint32_t paylen) {
    return c->nres < c->capres && c->cap - c->used >= (uint64_t)SS_OUT_HEAD + paylen;
}

static ss_ctx *ss_ctx_new(uint32_t hsize, uint32_t msize, uint32_t smsize, uint32_t dstride,
                          uint64_t cap, int32_t capres) {
    ss_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->hsize = hsize; c->msize = msize; c->smsize = smsize; c->dstride = dstride;
    c->tmp = malloc(SS_OUT_HEAD);
    c->arena = malloc(cap);
    c->res = malloc((size_t)capres * 3 * sizeof *c->res);
    c->cap = cap; c->capres = capres;
    if (!c->tmp || !c->arena || !c->res) {
        free(c->tmp); free(c->arena); free(c->res); free(c);
        return NULL;
    }
    return c;
}

static void ss_ctx_free(ss_ctx *c) {
    if (!c) return;
    ss_walk_clear(c);
    ss_sets_clear(c);
    for (int32_t k = 0; k < c->npool; k++) free(c->pool[k]);
    free(c->pool); free(c->bufs); free(c->q);
    free(c->dq);
    free(c->tmp); free(c->arena); free(c->res);
    free(c);
}

#endif
