"""The v1model packet walk of BMv2 simple_switch: parser → ingress → PRE → egress → deparser.

`V1Pipeline.process` runs one input packet to completion. Packet instances (the original,
clones, multicast replicas, resubmitted and recirculated packets) are jobs in one FIFO, which
gives the output order of a single-threaded simple_switch for one input: an ingress clone
before the original (BMv2 enqueues it first), multicast replicas in PRE order, an egress clone
after the original it was cloned from (it is enqueued while the original is transmitted).

`V1Pipeline.run` runs one job (one pipeline pass) and hands back the jobs it made, so a caller
with egress queues (runtime/device.py) can put the egress jobs through its queues, as
simple_switch's ingress thread, egress buffers and egress threads do.

The end-of-ingress and end-of-egress steps follow simple_switch.cpp: ingress clone → digest →
resubmit → multicast (mcast_grp ≠ 0) → drop (egress_spec == drop port) → unicast; egress starts
with egress_spec = 0 and egress_port set, then egress clone → drop → deparse → recirculate →
transmit. Resubmit/recirculate/clone copies start with zeroed metadata except the preserved
field list, as BMv2's ``reset_metadata`` + ``copy_fields_between_phvs`` do.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from softswitch.engine.externs import Digest
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.engine.support import AssertSignal, ExitSignal, ParserErrorSignal

NORMAL, INGRESS_CLONE, EGRESS_CLONE, COALESCED, RECIRC, REPLICATION, RESUBMIT = range(7)
MAX_JOBS = 256  # bound on instances per input (recirculation, resubmit and mirror loops)


class OutputPacket(NamedTuple):
    """A packet leaving the switch; unpacks as ``(port, data)``."""

    port: int
    data: bytes


class RunState:
    """Per-pass state the generated code reads and writes as the global ``R``."""

    __slots__ = ("clone", "digests", "drop_port", "field_lists", "now", "payload", "plen",
                 "recirculate", "resubmit", "rng", "sm", "truncate")

    def __init__(self, drop_port: int, field_lists: dict[int, Callable[..., None]]) -> None:
        self.drop_port = drop_port
        self.field_lists = field_lists
        self.rng = random.Random(0)
        self.sm: Any = None
        self.plen = 0
        self.now = 0
        self.payload = b""
        self.digests: list[Digest] = []
        self.clone: tuple[str, int, Callable[..., None] | None] | None = None
        self.resubmit: Callable[..., None] | bool | None = False
        self.recirculate: Callable[..., None] | bool | None = False
        self.truncate = 0

    def begin(self, sm: Any, plen: int, now: int) -> None:
        self.sm = sm
        self.plen = plen
        self.now = now
        self.clone = None
        self.resubmit = False
        self.recirculate = False
        self.truncate = 0


class QueueInfo(NamedTuple):
    """Queueing metadata for an egress pass, as simple_switch fills ``queueing_metadata``."""

    enq_timestamp: int  # µs since the switch started
    enq_qdepth: int  # packets in the queue when this one was enqueued
    deq_timedelta: int  # µs spent in the queue
    deq_qdepth: int  # packets left in the queue when this one was dequeued


class PacketJob:
    """One pass of one packet instance: ingress (data + maybe preserved metadata) or egress
    (parsed headers + metadata, waiting for the egress pipeline on `port`)."""

    __slots__ = ("cut", "data", "hdr", "ingress", "meta", "payload", "port", "sm", "trunc")

    def __init__(self, ingress: bool, port: int, data: bytes, hdr: Any = None, meta: Any = None,
                 sm: Any = None, payload: bytes = b"", trunc: int = 0, cut: int = 0) -> None:
        self.cut = cut  # truncate() length requested in ingress (0: none)
        self.ingress = ingress
        self.port = port
        self.data = data
        self.hdr = hdr
        self.meta = meta
        self.sm = sm
        self.payload = payload
        self.trunc = trunc

    @property
    def is_ingress(self) -> bool:
        return self.ingress

    @property
    def priority(self) -> int:
        """standard_metadata.priority as ingress left it (0 for an ingress job)."""
        sm = self.sm
        return int(getattr(sm, "priority", 0)) if sm is not None and not self.ingress else 0

    @property
    def length(self) -> int:
        """Bytes: the input for an ingress job, packet_length for an egress job."""
        if self.ingress:
            return len(self.data)
        return int(getattr(self.sm, "packet_length", 0))

    def __repr__(self) -> str:
        kind = "ingress" if self.ingress else "egress"
        return f"PacketJob({kind}, port={self.port}, length={self.length})"


class PacketWalk:
    """What the v1model and TNA walks share: the job loop of one input (`process`), one pass
    (`run`), the µs clock and the guard that keeps an engine bug from reaching the caller.
    A subclass sets `trace` and implements `_step` (one pass of one job)."""

    trace: Callable[[str], None] | None

    def _start_walk(self) -> None:
        self.t0 = time.monotonic()
        # µs since the switch started; the Device replaces it with its own clock so queue
        # timestamps and the global timestamps agree
        self.now_us: Callable[[], int] = self._monotonic_us
        # Packets dropped because the engine itself failed (a bug, never a property of the
        # packet); tests assert it stays 0.
        self.internal_errors = 0

    def _monotonic_us(self) -> int:
        return int((time.monotonic() - self.t0) * 1e6)

    def _log(self, text: str) -> None:
        if self.trace is not None:
            self.trace(text)

    def new_job(self, port: int, data: bytes) -> PacketJob:
        return PacketJob(True, port & 0x1FF, bytes(data))

    def process(self, port: int, data: bytes) -> list[OutputPacket]:
        out: list[OutputPacket] = []
        self._run_jobs(deque([self.new_job(port, data)]), out)
        return out

    def _run_jobs(self, jobs: deque[PacketJob], out: list[OutputPacket], count: int = 0) -> None:
        """Run `jobs` and the jobs they make, up to MAX_JOBS passes per input packet (`count`:
        the passes it took already)."""
        while jobs:
            job = jobs.popleft()
            count += 1
            if count > MAX_JOBS:
                self._log(f"Too many packet instances ({MAX_JOBS}): dropping the rest")
                break
            self._guarded(job, jobs, out, None)

    def process_batch(self, packets: Sequence[tuple[int, bytes]]) -> list[list[OutputPacket]]:
        """`process` of each (port, data) in turn: each one's outputs (the C engine runs a
        batch in one native call)."""
        return [self.process(port, data) for port, data in packets]

    def run(self, job: PacketJob, queue: QueueInfo | None = None
            ) -> tuple[list[OutputPacket], list[PacketJob]]:
        """One pass: an ingress job gives egress jobs (and resubmitted ingress jobs); an egress
        job gives transmitted packets, recirculated ingress jobs and egress clones."""
        out: list[OutputPacket] = []
        jobs: deque[PacketJob] = deque()
        self._guarded(job, jobs, out, queue)
        return out, list(jobs)

    def _guarded(self, job: PacketJob, jobs: deque[PacketJob], out: list[OutputPacket],
                 queue: QueueInfo | None) -> None:
        try:
            self._step(job, jobs, out, queue)
        except Exception as exc:  # an engine bug must not escape to the caller
            self.internal_errors += 1
            self._log(f"Internal error while processing the packet ({exc!r}): dropped")

    def _step(self, job: PacketJob, jobs: deque[PacketJob], out: list[OutputPacket],
              queue: QueueInfo | None) -> None:
        raise NotImplementedError


class V1Pipeline(PacketWalk):
    """Runs packets through the compiled blocks of one program."""

    def __init__(self, ns: dict[str, Any], fns: dict[str, str], header_cls: str, meta_cls: str,
                 sm_cls: str, pre: PacketReplicationEngine, state: RunState,
                 digests: list[Digest], trace: Callable[[str], None] | None) -> None:
        self.parser = ns[fns["parser"]]
        self.verify = ns[fns["verify_checksum"]]
        self.ingress = ns[fns["ingress"]]
        self.egress = ns[fns["egress"]]
        self.compute = ns[fns["compute_checksum"]]
        self.deparser = ns[fns["deparser"]]
        self.H = ns[header_cls]
        self.M = ns[meta_cls]
        self.SM = ns[sm_cls]
        self.pre = pre
        self.R = state
        self.digests = digests
        self.trace = trace
        self._start_walk()

    def _step(self, job: PacketJob, jobs: deque[PacketJob], out: list[OutputPacket],
              queue: QueueInfo | None) -> None:
        if job.ingress:
            self._ingress(job, jobs)
        else:
            self._egress(job, jobs, out, queue)

    def _parse(self, data: bytes, hdr: Any, meta: Any, sm: Any) -> bytes:
        """Run the parser; returns the payload (the unparsed rest)."""
        R = self.R
        try:
            pos = self.parser(data, len(data) * 8, 0, hdr, meta, sm)
            if isinstance(pos, tuple):
                pos = pos[0]
        except ParserErrorSignal as e:
            pos = e.pos
            if e.code >= 0:
                sm.parser_error = e.code
            if self.trace is not None:
                self._log(f"Parser error {e.code} at bit {pos}")
        except (ExitSignal, AssertSignal) as e:
            pos = 0
            if self.trace is not None:
                self._log(f"Parser stopped: {type(e).__name__}")
        R.payload = data[(pos + 7) >> 3:]
        if self.trace is not None:
            self._log(f"Bytes parsed: {(pos + 7) >> 3}")
        return R.payload

    def _ingress(self, job: PacketJob, jobs: deque[PacketJob]) -> None:
        R = self.R
        data = job.data
        hdr = self.H()
        if job.sm is not None:
            # resubmit/recirculate: metadata arrives zeroed plus the preserved fields
            meta, sm = job.meta, job.sm
        else:
            meta, sm = self.M(), self.SM()
            sm.ingress_port = job.port
            sm.packet_length = len(data)
        now = self.now_us()
        sm.ingress_global_timestamp = now
        R.begin(sm, len(data), now)
        if self.trace is not None:
            self._log(f"Processing packet received on port {job.port}")
        if self.trace is not None:
            self._log("Parser 'parser': start")
        payload = self._parse(data, hdr, meta, sm)
        if self.trace is not None:
            self._log("Parser 'parser': end")
        self._end_ingress(job, hdr, meta, sm, payload, self._run_ingress(hdr, meta, sm), jobs)

    def _end_ingress(self, job: PacketJob, hdr: Any, meta: Any, sm: Any, payload: bytes,
                     ok: bool, jobs: deque[PacketJob]) -> None:
        """The end-of-ingress decisions, once the ingress pass ran (`ok`: no assert failed).
        The C walk (native/cgen_walk.py) takes their common path itself and hands every other
        case here, with the pass's state."""
        if not ok:
            return
        R = self.R
        data = job.data
        # ingress clone
        if R.clone is not None:
            ctype, session, fl = R.clone
            R.clone = None
            if ctype == "I2E":
                self._clone_from_ingress(data, session, fl, hdr, meta, sm, jobs)
        if R.digests:
            self.digests.extend(R.digests)
            R.digests.clear()
        if R.resubmit is not False:
            fl = R.resubmit
            nmeta, nsm = self.M(), self.SM()
            if callable(fl):
                fl(hdr, meta, sm, None, nmeta, nsm)
            nsm.instance_type = RESUBMIT
            nsm.packet_length = len(data)
            if self.trace is not None:
                self._log("Resubmitting packet")
            jobs.append(PacketJob(True, job.port, data, None, nmeta, nsm))
            return
        if sm.mcast_grp != 0:
            if self.trace is not None:
                self._log(f"Multicast requested for packet (group {sm.mcast_grp})")
            sm.instance_type = REPLICATION
            self._multicast(sm.mcast_grp, hdr, meta, sm, payload, R.truncate, jobs)
            return
        if sm.egress_spec == R.drop_port:
            if self.trace is not None:
                self._log("Dropping packet at the end of ingress")
            return
        if self.trace is not None:
            self._log(f"Egress port is {sm.egress_spec}")
        sm.instance_type = NORMAL
        jobs.append(PacketJob(False, sm.egress_spec, b"", hdr, meta, sm, payload, 0, R.truncate))

    def _multicast(self, mgid: int, hdr: Any, meta: Any, sm: Any, payload: bytes, cut: int,
                   jobs: deque[PacketJob]) -> None:
        copies = self.pre.replicate(mgid)
        if self.trace is not None:
            for port, _rid in copies:
                self._log(f"Replicating packet on port {port}")
        self._fan_out(copies, hdr, meta, sm, payload, 0, jobs, cut)

    def _fan_out(self, copies: Sequence[tuple[int, int]], hdr: Any, meta: Any, sm: Any,
                 payload: bytes, trunc: int, jobs: deque[PacketJob], cut: int = 0) -> None:
        """One egress job per (port, rid) copy, each with its own headers and metadata."""
        copy = self._copy
        for port, rid in copies:
            nsm = copy(sm)
            nsm.egress_rid = rid
            jobs.append(PacketJob(False, port, b"", copy(hdr), copy(meta), nsm, payload,
                                  trunc, cut))

    # -- the steps an engine provides (the C engine overrides them, native/pipeline.py) ------

    @staticmethod
    def _copy(obj: Any) -> Any:
        """A private copy of headers, metadata or standard_metadata."""
        return obj._copy()

    def _run_ingress(self, hdr: Any, meta: Any, sm: Any) -> bool:
        """Verify checksum and ingress; False when an assert/assume failed (drop)."""
        try:
            self.verify(hdr, meta)
            self.ingress(hdr, meta, sm)
        except AssertSignal as e:
            if self.trace is not None:
                self._log(f"{e.args[0] if e.args else 'assert'} failed: dropping the packet "
                          "(BMv2 would abort the switch)")
            return False
        return True

    def _run_egress(self, hdr: Any, meta: Any, sm: Any) -> bool:
        """The egress control; False when an assert/assume failed (drop)."""
        try:
            self.egress(hdr, meta, sm)
        except AssertSignal as e:
            if self.trace is not None:
                self._log(f"{e.args[0] if e.args else 'assert'} failed: dropping the packet")
            return False
        return True

    def _deparse(self, hdr: Any, meta: Any, payload: bytes) -> bytes:
        """Compute checksum, then the deparser's bytes followed by `payload`."""
        self.compute(hdr, meta)
        chunks: list[bytes] = []
        self.deparser(chunks.append, hdr)
        return b"".join(chunks) + payload

    def _clone_targets(self, session: int) -> tuple[int, Sequence[tuple[int, int]]] | None:
        found = self.pre.clone_targets(session)
        if found is None:
            if self.trace is not None:
                self._log(f"Clone session {session} is not configured: no clone")
            return None
        cfg, copies = found
        return cfg.packet_length_bytes, copies

    def _clone_from_ingress(self, data: bytes, session: int, fl: Any, hdr: Any, meta: Any,
                            sm: Any, jobs: deque[PacketJob]) -> None:
        targets = self._clone_targets(session)
        if targets is None:
            return
        trunc, copies = targets
        if self.trace is not None:
            self._log("Cloning packet at ingress")
        R = self.R
        saved_sm, saved_payload = R.sm, R.payload
        chdr, cmeta, csm = self.H(), self.M(), self.SM()
        csm.ingress_port = sm.ingress_port  # BMv2 keeps it for the re-parse
        R.sm = csm
        cpayload = self._parse(data, chdr, cmeta, csm)
        R.sm, R.payload = saved_sm, saved_payload
        cmeta, csm = self.M(), self.SM()  # BMv2 resets metadata after the re-parse
        if callable(fl):
            fl(hdr, meta, sm, chdr, cmeta, csm)
        csm.instance_type = INGRESS_CLONE
        csm.packet_length = len(data)
        self._fan_out(copies, chdr, cmeta, csm, cpayload, trunc, jobs)

    def _egress(self, job: PacketJob, jobs: deque[PacketJob], out: list[OutputPacket],
                queue: QueueInfo | None = None) -> None:
        R = self.R
        hdr, meta, sm = job.hdr, job.meta, job.sm
        sm.egress_port = job.port
        # BMv2 starts egress with egress_spec = drop_port + 1, stored in the 9-bit field
        sm.egress_spec = (R.drop_port + 1) & 0x1FF
        now = self.now_us()
        sm.egress_global_timestamp = now
        if queue is None:
            sm.enq_timestamp = now
            sm.deq_timedelta = 0
        else:
            # the fields are 32 and 19 bits wide in v1model.p4
            sm.enq_timestamp = queue.enq_timestamp & 0xFFFFFFFF
            sm.enq_qdepth = queue.enq_qdepth & 0x7FFFF
            sm.deq_timedelta = queue.deq_timedelta & 0xFFFFFFFF
            sm.deq_qdepth = queue.deq_qdepth & 0x7FFFF
        R.begin(sm, sm.packet_length, now)
        R.payload = job.payload
        if self.trace is not None:
            self._log(f"Egress packet on port {job.port} (instance type {sm.instance_type})")
        self._end_egress(job, self._run_egress(hdr, meta, sm), jobs, out)

    def _end_egress(self, job: PacketJob, ok: bool, jobs: deque[PacketJob],
                    out: list[OutputPacket]) -> None:
        """The end-of-egress decisions, once the egress pass ran on the job's headers and
        metadata (`ok`: no assert failed); as `_end_ingress`, the C walk hands its uncommon
        cases here."""
        if not ok:
            return
        R = self.R
        hdr, meta, sm = job.hdr, job.meta, job.sm
        if R.clone is not None:
            ctype, session, fl = R.clone
            R.clone = None
            if ctype == "E2E":
                targets = self._clone_targets(session)
                if targets is not None:
                    trunc, copies = targets
                    if self.trace is not None:
                        self._log("Cloning packet at egress")
                    cmeta, csm = self.M(), self.SM()
                    if callable(fl):
                        fl(hdr, meta, sm, hdr, cmeta, csm)
                    csm.instance_type = EGRESS_CLONE
                    csm.packet_length = sm.packet_length
                    self._fan_out(copies, hdr, cmeta, csm, job.payload, trunc, jobs)
        if R.digests:  # v1model allows digest() in ingress only; keep any anyway
            self.digests.extend(R.digests)
            R.digests.clear()
        if sm.egress_spec == R.drop_port:
            if self.trace is not None:
                self._log("Dropping packet at the end of egress")
            return
        truncate = R.truncate or job.cut
        recirculate = R.recirculate
        data = self._deparse(hdr, meta, job.payload)
        if recirculate is not False:
            nmeta, nsm = self.M(), self.SM()
            if callable(recirculate):
                recirculate(hdr, meta, sm, None, nmeta, nsm)
            nsm.instance_type = RECIRC
            nsm.packet_length = len(data)
            if self.trace is not None:
                self._log("Recirculating packet")
            jobs.append(PacketJob(True, sm.ingress_port, data, None, nmeta, nsm))
            return
        if truncate:
            data = data[:truncate]
        if job.trunc:
            data = data[:job.trunc]
        if self.trace is not None:
            self._log(f"Transmitting packet of size {len(data)} out of port {job.port}")
        out.append(OutputPacket(job.port, data))
