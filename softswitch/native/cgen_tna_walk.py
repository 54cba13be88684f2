"""The TNA walk's common path in C: one call runs a packet through ingress parser → ingress →
ingress deparser → (unicast) → egress parser → egress → egress deparser, as
engine/tna_pipeline.py's TnaPipeline does, and hands the state back to the Python walk at the
first decision only Python takes (the v1model counterpart is cgen_walk.py).

What C decides (the common path, nothing else), in TnaPipeline's order:
- each gress: the intrinsic header packed before the packet (ingress: resubmit_flag,
  ingress_port, ingress_mac_tstamp, then the 8 bytes of port metadata; egress: the queue's
  fields), from-parser's global_tstamp and parser_err (the error's PARSER_ERROR bit), the drop
  on a parser error when the program does not read that gress's parser_err;
- after the ingress deparser, when no extern asked anything (no Mirror, Resubmit or Digest
  request in ``R->req``) and neither resubmit_type, mcast_grp_a/b nor copy_to_cpu is set:
  drop_ctl bit 0 drops, an unwritten ucast_egress_port or the drop port drops, else one egress
  instance on ucast_egress_port (qid, ingress_cos, the packet's length + 4), NORMAL, or BYPASS
  with bypass_egress (`sst_walk` transmits what the ingress deparser emitted);
- after the egress deparser, with no request: drop_ctl bit 0 drops, else transmit.
Anything else returns ``W_PY_IN`` / ``W_PY_OUT`` after that gress's deparser, with the pass
objects (``w->o``), the deparsed packet and the requests in ``R``, and TnaPipeline's
`_traffic_manager` / `_end_egress` continue from there (no pass runs twice).

Buffers (``w->a``, ``w->b``, ``w->c``, ``w->cap`` bytes each, Python's): the ingress parser
reads ``a`` (intrinsic header, port metadata, packet); the ingress deparser writes ``b`` after
room for the egress intrinsic header, the payload is copied after it, and the egress parser
reads ``b`` in place; the egress deparser writes ``c`` (then its payload): ``c[0..tlen)`` is
the packet transmitted. A packet too large for them returns ``W_BIG`` before anything ran.
"""

from __future__ import annotations

from collections.abc import Sequence

from softswitch.engine.tna_pipeline import BYPASS, NO_MATCH, NORMAL, PARSER_ERROR_BITS
from softswitch.native.cgen_walk import W_DROP, W_EGRESS, W_ERR, W_PY_IN, W_PY_OUT, W_TX

#: the packet was too large for the walk's buffers (nothing ran)
W_BIG = 6
#: the deparser's capacity for headers in the walk (as native/pipeline.OUT_CAPACITY)
HDR_CAP = 1 << 16

TW_CDEF = """
typedef struct TW_t {
    void *o[12];
    uint8_t *a, *b, *c;
    uint32_t cap;
    uint32_t port, resubmitted, kind;
    uint64_t now;
    uint8_t pm[8];
    uint64_t qid, cos, rid, rid_first, pkt_length, enq_cells, deq_cells, enq_us, delta_us;
    uint32_t blen, eport, tlen;
    int32_t rc;
    uint8_t pmt[4096];
} TW_t;
int sst_walk_in(I_t *R, TW_t *w, const uint8_t *pkt, uint32_t len);
int sst_walk_out(I_t *R, TW_t *w, const uint8_t *data, uint32_t len);
int sst_walk(I_t *R, TW_t *w, const uint8_t *pkt, uint32_t len);
int sst_batch(I_t *R, TW_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint8_t *arena, uint64_t cap,
              uint64_t *res, int *status);
int sst_burst(I_t *R, TW_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint64_t first, uint8_t *out,
              uint64_t cap, uint64_t *used, uint64_t *rec, uint64_t *nrec, int *status);
size_t sst_objsize(int slot);
"""

# the values TnaPipeline packs into each intrinsic header (others 0)
IG_VALUES = {"resubmit_flag": "rf", "ingress_port": "port", "ingress_mac_tstamp": "ts"}
EG_VALUES = {"egress_port": "w->eport", "enq_qdepth": "w->enq_cells",
             "enq_tstamp": "w->enq_us * 1000u", "deq_qdepth": "w->deq_cells",
             "deq_timedelta": "w->delta_us * 1000u", "egress_rid": "w->rid",
             "egress_rid_first": "w->rid_first", "egress_qid": "w->qid",
             "egress_cos": "w->cos", "pkt_length": "w->pkt_length"}


def _packer(name: str, params: str, layout: Sequence[tuple[str, int]],
            values: dict[str, str]) -> list[str]:
    """A C function writing the intrinsic header `layout` (TnaPipeline._packer's bytes)."""
    nbytes = sum(w for _, w in layout) // 8
    lines = [f"static void {name}(uint8_t *b, {params}) {{", f"    memset(b, 0, {nbytes});"]
    pos = 0
    for field, width in layout:
        v = values.get(field)
        if v is not None:
            lines.append(f"    ss_write_bits(b, {pos}, {width}, (u128)(uint64_t)({v}));")
        pos += width
    lines.append("}")
    return lines


def tna_walk_source(classes: dict[str, str], layouts: dict[str, list[tuple[str, int]]],
                    errors: Sequence[str], drop_on_error: dict[str, bool]) -> list[str]:
    """The walk's C (after the sst_* entry points): `classes` the C struct names (cgen_tna's
    TnaNativeProgram.classes), `layouts` the two intrinsic headers' (field, width)s, `errors`
    the program's error names by code, `drop_on_error` per gress."""
    igp = sum(w for _, w in layouts["ingress_intrinsic_metadata_t"]) // 8
    egp = sum(w for _, w in layouts["egress_intrinsic_metadata_t"]) // 8
    bits = [PARSER_ERROR_BITS.get(e, NO_MATCH) for e in errors] or [NO_MATCH]
    objs = ["ingress_hdr", "ingress_md", "ingress_intrinsic_metadata_t",
            "ingress_intrinsic_metadata_from_parser_t",
            "ingress_intrinsic_metadata_for_deparser_t", "ingress_intrinsic_metadata_for_tm_t",
            "egress_hdr", "egress_md", "egress_intrinsic_metadata_t",
            "egress_intrinsic_metadata_from_parser_t",
            "egress_intrinsic_metadata_for_deparser_t",
            "egress_intrinsic_metadata_for_output_port_t"]
    sizes = ", ".join(f"sizeof({classes[k]})" for k in objs)
    c = {k: classes[k] for k in objs}
    return [
        TW_CDEF,
        f"enum {{ W_DROP = {W_DROP}, W_EGRESS = {W_EGRESS}, W_TX = {W_TX}, W_PY_IN = {W_PY_IN},"
        f" W_PY_OUT = {W_PY_OUT}, W_ERR = {W_ERR}, W_BIG = {W_BIG} }};",
        f"#define IGP {igp}",
        f"#define EGP {egp}",
        f"#define HDR_CAP {HDR_CAP}u",
        f"static const size_t SST_SIZES[12] = {{ {sizes} }};",
        f"static const uint16_t SST_ERRB[{len(bits)}] = {{ {', '.join(map(str, bits))} }};",
        "size_t sst_objsize(int slot) { return slot >= 0 && slot < 12 ? SST_SIZES[slot] : 0; }",
        *_packer("sst_pack_ig", "uint64_t rf, uint64_t port, uint64_t ts",
                 layouts["ingress_intrinsic_metadata_t"], IG_VALUES),
        *_packer("sst_pack_eg", "const TW_t *w", layouts["egress_intrinsic_metadata_t"],
                 EG_VALUES),
        f"""
/* parse (o: that gress's six objects, cleared), from-parser's fields, the drop on a parser
 * error; the payload's offset in *off. Returns -1 to go on, else the walk status. */
static int sst_gress_parse(I_t *R, TW_t *w, int g, void **o, const uint8_t *buf,
                           uint32_t blen, uint64_t plen, uint32_t *off) {{
    for (int k = 0; k < 6; k++) memset(o[k], 0, SST_SIZES[6 * g + k]);
    int rc = sst_parse(R, g, o, buf, blen, plen, w->now);
    if (rc < 0) {{ w->rc = -rc; return W_ERR; }}
    uint64_t err = 0;
    if (rc == 1) err = R->perr >= 0 && R->perr < {len(bits)} ? SST_ERRB[R->perr] : {NO_MATCH};
    uint64_t ns = (w->now * 1000u) & 0xFFFFFFFFFFFFull;
    if (g == 0) {{
        {c['ingress_intrinsic_metadata_from_parser_t']} *p = o[3];
        p->global_tstamp = ns; p->parser_err = err;
        if (err && {int(drop_on_error['ingress'])}) return W_DROP;
    }} else {{
        {c['egress_intrinsic_metadata_from_parser_t']} *p = o[3];
        p->global_tstamp = ns; p->parser_err = err;
        if (err && {int(drop_on_error['egress'])}) return W_DROP;
    }}
    *off = (R->ppos + 7) >> 3;
    rc = sst_control(R, g, o);
    if (rc) {{ w->rc = rc; return W_ERR; }}
    return -1;
}}

/* the ingress pass of pkt (in on w->port at w->now, w->pm its port metadata, w->resubmitted):
 * W_EGRESS with the egress instance in w (eport, qid, cos, pkt_length; the packet in
 * b[EGP..EGP+blen)), W_DROP, W_PY_IN (TnaPipeline._traffic_manager decides), W_ERR, W_BIG */
int sst_walk_in(I_t *R, TW_t *w, const uint8_t *pkt, uint32_t len) {{
    if ((uint64_t)len + IGP + 8 + 2 * (EGP + HDR_CAP) > w->cap) return W_BIG;
    uint8_t *a = w->a;
    uint32_t blen = IGP + 8 + len, off = 0;
    sst_pack_ig(a, w->resubmitted, w->port, (w->now * 1000u) & 0xFFFFFFFFFFFFull);
    memcpy(a + IGP, w->pm, 8);
    memcpy(a + IGP + 8, pkt, len);
    void **o = w->o;
    int r = sst_gress_parse(R, w, 0, o, a, blen, (uint64_t)len + 4, &off);
    if (r >= 0) return r;
    int n = sst_deparse(R, 0, o, w->b + EGP, HDR_CAP);
    if (n < 0) {{ w->rc = -n; return W_ERR; }}
    uint32_t pl = off < blen ? blen - off : 0;
    memcpy(w->b + EGP + n, a + off, pl);
    w->blen = (uint32_t)n + pl;
    {c['ingress_intrinsic_metadata_for_deparser_t']} *d = o[4];
    {c['ingress_intrinsic_metadata_for_tm_t']} *tm = o[5];
    if (R->req || d->resubmit_type || tm->mcast_grp_a || tm->mcast_grp_b || tm->copy_to_cpu)
        return W_PY_IN;
    if ((d->drop_ctl & 1) || !tm->_uv || tm->ucast_egress_port == R->drop_port) return W_DROP;
    w->eport = (uint32_t)tm->ucast_egress_port;
    w->qid = tm->qid; w->cos = tm->ingress_cos; w->rid = w->rid_first = 0;
    w->kind = tm->bypass_egress ? {BYPASS} : {NORMAL};
    w->pkt_length = (uint64_t)len + 4;
    return W_EGRESS;
}}

/* the egress pass of the instance in w (eport, qid, cos, rid, rid_first, pkt_length, queue
 * fields) whose packet is data[0..len) (NULL: b[EGP..EGP+blen) already): W_TX (c[0..tlen)),
 * W_DROP, W_PY_OUT (TnaPipeline._end_egress decides), W_ERR, W_BIG */
int sst_walk_out(I_t *R, TW_t *w, const uint8_t *data, uint32_t len) {{
    if (data) {{
        if ((uint64_t)len + 2 * EGP + HDR_CAP > w->cap) return W_BIG;
        memcpy(w->b + EGP, data, len);
        w->blen = len;
    }}
    uint8_t *b = w->b;
    uint32_t blen = EGP + w->blen, off = 0;
    sst_pack_eg(b, w);
    void **o = w->o + 6;
    int r = sst_gress_parse(R, w, 1, o, b, blen, (uint64_t)w->blen + 4, &off);
    if (r >= 0) return r;
    int n = sst_deparse(R, 1, o, w->c, HDR_CAP);
    if (n < 0) {{ w->rc = -n; return W_ERR; }}
    uint32_t pl = off < blen ? blen - off : 0;
    memcpy(w->c + n, b + off, pl);
    w->tlen = (uint32_t)n + pl;
    {c['egress_intrinsic_metadata_for_deparser_t']} *d = o[4];
    if (R->req) return W_PY_OUT;
    return (d->drop_ctl & 1) ? W_DROP : W_TX;
}}

/* one input packet (w->port, w->now; its port metadata from w->pmt), both passes when
 * nothing needs Python; the egress pass is not queued (the queue fields of an unqueued
 * instance: enqueued now, no wait, no cells) */
int sst_walk(I_t *R, TW_t *w, const uint8_t *pkt, uint32_t len) {{
    w->resubmitted = 0;
    memcpy(w->pm, w->pmt + 8 * (w->port & 0x1FF), 8);
    int r = sst_walk_in(R, w, pkt, len);
    if (r != W_EGRESS) return r;
    if (w->kind == {BYPASS}) {{ /* what the ingress deparser emitted, transmitted */
        memcpy(w->c, w->b + EGP, w->blen);
        w->tlen = w->blen;
        return W_TX;
    }}
    w->enq_cells = w->deq_cells = 0; w->enq_us = w->now; w->delta_us = 0;
    return sst_walk_out(R, w, NULL, 0);
}}

/* packets i = 0..n-1 (pkts[offs[i]..+lens[i]], in on ports[i] at w->now), each walked; a
 * transmitted packet goes to the arena, res[3i..3i+2] = (port, offset, length) (port ~0:
 * dropped). Stops at a packet Python must continue (*status its W_PY_* / W_ERR / W_BIG, w its
 * state) or when the arena may not hold the next output (*status -1); returns the packets done
 * (the stopped one included unless *status is -1). */
int sst_batch(I_t *R, TW_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint8_t *arena, uint64_t cap,
              uint64_t *res, int *status) {{
    uint64_t used = 0;
    int i;
    *status = 0;
    for (i = 0; i < n; i++) {{
        if (cap - used < (uint64_t)lens[i] + EGP + 2 * HDR_CAP) {{ *status = -1; break; }}
        w->port = ports[i] & 0x1FF;
        int r = sst_walk(R, w, pkts + offs[i], lens[i]);
        res[3 * i] = ~(uint64_t)0; res[3 * i + 1] = used; res[3 * i + 2] = 0;
        if (r == W_TX) {{
            memcpy(arena + used, w->c, w->tlen);
            res[3 * i] = w->eport; res[3 * i + 2] = w->tlen;
            used += w->tlen;
        }} else if (r != W_DROP) {{
            *status = r;
            i++;
            break;
        }}
    }}
    return i;
}}

/* Switch.process_burst's packets i = 0..n-1, each walked as by sst_batch, but the egress
 * deparser writes straight to out + *used (cap bytes in all; the packet goes back to w->c
 * when Python continues it) and a transmitted packet's record (first + i, port, offset,
 * length) goes to rec + 4 * *nrec (the caller leaves room for n more), both counts advanced;
 * a dropped packet leaves nothing. Stops as sst_batch does. */
int sst_burst(I_t *R, TW_t *w, int n, const uint8_t *pkts, const uint32_t *offs,
              const uint32_t *lens, const uint16_t *ports, uint64_t first, uint8_t *out,
              uint64_t cap, uint64_t *used, uint64_t *rec, uint64_t *nrec, int *status) {{
    uint64_t at = *used, k = *nrec;
    uint8_t *c0 = w->c;
    int i;
    *status = 0;
    for (i = 0; i < n; i++) {{
        if (cap - at < (uint64_t)lens[i] + EGP + 2 * HDR_CAP) {{ *status = -1; break; }}
        w->port = ports[i] & 0x1FF;
        w->c = out + at;
        int r = sst_walk(R, w, pkts + offs[i], lens[i]);
        if (r == W_TX) {{
            uint64_t *q = rec + 4 * k++;
            q[0] = first + (uint64_t)i; q[1] = w->eport; q[2] = at; q[3] = w->tlen;
            at += w->tlen;
        }} else if (r != W_DROP) {{
            if (r == W_PY_OUT) memcpy(c0, w->c, w->tlen);
            *status = r;
            i++;
            break;
        }}
    }}
    w->c = c0;
    *used = at; *nrec = k;
    return i;
}}
""",
    ]
