"""The v1model walk over the C engine.

`NativeV1Pipeline` is engine/pipeline.py's `V1Pipeline` with the common path in C
(native/cgen_walk.py): `process` walks a packet through both passes in one C call,
`process_batch` many packets in one call, and `run` (the Device's egress-queue path) one pass
per call with the PHV in C buffers (an egress job holds the ``char[]`` headers and metadata
and the cffi ``sm_t``). When a pass asks for more than the common path (clone, digest,
resubmit, recirculate, multicast, an assert failure), the C call returns after that pass and
`ssp_resume` (native/cgen_ends.py) finishes it in C — the end-of-pass decisions, then the
packet instances they make, digests queued for `_collect` to drain — so `process` and batches
stay in C; `run` takes the jobs it made back as PacketJobs. What C leaves to Python (an assert
failure with digests pending) `V1Pipeline._end_ingress` / `_end_egress` continue with the same
PHV and the pass's requests (`_resume`), so no pass runs twice; the jobs they make run through
`_step` (C per pass).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Any

from softswitch.engine.burst import Burst, BurstResult, BurstSink
from softswitch.engine.externs import Digest
from softswitch.engine.pipeline import (
    MAX_JOBS,
    OutputPacket,
    PacketJob,
    QueueInfo,
    RunState,
    V1Pipeline,
)
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.native.cgen_ends import W_DONE, W_STOP
from softswitch.native.cgen_externs import DigestSite
from softswitch.native.cgen_walk import W_DROP, W_EGRESS, W_ERR, W_PY_IN, W_PY_OUT, W_TX
from softswitch.native.program import NativeInstance

REQ_CLONE, REQ_RESUBMIT, REQ_RECIRC, REQ_DIGEST, REQ_TRUNCATE = 1, 2, 4, 8, 16
OUT_CAPACITY = 1 << 16  # bytes the deparser may emit per packet (headers only)
ARENA_BYTES = 1 << 22   # a batch's output arena (a batch needing more is run in parts)
# a burst's output buffer starts as its input's bytes, BURST_GROWTH per frame (headers the
# program may add) and BURST_ROOM, the room the C walk wants free before a frame (ssp_burst:
# 64 KiB, sst_burst: 128 KiB and the intrinsic header) besides the frame's length
BURST_GROWTH, BURST_ROOM = 64, 1 << 18
_DROPPED = (1 << 64) - 1


class NativeV1Pipeline(V1Pipeline):
    """V1Pipeline running the generated C of one program instance."""

    def __init__(self, instance: NativeInstance, pre: PacketReplicationEngine,
                 state: RunState, digests: list[Digest]) -> None:
        self.instance = instance
        ffi, lib = instance.ffi, instance.lib
        self.ffi, self.lib, self.inst = ffi, lib, instance.inst
        self.pre = pre
        self.R = state
        self.digests = digests
        self.trace = None
        hsize, msize = instance.hdr_size, instance.meta_size
        chars, self._sm_type = ffi.typeof("char[]"), ffi.typeof("sm_t *")
        new = ffi.new  # with the types looked up once (the jobs C makes are copied out in them)
        self.H = lambda: new(chars, hsize)
        self.M = lambda: new(chars, msize)
        self.SM = lambda: new(self._sm_type)
        self._out = ffi.new("uint8_t[]", OUT_CAPACITY)
        self._outbuf = ffi.buffer(self._out)
        self._w = w = ffi.new("W_t *")
        w.out, w.ocap = self._out, OUT_CAPACITY
        self._scratch = (self.H(), self.M(), self.SM())
        self._arena: Any = None
        gen = instance.program.gen
        self._sites = {s.site: s for s in gen.digests}
        self._field_lists: dict[int, Callable[..., None]] = {
            i: self._field_list_copier(i) for i in gen.field_lists}
        state.field_lists = self._field_lists
        ctx = lib.ssp_ctx_new()
        if ctx == ffi.NULL:
            raise MemoryError("the C walk's end-of-pass state could not be allocated")
        self._ctx = ffi.gc(ctx, lib.ssp_ctx_free)
        self._ctx_out = ffi.buffer(ctx.arena, ctx.cap)
        self._sm_size = ffi.sizeof("sm_t")
        self._pre_seen = -1  # the PRE version mirrored in the context
        self._w_scratch = False  # whether _w points at the scratch PHV
        self._start_walk()

    def _field_list_copier(self, idx: int) -> Callable[..., None]:
        copy = self.lib.ssp_field_list

        def fl(_sh: Any, smeta: Any, _ssm: Any, _dh: Any, dmeta: Any, _dsm: Any) -> None:
            copy(idx, smeta, dmeta)
        return fl

    # -- the walk in C -------------------------------------------------------------------------

    def process(self, port: int, data: bytes) -> list[OutputPacket]:
        data = bytes(data)
        out: list[OutputPacket] = []
        try:
            if self.pre.version != self._pre_seen:
                self._mirror_pre()
            r = self.lib.ssp_run(self.inst, self._use_scratch(), self._ctx, data, len(data),
                                 port & 0x1FF, self.now_us())
            if r == W_TX:
                out.append(self._transmitted(data, self._w.off))
            elif r == W_DONE:
                self._collect(out)
            elif r != W_DROP:
                self._collect(out)
                self._continue(r, port & 0x1FF, data, out, resumed=True)
        except Exception as exc:  # an engine bug must not escape to the caller
            self.internal_errors += 1
            self._log(f"Internal error while processing the packet ({exc!r}): dropped")
        if self.instance.observers:
            self.instance.drain_observed()
        return out

    def process_batch(self, packets: Sequence[tuple[int, bytes]]) -> list[list[OutputPacket]]:
        """`process` of each packet in turn, the common path in one C call for the batch."""
        def call(*args: Any) -> int:
            w = self._use_scratch()
            w.now = self.now_us()
            return int(self.lib.ssp_batch(self.inst, w, *args))
        return walk_batch(self, packets, call)

    def process_burst(self, burst: Burst) -> BurstResult:
        """`process` of each frame of `burst` in turn, in one C call while no frame needs the
        Python walk, written straight into the result's buffers."""
        def call(*args: Any) -> int:
            w = self._use_scratch()
            w.now = self.now_us()
            return int(self.lib.ssp_burst(self.inst, w, *args))
        return walk_burst(self, burst, call)

    def _use_scratch(self) -> Any:
        w = self._w
        if not self._w_scratch:  # `_step` or a new scratch since: point w at the scratch
            w.h, w.m, w.sm = self._scratch
            self._w_scratch = True
        w.force_py = bool(self.R.digests)
        return w

    def _transmitted(self, payload: bytes, off: int = 0) -> OutputPacket:
        """The packet the C walk deparsed into `_out`, followed by ``payload[off:]``, cut."""
        w = self._w
        data = b"".join((self._outbuf[0:w.olen], memoryview(payload)[off:]))
        if len(data) > w.tlen:
            data = data[:w.tlen]
        return OutputPacket(w.eport, data)

    def _continue(self, r: int, port: int, data: bytes, out: list[OutputPacket],
                  resumed: bool = False) -> None:
        """The rest of the packet `ssp_walk` handed back (`r`): finished in C (`ssp_resume`;
        `resumed`: `ssp_run` did, `r` its status), else from where C hands it back by the
        Python walk — the pass in the scratch PHV (which becomes the packet's: the next packet
        gets new scratch) or a later one — then the jobs left, each pass in C."""
        if r == W_ERR:
            raise RuntimeError("the C deparser stopped (output buffer full)")
        w = self._w
        count = 1 if r == W_PY_IN else 2
        kept = self.ffi.from_buffer(data)  # the packet, for the C jobs that point into it
        rr = r if resumed else self._resume_c(r, kept, len(data), w.off, count, out)
        if rr == 0:
            return
        jobs: deque[PacketJob | None] = deque()
        if rr == W_STOP or self._ctx.cur.phv != self.ffi.NULL:
            count = self._take_back(rr, jobs, out)
        else:
            h, m, sm = self._scratch
            self._scratch = (self.H(), self.M(), self.SM())
            self._w_scratch = False
            payload = data[w.off:]
            if r == W_PY_IN:
                self._resume(sm, len(data), w.now, payload)
                self._end_ingress(PacketJob(True, port, data), h, m, sm, payload, w.rc == 0,
                                  jobs)  # type: ignore[arg-type]
            else:
                job = PacketJob(False, w.eport, b"", h, m, sm, payload, 0, w.cut)
                self._resume(sm, int(sm.packet_length), w.now, payload)
                self._end_egress(job, w.rc == 0, jobs, out)  # type: ignore[arg-type]
        del kept
        while jobs:
            next_job = jobs.popleft()
            count += 1
            if count > MAX_JOBS:
                break
            if next_job is not None:  # None: a job C counted but never made (see _take_back)
                self._guarded(next_job, jobs, out, None)  # type: ignore[arg-type]

    # -- the end-of-pass decisions in C (native/cgen_ends.py) ---------------------------------

    def _resume_c(self, r: int, data: Any, length: int, off: int, count: int,
                  out: list[OutputPacket], bounded: bool = True) -> int:
        """`ssp_resume` of the pass the last walk call left in `_w` (its packet `data`, the
        payload at `off`), its outputs, digests and errors collected; its status."""
        if self.pre.version != self._pre_seen:
            self._mirror_pre()
        rr = int(self.lib.ssp_resume(self.inst, self._w, self._ctx, r, data, length, off,
                                     count, bounded))
        self._collect(out)
        return rr

    def _mirror_pre(self) -> None:
        """The context's PRE mirror as engine/pre.py answers now."""
        lib, ctx, new = self.lib, self._ctx, self.ffi.new
        lib.ssp_pre_clear(ctx)
        for kind, ident, trunc, copies in self.pre.native_sets():
            if lib.ssp_pre_add(ctx, kind, ident, trunc, len(copies),
                               new("uint32_t[]", [port for port, _ in copies] or [0]),
                               new("uint32_t[]", [rid for _, rid in copies] or [0])):
                raise MemoryError("the C walk could not mirror the PRE")
        self._pre_seen = self.pre.version

    def _collect(self, out: list[OutputPacket]) -> None:
        """What the last `ssp_resume` left in the context: transmitted packets (onto `out`),
        queued digests (onto the switch's), internal errors (counted)."""
        ctx = self._ctx
        n = ctx.nres
        if n:
            res = self.ffi.unpack(ctx.res, 3 * n)
            view, new = self._ctx_out, tuple.__new__
            for i in range(0, 3 * n, 3):
                o = res[i + 1]
                out.append(new(OutputPacket, (res[i], view[o:o + res[i + 2]])))
            ctx.nres = 0
        if ctx.ndq:
            self.digests += queued_digests(self.ffi, ctx, self._sites)
            ctx.ndq = 0
        if ctx.errors:
            self.internal_errors += ctx.errors
            self._log(f"Internal error in the C walk ({ctx.errors} packet instances dropped)")
            ctx.errors = 0

    def _take_back(self, rr: int, jobs: deque[PacketJob | None], out: list[OutputPacket]) -> int:
        """The packet's walk where `ssp_resume` stopped it (`rr`) continued in Python: the
        queued jobs onto `jobs` (a job C only counted, as one past MAX_JOBS, as None), then
        the pass in ``ctx->cur`` (unless W_STOP) finished by the Python walk; the passes run
        so far."""
        ctx, w = self._ctx, self._w
        jobs.extend(self._export(ctx.q[ctx.qhead + k]) for k in range(ctx.qn))
        jobs.extend([None] * ctx.nd)
        count = int(ctx.count)
        cur = None
        if rr != W_STOP:
            cur = self._export(ctx.cur, headers=True)
        self.lib.ssp_ctx_clear(ctx)
        if cur is None:
            return count
        if rr == W_PY_IN:
            self._resume(cur.sm, len(cur.data), w.now, cur.payload)
            self._end_ingress(PacketJob(True, cur.port, cur.data), cur.hdr, cur.meta, cur.sm,
                              cur.payload, w.rc == 0, jobs)  # type: ignore[arg-type]
        else:
            self._resume(cur.sm, int(cur.sm.packet_length), w.now, cur.payload)
            self._end_egress(cur, w.rc == 0, jobs, out)  # type: ignore[arg-type]
        return count

    def _export(self, j: Any, headers: bool = False) -> PacketJob:
        """C job `j` as the Python walk's, on its own copies of the PHV and the bytes (an
        ingress job: its packet in `data`, and with `headers` its parsed headers and payload
        too)."""
        ffi = self.ffi
        phv = j.phv
        hs, ms = self.instance.hdr_size, self.instance.meta_size
        m, sm = self.M(), self.SM()
        ffi.memmove(m, phv + hs, ms)
        ffi.memmove(sm, phv + hs + ms, self._sm_size)
        h = None
        if headers or not j.ingress:
            h = self.H()
            ffi.memmove(h, phv, hs)
        if j.ingress:
            data = ffi.buffer(j.data, j.len)[:]
            return PacketJob(True, j.port, data, h, m, sm, data[j.off:])
        payload = ffi.buffer(j.data + j.off, j.len - j.off)[:]
        return PacketJob(False, j.port, b"", h, m, sm, payload, j.trunc, j.cut)

    def _finish_pass(self, r: int, data: bytes, off: int, jobs: deque[PacketJob],
                     out: list[OutputPacket]) -> bool:
        """`Switch.run`'s pass the C walk handed back (`r`), its end decided in C and the
        jobs it made taken back onto `jobs`; False: the pass is the Python walk's."""
        kept = self.ffi.from_buffer(data)
        if self._resume_c(r, kept, len(data), off, 0, out, bounded=False):
            return False
        ctx = self._ctx
        jobs.extend(self._export(ctx.q[ctx.qhead + k]) for k in range(ctx.qn))
        self.lib.ssp_ctx_clear(ctx)
        return True

    def _resume(self, sm: Any, plen: int, now: int, payload: bytes) -> None:
        """The RunState of the pass C just ran, as V1Pipeline's steps would have left it."""
        R = self.R
        R.begin(sm, plen, now)
        R.payload = payload
        if self.inst.req:
            self._requests()

    def run(self, job: PacketJob, queue: QueueInfo | None = None
            ) -> tuple[list[OutputPacket], list[PacketJob]]:
        result = super().run(job, queue)
        if self.instance.observers:
            self.instance.drain_observed()
        return result

    def _step(self, job: PacketJob, jobs: deque[PacketJob], out: list[OutputPacket],
              queue: QueueInfo | None) -> None:
        """One pass of `job` in C, its end decided in C when it can be, else in Python."""
        w = self._w
        self._w_scratch = False
        now = self.now_us()
        w.now = now
        w.force_py = bool(self.R.digests)
        if job.ingress:
            data = job.data
            h = self.H()
            if job.sm is not None:
                m, sm, w.fresh = job.meta, job.sm, 0
            else:
                m, sm, w.fresh = self.M(), self.SM(), 1
            w.h, w.m, w.sm, w.port = h, m, sm, job.port
            r = self.lib.ssp_walk_in(self.inst, w, data, len(data))
            if r == W_DROP:
                return
            payload = data[w.off:]
            if r == W_EGRESS:
                jobs.append(PacketJob(False, w.eport, b"", h, m, sm, payload, 0, w.cut))
                return
            if self._finish_pass(r, data, w.off, jobs, out):
                return
            self._resume(sm, len(data), now, payload)
            self._end_ingress(job, h, m, sm, payload, w.rc == 0, jobs)
            return
        sm = job.sm
        w.h, w.m, w.sm = job.hdr, job.meta, sm
        w.eport, w.cut, w.trunc, w.fresh = job.port, job.cut, job.trunc, 0
        if queue is None:
            w.queued = 0
        else:
            w.queued = 1
            w.enq_ts, w.enq_qdepth, w.deq_td, w.deq_qdepth = queue
        payload = job.payload
        r = self.lib.ssp_walk_out(self.inst, w, payload, len(payload))
        if r == W_TX:
            out.append(self._transmitted(payload))
        elif r == W_ERR:
            raise RuntimeError("the C deparser stopped (output buffer full)")
        elif r != W_DROP:
            if self._finish_pass(W_PY_OUT, payload, 0, jobs, out):
                return
            self._resume(sm, int(sm.packet_length), now, payload)
            self._end_egress(job, w.rc == 0, jobs, out)

    # -- the steps (the Python walk's, for what C hands back) ---------------------------------

    def _copy(self, obj: Any) -> Any:
        ffi = self.ffi
        if ffi.typeof(obj) is self._sm_type:
            new = ffi.new("sm_t *")
            new[0] = obj[0]
            return new
        new = ffi.new("char[]", len(obj))
        ffi.memmove(new, obj, len(obj))
        return new

    def _parse(self, data: bytes, hdr: Any, meta: Any, sm: Any) -> bytes:
        offset = self.lib.ssp_parse(self.inst, hdr, meta, sm, data, len(data))
        self.R.payload = data[offset:]
        return self.R.payload

    def _run_ingress(self, hdr: Any, meta: Any, sm: Any) -> bool:
        R = self.R
        rc = self.lib.ssp_ingress(self.inst, hdr, meta, sm, R.plen, R.now, R.payload,
                                  len(R.payload))
        if self.inst.req:
            self._requests()
        return rc == 0

    def _run_egress(self, hdr: Any, meta: Any, sm: Any) -> bool:
        R = self.R
        rc = self.lib.ssp_egress(self.inst, hdr, meta, sm, R.plen, R.now, R.payload,
                                 len(R.payload))
        if self.inst.req:
            self._requests()
        return rc == 0

    def _deparse(self, hdr: Any, meta: Any, payload: bytes) -> bytes:
        n = self.lib.ssp_deparse(self.inst, hdr, meta, payload, len(payload), self._out,
                                 OUT_CAPACITY)
        if n < 0:
            raise RuntimeError(f"the C deparser stopped (status {-n})")
        return bytes(self.ffi.buffer(self._out, n)) + payload

    def _requests(self) -> None:
        """The C pass's end-of-pass requests, as the generated Python sets them in R."""
        inst, R = self.inst, self.R
        req = inst.req
        if req & REQ_CLONE:
            R.clone = ("I2E" if inst.clone_type == 1 else "E2E", int(inst.clone_session),
                       self._field_lists.get(inst.clone_fl))
        if req & REQ_RESUBMIT:
            R.resubmit = self._field_lists.get(inst.resubmit_fl)
        if req & REQ_RECIRC:
            R.recirculate = self._field_lists.get(inst.recirc_fl)
        if req & REQ_TRUNCATE:
            R.truncate = int(inst.truncate)
        if req & REQ_DIGEST:
            R.digests += c_digests(inst, self._sites)


def walk_batch(pipe: Any, packets: Sequence[tuple[int, bytes]],
               call: Callable[..., int]) -> list[list[OutputPacket]]:
    """`pipe.process` of each packet in turn through a generated batch walk: `call(n, blob,
    offs, lens, ports, arena, cap, res, status)` runs ssp_batch / sst_batch on the packets
    left; a packet it stops at is finished by ``pipe._continue`` (a packet larger than the
    arena by ``pipe.process``)."""
    ffi = pipe.ffi
    n = len(packets)
    if not n:
        return []
    datas = [bytes(d) for _, d in packets]
    lens = [len(d) for d in datas]
    blob = b"".join(datas)
    c_offs = ffi.new("uint32_t[]", [0, *accumulate(lens)][:n])
    c_lens = ffi.new("uint32_t[]", lens)
    c_ports = ffi.new("uint16_t[]", [p & 0x1FF for p, _ in packets])
    c_res = ffi.new("uint64_t[]", 3 * n)
    status = ffi.new("int *")
    if pipe._arena is None:
        pipe._arena = ffi.new("uint8_t[]", ARENA_BYTES)
    arena = pipe._arena
    view = ffi.buffer(arena)
    new = tuple.__new__
    results: list[list[OutputPacket]] = []
    i = 0
    while i < n:
        done = call(n - i, blob, c_offs + i, c_lens + i, c_ports + i, arena, ARENA_BYTES,
                    c_res + 3 * i, status)
        if done == 0 and status[0] < 0:  # one packet larger than the arena
            results.append(pipe.process(c_ports[i], datas[i]))
            i += 1
            continue
        stopped = status[0] > 0
        res = ffi.unpack(c_res + 3 * i, 3 * (done - stopped))
        results += [[new(OutputPacket, (port, view[o:o + k]))] if port != _DROPPED else []
                    for port, o, k in zip(res[0::3], res[1::3], res[2::3])]
        i += done
        if stopped:
            results.append(_continued(pipe, status[0], c_ports[i - 1], datas[i - 1]))
        if pipe.instance.observers:
            pipe.instance.drain_observed()
    return results


def _continued(pipe: Any, status: int, port: int, data: bytes) -> list[OutputPacket]:
    """The outputs of the packet a batch or burst walk stopped at (`status`), the Python walk
    finishing it (``pipe._continue``)."""
    out: list[OutputPacket] = []
    try:
        pipe._continue(status, port, data, out)
    except Exception as exc:  # an engine bug must not escape to the caller
        pipe.internal_errors += 1
        pipe._log(f"Internal error while processing the packet ({exc!r}): dropped")
    return out


class _BurstCalls:
    """What `walk_burst` needs of a pipeline's ffi, made once (its calls are per burst)."""

    def __init__(self, ffi: Any) -> None:
        self.u8, self.u16, self.u32, self.u64 = (
            ffi.typeof(f"{t}[]") for t in ("uint8_t", "uint16_t", "uint32_t", "uint64_t"))
        alloc = ffi.new_allocator(should_clear_after_alloc=False)  # C writes what is shown
        self.buffer = lambda size: ffi.buffer(alloc(self.u8, size))
        self.used, self.nrec, self.status = (ffi.new("uint64_t *"), ffi.new("uint64_t *"),
                                             ffi.new("int *"))


def walk_burst(pipe: Any, burst: Burst, call: Callable[..., int]) -> BurstResult:
    """`pipe.process` of each frame of `burst` in turn, as one BurstResult: `call(n, pkts,
    offs, lens, ports, first, out, cap, used, rec, nrec, status)` runs ssp_burst / sst_burst
    on the frames left, writing into the result's buffers in place (no Python object per
    frame); a frame it stops at is finished by ``pipe._continue`` and its outputs appended;
    when the output buffer may not hold the next frame's, it grows."""
    ffi = pipe.ffi
    k = pipe.__dict__.get("_burst_calls")
    if k is None:
        k = pipe._burst_calls = _BurstCalls(ffi)
    n = len(burst)
    sink = BurstSink(memoryview(burst.data).nbytes + BURST_GROWTH * n + BURST_ROOM, n,
                     k.buffer)
    if not n:
        return sink.result()
    from_buffer = ffi.from_buffer
    pkts, offs = from_buffer(k.u8, burst.data), from_buffer(k.u32, burst.offsets)
    lens, ports = from_buffer(k.u32, burst.lengths), from_buffer(k.u16, burst.ports)
    used, nrec, status = k.used, k.nrec, k.status
    i = 0
    while i < n:
        sink.reserve(0, n - i)  # the fast path: at most one record per frame
        out = from_buffer(k.u8, sink.data, require_writable=True)
        rec = from_buffer(k.u64, sink.records, require_writable=True)
        used[0], nrec[0] = sink.used, sink.count
        try:
            done = call(n - i, pkts, offs + i, lens + i, ports + i, i, out, len(sink.data),
                        used, rec, nrec, status)
        finally:  # the record array may be resized again
            ffi.release(rec)
        sink.used, sink.count = int(used[0]), int(nrec[0])
        i += done
        if status[0] < 0:  # the next frame's output may not fit
            sink.reserve(lens[i] + BURST_ROOM, 0)
        elif status[0] > 0:
            sink.add(i - 1, _continued(pipe, status[0], ports[i - 1], burst.frame(i - 1)))
        if pipe.instance.observers:
            pipe.instance.drain_observed()
    return sink.result()


def c_digests(inst: Any, sites: dict[int, DigestSite]) -> list[Digest]:
    """The digests a C pass left in ``inst`` (``R->dig_*``), as the generated Python makes
    them (int<W> fields negative)."""
    return [_digest(sites[inst.dig_site[k]], int(inst.dig_recv[k]), inst.dig_vals[k])
            for k in range(inst.ndig)]


def queued_digests(ffi: Any, ctx: Any, sites: dict[int, DigestSite]) -> list[Digest]:
    """The digests C end-of-pass decisions queued in ``ctx`` (records of site, receiver and
    the value words), as `c_digests` makes them."""
    size = 2 + ctx.dstride
    flat = ffi.unpack(ctx.dq, ctx.ndq * size)
    return [_digest(sites[flat[k]], flat[k + 1], flat[k + 2:k + size])
            for k in range(0, len(flat), size)]


def _digest(site: DigestSite, receiver: int, vals: Any) -> Digest:
    """One digest of `site` to `receiver` from its value words (two 64-bit words a field)."""
    values = []
    for i, (_name, width, signed) in enumerate(site.fields):
        v = int(vals[2 * i]) | (int(vals[2 * i + 1]) << 64)
        if signed and v >> (width - 1):
            v -= 1 << width
        values.append(v)
    return Digest(site.name, receiver, tuple(values), tuple(n for n, _, _ in site.fields))
