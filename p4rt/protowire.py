"""Protobuf's wire format by hand, for the byte-level fast paths on both sides of a Write (the
controller's codec and request framing, softswitch's server): varints, length-delimited
fields, and a pause of the cyclic garbage collector around work that makes many long-lived
objects.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

SMALL = [bytes((n,)) for n in range(128)]   # the one-byte varints


def encode_varint(n: int) -> bytes:
    """`n` (unsigned, at most 64 bits) as a protobuf varint."""
    if n < 128:
        return SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class VarintTooLong(ValueError):
    """More than 64 bits of varint: not a protobuf field."""


def decode_varint(data: bytes, i: int) -> tuple[int, int]:
    """(value, index after it) of the varint at `data[i]`; IndexError when the bytes end
    inside it, VarintTooLong past 64 bits."""
    value = 0
    shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise VarintTooLong


def length_delimited(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field: its tag byte(s), the length, the bytes."""
    size = len(data)
    return tag + (SMALL[size] if size < 128 else encode_varint(size)) + data


@contextlib.contextmanager
def collections_deferred() -> Iterator[None]:
    """No cyclic garbage collection inside (it resumes after).

    Decoding or encoding a batch makes a few objects per entry that live on (entries, their
    checked forms), so the collector's periodic passes over them find nothing; on large
    batches they cost a fifth to a third of the time. The section must not await or block on
    other threads' work. When collection is already off, someone else manages it: left alone.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
