"""The v1model walk's end-of-pass decisions in C: what engine/pipeline.py's
`V1Pipeline._end_ingress` / `_end_egress` do, for the passes the common-path walk
(cgen_walk.py) hands back — ingress and egress clones, digests, resubmit, multicast,
recirculation — and the job loop that runs the packet instances they make, as
`NativeV1Pipeline._continue` does.

`ssp_resume` takes the pass a walk call left in ``W_t`` (``W_PY_IN`` / ``W_PY_OUT``) and
finishes it in C, each branch a transcription of its Python one, in the same order: ingress
clone (the original re-parsed, metadata reset but the field list, one copy per session
target) → digests (queued for Python to drain) → resubmit (the original packet, the preserved
metadata) → multicast → drop → unicast; egress clone (the egress headers, fresh metadata but
the field list) → digests → drop → deparse → recirculate → transmit (cut). With `bounded` it
then runs the jobs made, and theirs, up to MAX_JOBS passes, transmitted packets into the
context's output area; without, it leaves them queued for Python (`Switch.run`: one pass).

What stays Python's (the call returns the status with nothing done for that pass): an assert
failure whose pass queued digests and a pass run while Python holds digests of such a pass
(`force_py`) — the Python walk keeps them pending to the next pass — and an egress pass whose
output may not fit the output area. Mid-loop the same cases return the pass in ``ctx->cur``
and the jobs after it in the queue; ``W_STOP``: the next job's output may not fit, the queue
holds it and the rest. The PRE is a mirror of engine/pre.py's answers (`ssp_pre_add`) Python
refreshes when the PRE changed.
"""

from __future__ import annotations

#: ssp_resume's status when the output area may not hold the next job's output; ssp_run's
#: when its packet was finished by ssp_resume (the outputs in the context)
W_STOP, W_DONE = 6, 7
#: bytes of the context's output area and the outputs it records
CTX_ARENA_BYTES, CTX_OUTPUTS = 1 << 20, 4096

CTX_CDEF = """
typedef struct ss_set { uint64_t id; uint32_t trunc, n; uint32_t *port, *rid; } ss_set;
typedef struct ss_job {
    uint32_t ingress, port, len, off, cut, trunc;
    const uint8_t *data;
    uint8_t *phv;
} ss_job;
typedef struct ss_ctx {
    uint32_t hsize, msize, smsize, dstride;
    ss_set *groups, *sessions; int32_t ngroups, nsessions;
    ss_job *q; int32_t qhead, qn, qcap, nd, count;
    ss_job cur;
    uint8_t **pool; int32_t npool, cappool;
    uint8_t **bufs; int32_t nbufs, capbufs;
    uint64_t *dq; int32_t ndq, capdq;
    uint8_t *tmp;
    uint8_t *arena; uint64_t cap, used;
    uint64_t *res; int32_t nres, capres;
    int32_t errors;
} ss_ctx;
"""
ENDS_CDEF = CTX_CDEF + """
ss_ctx *ssp_ctx_new(void);
void ssp_ctx_free(ss_ctx *c);
void ssp_ctx_clear(ss_ctx *c);
void ssp_pre_clear(ss_ctx *c);
int ssp_pre_add(ss_ctx *c, int kind, uint64_t id, uint32_t trunc, uint32_t n,
                const uint32_t *port, const uint32_t *rid);
int ssp_resume(I_t *R, W_t *w, ss_ctx *c, int r, const uint8_t *data, uint32_t len,
               uint32_t off, int32_t count, int bounded);
int ssp_run(I_t *R, W_t *w, ss_ctx *c, const uint8_t *pkt, uint32_t len, uint32_t port,
            uint64_t now);
"""

# standard_metadata.instance_type values (engine/pipeline.py)
_NORMAL, _INGRESS_CLONE, _EGRESS_CLONE, _RECIRC, _REPLICATION, _RESUBMIT = 0, 1, 2, 4, 5, 6


def ends_source(hdr: str, meta: str, sm: str) -> list[str]:
    """The end-of-pass C of a program whose headers, metadata and standard_metadata structs
    are `hdr`, `meta` and `sm`, after the walk (it calls ssp_walk_in / ssp_walk_out) and
    ENDS_CDEF (cgen_walk.WALK_CDEF: the context's struct)."""
    return ('#include "ss_walk.h"\n' + f"""
enum {{ W_STOP = {W_STOP}, W_DONE = {W_DONE} }};
#define SSE_PHV(c, j, H, M, S) \\
    {hdr} *H = (void *)(j)->phv; {meta} *M = (void *)((j)->phv + (c)->hsize); \\
    {sm} *S = (void *)((j)->phv + (c)->hsize + (c)->msize); (void)H; (void)M; (void)S

/* V1Pipeline._fan_out: one egress job per copy of `set`, each a copy of `phv` with its rid */
static void sse_fan_out(ss_ctx *c, const ss_set *set, const uint8_t *phv, const uint8_t *data,
                        uint32_t len, uint32_t off, uint32_t trunc, uint32_t cut, int bounded) {{
    for (uint32_t k = 0; set && k < set->n; k++) {{
        ss_job e = {{0, set->port[k], len, off, cut, trunc, data, ss_phv_new(c)}};
        if (!e.phv) {{ c->errors++; return; }}
        memcpy(e.phv, phv, ss_phv_size(c));
        SSE_PHV(c, &e, h, m, sm);
        sm->egress_rid = set->rid[k];
        ss_push(c, &e, bounded);
    }}
}}

static void sse_drop(ss_ctx *c, ss_job *j) {{ ss_phv_free(c, j->phv); j->phv = NULL; }}

/* a new ingress instance of `data` (resubmit, recirculate): zeroed metadata, the field list
 * `fl` of `m`, instance_type `type` */
static void sse_reenter(ss_ctx *c, const {meta} *m, int32_t fl, uint32_t port,
                        const uint8_t *data, uint32_t len, uint64_t type, int bounded) {{
    ss_job n = {{1, port, len, 0, 0, 0, data, ss_phv_new(c)}};
    if (!n.phv) {{ c->errors++; return; }}
    SSE_PHV(c, &n, nh, nm, nsm);
    ssp_field_list(fl, m, nm);
    nsm->instance_type = type; nsm->packet_length = len;
    ss_push(c, &n, bounded);
}}

static void sse_digests(I_t *R, ss_ctx *c) {{
    if (R->ndig && ss_digests_queue(c, R->ndig, R->dig_site, R->dig_recv, &R->dig_vals[0][0]))
        c->errors++;
}}

/* V1Pipeline._end_ingress of ingress job `j` (its pass just run, w its walk state, the
 * payload at j->off): 0 done (j->phv passed on or freed), W_PY_IN the pass is Python's */
static int sse_end_in(I_t *R, W_t *w, ss_ctx *c, ss_job *j, int bounded) {{
    if (w->force_py || (w->rc && R->ndig)) return W_PY_IN;
    if (w->rc) {{ sse_drop(c, j); return 0; }}   /* an assert failed: dropped */
    SSE_PHV(c, j, h, m, sm);
    uint32_t req = R->req;
    uint64_t truncate = R->truncate;
    if ((req & SS_REQ_CLONE) && R->clone_type == 1) {{
        const ss_set *s = ss_set_find(c->sessions, c->nsessions, R->clone_session);
        int32_t fl = R->clone_fl;
        uint8_t *cp = s ? ss_phv_new(c) : NULL;
        if (s && !cp) c->errors++;
        if (cp) {{   /* _clone_from_ingress: the original re-parsed, then metadata reset */
            ss_job cj = {{0}}; cj.phv = cp;
            SSE_PHV(c, &cj, ch, cm, csm);
            csm->ingress_port = sm->ingress_port;
            uint32_t coff = ssp_parse(R, ch, cm, csm, j->data, j->len);
            memset(cm, 0, c->msize); memset(csm, 0, c->smsize);
            ssp_field_list(fl, m, cm);
            csm->instance_type = {_INGRESS_CLONE}; csm->packet_length = j->len;
            sse_fan_out(c, s, cp, j->data, j->len, coff, s->trunc, 0, bounded);
            ss_phv_free(c, cp);
        }}
    }}
    sse_digests(R, c);
    if (req & SS_REQ_RESUBMIT) {{
        sse_reenter(c, m, R->resubmit_fl, j->port, j->data, j->len, {_RESUBMIT}, bounded);
        sse_drop(c, j);
        return 0;
    }}
    if (sm->mcast_grp != 0) {{
        sm->instance_type = {_REPLICATION};
        sse_fan_out(c, ss_set_find(c->groups, c->ngroups, sm->mcast_grp), j->phv, j->data,
                    j->len, j->off, 0, (uint32_t)truncate, bounded);
        sse_drop(c, j);
        return 0;
    }}
    if (sm->egress_spec == R->drop_port) {{ sse_drop(c, j); return 0; }}
    sm->instance_type = {_NORMAL};
    ss_job e = *j;
    e.ingress = 0; e.port = (uint32_t)sm->egress_spec; e.cut = (uint32_t)truncate; e.trunc = 0;
    j->phv = NULL;
    ss_push(c, &e, bounded);
    return 0;
}}

/* the packet deparsed from `j` into the output area, cut, recorded (port, offset, length) */
static void sse_transmit(I_t *R, ss_ctx *c, ss_job *j, uint64_t cut) {{
    SSE_PHV(c, j, h, m, sm);
    const uint8_t *payload = j->data + j->off;
    uint32_t paylen = j->len - j->off;
    uint8_t *o = c->arena + c->used;
    uint64_t room = c->cap - c->used - paylen;
    int n = ssp_deparse(R, h, m, payload, paylen, o,
                        (uint32_t)(room > 0xFFFFFFFFu ? 0xFFFFFFFFu : room));
    if (n < 0) {{ c->errors++; return; }}   /* PacketWalk._guarded: an internal error */
    memcpy(o + n, payload, paylen);
    uint64_t total = (uint64_t)n + paylen;
    if (cut && total > cut) total = cut;
    if (j->trunc && total > j->trunc) total = j->trunc;
    uint64_t *r = c->res + 3 * (size_t)c->nres++;
    r[0] = j->port; r[1] = c->used; r[2] = total;
    c->used += total;
}}

/* V1Pipeline._end_egress of egress job `j` (its pass just run): 0 done, W_PY_OUT Python's */
static int sse_end_out(I_t *R, W_t *w, ss_ctx *c, ss_job *j, int bounded) {{
    if (w->force_py || (w->rc && R->ndig)) return W_PY_OUT;
    if (w->rc) {{ sse_drop(c, j); return 0; }}
    SSE_PHV(c, j, h, m, sm);
    uint32_t req = R->req;
    if ((req & SS_REQ_CLONE) && R->clone_type != 1) {{   /* E2E */
        const ss_set *s = ss_set_find(c->sessions, c->nsessions, R->clone_session);
        uint8_t *cp = s ? ss_phv_new(c) : NULL;
        if (s && !cp) c->errors++;
        if (cp) {{
            ss_job cj = {{0}}; cj.phv = cp;
            SSE_PHV(c, &cj, ch, cm, csm);
            memcpy(ch, h, c->hsize);
            ssp_field_list(R->clone_fl, m, cm);
            csm->instance_type = {_EGRESS_CLONE}; csm->packet_length = sm->packet_length;
            sse_fan_out(c, s, cp, j->data, j->len, j->off, s->trunc, 0, bounded);
            ss_phv_free(c, cp);
        }}
    }}
    sse_digests(R, c);
    if (sm->egress_spec == R->drop_port) {{ sse_drop(c, j); return 0; }}
    uint64_t cut = R->truncate ? R->truncate : j->cut;
    if (req & SS_REQ_RECIRC) {{
        const uint8_t *payload = j->data + j->off;
        uint32_t paylen = j->len - j->off;
        int n = ssp_deparse(R, h, m, payload, paylen, c->tmp, SS_OUT_HEAD);
        uint8_t *d = n < 0 ? NULL : ss_keep(c, c->tmp, (uint32_t)n, payload, paylen);
        if (!d) c->errors++;
        else sse_reenter(c, m, R->recirc_fl, (uint32_t)sm->ingress_port, d,
                         (uint32_t)n + paylen, {_RECIRC}, bounded);
    }} else {{
        sse_transmit(R, c, j, cut);
    }}
    sse_drop(c, j);
    return 0;
}}

/* the queued jobs, in order, each pass with its end, up to MAX_JOBS passes in all */
static int sse_loop(I_t *R, W_t *w, ss_ctx *c) {{
    while (c->qn) {{
        ss_job *q = &c->q[c->qhead];
        if (!q->ingress && !ss_out_room(c, q->len - q->off)) return W_STOP;
        c->cur = *q; c->qhead++; c->qn--; c->count++;
        ss_job *j = &c->cur;
        uint8_t *phv = j->phv;
        w->h = phv; w->m = phv + c->hsize; w->sm = phv + c->hsize + c->msize;
        int r;
        if (j->ingress) {{
            w->port = j->port; w->fresh = 0;
            r = ssp_walk_in(R, w, j->data, j->len);
            j->off = w->off;
            if (r == W_EGRESS) {{
                ss_job e = *j;
                e.ingress = 0; e.port = w->eport; e.cut = w->cut; e.trunc = 0;
                j->phv = NULL;
                ss_push(c, &e, 1);
                continue;
            }}
            if (r == W_PY_IN) r = sse_end_in(R, w, c, j, 1);
            else sse_drop(c, j);
        }} else {{
            uint64_t room = c->cap - c->used - (j->len - j->off);
            w->eport = j->port; w->cut = j->cut; w->trunc = j->trunc; w->fresh = 0;
            w->queued = 0;
            w->out = c->arena + c->used;
            w->ocap = (uint32_t)(room > 0xFFFFFFFFu ? 0xFFFFFFFFu : room);
            r = ssp_walk_out(R, w, j->data + j->off, j->len - j->off);
            if (r == W_TX) {{
                memcpy(w->out + w->olen, w->payload, w->paylen);
                uint64_t *o = c->res + 3 * (size_t)c->nres++;
                o[0] = w->eport; o[1] = c->used; o[2] = w->tlen;
                c->used += w->tlen;
                r = 0;
            }} else if (r == W_PY_OUT) {{
                r = sse_end_out(R, w, c, j, 1);
            }} else {{
                if (r == W_ERR) c->errors++;
                r = 0;
            }}
            if (!r) sse_drop(c, j);
        }}
        if (r) return r;   /* c->cur is Python's, the queue after it */
    }}
    return 0;
}}

/* The pass a walk call left in w with status r (W_PY_IN / W_PY_OUT) finished in C: its
 * packet `data` (len bytes, the payload at `off`), `count` passes run for the input so far.
 * bounded: then every job made, as NativeV1Pipeline._continue's loop (outputs in the output
 * area); else the jobs stay queued (Switch.run). Returns 0 done; r with c->cur.phv NULL: the
 * pass in w is Python's, nothing done; W_PY_IN / W_PY_OUT with c->cur.phv set: the pass in
 * c->cur is Python's, the queue the jobs after it; W_STOP: the queue the jobs left. */
int ssp_resume(I_t *R, W_t *w, ss_ctx *c, int r, const uint8_t *data, uint32_t len,
               uint32_t off, int32_t count, int bounded) {{
    uint8_t *out0 = w->out; uint32_t ocap0 = w->ocap;
    void *h0 = w->h, *m0 = w->m, *sm0 = w->sm;
    if (c->qn || c->cur.phv || c->nbufs) ss_walk_clear(c);   /* a walk Python abandoned */
    c->used = 0; c->nres = 0; c->count = count;
    ss_job *j = &c->cur;
    memset(j, 0, sizeof *j);
    if (r == W_PY_OUT && !ss_out_room(c, len - off)) return r;
    j->phv = ss_phv_new(c);
    if (!j->phv) return r;
    memcpy(j->phv, w->h, c->hsize);
    memcpy(j->phv + c->hsize, w->m, c->msize);
    memcpy(j->phv + c->hsize + c->msize, w->sm, c->smsize);
    j->data = data; j->len = len; j->off = off;
    int rr;
    if (r == W_PY_IN) {{
        j->ingress = 1; j->port = w->port;
        rr = sse_end_in(R, w, c, j, bounded);
    }} else {{
        j->port = w->eport; j->cut = w->cut; j->trunc = w->trunc;
        rr = sse_end_out(R, w, c, j, bounded);
    }}
    if (rr) {{ sse_drop(c, j); return rr; }}
    if (bounded) {{
        rr = sse_loop(R, w, c);
        w->out = out0; w->ocap = ocap0; w->h = h0; w->m = m0; w->sm = sm0;
        if (!rr) ss_walk_clear(c);
    }}
    return rr;
}}

/* one input packet: ssp_walk, and what it hands back finished by ssp_resume (W_DONE: the
 * outputs in the context; else ssp_resume's status) */
int ssp_run(I_t *R, W_t *w, ss_ctx *c, const uint8_t *pkt, uint32_t len, uint32_t port,
            uint64_t now) {{
    int r = ssp_walk(R, w, pkt, len, port, now);
    if (r != W_PY_IN && r != W_PY_OUT) return r;
    int rr = ssp_resume(R, w, c, r, pkt, len, w->off, r == W_PY_IN ? 1 : 2, 1);
    return rr ? rr : W_DONE;
}}

ss_ctx *ssp_ctx_new(void) {{
    I_t *R = NULL;
    return ss_ctx_new(sizeof({hdr}), sizeof({meta}), sizeof({sm}),
                      (uint32_t)(sizeof R->dig_vals[0] / sizeof R->dig_vals[0][0]),
                      {CTX_ARENA_BYTES}u, {CTX_OUTPUTS});
}}
void ssp_ctx_free(ss_ctx *c) {{ ss_ctx_free(c); }}
void ssp_ctx_clear(ss_ctx *c) {{ ss_walk_clear(c); }}
void ssp_pre_clear(ss_ctx *c) {{ ss_sets_clear(c); }}
int ssp_pre_add(ss_ctx *c, int kind, uint64_t id, uint32_t trunc, uint32_t n,
                const uint32_t *port, const uint32_t *rid) {{
    return ss_set_add(c, kind, id, trunc, n, port, rid);
}}
""").splitlines()
