"""Bit-level packet access for generated parsers and deparsers.

P4 headers are whole bytes but their fields need not be, so the fast path reads a header's
bytes as one integer (``int.from_bytes`` on a slice) and splits it with precomputed shifts
(`FieldLayout`); `extract_bits` and `BitReader`/`BitWriter` handle arbitrary bit offsets.
Bits are numbered from the most significant bit of byte 0, as on the wire.
"""

from __future__ import annotations

from collections.abc import Sequence


class PacketTooShort(Exception):
    """A read past the end of the packet (the parser's ``error.PacketTooShort``)."""


def extract_bits(data: bytes, bit_offset: int, width: int) -> int:
    """The `width`-bit unsigned value at `bit_offset` of `data` (bounds are the caller's)."""
    if not (bit_offset | width) & 7:
        start = bit_offset >> 3
        return int.from_bytes(data[start : start + (width >> 3)], "big")
    end = bit_offset + width
    chunk = int.from_bytes(data[bit_offset >> 3 : (end + 7) >> 3], "big")
    return (chunk >> (-end & 7)) & ((1 << width) - 1)


def insert_bits(data: bytearray, bit_offset: int, width: int, value: int) -> None:
    """Overwrite the `width` bits at `bit_offset` of `data` with `value` (masked to width)."""
    mask = (1 << width) - 1
    value &= mask
    if not (bit_offset | width) & 7:
        start = bit_offset >> 3
        data[start : start + (width >> 3)] = value.to_bytes(width >> 3, "big")
        return
    first = bit_offset >> 3
    end = bit_offset + width
    last = (end + 7) >> 3
    shift = -end & 7
    chunk = int.from_bytes(data[first:last], "big")
    chunk = (chunk & ~(mask << shift)) | (value << shift)
    data[first:last] = chunk.to_bytes(last - first, "big")


class FieldLayout:
    """The field widths of one header type, with shifts and masks precomputed.

    ``unpack`` reads the header's `nbytes` bytes at a byte offset and returns the field values;
    ``pack`` is the inverse. A header whose total width is not a multiple of 8 is rejected
    (P4_16 targets, BMv2 included, require whole-byte headers).
    """

    __slots__ = ("_fields", "bits", "nbytes", "widths")

    def __init__(self, widths: Sequence[int]) -> None:
        bits = sum(widths)
        if bits % 8:
            raise ValueError(f"header of {bits} bits is not a whole number of bytes")
        self.widths = tuple(widths)
        self.bits = bits
        self.nbytes = bits // 8
        fields = []
        shift = bits
        for width in widths:
            shift -= width
            fields.append((shift, (1 << width) - 1))
        self._fields = tuple(fields)

    def unpack(self, data: bytes, byte_offset: int = 0) -> list[int]:
        """The field values of the header at `byte_offset`; raises `PacketTooShort`."""
        end = byte_offset + self.nbytes
        if end > len(data):
            raise PacketTooShort(f"need {self.nbytes} bytes at offset {byte_offset}")
        word = int.from_bytes(data[byte_offset:end], "big")
        return [(word >> shift) & mask for shift, mask in self._fields]

    def pack(self, values: Sequence[int]) -> bytes:
        """The header bytes for `values` (each masked to its field's width)."""
        word = 0
        for (shift, mask), value in zip(self._fields, values, strict=True):
            word |= (value & mask) << shift
        return word.to_bytes(self.nbytes, "big")


class BitReader:
    """A read cursor over a packet, at bit position `pos`."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    @property
    def remaining_bits(self) -> int:
        return len(self.data) * 8 - self.pos

    def extract(self, width: int) -> int:
        """Read `width` bits and advance; raises `PacketTooShort` (position unchanged)."""
        value = self.lookahead(width)
        self.pos += width
        return value

    def lookahead(self, width: int) -> int:
        """Read `width` bits without advancing; raises `PacketTooShort`."""
        if self.pos + width > len(self.data) * 8:
            raise PacketTooShort(f"need {width} bits at bit {self.pos}")
        return extract_bits(self.data, self.pos, width)

    def extract_fields(self, layout: FieldLayout) -> list[int]:
        """Read one header of `layout` (the cursor must be byte-aligned) and advance."""
        if self.pos & 7:
            return [self.extract(width) for width in layout.widths]
        values = layout.unpack(self.data, self.pos >> 3)
        self.pos += layout.bits
        return values

    def advance(self, bits: int) -> None:
        """Skip `bits` bits (``packet.advance``); raises `PacketTooShort`."""
        if self.pos + bits > len(self.data) * 8:
            raise PacketTooShort(f"cannot advance {bits} bits at bit {self.pos}")
        self.pos += bits

    def rest(self) -> bytes:
        """The unread bytes (the payload); the cursor must be byte-aligned."""
        if self.pos & 7:
            raise ValueError(f"cursor at bit {self.pos} is not byte-aligned")
        return self.data[self.pos >> 3 :]


class BitWriter:
    """An output accumulator: whole bytes plus a pending partial byte."""

    __slots__ = ("_acc", "_nbits", "_out")

    def __init__(self) -> None:
        self._out = bytearray()
        self._acc = 0  # pending bits, fewer than 8 once an emit returns
        self._nbits = 0

    @property
    def bit_length(self) -> int:
        return len(self._out) * 8 + self._nbits

    def emit_bits(self, value: int, width: int) -> None:
        """Append the low `width` bits of `value`, most significant first."""
        acc = (self._acc << width) | (value & ((1 << width) - 1))
        nbits = self._nbits + width
        whole = nbits >> 3
        if whole:
            nbits &= 7
            self._out += (acc >> nbits).to_bytes(whole, "big")
            acc &= (1 << nbits) - 1
        self._acc = acc
        self._nbits = nbits

    def emit_fields(self, layout: FieldLayout, values: Sequence[int]) -> None:
        """Append one header of `layout`."""
        if self._nbits:
            for width, value in zip(layout.widths, values, strict=True):
                self.emit_bits(value, width)
        else:
            self._out += layout.pack(values)

    def emit_bytes(self, data: bytes) -> None:
        """Append whole bytes (e.g. the payload)."""
        if self._nbits:
            for byte in data:
                self.emit_bits(byte, 8)
        else:
            self._out += data

    def getvalue(self, pad: bool = False) -> bytes:
        """The bytes written; a pending partial byte is zero-padded if `pad`, else an error."""
        if self._nbits:
            if not pad:
                raise ValueError(f"{self._nbits} bits pending: output is not byte-aligned")
            return bytes(self._out) + bytes([self._acc << (8 - self._nbits)])
        return bytes(self._out)
