"""The TNA walk over the C engine.

`NativeTnaPipeline` is engine/tna_pipeline.py's `TnaPipeline` with the common path in C
(native/cgen_tna_walk.py): `process` walks a plain unicast packet from the ingress parser to
the egress deparser in one C call, `process_batch` many packets in one call, and `run` (the
Device's egress-queue path) one pass per call (an egress job is the ingress deparser's bytes,
the queue's fields set in C). When a pass asks for what only the Python walk does (mirror,
resubmit, digest, multicast, copy to CPU, bypass), the C call returns after that gress's
deparser and TnaPipeline's `_traffic_manager` / `_end_egress` continue with the same pass
objects, packet and requests (`_resume_in` / `_resume_out`), so no pass runs twice.

Without the walk (a parser not extracting its intrinsic header, a packet too large for the
walk's buffers) each gress is three C calls from TnaPipeline's own walk: the pass objects are C
structs made through cffi, so TnaPipeline's code — the intrinsic header filled when the parser
does not extract it, parser_err and the drop on a parser error, the traffic manager, mirror and
resubmit — reads and writes their fields as it does the Python engine's objects. Per gress:
`sst_parse` (its error code mapped to the PARSER_ERROR bit as Python maps the
ParserErrorSignal), `sst_control`, `sst_deparse`; the deparser's Mirror, Resubmit and Digest
requests become TnaRunState's `mirror`, `resub` and `dq`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from softswitch.engine.burst import Burst, BurstResult, burst_by_packet
from softswitch.engine.codegen_tna import TNA_ROLES, TnaGeneratedProgram
from softswitch.engine.externs import Digest
from softswitch.engine.pipeline import OutputPacket, PacketJob, PacketWalk, QueueInfo
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.engine.tna_pipeline import (
    BYPASS,
    FCS_BYTES,
    NO_MATCH,
    PARSER_ERROR_BITS,
    PORT_METADATA_BYTES,
    TnaJob,
    TnaPipeline,
    TnaRunState,
    _packer,
)
from softswitch.ir.checked import BlockInstance
from softswitch.native.cgen_tna import (
    OBJECT_SLOTS,
    OBJECTS,
    REQ_MIRROR,
    REQ_RESUBMIT_TNA,
    TnaNativeProgram,
)
from softswitch.native.cgen_tna_walk import W_BIG
from softswitch.native.cgen_walk import W_DROP, W_EGRESS, W_PY_IN, W_PY_OUT, W_TX
from softswitch.native.pipeline import (
    OUT_CAPACITY,
    REQ_DIGEST,
    c_digests,
    walk_batch,
    walk_burst,
)
from softswitch.native.program import NativeInstance

_GRESS = {"ingress": 0, "egress": 1}
WALK_BUFFER = 1 << 18  # bytes of each of the walk's three buffers (cgen_tna_walk.py)
_ZERO_PM = bytes(PORT_METADATA_BYTES)


class _PortMetadata(dict[int, bytes]):
    """TnaPipeline.port_metadata whose writes reach the C walk's per-port table too."""

    def __init__(self, ffi: Any, w: Any) -> None:
        super().__init__()
        self._ffi, self._w = ffi, w

    def __setitem__(self, port: int, data: bytes) -> None:
        super().__setitem__(port, data)
        pm = bytes(data[:PORT_METADATA_BYTES]).ljust(PORT_METADATA_BYTES, b"\0")
        self._ffi.memmove(self._w.pmt + PORT_METADATA_BYTES * (port & 0x1FF), pm,
                          PORT_METADATA_BYTES)


class NativeTnaPipeline(TnaPipeline):
    """TnaPipeline running the generated C of one program instance."""

    def __init__(self, instance: NativeInstance, pygen: TnaGeneratedProgram,
                 blocks: dict[str, BlockInstance], errors: Sequence[str], pre: PacketReplicationEngine, state: TnaRunState,
                 digests: list[Digest]) -> None:
        """`pygen`: the Python generator's description of the program (the intrinsic headers'
        layouts, which gress reads parser_err)."""
        gen = instance.program.gen
        assert isinstance(gen, TnaNativeProgram)
        ffi = instance.ffi
        self.instance = instance
        self.ffi, self.lib, self.inst = ffi, instance.lib, instance.inst
        self.cls = {name: self._factory(ctype) for name, ctype in gen.classes.items()}
        for role, which in (("ingress_hdr", 0), ("ingress_md", 1), ("egress_hdr", 2),
                            ("egress_md", 3)):
            self.cls[role] = self._sized(instance.lib.ssp_sizeof(which))
        self.keys = {role: tuple(blocks[role].arch_params) for role in TNA_ROLES}
        self.pack_ig = _packer(pygen.layouts["ingress_intrinsic_metadata_t"])
        self.pack_eg = _packer(pygen.layouts["egress_intrinsic_metadata_t"])
        self.widths = {name: w for layout in pygen.layouts.values() for name, w in layout}
        self.drop_on_error = {g: not r for g, r in pygen.reads_parser_err.items()}
        self.err_bits = [PARSER_ERROR_BITS.get(name, NO_MATCH) for name in errors]
        self.parse_state = []
        self.pre = pre
        self.R = state
        self.digests = digests
        self.trace = None
        self._sites = {s.site: s for s in gen.digests}
        self._out = ffi.new("uint8_t[]", OUT_CAPACITY)
        self._outbuf = ffi.buffer(self._out)
        self._start_walk()
        self.cpu_port: int | None = None
        self.queue_count = 1
        self.port_metadata: dict[int, bytes] = {}
        self._arena: Any = None  # process_batch's output arena
        self._walk = gen.walk
        if self._walk:
            self._walk_setup(gen.classes)

    def _walk_setup(self, classes: dict[str, str]) -> None:
        """The C walk's state: TW_t, its three buffers and the twelve pass objects (the
        continuations read the deparser and TM objects through typed pointers)."""
        ffi, lib = self.ffi, self.lib
        self._w = w = ffi.new("TW_t *")
        self._bufs = [ffi.new("uint8_t[]", WALK_BUFFER) for _ in range(3)]
        w.a, w.b, w.c = self._bufs
        w.cap = WALK_BUFFER
        self._bview, self._cview = ffi.buffer(self._bufs[1]), ffi.buffer(self._bufs[2])
        self._objs = [ffi.new("char[]", max(1, lib.sst_objsize(k))) for k in range(12)]
        for k, o in enumerate(self._objs):
            w.o[k] = o
        self._egp = len(self.pack_eg({}))  # where the walk's egress packet starts in b
        self._ig_dprsr = ffi.cast(f"{classes['ingress_intrinsic_metadata_for_deparser_t']} *",
                                  self._objs[4])
        self._ig_tm = ffi.cast(f"{classes['ingress_intrinsic_metadata_for_tm_t']} *",
                               self._objs[5])
        self._eg_dprsr = ffi.cast(f"{classes['egress_intrinsic_metadata_for_deparser_t']} *",
                                  self._objs[10])
        self.port_metadata = _PortMetadata(ffi, w)

    def _factory(self, ctype: str) -> Callable[[], Any]:
        ffi = self.ffi
        ptr = f"{ctype} *"
        return lambda: ffi.new(ptr)

    def _sized(self, size: int) -> Callable[[], Any]:
        ffi = self.ffi
        return lambda: ffi.new("char[]", size)

    # -- the blocks in C ----------------------------------------------------------------------

    def _objects(self, objs: dict[str, Any]) -> Any:
        """The pass objects as sst_*'s ``void **o`` (made once per pass)."""
        o = objs.get("_o")
        if o is None:
            ptrs = [self.ffi.NULL] * OBJECTS
            for key, slot in OBJECT_SLOTS.items():
                if key in objs:
                    ptrs[slot] = objs[key]
            o = objs["_o"] = self.ffi.new("void *[]", ptrs)
        return o

    def _parse(self, role: str, buf: bytes, objs: dict[str, Any]) -> tuple[int, int]:
        gress = 0 if role == "ingress_parser" else 1
        R, inst = self.R, self.inst
        rc = self.lib.sst_parse(inst, gress, self._objects(objs), buf, len(buf), R.plen, R.now)
        if rc < 0:
            raise RuntimeError(f"the C parser stopped (status {-rc})")
        if rc == 1:
            code = int(inst.perr)
            bits = self.err_bits[code] if 0 <= code < len(self.err_bits) else NO_MATCH
            return int(inst.ppos), bits
        return int(inst.ppos), 0

    def _call(self, role: str, objs: dict[str, Any]) -> None:
        rc = self.lib.sst_control(self.inst, _GRESS[role], self._objects(objs))
        if rc:
            raise RuntimeError(f"the C {role} control stopped (status {rc})")

    def _deparse(self, gress: str, objs: dict[str, Any]) -> bytes:
        n = self.lib.sst_deparse(self.inst, _GRESS[gress], self._objects(objs), self._out,
                                 OUT_CAPACITY)
        if n < 0:
            raise RuntimeError(f"the C deparser stopped (status {-n})")
        if self.inst.req:
            self._requests()
        return bytes(self._outbuf[0:n])

    def _requests(self) -> None:
        """The deparser's Mirror, Resubmit and Digest requests, as the generated Python sets
        them in R."""
        inst, R = self.inst, self.R
        req = inst.req
        ffi = self.ffi
        if req & REQ_MIRROR:
            R.mirror = (int(inst.mir_sid), bytes(ffi.buffer(inst.mir, inst.mir_len)))
        if req & REQ_RESUBMIT_TNA:
            R.resub = bytes(ffi.buffer(inst.res, inst.res_len))
        if req & REQ_DIGEST:
            R.dq += c_digests(inst, self._sites)
        inst.req = 0
        inst.ndig = 0

    # -- the walk in C ---------------------------------------------------------------------------

    def process(self, port: int, data: bytes) -> list[OutputPacket]:
        if not self._walk:
            out = super().process(port, data)
        else:
            data = bytes(data)
            out = []
            try:
                w = self._w
                w.port = port = port & 0x1FF
                w.now = self.now_us()
                r = self.lib.sst_walk(self.inst, w, data, len(data))
                if r == W_TX:
                    out.append(OutputPacket(w.eport, self._cview[0:w.tlen]))
                elif r != W_DROP:
                    self._continue(r, port, data, out)
            except Exception as exc:  # an engine bug must not escape to the caller
                self.internal_errors += 1
                self._log(f"Internal error while processing the packet ({exc!r}): dropped")
        if self.instance.observers:
            self.instance.drain_observed()
        return out

    def process_batch(self, packets: Sequence[tuple[int, bytes]]) -> list[list[OutputPacket]]:
        """`process` of each packet in turn, the common path in one C call for the batch."""
        if not self._walk:
            return super().process_batch(packets)

        def call(*args: Any) -> int:
            self._w.now = self.now_us()
            return int(self.lib.sst_batch(self.inst, self._w, *args))
        return walk_batch(self, packets, call)

    def process_burst(self, burst: Burst) -> BurstResult:
        """`process` of each frame of `burst` in turn, in one C call while no frame needs the
        Python walk, written straight into the result's buffers."""
        if not self._walk:
            return burst_by_packet(self.process, burst)

        def call(*args: Any) -> int:
            self._w.now = self.now_us()
            return int(self.lib.sst_burst(self.inst, self._w, *args))
        return walk_burst(self, burst, call)

    def _continue(self, r: int, port: int, data: bytes, out: list[OutputPacket]) -> None:
        """The Python walk from where `sst_walk` handed the packet back (`r`), then the jobs
        it made, each pass through `_step`."""
        if r == W_BIG:  # nothing ran: the walk pass by pass (three C calls per gress)
            out += PacketWalk.process(self, port, data)
            return
        w = self._w
        jobs: deque[PacketJob] = deque()
        if r == W_PY_IN:
            self._resume_in(TnaJob(True, port, data), jobs)
            count = 1
        elif r == W_PY_OUT:
            self._resume_out(w.eport, w.blen, jobs, out)
            count = 2
        else:
            raise RuntimeError(f"the C walk stopped (status {r}, {w.rc})")
        self._run_jobs(jobs, out, count)

    def _resume_in(self, job: TnaJob, jobs: deque[PacketJob]) -> None:
        """TnaPipeline's traffic manager for the ingress pass C just ran on `job`."""
        w = self._w
        self.R.start(len(job.data) + FCS_BYTES, int(w.now))
        if self.inst.req:
            self._requests()
        egp = self._egp
        deparsed = self._bview[egp:egp + w.blen]
        self._traffic_manager(job, self._ig_dprsr, self._ig_tm, deparsed, jobs)

    def _resume_out(self, port: int, length: int, jobs: deque[PacketJob],
                    out: list[OutputPacket]) -> None:
        """TnaPipeline's end of the egress pass C just ran (on `port`, its packet `length`
        bytes before the egress parser)."""
        w = self._w
        self.R.start(length + FCS_BYTES, int(w.now))
        if self.inst.req:
            self._requests()
        data = self._cview[0:w.tlen]
        self._end_egress(TnaJob(False, port, b""), self._eg_dprsr, data, jobs, out)

    def _step(self, job: PacketJob, jobs: deque[PacketJob], out: list[OutputPacket],
              queue: QueueInfo | None) -> None:
        """One pass of `job` in C, its end decided in C when it can be, else in Python."""
        assert isinstance(job, TnaJob)
        if not self._walk or (not job.ingress and job.kind == BYPASS):
            super()._step(job, jobs, out, queue)
            return
        w, lib = self._w, self.lib
        w.now = now = self.now_us()
        data = job.data
        if job.ingress:
            w.port, w.resubmitted = job.port, job.resubmitted
            pm = job.port_md if job.port_md is not None else \
                self.port_metadata.get(job.port, _ZERO_PM)
            self.ffi.memmove(w.pm, pm, PORT_METADATA_BYTES)
            r = lib.sst_walk_in(self.inst, w, data, len(data))
            if r == W_EGRESS:
                egp = self._egp
                jobs.append(TnaJob(False, w.eport, self._bview[egp:egp + w.blen], qid=w.qid,
                                   qmax=self.queue_count, kind=w.kind,
                                   pkt_length=w.pkt_length, cos=w.cos))
            elif r == W_PY_IN:
                self._resume_in(job, jobs)
            elif r == W_BIG:
                super()._step(job, jobs, out, queue)
            elif r != W_DROP:
                raise RuntimeError(f"the C walk stopped (status {r}, {w.rc})")
            return
        w.eport, w.qid, w.cos, w.rid, w.rid_first, w.pkt_length = \
            job.port, job.qid, job.cos, job.rid, job.rid_first, job.pkt_length
        w.enq_cells, w.deq_cells = job.enq_cells, job.deq_cells
        if queue is None:
            w.enq_us, w.delta_us = now, 0
        else:
            w.enq_us, w.delta_us = queue.enq_timestamp, queue.deq_timedelta
        r = lib.sst_walk_out(self.inst, w, data, len(data))
        if r == W_TX:
            out.append(OutputPacket(job.port, self._cview[0:w.tlen]))
        elif r == W_PY_OUT:
            self._resume_out(job.port, len(data), jobs, out)
        elif r == W_BIG:
            super()._step(job, jobs, out, queue)
        elif r != W_DROP:
            raise RuntimeError(f"the C walk stopped (status {r}, {w.rc})")

    # -- observed registers -------------------------------------------------------------------

    def run(self, job: PacketJob, queue: QueueInfo | None = None
            ) -> tuple[list[OutputPacket], list[PacketJob]]:
        result = super().run(job, queue)
        if self.instance.observers:
            self.instance.drain_observed()
        return result
