"""bit<W>/int<W> wider than 128 bits on the C engine (W_K limbs): random operands, edges
included, through every operator of tests/native/p4/wide.p4 on both engines — the outputs must
be the same — and the results checked against P4's arithmetic on Python ints; random() wider
than 64 bits draws the Python engine's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twin import TwinSwitch

from softswitch.compiler import compile_file
from softswitch.ir.checked import CheckedProgram
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

PROGRAM = Path(__file__).resolve().parent / "p4" / "wide.p4"
W = 200
M = (1 << W) - 1
# out_t's fields in wire order: (name, width)
OUT = [("sum", 200), ("diff", 200), ("prod", 200), ("bits", 200), ("shl", 200), ("shr", 200),
       ("sar", 200), ("cat", 256), ("mid", 136), ("lo", 64), ("hi", 120), ("neg", 192),
       ("cmp", 8), ("h", 32), ("misc", 200), ("r1", 128), ("r2", 128), ("r3", 104)]


@pytest.fixture(scope="module")
def program() -> CheckedProgram:
    return compile_file(PROGRAM)


def _fields(data: bytes) -> dict[str, int]:
    total = sum(w for _, w in OUT)
    value = int.from_bytes(data[:total // 8], "big")
    out, shift = {}, total
    for name, w in OUT:
        shift -= w
        out[name] = (value >> shift) & ((1 << w) - 1)
    return out


def _signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) else v


operands = st.sampled_from([0, 1, M, 1 << (W - 1), (1 << 128) - 1, 1 << 64, M >> 1]) \
    | st.integers(0, M)


@settings(max_examples=200, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(a=operands, b=operands, n=st.sampled_from([0, 1, 63, 64, 65, 128, 199, 200, 255])
       | st.integers(0, 255), op=st.integers(0, 255))
def test_wide_arithmetic(program: CheckedProgram, a: int, b: int, n: int, op: int) -> None:
    sw = TwinSwitch(program)
    packet = a.to_bytes(25, "big") + b.to_bytes(25, "big") + bytes([n, op])
    out = sw.process_packet(0, packet)  # the twin asserts both engines agree
    f = _fields(out[0].data)
    assert f["sum"] == (a + b) & M
    assert f["diff"] == (a - b) & M
    assert f["prod"] == (a * b) & M
    assert f["bits"] == ((a & b) ^ (a | (~b & M))) & M
    assert f["shl"] == ((a << n) & M if n < W else 0)
    assert f["shr"] == b >> n
    assert f["sar"] == (_signed(a, W) >> n) & M
    mask128 = (1 << 128) - 1
    assert f["cat"] == ((a & mask128) << 128) | (b & mask128)
    assert f["mid"] == (a >> 35) & ((1 << 136) - 1)
    assert f["lo"] == a & ((1 << 64) - 1)
    assert f["hi"] == b >> 80
    assert f["neg"] == (-_signed(op, 8) + (b & ((1 << 192) - 1))) & ((1 << 192) - 1)
    sa, sb = _signed(a, W), _signed(b, W)
    cmp = (a < b) | (a >= b) << 1 | (sa < sb) << 2 | (a == b) << 3 | (a != 0) << 4 \
        | (sb > -1) << 5
    assert f["cmp"] == cmp
    lo, hi = a & mask128, b & mask128
    assert lo <= f["r1"] <= max(lo, hi)
    assert f["r3"] <= b & ((1 << 104) - 1)
