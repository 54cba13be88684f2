"""Python values ⇄ P4Runtime canonical bytestrings.

Accepted inputs: int (and bool), bytes (big-endian), and strings: "10.0.0.1", "2001:db8::1",
"aa:bb:cc:dd:ee:ff" (or with '-'), "0x1f", "42". The canonical form (P4Runtime spec §8.4) is the
shortest big-endian string holding the value, zero being one zero byte.
"""

from __future__ import annotations

import ipaddress
import re

from p4rt.errors import EncodeError

Value = int | bytes | str

_MAC = re.compile(r"^[0-9a-fA-F]{1,2}([:-][0-9a-fA-F]{1,2}){5}$")


def canonical(data: bytes) -> bytes:
    """Strip leading zero bytes, keeping at least one byte."""
    stripped = data.lstrip(b"\x00")
    return stripped or b"\x00"


def to_int(value: Value, what: str = "value") -> int:
    """The unsigned integer a Python value stands for."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if value < 0:
            raise EncodeError(f"{what}: negative value {value} (P4Runtime values are unsigned)")
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return int.from_bytes(bytes(value), "big")
    if isinstance(value, str):
        return _parse_string(value.strip(), what)
    raise EncodeError(f"{what}: cannot encode {type(value).__name__} {value!r}")


def _parse_string(text: str, what: str) -> int:
    if _MAC.match(text):
        return int("".join(part.zfill(2) for part in re.split("[:-]", text)), 16)
    if ":" in text:
        try:
            return int(ipaddress.IPv6Address(text))
        except ValueError:
            raise EncodeError(f"{what}: {text!r} is not an IPv6 or MAC address") from None
    if text.count(".") == 3:
        try:
            return int(ipaddress.IPv4Address(text))
        except ValueError:
            raise EncodeError(f"{what}: {text!r} is not an IPv4 address") from None
    try:
        number = int(text, 0)
    except ValueError:
        raise EncodeError(
            f"{what}: cannot read {text!r} (expected a number, an IPv4/IPv6 or MAC address)"
        ) from None
    if number < 0:
        raise EncodeError(f"{what}: negative value {text!r} (P4Runtime values are unsigned)")
    return number


def check_width(number: int, bitwidth: int, what: str = "value") -> int:
    """`number` itself, if it fits in `bitwidth` bits (0 means unsized: anything fits)."""
    if bitwidth and number >> bitwidth:
        raise EncodeError(f"{what}: {number:#x} does not fit in {bitwidth} bits")
    return number


def int_to_bytes(number: int) -> bytes:
    """Canonical bytestring of a non-negative integer."""
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


def encode(value: Value, bitwidth: int, what: str = "value") -> bytes:
    """Canonical bytestring of `value` for a `bitwidth`-bit field.

    Width 0 marks a field whose width P4Info does not give (translated/string types): bytes and
    strings other than numbers and addresses pass through as they are.
    """
    if bitwidth == 0 and isinstance(value, bytes | bytearray):
        return bytes(value)
    if bitwidth == 0 and isinstance(value, str):
        try:
            return int_to_bytes(to_int(value, what))
        except EncodeError:
            return value.encode()
    return int_to_bytes(check_width(to_int(value, what), bitwidth, what))


def decode(data: bytes) -> int:
    """The unsigned integer of a (canonical or padded) big-endian bytestring."""
    return int.from_bytes(data, "big")


def full_mask(bitwidth: int) -> int:
    return (1 << bitwidth) - 1


def prefix_mask(bitwidth: int, prefix_len: int) -> int:
    """Mask of the top `prefix_len` bits of a `bitwidth`-bit field."""
    return full_mask(bitwidth) ^ full_mask(bitwidth - prefix_len)
