"""The UDP checksum's word sum (mrc_transport/word_sum.py): the C version gives the Python
reference's residue on every length and on the sums that wrap, and FrameBuilder's frames are the
same bytes with either."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from mrc_transport import fastwire
from mrc_transport.word_sum import native_sum, python_sum
from softswitch.native.build import compiler_available

ROOT = Path(__file__).resolve().parents[2]
needs_cc = pytest.mark.skipif(compiler_available() is None, reason="no C compiler")


def words_by_hand(data: bytes) -> int:
    """The definition: 16-bit big-endian words, an odd byte padded, summed mod 0xFFFF."""
    padded = data + b"\0" * (len(data) & 1)
    return sum(padded[i] << 8 | padded[i + 1] for i in range(0, len(padded), 2)) % 0xFFFF


def test_the_python_residue_is_the_sum_of_the_words() -> None:
    rng = random.Random(5)
    for n in (*range(12), 4095, 4096):
        data = rng.randbytes(n)
        assert python_sum(data) == words_by_hand(data), n
    assert python_sum(b"\xff\xff" * 3) == 0     # 0xFFFF is 0 in this residue
    assert python_sum(b"\x12") == 0x1200


@needs_cc
def test_the_c_sum_equals_the_python_one_on_every_length_and_wrap() -> None:
    c_sum = native_sum()
    assert c_sum is not None
    rng = random.Random(11)
    cases = [rng.randbytes(n) for n in (*range(40), 1023, 1024, 4093, 4094, 4095, 4096, 9000)]
    cases += [b"\xff" * n for n in (2, 3, 4, 5, 4096)]          # sums that are 0 mod 0xFFFF
    cases += [b"\xff\xfe" * 70_000, b"\x00" * 64, b""]           # past 32 bits of sum
    for data in cases:
        assert c_sum(data) == python_sum(data), (len(data), data[:8])


@needs_cc
def test_frames_are_the_same_bytes_with_either_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    builders = {}
    for name, chosen in (("python", python_sum), ("c", native_sum())):
        monkeypatch.setattr(fastwire, "word_sum_function", lambda chosen=chosen: chosen)
        builders[name] = fastwire.FrameBuilder(src="fd00::1", dst="fd00::2", dest_qp=17,
                                               r_key=9, udp_sport=4242)
    for n in (0, 1, 2, 3, 1000, 1001, 4096):
        payload = rng.randbytes(n)
        frames = {name: b.data(psn=n, opcode=0xCA, msn=1, va=64, dma_length=n,
                               payload=payload) for name, b in builders.items()}
        assert frames["python"] == frames["c"], n


@needs_cc
def test_the_c_sum_keeps_its_library_loaded_after_the_ffi_cache_moved_on() -> None:
    """load_library keeps the FFIs of its last eight declarations; a library whose FFI and Lib
    are collected is closed. The sum, taken before, must still run (it segfaulted)."""
    script = (
        "import gc\n"
        "from mrc_transport.word_sum import native_sum, python_sum\n"
        "from softswitch.native import build\n"
        "c_sum = native_sum()\n"
        "for i in range(12):\n"
        "    build._ffi(f'int other_declaration_{i}(void);')\n"
        "gc.collect()\n"
        "data = bytes(range(256)) * 16\n"
        "assert c_sum(data) == python_sum(data)\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr[-2000:]
