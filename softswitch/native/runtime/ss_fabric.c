/* The native fabric core (issue 26, 2): a stepped virtual-time fabric of devices running the
 * C engine, in C — devices' input buffers and egress queues (runtime/queues.py), the cables
 * (delay, store-and-forward line rate, up/down, blackholes), the packets on them and the
 * per-device schedule (softswitch/schedule.py) — so a packet goes from one device's egress
 * through a cable into the next device's pipeline without returning to Python.
 *
 * Every rule here is a transcription of the Python fabric (fabric.py, schedule.py,
 * runtime/device.py, runtime/queues.py), in the same order and with the same float
 * arithmetic, so both give the same packets at the same times (see DESIGN.md, "native/ — the
 * fabric core"). What must be Python is a callback (`py_pass`: a pipeline pass only the
 * Python walk finishes; `py_wire`: a cable with a Python drop predicate or loss draw) or an
 * entry in the log Python drains after each run (packets to hosts and CPU ports, what
 * observers see, digests).
 *
 * Compiled on its own (not with a program): it calls each device's generated ssp_walk_in /
 * ssp_walk_out through pointers. Built with -ffp-contract=off: no fused multiply-add, so
 * every double operation rounds as Python's does.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* W_t (the walk's state, native/cgen_walk.py's W_T_CDEF) is prepended by fabric_core.py */

enum { W_DROP, W_EGRESS, W_TX, W_PY_IN, W_PY_OUT, W_ERR };
enum { LOG_HOST = 1, LOG_PIN = 2, LOG_OBS = 3, LOG_DIG = 4 };

typedef int (*walk_in_fn)(void *R, W_t *w, const uint8_t *pkt, uint32_t len);
typedef int (*walk_out_fn)(void *R, W_t *w, const uint8_t *payload, uint32_t paylen);
/* the program's pass entry points the end-of-pass decisions use (native/cgen.py) */
typedef uint32_t (*parse_fn)(void *R, void *h, void *m, void *sm, const uint8_t *pkt,
                             uint32_t len);
typedef int (*deparse_fn)(void *R, void *h, void *m, const uint8_t *payload, uint32_t paylen,
                          uint8_t *out, uint32_t cap);
typedef void (*field_list_fn)(int idx, const void *src, void *dst);
/* a pass for Python to finish: returns bit 0 digests are pending delivery, bit 1 the
 * pipeline holds digests of a failed pass (force_py for the next passes) */
typedef int (*py_pass_fn)(int dev, int kind, W_t *w, const uint8_t *data, uint32_t len);
/* a cable with a Python predicate: 0 on its way, 1 filtered (not counted here), 2 lost */
typedef int (*py_wire_fn)(int wire, const uint8_t *data, uint32_t len);

#define EPSILON_US 1e-6
#define NPORTS 512
#define BURST 64
#define DRAIN_MAX 256
#define OUT_CAP (1u << 16)

/* A packet's bytes: `data` (`len` bytes) inside the block `base` it owns, which has
 * HEADROOM bytes before the packet as first received or built, so that an egress pass that
 * deparses headers no longer than that room plus what the parser took off writes them in
 * front of the payload where it lies (run_egress): a hop moves no payload bytes. */
#define HEADROOM 256
typedef struct fpkt { uint8_t *base, *data; uint32_t len; } fpkt;

typedef struct fj {
    struct fj *next;
    uint8_t *base;                      /* the block `data` lies in (owned) */
    uint8_t *data; uint32_t len, off;   /* the packet (ingress) or the payload's (egress) */
    uint32_t port, cut, trunc, fresh;
    uint8_t *phv;                       /* h | m | sm */
    double enq; uint64_t enq_qdepth, seq;
} fj;

typedef struct fq { fj *head, *tail; uint32_t n; } fq;

typedef struct fport {
    fq *q;
    int64_t depth;
    int has_interval; double interval;
    int has_bps; double bps;
    double free_at, sent_at;
    uint32_t count;
    int active;
} fport;

typedef struct fout { uint32_t port; fpkt p; double start, end; } fout;

/* the packet replication engine's answer for one multicast group or clone session (what
 * engine/pre.py's replicate / clone_targets give, mirrored on every PRE write): its copies
 * (egress port, rid) in order and, for a session, the clone length (0: whole) */
typedef struct ss_set { uint64_t id; uint32_t trunc, n; uint32_t *port, *rid; } ss_set;
#include "ss_pre.h"

/* where the walk's end-of-pass decisions read and write: the instance's request fields (I_t)
 * and standard_metadata's fields (sm_t), each an offset and a size (1, 2, 4 or 8 bytes) */
enum { O_REQ, O_CLONE_TYPE, O_CLONE_SESSION, O_CLONE_FL, O_RECIRC_FL, O_TRUNCATE, O_DROP_PORT,
       O_INSTANCE_TYPE, O_PACKET_LENGTH, O_EGRESS_RID, O_MCAST_GRP, O_EGRESS_SPEC,
       O_INGRESS_PORT, O_COUNT };

typedef struct fdev {
    void *R; walk_in_fn win; walk_out_fn wout;
    uint32_t hsize, msize, smsize, prio_off, prio_size;
    int has_prog, force_py, dig_pending;
    uint32_t nq;
    int64_t def_depth; int def_has_interval; double def_interval; int def_has_bps; double def_bps;
    fport *ports[NPORTS];
    int32_t active[NPORTS]; int nactive;
    uint64_t seq; uint32_t count;
    int has_earliest; double earliest;
    int32_t awaiting;
    double departure;
    fq inbox, jobs;
    uint32_t capacity;
    int32_t cpu_port; int blackholed;
    /* the end-of-pass decisions in C (clone, multicast, recirculate: V1Pipeline's), when
     * Python gave the entry points, the offsets and the PRE (`ends`) */
    int ends;
    int64_t obs_off;   /* where the program instance counts its observed writes (-1: none) */
    parse_fn parse; deparse_fn deparse; field_list_fn field_list;
    uint32_t off[O_COUNT], size[O_COUNT];
    ss_set *groups, *sessions; int32_t ngroups, nsessions;
    int32_t wire[NPORTS];
    uint64_t rx, tx, drop_input, drop_recirc, drop_nopipe, qdropped;
    uint8_t *out;
} fdev;

typedef struct fwire {
    int32_t to_dev, to_port;
    int to_host, up, blackhole, slow;
    int64_t delay;
    uint64_t carried;
    /* the tally of the bin `t_bin` so far (t_packets 0: none) */
    int64_t t_bin; uint64_t t_packets, t_bytes, t_marked;
} fwire;

/* what one wire carried in one bin (fc_take_tally) */
typedef struct ftally { int32_t wire; int64_t bin; uint64_t packets, bytes, marked; } ftally;

typedef struct fflight { int64_t arrival; uint64_t seq; int32_t wire; fpkt p; } fflight;
typedef struct ftimer { double when; int32_t dev; } ftimer;

typedef struct flog {
    int32_t kind, a, b, c;
    int64_t time;
    uint8_t *data; uint32_t len;
    uint8_t *base;   /* the block data lies in (owned; NULL: no data) */
} flog;

typedef struct fcore {
    fdev *dev; int ndev;
    fwire *wires; int nwire;
    fflight *fl; int nfl, capfl; uint64_t wire_seq;
    /* the schedule */
    uint8_t *marked; int32_t *now_h; int nnow; int32_t *next; int nnext; int cursor;
    int32_t *posted; int nposted;
    uint8_t *dirtyf; int32_t *dirty; int ndirty;   /* devices whose counters moved */
    ftimer *timers; int ntimers, captimers;
    uint8_t *has_due; double *due;
    /* the instant */
    int64_t now_ns; double now_us; uint64_t now_whole_us;
    int observers;
    /* the wire tally (softswitch/wire_tally.py): bins of tally_bin ns (0: off), the DSCPs
     * counted apart, and the bins each wire finished since the last take */
    int64_t tally_bin; uint8_t tally_dscp[64];
    ftally *tally; int ntally, captally;
    flog *log; int nlog, caplog;
    uint64_t unlinked, link_down, loss, blackholed;
    fout *outs; int nout, capout;
    py_pass_fn py_pass; py_wire_fn py_wire;
    W_t w;
    int error;   /* out of memory: the run stops, Python raises */
} fcore;

/* -- allocation helpers ------------------------------------------------------------------ */

static void pre_free(struct fdev *d);

static void *grow(void *p, int *cap, int need, size_t size) {
    if (need <= *cap) return p;
    int n = *cap ? *cap * 2 : 64;
    while (n < need) n *= 2;
    void *q = realloc(p, (size_t)n * size);
    if (!q) return NULL;
    *cap = n;
    return q;
}

/* a block with HEADROOM bytes before a packet of len bytes (p->data); 0 out of memory */
static int pkt_new(fpkt *p, uint32_t len) {
    p->base = malloc((size_t)HEADROOM + len);
    p->data = p->base ? p->base + HEADROOM : NULL;
    p->len = len;
    return p->base != NULL;
}

/* ... holding a copy of src */
static int pkt_copy(fpkt *p, const uint8_t *src, uint32_t len) {
    if (!pkt_new(p, len)) return 0;
    if (len) memcpy(p->data, src, len);
    return 1;
}

/* `j`'s bytes: a new block of len bytes (left to fill), or a copy of src; 0 out of memory */
static int fj_bytes(fj *j, uint32_t len) {
    fpkt p;
    if (!pkt_new(&p, len)) return 0;
    j->base = p.base; j->data = p.data; j->len = len;
    return 1;
}

static int fj_copy(fj *j, const uint8_t *src, uint32_t len) {
    if (!fj_bytes(j, len)) return 0;
    if (len) memcpy(j->data, src, len);
    return 1;
}

static void fj_free(fj *j) {
    if (!j) return;
    free(j->base);
    free(j->phv);
    free(j);
}

static void fq_push(fq *q, fj *j) {
    j->next = NULL;
    if (q->tail) q->tail->next = j; else q->head = j;
    q->tail = j;
    q->n++;
}

static fj *fq_pop(fq *q) {
    fj *j = q->head;
    if (!j) return NULL;
    q->head = j->next;
    if (!q->head) q->tail = NULL;
    q->n--;
    return j;
}

static void fq_clear(fq *q) {
    fj *j;
    while ((j = fq_pop(q))) fj_free(j);
}

/* -- the core ------------------------------------------------------------------------------ */

fcore *fc_new(int ndev, int nwire) {
    fcore *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->dev = calloc((size_t)(ndev ? ndev : 1), sizeof *c->dev);
    c->wires = calloc((size_t)(nwire ? nwire : 1), sizeof *c->wires);
    c->marked = calloc((size_t)(ndev ? ndev : 1), 1);
    c->now_h = calloc((size_t)(ndev ? ndev : 1), sizeof(int32_t));
    c->next = calloc((size_t)(ndev ? ndev : 1), sizeof(int32_t));
    c->posted = calloc((size_t)(ndev ? ndev : 1) * 4 + 16, sizeof(int32_t));
    c->has_due = calloc((size_t)(ndev ? ndev : 1), 1);
    c->due = calloc((size_t)(ndev ? ndev : 1), sizeof(double));
    c->dirtyf = calloc((size_t)(ndev ? ndev : 1), 1);
    c->dirty = calloc((size_t)(ndev ? ndev : 1), sizeof(int32_t));
    if (!c->dev || !c->wires || !c->marked || !c->now_h || !c->next || !c->posted ||
        !c->has_due || !c->due || !c->dirtyf || !c->dirty) return NULL;
    c->ndev = ndev; c->nwire = nwire; c->cursor = -1;
    for (int i = 0; i < ndev; i++) {
        fdev *d = &c->dev[i];
        for (int p = 0; p < NPORTS; p++) d->wire[p] = -1;
        d->awaiting = -1; d->cpu_port = -1; d->nq = 1; d->def_depth = 64; d->capacity = 1024;
        d->obs_off = -1;
        d->out = malloc(OUT_CAP);
        if (!d->out) return NULL;
    }
    return c;
}

void fc_set_callbacks(fcore *c, py_pass_fn pass, py_wire_fn wire) {
    c->py_pass = pass; c->py_wire = wire;
}

void fc_set_observers(fcore *c, int on) { c->observers = on; }

int fc_error(fcore *c) { return c->error; }

/* -- the wire tally (softswitch/wire_tally.py: WireTally.count's rules) --------------------- */

/* count per wire and bin of `bin_ns` (0: stop counting) the packets, their bytes, and those
 * whose outer IPv6 DSCP has its flag set in `dscps` (64 flags) */
void fc_set_tally(fcore *c, int64_t bin_ns, const uint8_t *dscps) {
    c->tally_bin = bin_ns > 0 ? bin_ns : 0;
    for (int k = 0; k < 64; k++) c->tally_dscp[k] = dscps ? dscps[k] : 0;
}

static void tally_flush(fcore *c, int k) {
    fwire *w = &c->wires[k];
    if (!w->t_packets) return;
    ftally *t = grow(c->tally, &c->captally, c->ntally + 1, sizeof *t);
    if (!t) { c->error = 1; return; }
    c->tally = t;
    ftally v = {k, w->t_bin, w->t_packets, w->t_bytes, w->t_marked};
    t[c->ntally++] = v;
    w->t_packets = w->t_bytes = w->t_marked = 0;
}

static void tally_count(fcore *c, int k, int64_t time_ns, const uint8_t *data, uint32_t len) {
    fwire *w = &c->wires[k];
    int64_t b = c->tally_bin;
    int64_t bin = time_ns >= 0 ? time_ns / b : -((-time_ns + b - 1) / b);   /* floor */
    if (w->t_packets && w->t_bin != bin) tally_flush(c, k);
    w->t_bin = bin;
    w->t_packets++;
    w->t_bytes += len;
    if (len >= 16 && c->tally_dscp[(((data[14] & 0x0F) << 4) | (data[15] >> 4)) >> 2])
        w->t_marked++;
}

/* every wire's counts since the last take, as records (fc_tally); how many */
int fc_take_tally(fcore *c) {
    for (int k = 0; k < c->nwire; k++) tally_flush(c, k);
    return c->ntally;
}

ftally *fc_tally(fcore *c) { return c->tally; }
void fc_tally_clear(fcore *c) { c->ntally = 0; }

/* -- egress queues (runtime/queues.py) ----------------------------------------------------- */

static fport *port_of(fdev *d, uint32_t port) {
    fport *p = d->ports[port];
    if (p) return p;
    p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->q = calloc(d->nq, sizeof *p->q);
    if (!p->q) { free(p); return NULL; }
    p->depth = d->def_depth;
    p->has_interval = d->def_has_interval; p->interval = d->def_interval;
    p->has_bps = d->def_has_bps; p->bps = d->def_bps;
    d->ports[port] = p;
    return p;
}

enum { SET_RATE, SET_LINE_RATE, SET_DEPTH };

/* a port setting (`what`: the packet rate's interval µs, the line rate in bit/s, each with
 * `has` 0 for none; the depth in packets) of `port`, or with port -1 of every port and the
 * default for ports seen later (EgressQueues.set_rate / set_line_rate / set_depth) */
int fc_set_port(fcore *c, int i, int what, int port, int has, double value) {
    fdev *d = &c->dev[i];
    d->has_earliest = 0;
    if (port < 0) {
        if (what == SET_RATE) { d->def_has_interval = has; d->def_interval = value; }
        else if (what == SET_LINE_RATE) { d->def_has_bps = has; d->def_bps = value; }
        else d->def_depth = (int64_t)value;
    }
    for (int k = port < 0 ? 0 : port; k < (port < 0 ? NPORTS : port + 1); k++) {
        fport *p = port < 0 ? d->ports[k] : port_of(d, (uint32_t)k);
        if (!p) { if (port >= 0) return -1; continue; }
        if (what == SET_RATE) {
            p->has_interval = has; p->interval = value;
            if (!has && !p->has_bps) p->free_at = 0.0;   /* unlimited: nothing to wait for */
        } else if (what == SET_LINE_RATE) {
            p->has_bps = has; p->bps = value;
            if (!has && !p->has_interval) p->free_at = 0.0;
        } else {
            p->depth = (int64_t)value;
        }
    }
    return 0;
}

/* a port's pacing state as the Python queues left it (at attach) */
int fc_set_port_state(fcore *c, int i, int port, double free_at, double sent_at) {
    fport *p = port_of(&c->dev[i], (uint32_t)port);
    if (!p) return -1;
    p->free_at = free_at; p->sent_at = sent_at;
    return 0;
}

static int q_enqueue(fcore *c, fdev *d, fj *j, uint32_t priority) {
    if (priority >= d->nq) { d->qdropped++; fj_free(j); return 0; }
    fport *p = port_of(d, j->port);
    if (!p) { c->error = 1; fj_free(j); return 0; }
    fq *q = &p->q[priority];
    if ((int64_t)q->n >= p->depth) { d->qdropped++; fj_free(j); return 0; }
    d->seq++;
    d->has_earliest = 0;
    j->enq = c->now_us; j->enq_qdepth = q->n; j->seq = d->seq;
    fq_push(q, j);
    if (!p->count) { p->active = 1; d->active[d->nactive++] = (int32_t)j->port; }
    p->count++;
    d->count++;
    return 1;
}

static double heads_earliest(fdev *d) {
    double best = INFINITY;
    for (int a = 0; a < d->nactive; a++) {
        fport *p = d->ports[d->active[a]];
        for (uint32_t k = 0; k < d->nq; k++) {
            fj *h = p->q[k].head;
            if (h) {
                double t = h->enq >= p->free_at ? h->enq : p->free_at;
                if (t < best) best = t;
            }
        }
    }
    return best;
}

typedef struct qinfo { uint64_t enq_ts, enq_qdepth, deq_td, deq_qdepth; } qinfo;

static fj *q_pop(fcore *c, fdev *d, qinfo *info) {
    if (!d->count) return NULL;
    double now = c->now_us, limit = now + EPSILON_US;
    if (d->has_earliest && d->earliest > limit) return NULL;
    fport *best = NULL; int besta = -1; uint32_t qi = 0; double depart = 0; uint64_t bseq = 0;
    for (int a = 0; a < d->nactive; a++) {
        fport *p = d->ports[d->active[a]];
        for (int k = (int)d->nq - 1; k >= 0; k--) {
            fj *h = p->q[k].head;
            if (h) {
                double t = h->enq >= p->free_at ? h->enq : p->free_at;
                if (t <= limit) {
                    if (!best || t < depart || (t == depart && h->seq < bseq)) {
                        best = p; besta = a; depart = t; bseq = h->seq; qi = (uint32_t)k;
                    }
                }
                break;
            }
        }
    }
    if (!best) {
        d->earliest = heads_earliest(d); d->has_earliest = 1;
        return NULL;
    }
    d->has_earliest = 0;
    fq *q = &best->q[qi];
    fj *j = fq_pop(q);
    best->count--;
    if (!best->count) {
        best->active = 0;
        d->active[besta] = d->active[--d->nactive];
    }
    d->count--;
    uint64_t enq_us = (uint64_t)j->enq;
    if (best->has_bps) {
        best->free_at = INFINITY;
        best->sent_at = depart;
        d->awaiting = (int32_t)j->port;
    } else if (best->has_interval) {
        best->free_at = depart + best->interval;
    } else {
        depart = now;
    }
    d->departure = depart;
    int64_t td = (int64_t)(uint64_t)depart - (int64_t)enq_us;
    info->enq_ts = enq_us; info->enq_qdepth = j->enq_qdepth;
    info->deq_td = td > 0 ? (uint64_t)td : 0; info->deq_qdepth = q->n;
    return j;
}

static double q_transmitted(fdev *d, uint32_t port, uint64_t nbytes) {
    fport *p = d->ports[port];
    d->awaiting = -1;
    d->has_earliest = 0;
    double depart = p->sent_at;
    double end = depart + ((double)nbytes * 8e6) / p->bps;
    p->free_at = (!p->has_interval || depart + p->interval < end) ? end : depart + p->interval;
    return end;
}

static int q_may_leave(fcore *c, fdev *d) {
    if (!d->count) return 0;
    return !d->has_earliest || d->earliest <= c->now_us + EPSILON_US;
}

/* the device's next departure (µs); 0: none (*when unset) */
static int q_next_departure(fdev *d, double *when) {
    if (!d->count) return 0;
    if (!d->has_earliest) { d->earliest = heads_earliest(d); d->has_earliest = 1; }
    if (d->earliest == INFINITY) return 0;
    *when = d->earliest;
    return 1;
}

static void q_clear(fdev *d) {
    for (int k = 0; k < NPORTS; k++) {
        fport *p = d->ports[k];
        if (!p) continue;
        for (uint32_t n = 0; n < d->nq; n++) fq_clear(&p->q[n]);
        p->count = 0; p->active = 0;
        if (p->free_at == INFINITY) p->free_at = p->sent_at;
    }
    d->nactive = 0; d->count = 0; d->awaiting = -1; d->has_earliest = 0;
}

/* -- the schedule (softswitch/schedule.py) --------------------------------------------------- */

/* binary min-heaps (as Python's heapq): sift a value up from slot k, or down from slot k of
 * a heap of n, for each element type and its order */
#define HEAP_FUNCS(NAME, T, LESS)                                                         \
    static void NAME##_up(T *h, int k, T v) {                                             \
        while (k > 0) { int p = (k - 1) / 2; if (!LESS(v, h[p])) break; h[k] = h[p]; k = p; } \
        h[k] = v;                                                                          \
    }                                                                                      \
    static void NAME##_down(T *h, int n, int k, T v) {                                    \
        while (1) {                                                                        \
            int l = 2 * k + 1, r = l + 1, m = k;                                           \
            T mv = v;                                                                      \
            if (l < n && LESS(h[l], mv)) { m = l; mv = h[l]; }                             \
            if (r < n && LESS(h[r], mv)) { m = r; }                                        \
            if (m == k) break;                                                             \
            h[k] = h[m]; k = m;                                                            \
        }                                                                                  \
        if (n) h[k] = v;                                                                   \
    }

#define INT_LESS(a, b) ((a) < (b))
#define TIMER_LESS(a, b) ((a).when < (b).when || ((a).when == (b).when && (a).dev < (b).dev))
#define FLIGHT_LESS(a, b) \
    ((a).arrival < (b).arrival || ((a).arrival == (b).arrival && (a).seq < (b).seq))
HEAP_FUNCS(ih, int32_t, INT_LESS)
HEAP_FUNCS(th, ftimer, TIMER_LESS)
HEAP_FUNCS(fh, fflight, FLIGHT_LESS)

static void nh_push(fcore *c, int32_t v) { ih_up(c->now_h, c->nnow++, v); }

static int32_t nh_pop(fcore *c) {
    int32_t top = c->now_h[0];
    c->nnow--;
    ih_down(c->now_h, c->nnow, 0, c->now_h[c->nnow]);
    return top;
}

static int timer_push(fcore *c, double when, int32_t dev) {
    ftimer *t = grow(c->timers, &c->captimers, c->ntimers + 1, sizeof *t);
    if (!t) { c->error = 1; return -1; }
    c->timers = t;
    ftimer v = {when, dev};
    th_up(t, c->ntimers++, v);
    return 0;
}

static void timer_pop(fcore *c) {
    c->ntimers--;
    th_down(c->timers, c->ntimers, 0, c->timers[c->ntimers]);
}

static void s_wake(fcore *c, int i) {
    c->has_due[i] = 0;
    if (!c->marked[i]) {
        c->marked[i] = 1;
        if (i > c->cursor) nh_push(c, i); else c->next[c->nnext++] = i;
    }
}

void fc_wake_all(fcore *c) { for (int i = 0; i < c->ndev; i++) s_wake(c, i); }

/* a wake from Python (what Device.set_waker posts), applied as the schedule applies posts */
void fc_post(fcore *c, int i) {
    if (c->nposted < c->ndev * 4 + 16) c->posted[c->nposted++] = i;
    else s_wake(c, i);   /* (cannot happen: posts are applied before each pass) */
}

static void s_apply_posted(fcore *c) {
    for (int k = 0; k < c->nposted; k++) s_wake(c, c->posted[k]);
    c->nposted = 0;
}

static int s_start_pass(fcore *c, double limit) {
    c->cursor = -1;
    for (int k = 0; k < c->nnext; k++) nh_push(c, c->next[k]);
    c->nnext = 0;
    s_apply_posted(c);
    while (c->ntimers && c->timers[0].when <= limit) {
        ftimer t = c->timers[0];
        timer_pop(c);
        if (c->has_due[t.dev] && c->due[t.dev] == t.when) s_wake(c, t.dev);
    }
    return c->nnow > 0;
}

static void mark_dirty(fcore *c, int i) {
    if (!c->dirtyf[i]) { c->dirtyf[i] = 1; c->dirty[c->ndirty++] = i; }
}

/* the devices stepped since the last call whose program logged observed register writes
 * (into out, in step order); how many */
int fc_take_dirty(fcore *c, int32_t *out) {
    int n = c->ndirty, m = 0;
    for (int k = 0; k < n; k++) {
        int i = c->dirty[k];
        fdev *d = &c->dev[i];
        c->dirtyf[i] = 0;
        if (d->R && d->obs_off >= 0 && *(const uint32_t *)((const uint8_t *)d->R + d->obs_off))
            out[m++] = i;
    }
    c->ndirty = 0;
    return m;
}

static int s_pop(fcore *c) {
    if (c->nposted) s_apply_posted(c);
    if (!c->nnow) { c->cursor = -1; return -1; }
    int i = nh_pop(c);
    c->marked[i] = 0;
    c->cursor = i;
    mark_dirty(c, i);
    return i;
}

static void s_idle(fcore *c, int i, int has, double departure) {
    if (c->marked[i]) return;
    if (c->has_due[i] == has && (!has || c->due[i] == departure)) return;
    /* Python: `due[i] == departure` with None == None: unchanged */
    c->has_due[i] = (uint8_t)has; c->due[i] = departure;
    if (has) timer_push(c, departure, i);
}

static int s_earliest(fcore *c, double *when) {
    while (c->ntimers) {
        ftimer t = c->timers[0];
        if (c->has_due[t.dev] && c->due[t.dev] == t.when) { *when = t.when; return 1; }
        timer_pop(c);
    }
    return 0;
}

/* -- the log Python drains ------------------------------------------------------------------ */

static void log_add(fcore *c, int kind, int a, int b, int cc, int64_t time, fpkt p) {
    flog *l = grow(c->log, &c->caplog, c->nlog + 1, sizeof *l);
    if (!l) { c->error = 1; free(p.base); return; }
    c->log = l;
    flog *e = &l[c->nlog++];
    e->kind = kind; e->a = a; e->b = b; e->c = cc; e->time = time;
    e->data = p.data; e->len = p.len; e->base = p.base;
}

int fc_log_count(fcore *c) { return c->nlog; }
flog *fc_log(fcore *c) { return c->log; }

void fc_log_clear(fcore *c) {
    for (int k = 0; k < c->nlog; k++) free(c->log[k].base);
    c->nlog = 0;
}

/* -- devices -------------------------------------------------------------------------------- */

int fc_set_device(fcore *c, int i, uint32_t nq, int32_t cpu_port, uint32_t capacity) {
    fdev *d = &c->dev[i];
    if (nq < 1) return -1;
    d->nq = nq; d->cpu_port = cpu_port; d->capacity = capacity;
    return 0;
}

/* the program a device runs (R null: none, every packet is dropped) */
void fc_set_program(fcore *c, int i, void *R, void *win, void *wout, uint32_t hsize,
                    uint32_t msize, uint32_t smsize, uint32_t prio_off, uint32_t prio_size) {
    fdev *d = &c->dev[i];
    d->R = R; d->win = (walk_in_fn)win; d->wout = (walk_out_fn)wout;
    d->hsize = hsize; d->msize = msize; d->smsize = smsize;
    d->prio_off = prio_off; d->prio_size = prio_size;
    d->has_prog = R != NULL;
    d->force_py = 0;
    d->obs_off = -1;
    pre_free(d); d->ends = 0;   /* until fc_set_ends: Python finishes what C hands back */
}

void fc_set_force_py(fcore *c, int i, int on) { c->dev[i].force_py = on; }

/* the offset in the program instance of its count of logged observed writes (uint32_t) */
void fc_set_obs(fcore *c, int i, int64_t off) { c->dev[i].obs_off = off; }

static void pre_free(fdev *d) {
    ss_sets_free(&d->groups, &d->ngroups);
    ss_sets_free(&d->sessions, &d->nsessions);
}

/* the device's end-of-pass decisions in C from now on (parse/deparse/field_list: the
 * program's entry points; off, size: O_COUNT fields' offsets and sizes), or not (parse NULL:
 * Python finishes every pass C hands back). The PRE starts empty: Python mirrors it next. */
void fc_set_ends(fcore *c, int i, void *parse, void *deparse, void *field_list,
                 const uint32_t *off, const uint32_t *size) {
    fdev *d = &c->dev[i];
    pre_free(d);
    d->ends = parse != NULL;
    d->parse = (parse_fn)parse; d->deparse = (deparse_fn)deparse;
    d->field_list = (field_list_fn)field_list;
    if (off) { memcpy(d->off, off, sizeof d->off); memcpy(d->size, size, sizeof d->size); }
}

/* the PRE mirror: forget every group and session ... */
void fc_pre_clear(fcore *c, int i) { pre_free(&c->dev[i]); }

/* ... then each multicast group (kind 0) or clone session (kind 1) with its n copies */
int fc_pre_add(fcore *c, int i, int kind, uint64_t id, uint32_t trunc, uint32_t n,
               const uint32_t *port, const uint32_t *rid) {
    fdev *d = &c->dev[i];
    return kind ? ss_set_push(&d->sessions, &d->nsessions, id, trunc, n, port, rid)
                : ss_set_push(&d->groups, &d->ngroups, id, trunc, n, port, rid);
}

void fc_set_blackholed(fcore *c, int i, int on) { c->dev[i].blackholed = on; }

/* a pipeline swap (Device.commit): what was queued and the resubmit buffer are gone */
void fc_clear_device(fcore *c, int i) {
    fdev *d = &c->dev[i];
    q_clear(d);
    fq_clear(&d->jobs);
}

/* a power cycle: a blank device in slot i (counters, buffers and port settings reset) */
void fc_reset_device(fcore *c, int i) {
    fdev *d = &c->dev[i];
    q_clear(d);
    fq_clear(&d->jobs);
    fq_clear(&d->inbox);
    for (int k = 0; k < NPORTS; k++) {
        if (d->ports[k]) { free(d->ports[k]->q); free(d->ports[k]); d->ports[k] = NULL; }
    }
    d->def_depth = 64; d->def_has_interval = 0; d->def_has_bps = 0;
    d->seq = 0; d->rx = d->tx = d->drop_input = d->drop_recirc = d->drop_nopipe = 0;
    d->qdropped = 0; d->has_prog = 0; d->R = NULL; d->force_py = 0;
    pre_free(d); d->ends = 0;
}

/* counters: rx, tx, input full, recirculation full, no pipeline, queue drops */
void fc_counters(fcore *c, int i, uint64_t *out) {
    fdev *d = &c->dev[i];
    out[0] = d->rx; out[1] = d->tx; out[2] = d->drop_input; out[3] = d->drop_recirc;
    out[4] = d->drop_nopipe; out[5] = d->qdropped;
}

uint32_t fc_queued(fcore *c, int i) { return c->dev[i].count; }
uint32_t fc_inbox(fcore *c, int i) { return c->dev[i].inbox.n; }
uint32_t fc_jobs(fcore *c, int i) { return c->dev[i].jobs.n; }
uint32_t fc_depth(fcore *c, int i, int port, uint32_t prio) {
    fport *p = c->dev[i].ports[port];
    return p && prio < c->dev[i].nq ? p->q[prio].n : 0;
}

int fc_next_departure(fcore *c, int i, double *when) {
    return q_next_departure(&c->dev[i], when);
}

static int dev_receive(fcore *c, int i, uint32_t port, fpkt p) {
    fdev *d = &c->dev[i];
    if (d->inbox.n >= d->capacity) {
        d->drop_input++; mark_dirty(c, i); free(p.base); return 0;
    }
    fj *j = calloc(1, sizeof *j);
    if (!j) { c->error = 1; free(p.base); return 0; }
    j->base = p.base; j->data = p.data; j->len = p.len; j->port = port; j->fresh = 1;
    fq_push(&d->inbox, j);
    fc_post(c, i);
    return 1;
}

/* Device.receive from Python (a host's frame, a packet-out): copied */
int fc_receive(fcore *c, int i, uint32_t port, const uint8_t *data, uint32_t len) {
    fpkt p;
    if (!pkt_copy(&p, data, len)) { c->error = 1; return 0; }
    return dev_receive(c, i, port, p);
}

static uint8_t *phv_new(fdev *d) {
    return calloc(1, (size_t)d->hsize + d->msize + d->smsize + 16);
}

static uint32_t sm_priority(fdev *d, const uint8_t *sm) {
    uint64_t v = 0;
    memcpy(&v, sm + d->prio_off, d->prio_size > 8 ? 8 : d->prio_size);
    return (uint32_t)v;
}

/* Device._dispatch of one job Python made (push) or C made */
static void dispatch_egress(fcore *c, fdev *d, fj *j) {
    q_enqueue(c, d, j, sm_priority(d, j->phv + d->hsize + d->msize));
}

static void dispatch_ingress(fdev *d, fj *j) {
    if (d->jobs.n < d->capacity) fq_push(&d->jobs, j);
    else { d->drop_recirc++; fj_free(j); }
}

/* jobs the Python walk made in a callback (copied): an egress job on `port` */
int fc_push_egress(fcore *c, int i, uint32_t port, const void *h, const void *m, const void *sm,
                   const uint8_t *payload, uint32_t paylen, uint32_t trunc, uint32_t cut) {
    fdev *d = &c->dev[i];
    fj *j = calloc(1, sizeof *j);
    if (!j) { c->error = 1; return -1; }
    j->phv = phv_new(d);
    if (!fj_copy(j, payload, paylen) || !j->phv) { fj_free(j); c->error = 1; return -1; }
    memcpy(j->phv, h, d->hsize);
    memcpy(j->phv + d->hsize, m, d->msize);
    memcpy(j->phv + d->hsize + d->msize, sm, d->smsize);
    j->len = paylen; j->off = 0; j->port = port; j->trunc = trunc; j->cut = cut;
    dispatch_egress(c, d, j);
    return 0;
}

/* ... a resubmitted / recirculated ingress job (m, sm: the preserved metadata) */
int fc_push_ingress(fcore *c, int i, uint32_t port, const uint8_t *data, uint32_t len,
                    const void *m, const void *sm) {
    fdev *d = &c->dev[i];
    fj *j = calloc(1, sizeof *j);
    if (!j) { c->error = 1; return -1; }
    j->phv = phv_new(d);
    if (!fj_copy(j, data, len) || !j->phv) { fj_free(j); c->error = 1; return -1; }
    memcpy(j->phv + d->hsize, m, d->msize);
    memcpy(j->phv + d->hsize + d->msize, sm, d->smsize);
    j->len = len; j->port = port; j->fresh = 0;
    dispatch_ingress(d, j);
    return 0;
}

static void add_out(fcore *c, uint32_t port, fpkt p) {
    fout *o = grow(c->outs, &c->capout, c->nout + 1, sizeof *o);
    if (!o) { c->error = 1; free(p.base); return; }
    c->outs = o;
    o[c->nout].port = port; o[c->nout].p = p;
    o[c->nout].start = o[c->nout].end = 0;
    c->nout++;
}

/* ... a packet it transmitted (the egress pass being finished) */
int fc_push_output(fcore *c, int i, uint32_t port, const uint8_t *data, uint32_t len) {
    (void)i;
    fpkt p;
    if (!pkt_copy(&p, data, len)) { c->error = 1; return -1; }
    add_out(c, port, p);
    return 0;
}

static void py_pass(fcore *c, fdev *d, int i, int kind, const uint8_t *data, uint32_t len) {
    int r = c->py_pass(i, kind, &c->w, data, len);
    if (r & 1) d->dig_pending = 1;
    d->force_py = (r & 2) != 0;
}

/* -- the end-of-pass decisions (engine/pipeline.py's V1Pipeline._end_ingress / _end_egress)
 * for what the C walk hands back, when nothing in the pass needs Python: clones (I2E at the
 * end of ingress), multicast, recirculation. Each is a transcription of its Python branch, in
 * its order; anything else (an assert, a digest, resubmit, an egress clone, digests a failed
 * pass left pending) stays Python's (py_pass). */

/* field `f` of the struct at `base` (little-endian, zero-extended), and a store to it */
static inline uint64_t get(const fdev *d, const uint8_t *base, int f) {
    uint64_t v = 0;
    memcpy(&v, base + d->off[f], d->size[f]);
    return v;
}
static inline void put(const fdev *d, uint8_t *base, int f, uint64_t v) {
    memcpy(base + d->off[f], &v, d->size[f]);
}

/* end-of-pass requests (R->req bits), as runtime/ss_prog.h defines them */
#define SS_REQ_CLONE 1u
#define SS_REQ_RESUBMIT 2u
#define SS_REQ_RECIRC 4u
#define SS_REQ_DIGEST 8u
#define SS_REQ_TRUNCATE 16u

enum { IT_NORMAL = 0, IT_INGRESS_CLONE = 1, IT_RECIRC = 4, IT_REPLICATION = 5 };

/* V1Pipeline._fan_out: one egress job per copy, each with its own PHV (a copy of `phv`,
 * egress_rid set) and the packet (its payload at `off`) */
static void fan_out(fcore *c, fdev *d, const ss_set *copies, const uint8_t *phv,
                    const uint8_t *data, uint32_t len, uint32_t off, uint32_t trunc,
                    uint32_t cut) {
    size_t size = (size_t)d->hsize + d->msize + d->smsize;
    for (uint32_t k = 0; copies && k < copies->n; k++) {
        fj *j = calloc(1, sizeof *j);
        if (!j) { c->error = 1; return; }
        j->phv = phv_new(d);
        if (!fj_copy(j, data, len) || !j->phv) { fj_free(j); c->error = 1; return; }
        memcpy(j->phv, phv, size);
        put(d, j->phv + d->hsize + d->msize, O_EGRESS_RID, copies->rid[k]);
        j->len = len; j->off = off; j->port = copies->port[k]; j->trunc = trunc; j->cut = cut;
        dispatch_egress(c, d, j);
    }
}

/* _end_ingress for a pass the walk returned W_PY_IN: 1 when done here (`j` and `phv` used
 * up), 0 for Python */
static int end_ingress(fcore *c, fdev *d, fj *j, uint8_t *phv) {
    W_t *w = &c->w;
    uint8_t *R = d->R;
    uint64_t req = get(d, R, O_REQ);
    if (w->rc || d->force_py || (req & ~(uint64_t)(SS_REQ_CLONE | SS_REQ_TRUNCATE))) return 0;
    uint8_t *m = phv + d->hsize, *sm = m + d->msize;
    uint32_t truncate = (req & SS_REQ_TRUNCATE) ? (uint32_t)get(d, R, O_TRUNCATE) : 0;
    if ((req & SS_REQ_CLONE) && get(d, R, O_CLONE_TYPE) == 1) {   /* I2E */
        const ss_set *s = ss_set_find(d->sessions, d->nsessions, get(d, R, O_CLONE_SESSION));
        if (s) {   /* _clone_from_ingress: the original re-parsed, metadata reset */
            uint8_t *cphv = phv_new(d);
            if (!cphv) { c->error = 1; free(phv); fj_free(j); return 1; }
            uint8_t *cm = cphv + d->hsize, *csm = cm + d->msize;
            put(d, csm, O_INGRESS_PORT, get(d, sm, O_INGRESS_PORT));
            uint32_t coff = d->parse(R, cphv, cm, csm, j->data, j->len);
            memset(cm, 0, d->msize); memset(csm, 0, d->smsize);
            d->field_list((int32_t)get(d, R, O_CLONE_FL), m, cm);
            put(d, csm, O_INSTANCE_TYPE, IT_INGRESS_CLONE);
            put(d, csm, O_PACKET_LENGTH, j->len);
            fan_out(c, d, s, cphv, j->data, j->len, coff, s->trunc, 0);
            free(cphv);
        }
    }
    uint64_t mgid = get(d, sm, O_MCAST_GRP);
    if (mgid) {
        put(d, sm, O_INSTANCE_TYPE, IT_REPLICATION);
        fan_out(c, d, ss_set_find(d->groups, d->ngroups, mgid), phv, j->data, j->len, w->off, 0,
                truncate);
        free(phv); fj_free(j);
        return 1;
    }
    uint64_t spec = get(d, sm, O_EGRESS_SPEC);
    if (spec == get(d, R, O_DROP_PORT)) { free(phv); fj_free(j); return 1; }
    put(d, sm, O_INSTANCE_TYPE, IT_NORMAL);
    j->phv = phv; j->off = w->off; j->port = (uint32_t)spec; j->cut = truncate; j->trunc = 0;
    dispatch_egress(c, d, j);
    return 1;
}

/* _end_egress for a pass the walk returned W_PY_OUT: 1 when done here (a recirculation, or a
 * drop), 0 for Python */
static int end_egress(fcore *c, fdev *d, fj *j) {
    W_t *w = &c->w;
    uint8_t *R = d->R;
    uint64_t req = get(d, R, O_REQ);
    if (w->rc || d->force_py || (req & ~(uint64_t)(SS_REQ_RECIRC | SS_REQ_TRUNCATE))) return 0;
    uint8_t *h = j->phv, *m = h + d->hsize, *sm = m + d->msize;
    if (get(d, sm, O_EGRESS_SPEC) == get(d, R, O_DROP_PORT)) return 1;
    if (!(req & SS_REQ_RECIRC)) return 0;
    const uint8_t *payload = j->data + j->off;
    uint32_t paylen = j->len - j->off;
    int n = d->deparse(R, h, m, payload, paylen, d->out, OUT_CAP);
    if (n < 0) return 0;   /* Python reports the deparser's failure */
    fj *r = calloc(1, sizeof *r);
    if (!r) { c->error = 1; return 1; }
    r->phv = phv_new(d);
    if (!fj_bytes(r, (uint32_t)n + paylen) || !r->phv) { fj_free(r); c->error = 1; return 1; }
    memcpy(r->data, d->out, (size_t)n);
    memcpy(r->data + n, payload, paylen);
    uint8_t *nm = r->phv + d->hsize, *nsm = nm + d->msize;
    d->field_list((int32_t)get(d, R, O_RECIRC_FL), m, nm);
    put(d, nsm, O_INSTANCE_TYPE, IT_RECIRC);
    put(d, nsm, O_PACKET_LENGTH, r->len);
    r->port = (uint32_t)get(d, sm, O_INGRESS_PORT); r->fresh = 0;
    dispatch_ingress(d, r);
    return 1;
}

/* one ingress pass of `j` (Switch.run of an ingress job, then Device._dispatch) */
static void run_ingress(fcore *c, fdev *d, int i, fj *j) {
    W_t *w = &c->w;
    uint8_t *phv = j->phv ? j->phv : phv_new(d);
    if (!phv) { c->error = 1; fj_free(j); return; }
    j->phv = NULL;
    w->h = phv; w->m = phv + d->hsize; w->sm = phv + d->hsize + d->msize;
    w->port = j->port; w->fresh = j->fresh; w->now = c->now_whole_us;
    w->force_py = (uint32_t)d->force_py;
    int r = d->win(d->R, w, j->data, j->len);
    if (r == W_EGRESS) {
        j->phv = phv; j->off = w->off; j->port = w->eport; j->cut = w->cut; j->trunc = 0;
        dispatch_egress(c, d, j);
        return;
    }
    if (r == W_PY_IN) {
        if (d->ends && end_ingress(c, d, j, phv)) return;
        py_pass(c, d, i, W_PY_IN, j->data, j->len);
    }
    free(phv);
    fj_free(j);
}

/* one egress pass of queued `j` (Switch.run with its queueing metadata); its outputs added */
static void run_egress(fcore *c, fdev *d, int i, fj *j, const qinfo *info) {
    W_t *w = &c->w;
    uint8_t *phv = j->phv;
    w->h = phv; w->m = phv + d->hsize; w->sm = phv + d->hsize + d->msize;
    w->eport = j->port; w->cut = j->cut; w->trunc = j->trunc; w->fresh = 0;
    w->queued = 1;
    w->enq_ts = info->enq_ts; w->enq_qdepth = info->enq_qdepth;
    w->deq_td = info->deq_td; w->deq_qdepth = info->deq_qdepth;
    w->now = c->now_whole_us;
    w->force_py = (uint32_t)d->force_py;
    w->out = d->out; w->ocap = OUT_CAP;
    const uint8_t *payload = j->data + j->off;
    uint32_t paylen = j->len - j->off;
    int r = d->wout(d->R, w, payload, paylen);
    if (r == W_TX) {
        uint32_t n = w->tlen;
        uint32_t head = w->olen < n ? w->olen : n;
        fpkt p;
        if (j->base && (size_t)(payload - j->base) >= head && n - head <= paylen) {
            /* the headers written in front of the payload where it lies: the block is the
             * output's now */
            p.base = j->base; p.data = (uint8_t *)payload - head; p.len = n;
            j->base = NULL; j->data = NULL;
            memcpy(p.data, d->out, head);
        } else {
            if (!pkt_new(&p, n)) { c->error = 1; return; }
            memcpy(p.data, d->out, head);
            if (n > head) memcpy(p.data + head, payload, n - head);
        }
        add_out(c, w->eport, p);
    } else if (r == W_PY_OUT && d->ends && end_egress(c, d, j)) {
        return;
    } else if (r == W_PY_OUT || r == W_ERR) {
        py_pass(c, d, i, r, payload, paylen);
    }
}

/* Device._drain: egress passes for what may leave now */
static int drain(fcore *c, fdev *d, int i) {
    int did = 0;
    for (int k = 0; k < DRAIN_MAX; k++) {
        qinfo info;
        fj *j = q_pop(c, d, &info);
        if (!j) break;
        did = 1;
        double start = d->departure, end;
        int first = c->nout;
        if (d->has_prog) run_egress(c, d, i, j, &info);
        if (d->awaiting >= 0) {
            uint64_t sent = 0;
            for (int o = first; o < c->nout; o++)
                if (c->outs[o].port == j->port) sent += c->outs[o].p.len;
            end = q_transmitted(d, j->port, sent);
        } else {
            end = start;
        }
        for (int o = first; o < c->nout; o++) { c->outs[o].start = start; c->outs[o].end = end; }
        fj_free(j);
    }
    return did;
}

/* -- wires (fabric.py's output function and _deliver_due) ----------------------------------- */

int fc_set_wire(fcore *c, int k, int from_dev, int from_port, int to_dev, int to_port,
                int to_host, int64_t delay) {
    fwire *w = &c->wires[k];
    w->to_dev = to_dev; w->to_port = to_port; w->to_host = to_host; w->delay = delay;
    w->up = 1;
    if (from_dev >= 0) c->dev[from_dev].wire[from_port] = k;
    return 0;
}

void fc_wire_flags(fcore *c, int k, int up, int blackhole, int slow, int64_t delay) {
    fwire *w = &c->wires[k];
    w->up = up; w->blackhole = blackhole; w->slow = slow; w->delay = delay;
}

uint64_t fc_wire_carried(fcore *c, int k) { return c->wires[k].carried; }

/* fabric counters: unlinked, link down, loss, blackhole (read and zeroed: Python adds them);
 * 0 when all are (out untouched) */
int fc_take_counters(fcore *c, uint64_t *out) {
    if (!(c->unlinked | c->link_down | c->loss | c->blackholed)) return 0;
    out[0] = c->unlinked; out[1] = c->link_down; out[2] = c->loss; out[3] = c->blackholed;
    c->unlinked = c->link_down = c->loss = c->blackholed = 0;
    return 1;
}

static void wire_target(fcore *c, int k, fpkt p) {
    fwire *w = &c->wires[k];
    if (w->to_host) { log_add(c, LOG_HOST, k, 0, 0, 0, p); return; }
    if (c->dev[w->to_dev].blackholed) { c->blackholed++; free(p.base); return; }
    dev_receive(c, w->to_dev, (uint32_t)w->to_port, p);
}

static void fl_push(fcore *c, fflight v) {
    fflight *h = grow(c->fl, &c->capfl, c->nfl + 1, sizeof *h);
    if (!h) { c->error = 1; free(v.p.base); return; }
    c->fl = h;
    fh_up(h, c->nfl++, v);
}

static fflight fl_pop(fcore *c) {
    fflight top = c->fl[0];
    c->nfl--;
    fh_down(c->fl, c->nfl, 0, c->fl[c->nfl]);
    return top;
}

static void fl_heapify(fcore *c) {
    for (int s = c->nfl / 2 - 1; s >= 0; s--) fh_down(c->fl, c->nfl, s, c->fl[s]);
}

int fc_in_flight(fcore *c) { return c->nfl; }

/* a packet the Python fabric had on a wire when the core attached */
int fc_add_in_flight(fcore *c, int64_t arrival, uint64_t seq, int wire, const uint8_t *data,
                     uint32_t len) {
    fflight f = {arrival, seq, wire, {NULL, NULL, 0}};
    if (!pkt_copy(&f.p, data, len)) { c->error = 1; return -1; }
    fl_push(c, f);
    if (seq > c->wire_seq) c->wire_seq = seq;
    return 0;
}

/* take the packets in flight on wires a and b (arriving after now) off them; how many */
int fc_purge(fcore *c, int a, int b) {
    int kept = 0, lost = 0;
    for (int k = 0; k < c->nfl; k++) {
        fflight e = c->fl[k];
        if (e.arrival > c->now_ns && (e.wire == a || e.wire == b)) { free(e.p.base); lost++; }
        else c->fl[kept++] = e;
    }
    c->nfl = kept;
    if (lost) fl_heapify(c);
    return lost;
}

static int64_t round_ns(double us) { return (int64_t)nearbyint(us * 1000.0); }

static void output(fcore *c, int i, fout *o) {
    fdev *d = &c->dev[i];
    if (d->blackholed) { c->blackholed++; free(o->p.base); return; }
    int k = d->wire[o->port & (NPORTS - 1)];
    if (o->port >= NPORTS || k < 0) {
        if (c->observers) log_add(c, LOG_OBS, -1, i, (int)o->port, round_ns(o->start), o->p);
        else free(o->p.base);
        c->unlinked++;
        return;
    }
    fwire *w = &c->wires[k];
    if (!w->up) { c->link_down++; free(o->p.base); return; }
    w->carried++;
    if (c->tally_bin) tally_count(c, k, round_ns(o->start), o->p.data, o->p.len);
    if (c->observers) {
        fpkt b;
        if (!pkt_copy(&b, o->p.data, o->p.len)) { c->error = 1; free(o->p.base); return; }
        log_add(c, LOG_OBS, k, i, (int)o->port, round_ns(o->start), b);
    }
    if (w->blackhole) { c->blackholed++; free(o->p.base); return; }
    if (w->slow) {
        int r = c->py_wire(k, o->p.data, o->p.len);
        if (r) {
            if (r == 2) c->loss++;
            free(o->p.base);
            return;
        }
    }
    int64_t arrival = round_ns(o->end) + w->delay;
    if (arrival > c->now_ns) {
        fflight f = {arrival, ++c->wire_seq, k, o->p};
        fl_push(c, f);
        return;
    }
    wire_target(c, k, o->p);
}

/* -- stepping (Device.step, Fabric._run_instant) ------------------------------------------- */

static int dev_step(fcore *c, int i) {
    fdev *d = &c->dev[i];
    if (!(d->inbox.n || d->jobs.n || q_may_leave(c, d))) return 0;
    c->nout = 0;
    d->dig_pending = 0;
    int did = d->count ? drain(c, d, i) : 0;
    fj *job = NULL;
    if (d->jobs.n) {
        job = fq_pop(&d->jobs);
    } else if (d->inbox.n) {
        job = fq_pop(&d->inbox);
        did = 1;
        d->rx++;
        if (!d->has_prog) { d->drop_nopipe++; fj_free(job); job = NULL; }
    }
    if (job && d->has_prog) {
        did = 1;
        run_ingress(c, d, i, job);
        drain(c, d, i);
    } else if (job) {
        fj_free(job);
    }
    int n = c->nout;
    for (int k = 0; k < n; k++) {
        fout *o = &c->outs[k];
        d->tx++;
        if ((int32_t)o->port == d->cpu_port) log_add(c, LOG_PIN, i, 0, 0, 0, o->p);
        else output(c, i, o);
    }
    c->nout = 0;
    if (d->dig_pending) { fpkt none = {NULL, NULL, 0}; log_add(c, LOG_DIG, i, 0, 0, 0, none); }
    return did;
}

static void set_now(fcore *c, int64_t now_ns) {
    c->now_ns = now_ns;
    c->now_us = (double)now_ns / 1000.0;
    c->now_whole_us = (uint64_t)(now_ns / 1000);
}

static int deliver_due(fcore *c) {
    if (!c->nfl || c->fl[0].arrival > c->now_ns) return 0;
    while (c->nfl && c->fl[0].arrival <= c->now_ns) {
        fflight e = fl_pop(c);
        wire_target(c, e.wire, e.p);
    }
    return 1;
}

/* Fabric._run_instant at `now_ns`: everything that can move now. 0, or -1 on an error. */
int fc_run_instant(fcore *c, int64_t now_ns) {
    set_now(c, now_ns);
    double limit = c->now_us + EPSILON_US;
    while (!c->error) {
        deliver_due(c);
        if (!s_start_pass(c, limit)) return 0;
        int i;
        while ((i = s_pop(c)) >= 0) {
            int b;
            for (b = 0; b < BURST; b++) {
                if (!dev_step(c, i)) {
                    double when = 0;
                    int has = q_next_departure(&c->dev[i], &when);
                    s_idle(c, i, has, when);
                    break;
                }
                if (c->error) return -1;
            }
            if (b == BURST) s_wake(c, i);
        }
    }
    return -1;
}

/* Fabric.next_event_ns: 1 and *out, or 0 (the fabric holds no packet) */
int fc_next_event(fcore *c, int64_t now_ns, int64_t *out) {
    set_now(c, now_ns);
    int has_best = c->nfl > 0;
    int64_t best = has_best ? c->fl[0].arrival : 0;
    if (has_best && best <= now_ns) { *out = now_ns; return 1; }
    double now_us = c->now_us;
    s_apply_posted(c);
    double departure = 0;
    int has_dep = s_earliest(c, &departure);
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? c->nnext : c->nnow;
        int32_t *list = pass ? c->next : c->now_h;
        for (int k = 0; k < n; k++) {
            fdev *d = &c->dev[list[k]];
            if (d->inbox.n || d->jobs.n) { *out = now_ns; return 1; }
            double when;
            if (q_next_departure(d, &when) && (!has_dep || when < departure)) {
                departure = when; has_dep = 1;
            }
        }
    }
    if (!has_dep) { *out = best; return has_best; }
    if (departure <= now_us + EPSILON_US) { *out = now_ns; return 1; }
    int64_t t = (int64_t)ceil((departure - EPSILON_US / 2) * 1000);
    if (t < now_ns + 1) t = now_ns + 1;
    *out = (!has_best || t < best) ? t : best;
    return 1;
}

/* some device stepped since the last fc_take_dirty logged observed register writes (what
 * Python's drain_observed reads: fc_take_dirty names them) */
static int dirty_observed(const fcore *c) {
    for (int k = 0; k < c->ndirty; k++) {
        const fdev *d = &c->dev[c->dirty[k]];
        if (d->R && d->obs_off >= 0 && *(const uint32_t *)((const uint8_t *)d->R + d->obs_off))
            return 1;
    }
    return 0;
}

int64_t fc_now(fcore *c) { return c->now_ns; }

/* The emulation loop's steps while only the fabric moves, without returning to Python: the
 * instant `start_ns` (fc_run_instant), then each next event's (fc_next_event) while it comes
 * before `bound_ns` (the first time Python has something due: a host's timer, its agenda),
 * until an instant leaves Python work (the log: host frames, packet-ins, digests, observed
 * packets; registers observed written) or time would not move. *reached: the last instant
 * run. 0, or -1 on an error. Python's callbacks in between (py_pass, py_wire) read the time
 * from fc_now. */
int fc_run_span(fcore *c, int64_t start_ns, int64_t bound_ns, int64_t *reached) {
    int64_t t = start_ns;
    for (;;) {
        *reached = t;
        if (fc_run_instant(c, t) < 0) return -1;
        if (c->nlog || dirty_observed(c)) return 0;
        int64_t next;
        if (!fc_next_event(c, t, &next) || next >= bound_ns || next <= t) return 0;
        t = next;
    }
}

void fc_free(fcore *c) {
    if (!c) return;
    for (int i = 0; i < c->ndev; i++) {
        fdev *d = &c->dev[i];
        q_clear(d); fq_clear(&d->jobs); fq_clear(&d->inbox);
        for (int k = 0; k < NPORTS; k++) if (d->ports[k]) { free(d->ports[k]->q); free(d->ports[k]); }
        free(d->out);
        pre_free(d);
    }
    for (int k = 0; k < c->nfl; k++) free(c->fl[k].p.base);
    fc_log_clear(c);
    for (int k = 0; k < c->nout; k++) free(c->outs[k].p.base);
    free(c->dev); free(c->wires); free(c->fl); free(c->marked); free(c->now_h); free(c->next);
    free(c->posted); free(c->timers); free(c->has_due); free(c->due); free(c->log);
    free(c->outs); free(c->dirtyf); free(c->dirty); free(c->tally);
    free(c);
}
