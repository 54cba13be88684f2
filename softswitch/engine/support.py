"""Runtime helpers the generated code calls: control-flow exceptions, header stacks, bit cursors.

Everything here runs per packet, so it stays small: no per-call allocation beyond what the
operation needs, no dict lookups by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ExitSignal(Exception):
    """``exit;`` — unwinds to the top-level control, which then ends normally."""


class ParserErrorSignal(Exception):
    """A parser error (``verify`` failure, PacketTooShort, StackOutOfBounds...).

    `pos` is the bit offset the parser stopped at: the unparsed rest becomes the payload.
    """

    __slots__ = ("code", "pos")

    def __init__(self, code: int, pos: int) -> None:
        super().__init__(code)
        self.code = code
        self.pos = pos


class AssertSignal(Exception):
    """``assert``/``assume`` failed. BMv2 aborts the whole switch process on this; softswitch
    logs it and drops the packet instead, so one bad packet cannot kill a test run."""


def read_bits(data: bytes, pos: int, width: int) -> int:
    """`width` bits of `data` starting at bit `pos` (MSB first). The caller checks bounds."""
    end = pos + width
    return (int.from_bytes(data[pos >> 3:(end + 7) >> 3], "big") >> (-end & 7)) & (
        (1 << width) - 1
    )


class Stack:
    """A header stack: `h` is the element list, `nxt` the spec's ``nextIndex``."""

    __slots__ = ("factory", "h", "nxt")

    def __init__(self, factory: Callable[[], Any], size: int) -> None:
        self.factory = factory
        self.h = [factory() for _ in range(size)]
        self.nxt = 0

    def _copy(self) -> Stack:
        n = Stack.__new__(Stack)
        n.factory = self.factory
        n.h = [e._copy() for e in self.h]
        n.nxt = self.nxt
        return n

    def _set(self, other: Stack) -> None:
        for dst, src in zip(self.h, other.h):
            dst._set(src)
        self.nxt = other.nxt

    def _reset(self) -> None:
        for e in self.h:
            e._reset()
        self.nxt = 0

    def _eq(self, other: Stack) -> bool:
        return all(a._eq(b) for a, b in zip(self.h, other.h))

    def push_front(self, count: int) -> None:
        """Shift every element up by `count`; the first `count` become invalid (P4_16 spec)."""
        size = len(self.h)
        if count <= 0:
            return
        if count >= size:
            for e in self.h:
                e._invalidate()
        else:
            for i in range(size - 1, count - 1, -1):
                self.h[i]._set(self.h[i - count])
            for i in range(count):
                self.h[i]._invalidate()
        self.nxt = min(size, self.nxt + count)

    def pop_front(self, count: int) -> None:
        """Shift every element down by `count`; the last `count` become invalid."""
        size = len(self.h)
        if count <= 0:
            return
        if count >= size:
            for e in self.h:
                e._invalidate()
        else:
            for i in range(size - count):
                self.h[i]._set(self.h[i + count])
            for i in range(size - count, size):
                self.h[i]._invalidate()
        self.nxt = max(0, self.nxt - count)


def stack_elem(stack: Stack, index: int) -> Any:
    """``hs[i]`` with a run-time index; out of range gives a detached invalid element: reading
    it yields zeros, writes go nowhere. (In controls p4c-bm2-ss guards every use of hs[i] by
    the index's range, see ExprGen.value_ex; in parsers BMv2's dereference_header_stack does
    ``elements.at(i)``, which throws past the end.)"""
    if 0 <= index < len(stack.h):
        return stack.h[index]
    return stack.factory()


def set_bits(old: int, value: int, high: int, low: int) -> int:
    """`old` with bits [high:low] replaced by `value` (unsigned view)."""
    mask = ((1 << (high - low + 1)) - 1) << low
    return (old & ~mask) | ((value << low) & mask)


def to_signed(value: int, width: int) -> int:
    """Two's-complement wrap of `value` into int<width>."""
    half = 1 << (width - 1)
    return ((value + half) & ((1 << width) - 1)) - half


def mk(cls: type, valid: bool, pairs: tuple[tuple[str, Any], ...]) -> Any:
    """A fresh struct/header from (field, value) pairs; a header built this way is valid."""
    obj = cls()
    for name, value in pairs:
        setattr(obj, name, value)
    if valid:
        obj._v = True
    return obj


def look(data: bytes, nbits: int, pos: int, width: int, too_short: int) -> int:
    """``lookahead<bit<W>>()``: the next `width` bits, or PacketTooShort."""
    if pos + width > nbits:
        raise ParserErrorSignal(too_short, pos)
    return read_bits(data, pos, width)


def noop(*_args: Any) -> None:
    """The implicit default action of a table without ``default_action`` (p4c's NoAction)."""
