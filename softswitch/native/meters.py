"""Meters of the C engine behind the Python engine's API (engine/meters.py): a `NativeMeter`
is a `Meter` whose buckets are a C ``ss_meter`` (an indexed meter's cell, or a table entry's
direct meter), so the generated code, the Switch API, the STF runner and the P4Runtime server
use the one copy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from softswitch.engine.externs import IndexedMeter
from softswitch.engine.meters import GREEN, Meter, MeterKind, MeterRates, check_rates
from softswitch.errors import ControlPlaneError
from softswitch.native.cgen import NativeExtern

_U64 = (1 << 64) - 1


class NativeMeter(Meter):
    """A Meter over the ``ss_meter`` `cell()` returns (looked up on each use: a table entry's
    meter is reached through its handle, never a pointer that may be freed)."""

    __slots__ = ("_cell", "_lib")

    def __init__(self, kind: MeterKind, lib: Any, cell: Callable[[], Any]) -> None:
        super().__init__(kind)
        self._lib = lib
        self._cell = cell

    @property
    def configured(self) -> bool:
        m = self._cell()
        return m is not None and bool(m.configured)

    def set_rates_per_us(self, cir: float, cburst: int, pir: float, pburst: int) -> None:
        check_rates(cir, cburst, pir, pburst)
        if max(cburst, pburst) > _U64:
            raise ControlPlaneError(f"meter burst sizes above {_U64} do not fit the C engine")
        m = self._cell()
        if m is not None:
            self._lib.ss_meter_set(m, float(cir), int(cburst), float(pir), int(pburst))

    def reset_rates(self) -> None:
        m = self._cell()
        if m is not None:
            m.configured = 0

    def rates(self) -> MeterRates | None:
        m = self._cell()
        if m is None or not m.configured:
            return None
        return MeterRates(int(m.rate[1] * 1_000_000.0), int(m.burst[1]),
                          int(m.rate[0] * 1_000_000.0), int(m.burst[0]))

    def execute(self, now_us: int, size: int, pre_color: int = GREEN) -> int:
        m = self._cell()
        if m is None:
            return pre_color
        color = int(self._lib.ss_meter_execute(m, now_us, 1 if self.kind == "packets" else size))
        return color if color > pre_color else pre_color

    def copy_from(self, meter: Meter) -> None:
        """Take over `meter`'s configuration and bucket state (a Python-engine meter made
        before the entry reached C)."""
        m = self._cell()
        buckets = meter._buckets
        if m is None or buckets is None:
            return
        for i, b in enumerate(buckets):
            m.rate[i], m.burst[i], m.tokens[i], m.last[i] = b.rate, b.burst, b.tokens, \
                float(b.tokens_last)
        m.configured = 1


def native_meter_array(x: NativeExtern, lib: Any, cells: Any) -> IndexedMeter:
    """An IndexedMeter whose meters are the C cells `cells` (``ss_meter[]``)."""
    kind: MeterKind = "bytes" if x.counter_type == "bytes" else "packets"
    meters = IndexedMeter(x.name, 0, kind)
    meters.meters = [NativeMeter(kind, lib, (lambda i=i: cells + i)) for i in range(x.size)]
    return meters
