"""The v1model walk over the C engine's passes.

`NativeV1Pipeline` is engine/pipeline.py's `V1Pipeline` (the one place the walk's logic lives:
clone, digest, resubmit, multicast, drop, recirculate, truncate decisions and the job order)
with its engine steps — parse, verify + ingress, egress, compute + deparse, copying a PHV —
done by the generated C. A packet's headers and metadata are opaque C buffers (``char[]``),
its standard_metadata the cffi ``sm_t`` struct the walk reads and writes by field; the
end-of-pass requests the C code sets in ``R->req`` are turned into the RunState fields the
walk reads. (Later work moves the walk itself into C; the pass functions are its steps.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from softswitch.engine.externs import Digest
from softswitch.engine.pipeline import RunState, V1Pipeline
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.native.program import NativeInstance

REQ_CLONE, REQ_RESUBMIT, REQ_RECIRC, REQ_DIGEST, REQ_TRUNCATE = 1, 2, 4, 8, 16
OUT_CAPACITY = 1 << 16  # bytes the deparser may emit per packet (headers only)


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
        self.H = lambda: ffi.new("char[]", hsize)
        self.M = lambda: ffi.new("char[]", msize)
        self.SM = lambda: ffi.new("sm_t *")
        self._sm_type = ffi.typeof("sm_t *")
        self._out = ffi.new("uint8_t[]", OUT_CAPACITY)
        gen = instance.program.gen
        self._sites = {s.site: s for s in gen.digests}
        self._field_lists: dict[int, Callable[..., None]] = {
            i: self._field_list_copier(i) for i in gen.field_lists}
        state.field_lists = self._field_lists
        self._start_walk()

    def _field_list_copier(self, idx: int) -> Callable[..., None]:
        copy = self.lib.ssp_field_list

        def fl(_sh: Any, smeta: Any, _ssm: Any, _dh: Any, dmeta: Any, _dsm: Any) -> None:
            copy(idx, smeta, dmeta)
        return fl

    # -- the steps ----------------------------------------------------------------------------

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
            for k in range(inst.ndig):
                site = self._sites[inst.dig_site[k]]
                vals = inst.dig_vals[k]
                values = []
                for i, (_name, width, signed) in enumerate(site.fields):
                    v = int(vals[2 * i]) | (int(vals[2 * i + 1]) << 64)
                    if signed and v >> (width - 1):
                        v -= 1 << width
                    values.append(v)
                R.digests.append(Digest(site.name, int(inst.dig_recv[k]), tuple(values),
                                        tuple(n for n, _, _ in site.fields)))
