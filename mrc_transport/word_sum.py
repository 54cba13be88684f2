"""The sum of a buffer's 16-bit big-endian words modulo 0xFFFF, as the UDP checksum needs it:
in C where a compiler is found (softswitch's native build cache), else in Python.

Building a 4 KiB data frame spent more time on its checksum (`int.from_bytes(payload) % 0xFFFF`,
a big-integer division) than on anything else. Both ways give the same residue: `python_sum` is
the reference, `tests/unit/test_word_sum.py` holds the C one to it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

#: set to "python" to keep the C version out (as SOFTSWITCH_ENGINE=python does for the engine)
ENV = "MRC_TRANSPORT_NATIVE"

# 2**32 = 1 (mod 0xFFFF), so big-endian 32-bit words add up to the same residue as 16-bit ones,
# half the loads; an odd byte at the end is the high byte of a last word.
C_SOURCE = r"""
#include <stdint.h>
#include <stddef.h>
#include <string.h>

uint64_t mrc_word_sum(const char *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t sum = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t w;
        memcpy(&w, p + i, 4);
        sum += __builtin_bswap32(w);
    }
    for (; i + 2 <= n; i += 2)
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    if (i < n)
        sum += (uint32_t)p[i] << 8;
    return sum % 0xFFFF;
}
"""
C_DEF = "uint64_t mrc_word_sum(const char *data, size_t n);"


def python_sum(data: bytes) -> int:
    """The residue in Python: the bytes as one big-endian integer are congruent to the sum of
    their 16-bit words (2**16 = 1 mod 0xFFFF); an odd length is padded with a zero byte."""
    value = int.from_bytes(data)
    return (value << 8 if len(data) & 1 else value) % 0xFFFF


def native_sum() -> Callable[[bytes], int] | None:
    """The C version, or None when it cannot be built here (no compiler, no cffi)."""
    try:
        from softswitch.errors import NativeBuildError
        from softswitch.native.build import NativeLibrary, load_library
    except ImportError:
        return None
    try:
        library = load_library("mrc_word_sum", [C_SOURCE], C_DEF)
    except (NativeBuildError, ImportError):   # ImportError: no cffi
        return None
    c_sum = library.lib.mrc_word_sum

    # `keep` holds the library: a cffi function pointer does not, and the library is closed
    # (its code unmapped) once its FFI and Lib are collected; load_library's FFI cache drops
    # its FFI after eight other declarations, and the next call jumped into unmapped memory.
    def word_sum(data: bytes, keep: NativeLibrary = library) -> int:
        return int(c_sum(data, len(data)))

    return word_sum


@functools.cache
def word_sum_function() -> Callable[[bytes], int]:
    """The function FrameBuilder uses: C unless $MRC_TRANSPORT_NATIVE is "python" or no C
    version can be built (chosen once per process)."""
    if os.environ.get(ENV, "").lower() != "python":
        found = native_sum()
        if found is not None:
            return found
    return python_sum
