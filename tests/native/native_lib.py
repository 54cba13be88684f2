"""Shared by the native runtime tests: C wrappers around the runtime and cffi helpers."""

from __future__ import annotations

import pytest

from softswitch.native.build import NativeLibrary, compiler_available

# The static inline bit access and ss_entry's C layout, reachable from cffi.
WRAPPERS = r"""
#include "ss_rt.h"
void t_read_bits(const uint8_t *buf, uint32_t pos, unsigned w, uint64_t *out) {
    u128 v = ss_read_bits(buf, pos, w);
    out[0] = (uint64_t)v;
    out[1] = (uint64_t)(v >> 64);
}
void t_write_bits(uint8_t *buf, uint32_t pos, unsigned w, const uint64_t *v) {
    ss_write_bits(buf, pos, w, ((u128)v[1] << 64) | v[0]);
}
void t_entry_layout(size_t *out) {
    out[0] = offsetof(ss_entry, handle);
    out[1] = offsetof(ss_entry, action);
    out[2] = offsetof(ss_entry, nargs);
    out[3] = offsetof(ss_entry, args);
    out[4] = offsetof(ss_entry, packets);
    out[5] = offsetof(ss_entry, bytes);
    out[6] = offsetof(ss_entry, meter);
    out[7] = offsetof(ss_entry, member);
    out[8] = offsetof(ss_entry, group);
    out[9] = sizeof(ss_entry);
}
"""
WRAPPERS_CDEF = """
void t_read_bits(const uint8_t *buf, uint32_t pos, unsigned w, uint64_t *out);
void t_write_bits(uint8_t *buf, uint32_t pos, unsigned w, const uint64_t *v);
void t_entry_layout(size_t *out);
"""

needs_cc = pytest.mark.skipif(compiler_available() is None,
                              reason="no C compiler ($CC or cc): the native runtime cannot build")


M64 = (1 << 64) - 1


def words(rt: NativeLibrary, values: list[int]) -> object:
    """u128 pairs (low word first) for the cffi boundary."""
    out = []
    for v in values:
        out += [v & M64, v >> 64]
    return rt.ffi.new("uint64_t[]", out or [0])
