"""The native runtime's hashes, checksums, hash input buffer and bit access, against the
Python engine's (engine/hashes.py, engine/packet.py) on random inputs."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from native_lib import needs_cc, words

from softswitch.engine import hashes
from softswitch.engine.hashes import Crc, CrcConfig
from softswitch.engine.packet import extract_bits, insert_bits
from softswitch.native import build
from softswitch.native.build import SS_HASH, NativeLibrary

pytestmark = needs_cc
FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DATA = st.binary(max_size=67)


@pytest.mark.parametrize("algo", ["crc32", "crc32_custom", "crc16", "crc16_custom", "identity",
                                  "csum16", "xor16"])
@FAST
@given(data=DATA)
def test_algorithms_match_python(rt: NativeLibrary, algo: str, data: bytes) -> None:
    expected = hashes.hash_function(algo)(data)
    assert rt.lib.ss_hash(SS_HASH[algo], rt.ffi.NULL, data, len(data)) == expected


def test_known_values_and_empty_input(rt: NativeLibrary) -> None:
    lib, null = rt.lib, rt.ffi.NULL
    assert lib.ss_hash(SS_HASH["crc32"], null, b"123456789", 9) == 0xCBF43926
    assert lib.ss_hash(SS_HASH["crc16"], null, b"123456789", 9) == 0xBB3D  # CRC-16/ARC
    for algo in ("crc32", "crc16", "identity", "csum16", "xor16"):
        assert lib.ss_hash(SS_HASH[algo], null, b"", 0) == hashes.hash_function(algo)(b"")
    assert lib.ss_hash(SS_HASH["random"], null, b"abc", 3) == 0  # refused at compile time


CONFIGS = st.builds(
    CrcConfig,
    width=st.sampled_from([8, 16, 32, 64]),
    polynomial=st.integers(0, (1 << 64) - 1),
    initial_remainder=st.integers(0, (1 << 64) - 1),
    final_xor_value=st.integers(0, (1 << 64) - 1),
    data_reflected=st.booleans(),
    remainder_reflected=st.booleans(),
)


def c_config(rt: NativeLibrary, cfg: CrcConfig) -> object:
    return rt.ffi.new("ss_crc_config *", {
        "width": cfg.width, "polynomial": cfg.polynomial,
        "initial_remainder": cfg.initial_remainder, "final_xor_value": cfg.final_xor_value,
        "data_reflected": int(cfg.data_reflected),
        "remainder_reflected": int(cfg.remainder_reflected)})


@FAST
@given(cfg=CONFIGS, data=DATA)
def test_crc_configurations_match_python(rt: NativeLibrary, cfg: CrcConfig, data: bytes) -> None:
    c = c_config(rt, cfg)
    expected = Crc(cfg)(data)
    assert rt.lib.ss_crc(c, data, len(data)) == expected
    # the _custom algorithms run the configuration they are given
    assert rt.lib.ss_hash(SS_HASH["crc32_custom"], c, data, len(data)) == expected


@FAST
@given(data=DATA)
def test_csum16_is_the_complemented_sum(rt: NativeLibrary, data: bytes) -> None:
    assert rt.lib.ss_csum16(data, len(data)) == hashes.csum16(data)


def test_csum16_edge_sums(rt: NativeLibrary) -> None:
    # all zero, a sum that is a multiple of 0xFFFF (negative zero), and an odd last byte
    for data in (b"\x00\x00\x00", b"\xff\xff", b"\xff\xfe\x00\x01", b"\x01"):
        assert rt.lib.ss_csum16(data, len(data)) == hashes.csum16(data)


@FAST
@given(fields=st.lists(st.integers(1, 128).flatmap(
    lambda w: st.tuples(st.just(w), st.integers(0, (1 << 128) - 1))), max_size=8))
def test_fields_to_bytes_matches_python(rt: NativeLibrary,
                                        fields: list[tuple[int, int]]) -> None:
    widths = [w for w, _ in fields]
    values = [v for _, v in fields]  # wider than their fields: both mask them
    expected = hashes.fields_to_bytes(values, widths)
    out = rt.ffi.new("uint8_t[]", 160)
    n = rt.lib.ss_fields_to_bytes_words(words(rt, values), rt.ffi.new("uint16_t[]", widths or [0]),
                                        len(fields), out, 160)
    assert rt.ffi.buffer(out, n)[:] == expected


def test_fields_to_bytes_stops_at_the_capacity(rt: NativeLibrary) -> None:
    out = rt.ffi.new("uint8_t[]", [0xEE] * 4)
    n = rt.lib.ss_fields_to_bytes_words(words(rt, [(1 << 40) - 1]), rt.ffi.new("uint16_t[]", [40]),
                                        1, out, 3)
    assert n == 3 and list(out) == [0xFF, 0xFF, 0xFF, 0xEE]


def test_read_and_write_bits_match_packet_py(rt: NativeLibrary) -> None:
    rng = random.Random(26)
    size = 40
    for _ in range(3000):
        w = rng.choice([rng.randint(1, 128), rng.randint(120, 128), rng.randint(1, 9)])
        pos = rng.randint(0, size * 8 - w)
        data = bytes(rng.getrandbits(8) for _ in range(size))
        buf = rt.ffi.new("uint8_t[]", data)
        out = rt.ffi.new("uint64_t[2]")
        rt.lib.t_read_bits(buf, pos, w, out)
        assert out[0] | out[1] << 64 == extract_bits(data, pos, w), (pos, w)
        value = rng.getrandbits(128)
        expected = bytearray(data)
        insert_bits(expected, pos, w, value)
        rt.lib.t_write_bits(buf, pos, w, words(rt, [value]))
        assert rt.ffi.buffer(buf, size)[:] == bytes(expected), (pos, w)


def test_entry_layout_matches_the_cdef(rt: NativeLibrary) -> None:
    out = rt.ffi.new("size_t[10]")
    rt.lib.t_entry_layout(out)
    ffi = rt.ffi
    assert list(out) == [ffi.offsetof("ss_entry", f)
                         for f in ("handle", "action", "nargs", "args", "packets", "bytes", "meter",
                                   "member", "group")] + [
        ffi.sizeof("ss_entry")]


def test_cdef_declares_what_the_header_declares() -> None:
    # RUNTIME_CDEF restates ss_rt.h for cffi (which cannot read __int128): every function in
    # it must be declared identically in the header
    def norm(text: str) -> str:
        return " ".join(text.split())

    header = norm(build.runtime_header())
    decls = [d.strip() + ";" for d in build.RUNTIME_CDEF.split(";") if "(" in d]
    assert len(decls) == 24
    for decl in decls:
        assert norm(decl) in header, decl
