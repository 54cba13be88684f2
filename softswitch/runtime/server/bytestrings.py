"""P4Runtime bytestrings (spec 8.4): big-endian, canonical = shortest form.

A server accepts the canonical form and any zero-padded longer form, as long as the value
fits the bitwidth; it always answers with the canonical form (at least one byte). Signed
(``int<W>``) values travel as W-bit two's complement.
"""

from __future__ import annotations

from softswitch.runtime.server.write_error import invalid


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """The unsigned value of `data` for a `bitwidth`-bit field; `what` names it in errors."""
    if not data:
        raise invalid(f"{what}: empty bytestring")
    if bitwidth < 0:
        raise invalid(f"{what}: the P4Info gives it a negative bitwidth ({bitwidth})")
    value = int.from_bytes(data, "big")
    if value >> bitwidth:
        raise invalid(
            f"{what}: value 0x{data.hex()} does not fit in {bitwidth} bits"
        )
    return value


def decode_signed(data: bytes, bitwidth: int, what: str) -> int:
    """A two's complement `bitwidth`-bit value as a Python int (negative when the top bit is set)."""
    value = decode(data, bitwidth, what)
    if bitwidth and value >> (bitwidth - 1):
        value -= 1 << bitwidth
    return value


def encode(value: int, bitwidth: int | None = None) -> bytes:
    """The canonical bytestring of `value` (negative values as `bitwidth`-bit two's complement)."""
    if value < 0:
        if bitwidth is None:
            raise ValueError("a negative value needs a bitwidth")
        value &= (1 << bitwidth) - 1
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
