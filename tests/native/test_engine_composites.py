"""Values the C engine holds as C structs — varbit fields and locals (with their current
width), header unions and stacks of them, tuples — on both engines with random packets: every
output (and so every parser error, validity, emitted length, hash and checksum over a varbit)
must be the same on the C engine as on the Python engine (the reference)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twin import TwinSwitch, assert_same_state

from softswitch.compiler import compile_file
from softswitch.ir.checked import CheckedProgram
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

PROGRAM = Path(__file__).resolve().parent / "p4" / "composites.p4"


@pytest.fixture(scope="module")
def program() -> CheckedProgram:
    return compile_file(PROGRAM)


def _unit(kind: int, value: int) -> bytes:
    """One tagged union member: tag 1 then a_t (1 byte), tag 2 then b_t (2 bytes)."""
    return bytes([kind]) + value.to_bytes(kind, "big")


@st.composite
def packets(draw: st.DrawFn) -> bytes:
    """ctl (the varbit lengths: bits anything, bytes up to 31), v, w, tagged units, a tail;
    the lengths often disagree with what follows, so every extract error happens too."""
    bits = draw(st.sampled_from([0, 8, 16, 64, 120, 128, 136, 192, 200, 208, 255])
                | st.integers(0, 255))
    nbytes = draw(st.integers(0, 40))
    ctl = bytes([bits, nbytes, draw(st.integers(0, 255)), draw(st.integers(0, 255))])
    body = draw(st.binary(min_size=0, max_size=(bits // 8) + nbytes + 3))
    units = b"".join(_unit(k, v) for k, v in draw(st.lists(
        st.tuples(st.sampled_from([1, 2]), st.integers(0, 0xFF)), max_size=6)))
    return ctl + body + units + draw(st.binary(max_size=4))


@settings(max_examples=150, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.lists(packets() | st.binary(max_size=90), min_size=1, max_size=6))
def test_random_packets_on_both_engines(program: CheckedProgram, data: list[bytes]) -> None:
    sw = TwinSwitch(program)
    for packet in data:
        sw.process_packet(1, packet)
    assert_same_state(sw)


def test_varbit_swap_and_lengths(program: CheckedProgram) -> None:
    """A 200-bit and a 256-bit varbit (several limbs) survive extract, a round trip through
    locals, and emit at their current widths."""
    sw = TwinSwitch(program)
    v = bytes(range(1, 26))          # f, g, then 192 bits of data
    w = bytes(range(100, 131))       # 30 bytes of data, then t
    packet = bytes([200, 30, 4, 0]) + v + w + _unit(2, 0xBEEF) + _unit(1, 0x11)
    out = sw.process_packet(1, packet)
    assert len(out) == 1
    data = out[0].data
    # res (6 bytes) then ctl, v and w at their extracted lengths: the swap left w as it was
    assert data[6:10] == packet[:4]
    assert data[10:10 + 25] == v
    assert data[35:35 + 30] == w[:30]
