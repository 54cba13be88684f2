"""bench/runtime_interference.py's code path with small numbers: every probe comes back and
is timed, the wildcard Read is answered once per entry. No timing is asserted."""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from bench import runtime_interference  # noqa: E402


def test_probes_flow_through_a_small_write_and_read() -> None:
    # measure() itself raises unless the Read answered each of the 2,000 entries exactly once.
    phases = runtime_interference.run_all(entries=2_000, wildcards=200, idle=0.2)
    assert [phase.name for phase in phases] == ["idle", "write", "read"]
    for phase in phases:
        assert phase.sent > 0, phase
        assert phase.lost == 0, phase
        assert len(phase.delays_ms) == phase.sent, phase
        assert all(delay >= 0 for delay in phase.delays_ms)
        assert not math.isnan(phase.max_ms) and phase.p50_ms <= phase.p99_ms <= phase.max_ms
    assert "2000 entries back" in phases[2].work
    memory = phases[2].memory
    assert memory is not None and memory.peak_kib > 0
    assert phases[0].memory is None and phases[1].memory is None


def test_probe_frames_round_trip() -> None:
    from softswitch.runtime.ports.nanomsg import packet_in, packet_out

    frame = runtime_interference.probe_frame(12345)
    assert len(frame) == 64
    assert runtime_interference.probe_seq(packet_out(2, frame)) == 12345
    assert runtime_interference.probe_seq(packet_in(1, frame)) is None   # not one sent back
    assert runtime_interference.probe_seq(b"\x04\x00") is None           # shorter than a header
