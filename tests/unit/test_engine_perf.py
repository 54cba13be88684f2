"""Throughput of the compiled engine on the SRv6 uSID shift-and-forward program (slow: opt-in)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from softswitch.engine.switch import Switch
from softswitch.engine.tables import LpmMatch
from softswitch.frontend.parser import parse_file
from softswitch.frontend.typecheck import check

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "usid_forward.p4"


@pytest.mark.slow
def test_usid_forwarding_reaches_50k_packets_per_second() -> None:
    sw = Switch(check(parse_file(str(PROGRAM)), str(PROGRAM)))
    sw.table("my_sid").add_entry([LpmMatch(0xFC000000010000000000000000000000, 48)], "uN")
    sw.table("route_v6").add_entry([LpmMatch(0xFC000000020000000000000000000000, 48)],
                                   "set_next_hop", [2, 0x100, 0x200])
    data = bytes.fromhex(
        "00000000000100000000000286dd" "6000000000083b40"
        "20010db8000000000000000000000001" "fc000000010002000300000000000000"
        "0102030405060708")
    assert [o.port for o in sw.process_packet(0, data)] == [2]
    n = 20000
    best = 0.0
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            sw.process_packet(0, data)
        best = max(best, n / (time.perf_counter() - start))
    assert best >= 50_000, f"{best:.0f} packets/s"
