"""The v1model walk's common path in C: one call runs a packet through parse → verify →
ingress → (unicast) → egress → compute → deparse, as engine/pipeline.py's V1Pipeline does,
and returns at the first decision beyond the common path.

What C decides (the common path, and nothing else): at the end of ingress, a pass with no
request but truncate and ``mcast_grp == 0`` is dropped when ``egress_spec`` is the drop port,
else goes to egress as a NORMAL instance on ``egress_spec``; at the end of egress, a pass with
no request but truncate is dropped on the drop port, else deparsed and transmitted, cut to
the truncate length (the egress pass's, else the ingress pass's) and to the job's clone
length. Everything else — an assert failure, a clone, a digest, resubmit, recirculate, a
multicast group — returns ``W_PY_IN`` / ``W_PY_OUT`` after the pass, with the PHV, the
requests in ``R`` and the pass status in ``w->rc``, and ``ssp_resume`` (cgen_ends.py)
finishes it in C, or `V1Pipeline._end_ingress` / `_end_egress` in Python for what C leaves
them (no pass runs twice). The conditions are exactly the Python decisions' first branches,
in their order, so both walks agree: see DESIGN.md.

`ssp_batch` runs many packets in one call (one cffi crossing per batch): outputs go to one
arena (headers, then the payload copied after them, then the cut), and the batch stops at
the first packet Python must continue.
"""

from __future__ import annotations

from softswitch.native.cgen_ends import ENDS_CDEF, ends_source

#: status of a walk call (also the cffi constants native/pipeline.py reads)
W_DROP, W_EGRESS, W_TX, W_PY_IN, W_PY_OUT, W_ERR = range(6)

W_T_CDEF = """
typedef struct W_t {
    void *h, *m, *sm;
    uint32_t port, off, fresh, force_py;
    uint64_t now;
    const uint8_t *payload; uint32_t paylen;
    uint32_t eport, cut, trunc, queued;
    uint64_t enq_ts, enq_qdepth, deq_td, deq_qdepth;
    uint8_t *out; uint32_t ocap, olen, tlen;
    int32_t rc;
} W_t;
"""
WALK_CDEF = W_T_CDEF + ENDS_CDEF + """
int ssp_walk_in(I_t *R, W_t *w, const uint8_t *pkt, uint32_t len);
int ssp_walk_out(I_t *R, W_t *w, const uint8_t *payload, uint32_t paylen);
int ssp_walk(I_t *R, W_t *w, const uint8_t *pkt, uint32_t len, uint32_t port, uint64_t now);
int ssp_batch(I_t *R, W_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint8_t *arena, uint64_t cap,
              uint64_t *res, int *status);
int ssp_burst(I_t *R, W_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint64_t first, uint8_t *out,
              uint64_t cap, uint64_t *used, uint64_t *rec, uint64_t *nrec, int *status);
"""


def walk_source(hdr: str, meta: str, sm: str) -> list[str]:
    """The walk's C for a program whose headers, metadata and standard_metadata structs are
    `hdr`, `meta` and `sm` (after the pass entry points: it calls them), then the end-of-pass
    decisions (cgen_ends.py)."""
    return _common_path(hdr, meta, sm) + ends_source(hdr, meta, sm)


def _common_path(hdr: str, meta: str, sm: str) -> list[str]:
    return f"""
{WALK_CDEF}
enum {{ W_DROP = {W_DROP}, W_EGRESS = {W_EGRESS}, W_TX = {W_TX}, W_PY_IN = {W_PY_IN},
       W_PY_OUT = {W_PY_OUT}, W_ERR = {W_ERR} }};
#define SS_REQ_PY (SS_REQ_CLONE | SS_REQ_RESUBMIT | SS_REQ_RECIRC | SS_REQ_DIGEST)

/* parse + verify + ingress of `pkt` (in on w->port at w->now; w->fresh: new metadata, else
 * the resubmitted/recirculated metadata in w->m, w->sm); then V1Pipeline._end_ingress's common
 * path. w->force_py: Python holds digests of an earlier pass it must emit at this pass's end */
int ssp_walk_in(I_t *R, W_t *w, const uint8_t *pkt, uint32_t len) {{
    {hdr} *h = w->h; {meta} *m = w->m; {sm} *sm = w->sm;
    (void)h; /* the parser's `out` headers: it clears them */
    if (w->fresh) {{
        memset(m, 0, sizeof *m); memset(sm, 0, sizeof *sm);
        sm->ingress_port = w->port; sm->packet_length = len;
    }}
    sm->ingress_global_timestamp = w->now;
    w->off = ssp_parse(R, h, m, sm, pkt, len);
    w->rc = ssp_ingress(R, h, m, sm, len, w->now, pkt + w->off, len - w->off);
    if (w->rc || w->force_py || (R->req & SS_REQ_PY) || sm->mcast_grp != 0) return W_PY_IN;
    if (sm->egress_spec == R->drop_port) return W_DROP;
    sm->instance_type = 0; /* NORMAL */
    w->eport = (uint32_t)sm->egress_spec;
    w->cut = (uint32_t)R->truncate; w->trunc = 0;
    w->payload = pkt + w->off; w->paylen = len - w->off;
    return W_EGRESS;
}}

/* egress of the job in w (port eport, cut, trunc, queueing metadata when queued) with its
 * `payload`;
 * then V1Pipeline._end_egress's common path: deparse into w->out (w->olen header bytes),
 * w->tlen the length to transmit (headers + payload, cut) */
int ssp_walk_out(I_t *R, W_t *w, const uint8_t *payload, uint32_t paylen) {{
    w->payload = payload; w->paylen = paylen;
    {hdr} *h = w->h; {meta} *m = w->m; {sm} *sm = w->sm;
    sm->egress_port = w->eport;
    sm->egress_spec = (R->drop_port + 1) & 0x1FF;
    sm->egress_global_timestamp = w->now;
    if (w->queued) {{
        sm->enq_timestamp = w->enq_ts & 0xFFFFFFFFu; sm->enq_qdepth = w->enq_qdepth & 0x7FFFF;
        sm->deq_timedelta = w->deq_td & 0xFFFFFFFFu; sm->deq_qdepth = w->deq_qdepth & 0x7FFFF;
    }} else {{
        sm->enq_timestamp = w->now; sm->deq_timedelta = 0;
    }}
    w->rc = ssp_egress(R, h, m, sm, sm->packet_length, w->now, w->payload, w->paylen);
    if (w->rc || w->force_py || (R->req & SS_REQ_PY)) return W_PY_OUT;
    if (sm->egress_spec == R->drop_port) return W_DROP;
    int n = ssp_deparse(R, h, m, w->payload, w->paylen, w->out, w->ocap);
    if (n < 0) return W_ERR;
    w->olen = (uint32_t)n;
    uint64_t total = (uint64_t)n + w->paylen, cut = R->truncate ? R->truncate : w->cut;
    if (cut && total > cut) total = cut;
    if (w->trunc && total > w->trunc) total = w->trunc;
    w->tlen = (uint32_t)total;
    return W_TX;
}}

/* one input packet, both passes when nothing needs Python */
int ssp_walk(I_t *R, W_t *w, const uint8_t *pkt, uint32_t len, uint32_t port, uint64_t now) {{
    w->port = port; w->now = now; w->fresh = 1;
    int r = ssp_walk_in(R, w, pkt, len);
    if (r != W_EGRESS) return r;
    w->queued = 0;
    return ssp_walk_out(R, w, w->payload, w->paylen);
}}

/* packets i = 0..n-1 (bytes pkts[offs[i]..+lens[i]], in on ports[i], at w->now), each walked; a
 * transmitted packet's bytes go to the arena, res[3i..3i+2] = (port, offset, length) (port
 * ~0: dropped). Stops at a packet Python must continue (*status its W_PY_* / W_ERR, w its
 * state) or when the arena may not hold the next output (*status -1); returns the packets
 * done (the stopped one included when *status is a W_PY_ status or W_ERR). */
int ssp_batch(I_t *R, W_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint8_t *arena, uint64_t cap,
              uint64_t *res, int *status) {{
    uint64_t used = 0;
    uint8_t *out0 = w->out; uint32_t ocap0 = w->ocap; /* the single-packet output buffer */
    int i;
    *status = 0;
    for (i = 0; i < n; i++) {{
        uint64_t room = cap - used;
        if (room < (uint64_t)lens[i] + 65536u) {{ *status = -1; break; }}
        w->out = arena + used; w->ocap = (uint32_t)(room - lens[i] > 0xFFFFFFFFu
                                                    ? 0xFFFFFFFFu : room - lens[i]);
        int r = ssp_walk(R, w, pkts + offs[i], lens[i], ports[i] & 0x1FF, w->now);
        res[3 * i] = ~(uint64_t)0; res[3 * i + 1] = used; res[3 * i + 2] = 0;
        if (r == W_TX) {{
            memcpy(w->out + w->olen, w->payload, w->paylen);
            res[3 * i] = w->eport; res[3 * i + 2] = w->tlen;
            used += w->tlen;
        }} else if (r != W_DROP) {{
            *status = r;
            i++;
            break;
        }}
    }}
    w->out = out0; w->ocap = ocap0;
    return i;
}}

/* Switch.process_burst's packets i = 0..n-1, each walked as by ssp_batch, but a transmitted
 * packet is written at out + *used (cap bytes in all) and its record (first + i, port,
 * offset, length) at rec + 4 * *nrec (the caller leaves room for n more), both counts
 * advanced; a dropped packet leaves nothing. Stops as ssp_batch does. */
int ssp_burst(I_t *R, W_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint64_t first, uint8_t *out,
              uint64_t cap, uint64_t *used, uint64_t *rec, uint64_t *nrec, int *status) {{
    uint8_t *out0 = w->out; uint32_t ocap0 = w->ocap;
    uint64_t at = *used, k = *nrec;
    int i;
    *status = 0;
    for (i = 0; i < n; i++) {{
        uint64_t room = cap - at;
        if (room < (uint64_t)lens[i] + 65536u) {{ *status = -1; break; }}
        w->out = out + at;
        w->ocap = (uint32_t)(room - lens[i] > 0xFFFFFFFFu ? 0xFFFFFFFFu : room - lens[i]);
        int r = ssp_walk(R, w, pkts + offs[i], lens[i], ports[i] & 0x1FF, w->now);
        if (r == W_TX) {{
            uint64_t *q = rec + 4 * k++;
            memcpy(w->out + w->olen, w->payload, w->paylen);
            q[0] = first + (uint64_t)i; q[1] = w->eport; q[2] = at; q[3] = w->tlen;
            at += w->tlen;
        }} else if (r != W_DROP) {{
            *status = r;
            i++;
            break;
        }}
    }}
    w->out = out0; w->ocap = ocap0; *used = at; *nrec = k;
    return i;
}}
""".splitlines()
