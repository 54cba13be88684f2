"""Run-time state and helpers of the TNA externs (Tofino 1), as the generated code uses them.

The control-plane view reuses the v1model classes where the state is the same (CounterArray,
DirectCounter, IndexedMeter, DirectMeter, ActionProfile); what differs lives here:

- `TnaHash` — ``Hash<W>.get``: Tofino's CRCs as bf-utils' dynamic_hash defines them (crc_8,
  crc_16 = CRC-16/ARC, crc_32, crc_64 = plain ECMA-182), over the field list taken as one big
  integer, zero-extended on the high side to whole bytes; a result wider than the CRC repeats
  it ("extend"), a narrower one keeps its low bits (the high ones with CRCPolynomial's msb).
  IDENTITY is the low W bits of that integer; RANDOM a fixed pseudo-random GF(2) matrix (what
  bf-p4c's random hash is: a random galois matrix chosen once).
- `TnaRegister` — ``Register<T, I>``: cells of bit<W> (or int<W>), or of a struct of two fields
  kept as one integer (the first field in the high bits), starting at the initial value.
- `DirectRegisterCells` — ``DirectRegister<T>``: one cell per table entry (by entry handle).
- `ParserChecksum` — the parser's ``Checksum``: the 16-bit ones'-complement sum of what was
  added, minus what was subtracted, as one byte stream (a field's bytes keep their place in a
  16-bit word across calls, as bf-p4c arranges with byte swaps); ``verify()`` is true when the
  sum is not 0xFFFF — an error, as Tofino deposits it (Intel's tna_checksum example and
  fabric-tna name the result ``checksum_err``); ``get()``/``subtract_all_and_deposit`` the sum.
- `csum_update` — the deparser's ``Checksum.update``: the Internet checksum of the field list.
- `ParserCounterState` — the parser counter (8 bits).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from softswitch.engine.externs import RegisterArray
from softswitch.engine.hashes import CRC16_CONFIG, CRC32_CONFIG, Crc, CrcConfig, csum16
from softswitch.errors import ControlPlaneError, UnsupportedError

# bf-utils dynamic_hash's standard CRCs: (width, poly, reflected, init, final xor)
TOFINO_CRCS: dict[str, CrcConfig] = {
    "CRC8": CrcConfig(8, 0x07, 0, 0, False, False),
    "CRC16": CRC16_CONFIG,
    "CRC32": CRC32_CONFIG,
    "CRC64": CrcConfig(64, 0x42F0E1EBA9EA3693, 0, 0, False, False),
}

# MeterColor_t values the TNA meters return (engine/meters.py counts GREEN 0, YELLOW 1, RED 2)
GREEN, YELLOW, RED = 0, 1, 3


def _concat(values: Sequence[int], widths: Sequence[int]) -> tuple[int, int]:
    acc = 0
    total = 0
    for value, width in zip(values, widths):
        acc = (acc << width) | (value & ((1 << width) - 1))
        total += width
    return acc, total


class TnaHash:
    """One ``Hash<W>`` instance: `get(values, widths)` gives its W-bit value."""

    __slots__ = ("_columns", "_crc", "algorithm", "crc_width", "extend", "msb", "width")

    def __init__(
        self,
        algorithm: str,
        width: int,
        config: CrcConfig | None = None,
        msb: bool = False,
        extend: bool = True,
    ) -> None:
        self.algorithm = algorithm
        self.width = width
        self.msb = msb
        self.extend = extend
        self._crc: Crc | None = None
        self._columns: list[int] = []
        self.crc_width = width
        if algorithm == "CUSTOM":
            if config is None:
                raise UnsupportedError("Hash(HashAlgorithm_t.CUSTOM) without a CRCPolynomial")
            self._crc = Crc(config)
            self.crc_width = config.width
        elif algorithm in TOFINO_CRCS:
            cfg = TOFINO_CRCS[algorithm]
            self._crc = Crc(cfg)
            self.crc_width = cfg.width
        elif algorithm not in ("IDENTITY", "RANDOM"):
            raise UnsupportedError(f"hash algorithm {algorithm}")

    def get(self, values: Sequence[int], widths: Sequence[int]) -> int:
        data, nbits = _concat(values, widths)
        w = self.width
        if self._crc is not None:
            crc = self._crc(data.to_bytes((nbits + 7) >> 3, "big"))
            cw = self.crc_width
            if w > cw and self.extend:
                out = crc
                for _ in range(cw, w, cw):
                    out = (out << cw) | crc
                return out & ((1 << w) - 1)
            if w < cw and self.msb:
                return crc >> (cw - w)
            return crc & ((1 << w) - 1)
        if self.algorithm == "IDENTITY":
            return data & ((1 << w) - 1)
        return self._random(data, nbits)

    def _random(self, data: int, nbits: int) -> int:
        cols = self._columns
        if len(cols) < nbits:
            rng = random.Random(0x7F4A7C15 ^ len(cols))
            cols.extend(rng.getrandbits(self.width) for _ in range(nbits - len(cols)))
        out = 0
        i = 0
        while data:
            if data & 1:
                out ^= cols[i]
            data >>= 1
            i += 1
        return out

    def __call__(self, data: bytes) -> int:
        """As an action selector's hash: over the selector key bytes."""
        return self.get((int.from_bytes(data, "big"),), (len(data) * 8,))


class TnaRegister(RegisterArray):
    """A ``Register<T, I>``; `fields` names the two fields of a struct cell (else empty)."""

    def __init__(
        self,
        name: str,
        size: int,
        width: int,
        signed: bool = False,
        initial: int = 0,
        fields: Sequence[tuple[str, int]] = (),
    ) -> None:
        super().__init__(name, size, width, signed)
        self.initial = initial
        self.fields = tuple(fields)
        self.values = [initial] * size

    def reset(self) -> None:
        self.values[:] = [self.initial] * len(self.values)   # in place: observers stay


class DirectRegisterCells:
    """A ``DirectRegister<T>``: the cell of each entry of its table, by entry handle."""

    def __init__(self, name: str, width: int, initial: int = 0) -> None:
        self.name = name
        self.width = width
        self.initial = initial
        self.cells: dict[int, int] = {}

    def read(self, handle: int) -> int:
        return self.cells.get(handle, self.initial)

    def write(self, handle: int, value: int) -> None:
        if not 0 <= value < (1 << self.width):
            raise ControlPlaneError(
                f"direct register '{self.name}': {value} does not fit {self.width} bits"
            )
        self.cells[handle] = value

    def reset(self) -> None:
        self.cells.clear()


def _ones_sum(data: bytes, odd: bool) -> int:
    """16-bit ones'-complement sum of `data` placed from an odd (`odd`) or even byte offset."""
    if odd:
        data = b"\x00" + data
    if len(data) & 1:
        data += b"\x00"
    n = int.from_bytes(data, "big")
    total = n % 0xFFFF
    if total == 0 and n:
        total = 0xFFFF
    return total


def _ones_add(a: int, b: int) -> int:
    s = a + b
    return (s & 0xFFFF) + (s >> 16)


class ParserChecksum:
    """The ``Checksum`` of a parser: state for one packet (the pipeline resets it)."""

    __slots__ = ("acc", "offset")

    def __init__(self) -> None:
        self.acc = 0
        self.offset = 0  # bytes fed so far (their parity places the next field in a word)

    def reset(self) -> None:
        self.acc = 0
        self.offset = 0

    def _feed(self, values: Sequence[int], widths: Sequence[int], negate: bool) -> None:
        data, nbits = _concat(values, widths)
        pad = -nbits % 8
        raw = (data << pad).to_bytes((nbits + pad) >> 3, "big")
        part = _ones_sum(raw, bool(self.offset & 1))
        if negate:
            part = ~part & 0xFFFF
        self.acc = _ones_add(self.acc, part)
        self.offset += len(raw)

    def add(self, values: Sequence[int], widths: Sequence[int]) -> None:
        self._feed(values, widths, False)

    def subtract(self, values: Sequence[int], widths: Sequence[int]) -> None:
        self._feed(values, widths, True)

    def verify(self) -> bool:
        """True when the checksum is wrong (the sum over data and checksum is not 0xFFFF)."""
        return self.acc != 0xFFFF

    def get(self) -> int:
        return self.acc


def csum_update(data: bytes, zeros_as_ones: bool = False) -> int:
    """``Checksum.update`` in a deparser: the Internet checksum of the field list; with
    `zeros_as_ones` a result of 0 is sent as 0xFFFF (UDP)."""
    value = csum16(data)
    if zeros_as_ones and value == 0:
        return 0xFFFF
    return value


class ParserCounterState:
    """``ParserCounter``: an 8-bit counter of one parse (the pipeline resets it)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def reset(self) -> None:
        self.value = 0

    def set(self, value: int) -> None:
        self.value = value & 0xFF

    def set_field(self, field: int, maximum: int, rotate: int, mask: int, add: int) -> None:
        """``set(field, max, rotate, mask, add)``: ((field rotated right by `rotate` within 8
        bits) & the low `mask` + 1 bits) + `add`, at most `maximum`."""
        field &= 0xFF
        rotate &= 7
        rotated = ((field >> rotate) | (field << (8 - rotate))) & 0xFF
        value = (rotated & ((1 << ((mask & 7) + 1)) - 1)) + (add & 0xFF)
        self.value = min(value, maximum & 0xFF) & 0xFF

    def increment(self, amount: int) -> None:
        self.value = (self.value + amount) & 0xFF

    def decrement(self, amount: int) -> None:
        self.value = (self.value - amount) & 0xFF

    def is_zero(self) -> bool:
        return self.value == 0

    def is_negative(self) -> bool:
        return self.value >= 0x80


def meter_color(bmv2_color: int, colors: tuple[int, int, int]) -> int:
    """The TNA colour value for engine/meters' GREEN 0 / YELLOW 1 / RED 2 (`colors` are the
    values the Meter was constructed with: green, yellow, red)."""
    return colors[bmv2_color]


def pre_color(tna_color: int) -> int:
    """A MeterColor_t (GREEN 0, YELLOW 1, RED 3) as engine/meters' pre-colour."""
    return 2 if tna_color >= 2 else tna_color
