"""The TNA walk over the C engine.

`NativeTnaPipeline` is engine/tna_pipeline.py's `TnaPipeline` with each block in C
(native/cgen_tna.py): the pass objects (headers, metadata and the intrinsic metadata) are C
structs the walk allocates through cffi, so TnaPipeline's own code — the intrinsic header
filled when the parser does not extract it, parser_err and the drop on a parser error, the
traffic manager (unicast, PRE, copy to CPU, drop_ctl, bypass), mirror and resubmit — reads and
writes their fields as it does the Python engine's objects, and stays the one copy of every
decision. Per gress: `sst_parse` (its error code mapped to the PARSER_ERROR bit as Python maps
the ParserErrorSignal), `sst_control`, `sst_deparse`; the deparser's Mirror, Resubmit and
Digest requests become TnaRunState's `mirror`, `resub` and `dq`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from softswitch.engine.codegen_tna import TNA_ROLES, TnaGeneratedProgram
from softswitch.engine.externs import Digest
from softswitch.engine.pipeline import OutputPacket, PacketJob, QueueInfo
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.engine.tna_pipeline import (
    NO_MATCH,
    PARSER_ERROR_BITS,
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
from softswitch.native.pipeline import OUT_CAPACITY, REQ_DIGEST, c_digests
from softswitch.native.program import NativeInstance

_GRESS = {"ingress": 0, "egress": 1}


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

    # -- observed registers -------------------------------------------------------------------

    def process(self, port: int, data: bytes) -> list[OutputPacket]:
        out = super().process(port, data)
        if self.instance.observers:
            self.instance.drain_observed()
        return out

    def run(self, job: PacketJob, queue: QueueInfo | None = None
            ) -> tuple[list[OutputPacket], list[PacketJob]]:
        result = super().run(job, queue)
        if self.instance.observers:
            self.instance.drain_observed()
        return result
