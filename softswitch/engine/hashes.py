"""v1model hash algorithms, computed exactly as BMv2 ``simple_switch`` does over a byte buffer.

BMv2 (``src/bm_sim/calculations.cpp``) builds one buffer from a list of fields by concatenating
their bits most-significant first and zero-padding the *last* byte on the right
(`fields_to_bytes`); fields of invalid headers are skipped, so callers pass only the fields of
valid headers (metadata and constants are always present). A ``*_with_payload`` calculation
appends the unparsed payload after that padded buffer.

Algorithms (the v1model ``HashAlgorithm`` members; p4c's BMv2 back end passes the names through):

=============  ===========================================================================
crc32          CRC-32 (poly 0x04C11DB7, init/xor-out 0xFFFFFFFF, reflected in and out)
crc32_custom   same defaults as crc32; parameters settable per calculation (`Crc.configure`)
crc16          CRC-16/ARC (poly 0x8005, init 0, xor-out 0, reflected in and out)
crc16_custom   same defaults as crc16; parameters settable per calculation
identity       the first min(8, len) bytes as a big-endian integer (no shift for short input)
csum16         the 16-bit ones'-complement Internet checksum (RFC 1071), odd byte zero-padded
xor16          XOR of the big-endian 16-bit words, an odd last byte taken as its high byte
random         not registered in BMv2: simple_switch refuses the program ("Unknown hash
               algorithm: random"), so `hash_function` raises `UnsupportedError`
=============  ===========================================================================

v1model has no crc8 member (BMv2's ``crc8_custom`` is only reachable from P4_14/PSA).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from softswitch.errors import SourceLocation, UnsupportedError

HashFunction = Callable[[bytes], int]

#: The v1model ``enum HashAlgorithm`` members, in declaration order.
HASH_ALGORITHMS: tuple[str, ...] = (
    "crc32",
    "crc32_custom",
    "crc16",
    "crc16_custom",
    "random",
    "identity",
    "csum16",
    "xor16",
)

_U64 = (1 << 64) - 1


def _reflect(value: int, nbits: int) -> int:
    result = 0
    for _ in range(nbits):
        result = (result << 1) | (value & 1)
        value >>= 1
    return result


_REFLECT8: tuple[int, ...] = tuple(_reflect(b, 8) for b in range(256))


@dataclass(frozen=True, slots=True)
class CrcConfig:
    """Parameters of a CRC in BMv2's terms (``crc_config_t``); `width` is 8, 16, 32 or 64."""

    width: int
    polynomial: int
    initial_remainder: int
    final_xor_value: int
    data_reflected: bool
    remainder_reflected: bool


CRC16_CONFIG = CrcConfig(16, 0x8005, 0x0000, 0x0000, True, True)
CRC32_CONFIG = CrcConfig(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)


def _msb_table(width: int, poly: int) -> tuple[int, ...]:
    mask = (1 << width) - 1
    top = 1 << (width - 1)
    table = []
    for dividend in range(256):
        rem = dividend << (width - 8)
        for _ in range(8):
            rem = ((rem << 1) ^ poly) if rem & top else (rem << 1)
        table.append(rem & mask)
    return tuple(table)


def _lsb_table(width: int, poly: int) -> tuple[int, ...]:
    rpoly = _reflect(poly, width)
    table = []
    for dividend in range(256):
        rem = dividend
        for _ in range(8):
            rem = (rem >> 1) ^ rpoly if rem & 1 else rem >> 1
        table.append(rem)
    return tuple(table)


class Crc:
    """A table-driven CRC with BMv2's parameterisation; call it on a buffer.

    Reflected-in-and-out CRCs run the equivalent LSB-first algorithm; mixed reflection runs
    BMv2's own MSB-first loop. Each ``crc16_custom``/``crc32_custom`` calculation owns one.
    """

    __slots__ = ("_config", "_fn", "_init", "_mask", "_shift", "_table")

    def __init__(self, config: CrcConfig) -> None:
        self._config = config
        self._fn: HashFunction = self._compute_generic
        self.configure(config)

    @property
    def config(self) -> CrcConfig:
        return self._config

    def configure(self, config: CrcConfig) -> None:
        """Replace the parameters (BMv2 CLI ``set_crc16_parameters``/``set_crc32_parameters``)."""
        if config.width not in (8, 16, 32, 64):
            raise ValueError(f"CRC width must be 8, 16, 32 or 64, not {config.width}")
        self._config = config
        self._mask = (1 << config.width) - 1
        self._shift = config.width - 8
        if config == CRC32_CONFIG:
            self._fn = zlib.crc32
        elif config.data_reflected and config.remainder_reflected:
            self._table = _lsb_table(config.width, config.polynomial)
            self._init = _reflect(config.initial_remainder & self._mask, config.width)
            self._fn = self._compute_reflected
        else:
            self._table = _msb_table(config.width, config.polynomial)
            self._init = config.initial_remainder & self._mask
            self._fn = self._compute_generic

    def __call__(self, data: bytes) -> int:
        return self._fn(data)

    def _compute_reflected(self, data: bytes) -> int:
        table = self._table
        rem = self._init
        for byte in data:
            rem = table[(rem ^ byte) & 0xFF] ^ (rem >> 8)
        return rem ^ (self._config.final_xor_value & self._mask)

    def _compute_generic(self, data: bytes) -> int:
        cfg = self._config
        table, mask, shift = self._table, self._mask, self._shift
        rem = self._init
        refl = _REFLECT8 if cfg.data_reflected else None
        for byte in data:
            if refl is not None:
                byte = refl[byte]
            rem = table[(byte ^ (rem >> shift)) & 0xFF] ^ ((rem << 8) & mask)
        if cfg.remainder_reflected:
            rem = _reflect(rem, cfg.width)
        return rem ^ (cfg.final_xor_value & mask)


_CRC16 = Crc(CRC16_CONFIG)


def crc32(data: bytes) -> int:
    """BMv2 ``crc32`` (the zlib/Ethernet CRC-32)."""
    return zlib.crc32(data)


def crc16(data: bytes) -> int:
    """BMv2 ``crc16`` (CRC-16/ARC)."""
    return _CRC16(data)


def identity(data: bytes) -> int:
    """BMv2 ``identity``: the first (at most 8) bytes, big-endian."""
    return int.from_bytes(data[:8], "big")


def csum16(data: bytes) -> int:
    """BMv2 ``csum16``: the Internet checksum (complement of the ones'-complement sum)."""
    if len(data) & 1:
        data = bytes(data) + b"\x00"
    n = int.from_bytes(data, "big")
    # 2**16 == 1 (mod 0xFFFF), so the word sum mod 0xFFFF is n mod 0xFFFF; a non-zero sum
    # that is a multiple of 0xFFFF folds to 0xFFFF (ones'-complement "negative zero").
    total = n % 0xFFFF
    if total == 0 and n:
        total = 0xFFFF
    return ~total & 0xFFFF


def xor16(data: bytes) -> int:
    """BMv2 ``xor16``: XOR of big-endian 16-bit words; a trailing byte is the high byte."""
    if len(data) & 1:
        data = bytes(data) + b"\x00"
    n = int.from_bytes(data, "big")
    result = 0
    while n:
        result ^= n & 0xFFFF
        n >>= 16
    return result


_SHARED: dict[str, HashFunction] = {
    "crc32": crc32,
    "crc16": crc16,
    "identity": identity,
    "csum16": csum16,
    "xor16": xor16,
}


def hash_function(algo: str, location: SourceLocation | None = None) -> HashFunction:
    """The function computing `algo` (a ``HashAlgorithm`` member name) over a byte buffer.

    ``crc16_custom``/``crc32_custom`` give a fresh `Crc` per call, as BMv2 gives each
    calculation its own configurable instance. ``random`` (and any unknown name) raises
    `UnsupportedError` at `location`, as simple_switch refuses to load such a program.
    """
    fn = _SHARED.get(algo)
    if fn is not None:
        return fn
    if algo == "crc16_custom":
        return Crc(CRC16_CONFIG)
    if algo == "crc32_custom":
        return Crc(CRC32_CONFIG)
    if algo == "random":
        raise UnsupportedError(
            "HashAlgorithm.random (BMv2 simple_switch has no 'random' hash and rejects "
            "the program)",
            location,
        )
    raise UnsupportedError(f"hash algorithm '{algo}'", location)


def fields_to_bytes(values: Sequence[int], widths: Sequence[int]) -> bytes:
    """Concatenate the bits of `values` (each masked to its width), zero-padding on the right.

    This is BMv2's hash/checksum input buffer: e.g. a 4-bit 0xA then an 8-bit 0xBC give
    ``b"\\xab\\xc0"``. Negative values (``int<W>``) are taken in two's complement.
    """
    acc = 0
    total = 0
    for value, width in zip(values, widths, strict=True):
        acc = (acc << width) | (value & ((1 << width) - 1))
        total += width
    pad = -total % 8
    return (acc << pad).to_bytes((total + pad) // 8, "big")


def hash_with_offset(hash_value: int, base: int, max_value: int, out_width: int) -> int:
    """The v1model ``hash()`` result: ``base + (H % max)`` (``max == 0`` acts as 1, so the
    result is `base`), computed in 64 bits as BMv2 does, then truncated to `out_width` bits."""
    divisor = max_value & _U64 or 1
    result = ((hash_value & _U64) % divisor + (base & _U64)) & _U64
    return result & ((1 << out_width) - 1)


def v1model_hash(
    fn: HashFunction,
    base: int,
    values: Sequence[int],
    widths: Sequence[int],
    max_value: int,
    out_width: int,
) -> int:
    """``hash(result, algo, base, {values}, max)`` for a result of `out_width` bits."""
    return hash_with_offset(fn(fields_to_bytes(values, widths)), base, max_value, out_width)


def compute_checksum(
    fn: HashFunction, values: Sequence[int], widths: Sequence[int], payload: bytes = b""
) -> int:
    """The raw calculation output over the fields (then `payload`, for ``*_with_payload``)."""
    data = fields_to_bytes(values, widths)
    if payload:
        data += payload
    return fn(data)


def update_checksum(
    fn: HashFunction,
    values: Sequence[int],
    widths: Sequence[int],
    checksum_width: int,
    payload: bytes = b"",
) -> int:
    """The new value of the checksum field for ``update_checksum[_with_payload]``.

    The caller skips the call when the condition is false (BMv2 leaves the field unchanged).
    """
    return compute_checksum(fn, values, widths, payload) & ((1 << checksum_width) - 1)


def verify_checksum(
    fn: HashFunction,
    values: Sequence[int],
    widths: Sequence[int],
    checksum: int,
    payload: bytes = b"",
) -> bool:
    """Whether ``verify_checksum[_with_payload]`` passes; on False the caller sets
    ``standard_metadata.checksum_error = 1``.

    BMv2 compares the full calculation output with the field value (no truncation), and the
    caller treats a false condition or an invalid checksum-field header as a pass.
    """
    return compute_checksum(fn, values, widths, payload) == checksum


def checksum16_get(values: Sequence[int], widths: Sequence[int]) -> int:
    """The deprecated ``Checksum16.get(data)``: csum16 over the fields."""
    return csum16(fields_to_bytes(values, widths))
