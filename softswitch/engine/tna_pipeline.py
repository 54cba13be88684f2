"""The TNA packet walk of Tofino 1: ingress parser → ingress → ingress deparser → traffic
manager (PRE, mirror, resubmit, queues) → egress parser → egress → egress deparser.

Same interface as engine/pipeline.py's V1Pipeline (`process`, `run`, jobs with `priority` and
`length`), so runtime/device.py's queues and the P4Runtime server run TNA programs unchanged.
What each step does, and where Tofino's behaviour was decided from public facts, is in
DESIGN.md ("The TNA engine"); in short:

- the ingress parser sees ingress_intrinsic_metadata_t (8 bytes) and then 8 bytes of port
  metadata (the per-port value the control plane set, zeros by default, or the resubmit header
  of a resubmitted packet) before the packet; the egress parser sees egress_intrinsic_metadata_t
  (27 bytes, filled from the queue) and then what the ingress deparser emitted, or a mirrored
  copy (the mirror header and the packet);
- a parser error (or `reject`) sets its PARSER_ERROR_* bit in parser_err and stops the parse;
  the packet is dropped unless the program reads that gress's parser_err;
- the ingress deparser's Mirror/Resubmit/Digest act only when mirror_type / resubmit_type /
  digest_type is non-zero; drop_ctl bit 0 drops the normal copies, bit 1 the copy to the CPU,
  bit 2 the mirrored copy;
- the traffic manager makes the unicast copy (if ucast_egress_port was written and is not the
  drop port), the multicast copies of mcast_grp_a and mcast_grp_b (egress_rid = the node's
  rid), the copy to the CPU port (copy_to_cpu), each in queue `qid`; bypass_egress sends
  what the ingress deparser emitted straight out;
- a mirrored copy is the mirror header followed by the packet as it arrived (ingress mirror)
  or as the egress deparser emitted it (egress mirror), truncated to the session's
  packet_length_bytes (the mirror header counts), queued in the session's class_of_service;
- byte lengths (counters, meters, pkt_length) include the 4-byte Ethernet FCS, as Tofino's
  MAC counts it; egress counts what the ingress deparser emitted (bridged metadata too).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from softswitch.engine.codegen_tna import TNA_ROLES, TnaGeneratedProgram
from softswitch.engine.externs import Digest
from softswitch.engine.pipeline import (
    OutputPacket,
    PacketJob,
    PacketWalk,
    QueueInfo,
    RunState,
)
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.engine.support import ParserErrorSignal
from softswitch.ir.checked import BlockInstance

FCS_BYTES = 4  # Tofino's lengths count the Ethernet FCS the MAC checks and adds
CELL_BYTES = 80  # Tofino 1 buffer cell: queue depths are in cells
PORT_METADATA_BYTES = 8
NORMAL, MIRRORED, BYPASS = range(3)

# P4 error → ingress/egress_intrinsic_metadata_from_parser_t.parser_err bit (tna.p4's
# PARSER_ERROR_*); anything else (`reject`, verify(false, e)) counts as no match
PARSER_ERROR_BITS = {
    "NoMatch": 0x0001,
    "PacketTooShort": 0x0002,
    "HeaderTooShort": 0x0002,
    "ParserTimeout": 0x0010,
    "ParserInvalidArgument": 0x0020,
    "StackOutOfBounds": 0x0040,
}
NO_MATCH = 0x0001


class TnaRunState(RunState):
    """RunState plus what the TNA externs leave for the pipeline: the entry a table hit
    (direct resources), the Mirror/Resubmit requests and the packed digests of a deparser."""

    __slots__ = ("dq", "hit", "mirror", "resub")

    def __init__(self, drop_port: int) -> None:
        super().__init__(drop_port, {})
        self.dq: list[Digest] = []
        self.hit: Any = None
        self.mirror: tuple[int, bytes] | None = None
        self.resub: bytes | None = None

    def start(self, plen: int, now: int) -> None:
        self.plen = plen
        self.now = now
        self.hit = None
        self.mirror = None
        self.resub = None
        if self.dq:
            self.dq = []


class TnaJob(PacketJob):
    """One pass of a TNA packet instance. Ingress: `data` is the packet (`port_md` the port
    metadata or resubmit header, `resubmitted`). Egress: `data` is what the egress parser sees
    after the intrinsic header, `qid` the queue, `rid`/`rid_first` the replication id,
    `kind` NORMAL / MIRRORED / BYPASS, `pkt_length` eg_intr_md.pkt_length; the egress queues
    fill `enq_cells`/`deq_cells` (cells queued when it arrived / when it left)."""

    __slots__ = (
        "cells",
        "cos",
        "deq_cells",
        "enq_cells",
        "kind",
        "pkt_length",
        "port_md",
        "qid",
        "qmax",
        "resubmitted",
        "rid",
        "rid_first",
    )

    def __init__(
        self,
        ingress: bool,
        port: int,
        data: bytes,
        *,
        qid: int = 0,
        qmax: int = 1,
        rid: int = 0,
        rid_first: int = 0,
        kind: int = NORMAL,
        pkt_length: int = 0,
        cos: int = 0,
        port_md: bytes | None = None,
        resubmitted: bool = False,
    ) -> None:
        super().__init__(ingress, port, data)
        self.qid = qid
        self.qmax = qmax
        self.rid = rid
        self.rid_first = rid_first
        self.kind = kind
        self.pkt_length = pkt_length
        self.cos = cos
        self.port_md = port_md
        self.resubmitted = resubmitted
        self.cells = (len(data) + FCS_BYTES + CELL_BYTES - 1) // CELL_BYTES
        self.enq_cells = 0
        self.deq_cells = 0

    @property
    def priority(self) -> int:
        """The egress queue: `qid`, a qid past the device's last queue going to its last one
        (Tofino maps every qid of a port to one of its queues)."""
        if self.ingress:
            return 0
        q = self.qid
        return q if q < self.qmax else self.qmax - 1

    @property
    def length(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        kind = "ingress" if self.ingress else ("egress", "mirror", "bypass")[self.kind]
        return f"TnaJob({kind}, port={self.port}, length={len(self.data)}, qid={self.qid})"


def _packer(layout: Sequence[tuple[str, int]]) -> Callable[[dict[str, int]], bytes]:
    total = sum(w for _, w in layout)

    def pack(values: dict[str, int]) -> bytes:
        acc = 0
        for name, width in layout:
            acc = (acc << width) | (values.get(name, 0) & ((1 << width) - 1))
        return acc.to_bytes(total // 8, "big")

    return pack


class TnaPipeline(PacketWalk):
    """Runs packets through the compiled blocks of one TNA program."""

    def __init__(
        self,
        ns: dict[str, Any],
        gen: TnaGeneratedProgram,
        blocks: dict[str, BlockInstance],
        errors: Sequence[str],
        pre: PacketReplicationEngine,
        state: TnaRunState,
        digests: list[Digest],
        trace: Callable[[str], None] | None,
    ) -> None:
        self.fns = {role: ns[gen.block_fns[role]] for role in TNA_ROLES}
        self.keys = {role: tuple(blocks[role].arch_params) for role in TNA_ROLES}
        self.cls = {name: ns[c] for name, c in gen.classes.items()}
        self.pack_ig = _packer(gen.layouts["ingress_intrinsic_metadata_t"])
        self.pack_eg = _packer(gen.layouts["egress_intrinsic_metadata_t"])
        self.widths = {name: w for layout in gen.layouts.values() for name, w in layout}
        self.drop_on_error = {g: not r for g, r in gen.reads_parser_err.items()}
        self.err_bits = [PARSER_ERROR_BITS.get(name, NO_MATCH) for name in errors]
        self.parse_state = [
            ns[x.gname] for x in gen.externs if x.kind in ("Checksum", "ParserCounter")
        ]
        self.pre = pre
        self.R = state
        self.digests = digests
        self.trace = trace
        self._start_walk()
        self.cpu_port: int | None = None  # copy_to_cpu's port (Device: --cpu-port)
        self.queue_count = 1  # the device's priority queues (qid → queue)
        self.port_metadata: dict[int, bytes] = {}  # per ingress port, 8 bytes

    def new_job(self, port: int, data: bytes) -> TnaJob:
        return TnaJob(True, port & 0x1FF, bytes(data))

    def _step(self, job: PacketJob, jobs: deque[PacketJob], out: list[OutputPacket],
              queue: QueueInfo | None) -> None:
        assert isinstance(job, TnaJob)
        if job.ingress:
            self._ingress(job, jobs)
        else:
            self._egress(job, jobs, out, queue)

    # -- blocks ---------------------------------------------------------------------------------

    def _parse(self, role: str, buf: bytes, objs: dict[str, Any]) -> tuple[int, int]:
        """Run a parser over `buf`; (bit position reached, parser_err bits)."""
        for x in self.parse_state:
            x.reset()
        args = [objs[k] for k in self.keys[role] if k != "pkt"]
        try:
            pos = self.fns[role](buf, len(buf) * 8, 0, *args)
            if isinstance(pos, tuple):
                pos = pos[0]
            return pos, 0
        except ParserErrorSignal as e:
            bits = self.err_bits[e.code] if 0 <= e.code < len(self.err_bits) else NO_MATCH
            if self.trace is not None:
                self._log(f"Parser '{role}': error {bits:#06x} at bit {e.pos}")
            return e.pos, bits

    def _fill(self, header: Any, values: dict[str, int]) -> None:
        """An intrinsic header the parser does not declare: what the hardware prepended."""
        widths = self.widths
        for name, value in values.items():
            setattr(header, name, value & ((1 << widths[name]) - 1))
        header._v = True

    def _call(self, role: str, objs: dict[str, Any]) -> None:
        self.fns[role](*[objs[k] for k in self.keys[role]])

    def _gress(self, gress: str, buf: bytes, objs: dict[str, Any], intr_obj: Any,
               intr: dict[str, int], prsr: Any, now_ns: int) -> bytes | None:
        """Parser, control and deparser of one gress over `buf` (intrinsic header first); the
        deparsed packet, or None when a parser error drops it."""
        prefix = "ig" if gress == "ingress" else "eg"
        pos, err = self._parse(f"{gress}_parser", buf, objs)
        if f"{prefix}_intr_md" not in self.keys[f"{gress}_parser"]:
            self._fill(intr_obj, intr)
        prsr.global_tstamp = now_ns
        prsr.parser_err = err
        if err and self.drop_on_error[gress]:
            self._log(
                f"Dropping packet: {gress} parser error (the program does not read parser_err)"
            )
            return None
        payload = buf[(pos + 7) >> 3 :]
        self._call(gress, objs)
        return self._deparse(gress, objs) + payload

    def _deparse(self, gress: str, objs: dict[str, Any]) -> bytes:
        """What `gress`'s deparser emits (the headers: the payload follows)."""
        chunks: list[bytes] = []
        objs["pkt"] = chunks.append
        self._call(f"{gress}_deparser", objs)
        return b"".join(chunks)

    # -- ingress --------------------------------------------------------------------------------

    def _ingress(self, job: TnaJob, jobs: deque[PacketJob]) -> None:
        R = self.R
        cls = self.cls
        data = job.data
        now = self.now_us()
        now_ns = (now * 1000) & 0xFFFFFFFFFFFF
        port = job.port
        R.start(len(data) + FCS_BYTES, now)
        if self.trace is not None:
            self._log(
                f"Processing packet received on port {port}"
                + (" (resubmitted)" if job.resubmitted else "")
            )
        intr = {
            "resubmit_flag": int(job.resubmitted),
            "ingress_port": port,
            "ingress_mac_tstamp": now_ns,
        }
        pm = (
            job.port_md
            if job.port_md is not None
            else self.port_metadata.get(port, bytes(PORT_METADATA_BYTES))
        )
        buf = self.pack_ig(intr) + pm + data
        hdr, md = cls["ingress_hdr"](), cls["ingress_md"]()
        ig_intr = cls["ingress_intrinsic_metadata_t"]()
        prsr = cls["ingress_intrinsic_metadata_from_parser_t"]()
        dprsr = cls["ingress_intrinsic_metadata_for_deparser_t"]()
        tm = cls["ingress_intrinsic_metadata_for_tm_t"]()
        objs = {
            "hdr": hdr,
            "ig_md": md,
            "metadata": md,
            "ig_intr_md": ig_intr,
            "ig_intr_md_from_prsr": prsr,
            "ig_intr_md_for_dprsr": dprsr,
            "ig_intr_md_for_tm": tm,
        }
        deparsed = self._gress("ingress", buf, objs, ig_intr, intr, prsr, now_ns)
        if deparsed is None:
            return
        self._traffic_manager(job, dprsr, tm, deparsed, jobs)

    def _traffic_manager(
        self, job: TnaJob, dprsr: Any, tm: Any, deparsed: bytes, jobs: deque[PacketJob]
    ) -> None:
        R = self.R
        drop_ctl = dprsr.drop_ctl
        if R.dq:
            if dprsr.digest_type:
                self.digests.extend(R.dq)
            R.dq = []
        normal: list[TnaJob] = []
        if dprsr.resubmit_type:
            if job.resubmitted:
                self._log(
                    "Resubmit of a resubmitted packet ignored (a packet is resubmitted "
                    "at most once)"
                )
            else:
                pm = (R.resub or b"")[:PORT_METADATA_BYTES].ljust(PORT_METADATA_BYTES, b"\0")
                self._log("Resubmitting packet")
                jobs.append(TnaJob(True, job.port, job.data, port_md=pm, resubmitted=True))
                self._mirror_ingress(job, dprsr, drop_ctl, jobs)
                return
        length = len(job.data) + FCS_BYTES
        kind = BYPASS if tm.bypass_egress else NORMAL
        qmax = self.queue_count
        if drop_ctl & 1:
            self._log("Dropping packet at the end of ingress (drop_ctl)")
        else:
            if tm._uv:
                port = tm.ucast_egress_port
                if port == R.drop_port:
                    self._log(f"Unicast to port {port}, which does not exist: dropped")
                else:
                    self._log(f"Egress port is {port}")
                    normal.append(
                        TnaJob(
                            False,
                            port,
                            deparsed,
                            qid=tm.qid,
                            qmax=qmax,
                            kind=kind,
                            pkt_length=length,
                            cos=tm.ingress_cos,
                        )
                    )
            for grp in (tm.mcast_grp_a, tm.mcast_grp_b):
                if not grp:
                    continue
                self._log(f"Multicast requested for packet (group {grp})")
                seen: set[int] = set()
                for port, rid in self.pre.replicate(grp):
                    first = int(rid not in seen)
                    seen.add(rid)
                    self._log(f"Replicating packet on port {port}")
                    normal.append(
                        TnaJob(
                            False,
                            port,
                            deparsed,
                            qid=tm.qid,
                            qmax=qmax,
                            rid=rid,
                            rid_first=first,
                            kind=kind,
                            pkt_length=length,
                            cos=tm.ingress_cos,
                        )
                    )
            if not normal and not tm.copy_to_cpu:
                self._log(
                    "No egress port chosen (ucast_egress_port never written, no "
                    "multicast group): dropped"
                )
        if tm.copy_to_cpu and not drop_ctl & 2:
            if self.cpu_port is None:
                self._log("copy_to_cpu without a CPU port: no copy")
            else:
                normal.append(
                    TnaJob(
                        False,
                        self.cpu_port,
                        deparsed,
                        qid=tm.icos_for_copy_to_cpu,
                        qmax=qmax,
                        kind=kind,
                        pkt_length=length,
                        cos=tm.icos_for_copy_to_cpu,
                    )
                )
        jobs.extend(normal)
        self._mirror_ingress(job, dprsr, drop_ctl, jobs)

    def _mirror_ingress(
        self, job: TnaJob, dprsr: Any, drop_ctl: int, jobs: deque[PacketJob]
    ) -> None:
        mirror = self.R.mirror
        if mirror is not None and dprsr.mirror_type and not drop_ctl & 4:
            # Tofino's ingress deparser mirrors the packet as it arrived
            self._mirror(mirror, job.data, jobs, "ingress")

    def _mirror(
        self, mirror: tuple[int, bytes], packet: bytes, jobs: deque[PacketJob], where: str
    ) -> None:
        session_id, header = mirror
        found = self.pre.clone_targets(session_id)
        if found is None:
            self._log(f"Mirror session {session_id} is not configured: no mirror")
            return
        session, copies = found
        data = header + packet
        if session.packet_length_bytes:
            data = data[: session.packet_length_bytes]
        self._log(f"Mirroring packet at {where} (session {session_id}, {len(data)} bytes)")
        for port, rid in copies:
            jobs.append(
                TnaJob(
                    False,
                    port,
                    data,
                    qid=session.class_of_service,
                    qmax=self.queue_count,
                    rid=rid,
                    kind=MIRRORED,
                    pkt_length=len(data) + FCS_BYTES,
                    cos=session.class_of_service,
                )
            )

    # -- egress ---------------------------------------------------------------------------------

    def _egress(
        self, job: TnaJob, jobs: deque[PacketJob], out: list[OutputPacket], queue: QueueInfo | None
    ) -> None:
        port = job.port
        if job.kind == BYPASS:
            self._log(
                f"Transmitting packet of size {len(job.data)} out of port {port} (egress bypassed)"
            )
            out.append(OutputPacket(port, job.data))
            return
        R = self.R
        cls = self.cls
        now = self.now_us()
        now_ns = (now * 1000) & 0xFFFFFFFFFFFF
        if queue is None:
            enq_us, delta_us = now, 0
        else:
            enq_us, delta_us = queue.enq_timestamp, queue.deq_timedelta
        intr = {
            "egress_port": port,
            "enq_qdepth": job.enq_cells,
            "enq_tstamp": enq_us * 1000,
            "deq_qdepth": job.deq_cells,
            "deq_timedelta": delta_us * 1000,
            "egress_rid": job.rid,
            "egress_rid_first": job.rid_first,
            "egress_qid": job.qid,
            "egress_cos": job.cos,
            "pkt_length": job.pkt_length,
        }
        R.start(len(job.data) + FCS_BYTES, now)
        if self.trace is not None:
            self._log(f"Egress packet on port {port} (queue {job.qid})")
        buf = self.pack_eg(intr) + job.data
        hdr, md = cls["egress_hdr"](), cls["egress_md"]()
        eg_intr = cls["egress_intrinsic_metadata_t"]()
        prsr = cls["egress_intrinsic_metadata_from_parser_t"]()
        dprsr = cls["egress_intrinsic_metadata_for_deparser_t"]()
        oport = cls["egress_intrinsic_metadata_for_output_port_t"]()
        objs = {
            "hdr": hdr,
            "eg_md": md,
            "metadata": md,
            "eg_intr_md": eg_intr,
            "eg_intr_md_from_prsr": prsr,
            "eg_intr_md_for_dprsr": dprsr,
            "eg_intr_md_for_oport": oport,
        }
        data = self._gress("egress", buf, objs, eg_intr, intr, prsr, now_ns)
        if data is None:
            return
        self._end_egress(job, dprsr, data, jobs, out)

    def _end_egress(
        self, job: TnaJob, dprsr: Any, data: bytes, jobs: deque[PacketJob], out: list[OutputPacket]
    ) -> None:
        """After the egress deparser emitted `data`: digests refused, the egress mirror,
        drop_ctl, transmit (the one copy: the C walk hands its egress passes here)."""
        R = self.R
        port = job.port
        if R.dq:
            self._log("Digest packed in egress: Tofino sends digests from ingress only")
            R.dq = []
        drop_ctl = dprsr.drop_ctl
        mirror = R.mirror
        if mirror is not None and dprsr.mirror_type and not drop_ctl & 4:
            # Tofino's egress deparser mirrors the packet it emitted
            self._mirror(mirror, data, jobs, "egress")
        if drop_ctl & 1:
            self._log("Dropping packet at the end of egress (drop_ctl)")
            return
        self._log(f"Transmitting packet of size {len(data)} out of port {port}")
        out.append(OutputPacket(port, data))
