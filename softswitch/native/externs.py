"""Counters and registers of the C engine, behind the Python engine's API (engine/externs.py):
the cells are the C arrays the generated code updates, so the Switch API, the STF runner and
the P4Runtime server read and write the one copy."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from softswitch.engine.externs import CounterArray, RegisterArray
from softswitch.native.cgen import NativeExtern
from softswitch.native.program import NativeInstance

_U64 = (1 << 64) - 1


def native_counter(x: NativeExtern, cells: tuple[Any, ...]) -> CounterArray:
    """A CounterArray whose `packets` and `bytes` are the C arrays (cffi arrays index, assign
    and have a length like lists)."""
    counter = CounterArray(x.name, 0, x.counter_type)
    counter.packets, counter.bytes = cells  # type: ignore[assignment]
    return counter


class RegisterCells:
    """A register's C cells as a list of ints: 128-bit cells are two words; int<W> cells hold
    W-bit two's complement and read back as negative ints, as RegisterArray.values does.
    `listener` (RegisterArray.observe) hears every write made through this object."""

    def __init__(self, cells: Any, size: int, width: int, signed: bool) -> None:
        self.cells, self.size, self.width, self.signed = cells, size, width, signed
        self.wide = width > 64
        self.listener: Callable[[int, int], None] | None = None

    def __len__(self) -> int:
        return self.size

    def value(self, raw: int) -> int:
        """A cell's stored bits as the int RegisterArray.values holds."""
        if self.signed and raw >> (self.width - 1):
            raw -= 1 << self.width
        return raw

    def _get(self, i: int) -> int:
        v = (self.cells[2 * i] | (self.cells[2 * i + 1] << 64)) if self.wide else self.cells[i]
        return self.value(int(v))

    def _set(self, i: int, value: int) -> None:
        v = value & ((1 << self.width) - 1)
        if self.wide:
            self.cells[2 * i], self.cells[2 * i + 1] = v & _U64, v >> 64
        else:
            self.cells[i] = v
        if self.listener is not None:
            self.listener(i, self._get(i))

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(self.size))]
        if i < 0:
            i += self.size
        if not 0 <= i < self.size:
            raise IndexError(i)
        return self._get(i)

    def __setitem__(self, i: int | slice, value: Any) -> None:
        if isinstance(i, slice):
            for j, v in zip(range(*i.indices(self.size)), value, strict=True):
                self._set(j, v)
            return
        if i < 0:
            i += self.size
        if not 0 <= i < self.size:
            raise IndexError(i)
        self._set(i, value)

    def __iter__(self) -> Iterator[int]:
        return (self._get(i) for i in range(self.size))


class NativeRegisterArray(RegisterArray):
    """A register whose cells live in C."""

    def __init__(self, x: NativeExtern, cells: tuple[Any, ...], instance: NativeInstance
                 ) -> None:
        super().__init__(x.name, 0, x.width, x.signed)
        self.values = RegisterCells(cells[0], x.size, x.width, x.signed)  # type: ignore[assignment]
        self._slot = x.slot
        self._instance = instance

    def reset(self) -> None:
        self.values[:] = [0] * len(self.values)

    def observe(self, listener: Callable[[int, int], None] | None) -> None:
        """As RegisterArray.observe: the program's writes are logged in C and reported after
        each pipeline call (native/pipeline.py drains the log), in the order made, before the
        call returns; the control plane's as they are made."""
        cells: RegisterCells = self.values  # type: ignore[assignment]
        cells.listener = listener
        if listener is None:
            self._instance.observe(self._slot, None)
        else:
            self._instance.observe(self._slot,
                                   lambda i, raw: listener(i, cells.value(raw)))
