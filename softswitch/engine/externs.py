"""Run-time state of v1model extern instances (counters, registers, meters, value sets...).

Generated code touches the fields directly (``c.packets[i] += 1``); the methods are the
control-plane view used by the Switch API, the STF runner and the P4Runtime server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsIndex

from softswitch.engine.meters import Meter, MeterArray, MeterKind
from softswitch.engine.tables import Entry, Table
from softswitch.errors import ControlPlaneError


class CounterArray:
    """An indexed ``counter``: packets and bytes per index (BMv2 keeps both for any type)."""

    def __init__(self, name: str, size: int, kind: str) -> None:
        self.name = name
        self.kind = kind
        self.packets = [0] * size
        self.bytes = [0] * size

    @property
    def size(self) -> int:
        return len(self.packets)

    def _check(self, index: int) -> None:
        if not 0 <= index < len(self.packets):
            raise ControlPlaneError(
                f"counter '{self.name}': index {index} out of range (size {len(self.packets)})"
            )

    def read(self, index: int) -> tuple[int, int]:
        """(packets, bytes) at `index`."""
        self._check(index)
        return self.packets[index], self.bytes[index]

    def write(self, index: int, packets: int, nbytes: int) -> None:
        self._check(index)
        self.packets[index] = packets
        self.bytes[index] = nbytes

    def reset(self) -> None:
        for i in range(len(self.packets)):
            self.packets[i] = 0
            self.bytes[i] = 0


class DirectCounter:
    """A ``direct_counter``: one (packets, bytes) pair per entry of its table, by handle."""

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind
        self.table: Table | None = None

    def _entry(self, handle: int) -> Entry:
        if self.table is None:
            raise ControlPlaneError(f"direct counter '{self.name}' is not attached to a table")
        return self.table.entry(handle)

    def read(self, handle: int) -> tuple[int, int]:
        cnt = self._entry(handle).cnt
        return cnt[0], cnt[1]

    def write(self, handle: int, packets: int, nbytes: int) -> None:
        cnt = self._entry(handle).cnt
        cnt[0], cnt[1] = packets, nbytes

    def reset(self) -> None:
        if self.table is not None:
            for e in self.table.entries.values():
                e.cnt[0] = e.cnt[1] = 0


class DirectMeter:
    """A ``direct_meter``: a meter per entry of its table; `color` is what ``read()`` returns
    (set by the table's apply: the colour of the entry just hit)."""

    def __init__(self, name: str, kind: MeterKind) -> None:
        self.name = name
        self.kind: MeterKind = kind
        self.table: Table | None = None
        self.color = 0

    def set_rates(self, handle: int, cir: int, cburst: int, pir: int, pburst: int) -> None:
        if self.table is None:
            raise ControlPlaneError(f"direct meter '{self.name}' is not attached to a table")
        meter = self.table.entry(handle).meter
        if meter is None:
            raise ControlPlaneError(f"direct meter '{self.name}': entry {handle} has no meter")
        meter.set_rates(cir, cburst, pir, pburst)


class IndexedMeter(MeterArray):
    """A ``meter`` extern instance (named MeterArray)."""

    def __init__(self, name: str, size: int, kind: MeterKind) -> None:
        super().__init__(size, kind)
        self.name = name

    @property
    def size(self) -> int:
        return len(self.meters)

    def meter(self, index: int) -> Meter:
        """The meter at `index` (ControlPlaneError when out of range)."""
        return self[index]


class RegisterArray:
    """A ``register<T>``: `values` holds ints (signed T as negative ints) of `width` bits."""

    def __init__(self, name: str, size: int, width: int, signed: bool = False) -> None:
        self.name = name
        self.width = width
        self.signed = signed
        self.values = [0] * size

    @property
    def size(self) -> int:
        return len(self.values)

    def read(self, index: int) -> int:
        if not 0 <= index < len(self.values):
            raise ControlPlaneError(
                f"register '{self.name}': index {index} out of range (size {len(self.values)})"
            )
        return self.values[index]

    def write(self, index: int, value: int) -> None:
        if not 0 <= index < len(self.values):
            raise ControlPlaneError(
                f"register '{self.name}': index {index} out of range (size {len(self.values)})"
            )
        lo = -(1 << (self.width - 1)) if self.signed else 0
        if not lo <= value < lo + (1 << self.width):
            raise ControlPlaneError(
                f"register '{self.name}': value {value} does not fit in {self.width} bits"
            )
        self.values[index] = value

    def reset(self) -> None:
        self.values[:] = [0] * len(self.values)   # in place: an observer stays attached

    def observe(self, listener: Callable[[int, int], None] | None) -> None:
        """Call `listener(index, value)` after every write of a cell, the program's or the
        control plane's (None: stop). Unobserved, `values` is a plain list, so generated code
        writing it directly pays nothing for this."""
        self.values = (ObservedCells(self.values, listener) if listener is not None
                       else list(self.values))


class ObservedCells(list[int]):
    """A register's cells that tell a listener of every write (`RegisterArray.observe`)."""

    def __init__(self, values: Sequence[int], listener: Callable[[int, int], None]) -> None:
        super().__init__(values)
        self.listener = listener

    def __setitem__(self, index: SupportsIndex | slice, value: Any) -> None:  # type: ignore[override]
        super().__setitem__(index, value)
        if isinstance(index, slice):
            for i in range(*index.indices(len(self))):
                self.listener(i, self[i])
        else:
            self.listener(int(index), self[index])


class ValueSet:
    """A parser ``value_set``: members are (value, mask) pairs per select component."""

    def __init__(self, name: str, size: int, widths: Sequence[int]) -> None:
        self.name = name
        self.size = size
        self.widths = tuple(widths)
        self.members: list[tuple[tuple[int, int], ...]] = []

    def add(self, values: Sequence[int], masks: Sequence[int] | None = None) -> None:
        if len(self.members) >= self.size:
            raise ControlPlaneError(f"value set '{self.name}' is full ({self.size})")
        if len(values) != len(self.widths):
            raise ControlPlaneError(
                f"value set '{self.name}' takes {len(self.widths)} values, got {len(values)}"
            )
        if masks is None:
            masks = [(1 << w) - 1 for w in self.widths]
        for v, m, w in zip(values, masks, self.widths):
            if not 0 <= v < (1 << w) or not 0 <= m < (1 << w):
                raise ControlPlaneError(f"value set '{self.name}': {v:#x} does not fit {w} bits")
        self.members.append(tuple((v & m, m) for v, m in zip(values, masks)))

    def clear(self) -> None:
        self.members.clear()

    def match(self, key: tuple[int, ...]) -> bool:
        return any(all((k & m) == v for k, (v, m) in zip(key, member))
                   for member in self.members)


@dataclass(frozen=True)
class Digest:
    """A ``digest(receiver, data)`` message: the data's type name and its field values."""

    name: str
    receiver: int
    values: tuple[int, ...]
    field_names: tuple[str, ...] = ()
