"""What a run measures (emulation/measure.py): plane load per direction, and the exact time
EVs spend in SKIP and ASSUMED_BAD (emulation/state_time.py), from every write of the NICs'
`ev_state` registers (softswitch's register-write observer) — checked on synthetic moves, on
a tiny program, and on a short emulation whose ECN echoes put EVs in SKIP."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from emulation.measure import Meter
from emulation.modes import mode
from emulation.scenario import load, loads
from emulation.state_time import StateTime, integrate
from softswitch.clock import VirtualClock
from softswitch.engine.externs import RegisterArray
from softswitch.fabric import Fabric
from tests.unit.inline_programs import build_switch, ingress_program

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"
TINY_RING = ROOT / "tests" / "scenarios" / "tiny-ring.yaml"
GOOD, SKIP, BAD = 0, 1, 2


def test_time_in_state_is_integrated_exactly_per_bin() -> None:
    moves = [
        (10, "a", SKIP), (25, "a", GOOD),          # 15 ns of SKIP in bin 0
        (90, "b", SKIP), (130, "b", SKIP),         # the same state again changes nothing
        (150, "b", BAD),                           # 60 ns of SKIP over bins 0 and 1
        (40, "c", GOOD),                           # GOOD is not watched
    ]
    moves.sort(key=lambda m: m[0])
    rows = integrate(moves, bin_ns=100, end_ns=420, watched=(SKIP, BAD))
    assert rows[SKIP] == [15 + 10, 50]
    assert rows[BAD] == [0, 50, 100, 100, 20]      # b in BAD from 150 to the end at 420
    # flushing at bin ends on the way gives the same rows
    clock = StateTime(100, (SKIP, BAD))
    for at, cell, state in moves:
        clock.flush(at // 100 * 100)   # a bin's end (again, or earlier: nothing to add)
        clock.move(cell, state, at)
    for edge in (200, 300, 400, 420):
        clock.flush(edge)
    assert clock.rows == rows
    with pytest.raises(ValueError):
        StateTime(0, (SKIP,))


def test_a_register_observer_sees_every_write_and_costs_nothing_detached(
        tmp_path: Path) -> None:
    prelude = ("#include <core.p4>\n#include <v1model.p4>\n"
               "header h_t { bit<8> a; bit<8> b; }\n"
               "struct headers_t { h_t h; }\nstruct meta_t { bit<8> m; }\n")
    decls = "register<bit<2>>(8) states;"
    body = "states.write((bit<32>) hdr.h.a, (bit<2>) hdr.h.b);"
    sw = build_switch(tmp_path, ingress_program(prelude, body, decls))
    register = sw.register("states")
    seen: list[tuple[int, int]] = []
    register.observe(lambda index, value: seen.append((index, value)))
    for a, b in ((3, 1), (5, 2), (3, 0)):
        sw.process_packet(0, bytes([a, b]))          # the generated code's writes
    register.write(7, 3)                             # the control plane's
    assert seen == [(3, 1), (5, 2), (3, 0), (7, 3)]
    register.reset()                                 # in place: still observed
    assert seen[-8:] == [(i, 0) for i in range(8)]
    register.observe(None)
    assert type(register.values) is list             # detached: a plain list again
    sw.process_packet(0, bytes([1, 1]))
    assert len(seen) == 12 and register.read(1) == 1
    plain = RegisterArray("r", 2, 8)
    assert type(plain.values) is list


def test_plane_load_is_split_by_direction_and_trims_counted_at_nics() -> None:
    """The meter folds the fabric's wire tally in at every sample: switch-to-switch bytes per
    plane and direction, and packets with a trimmed DSCP (12 or 16) that reach a NIC from a
    switch or a host — not those between NICs, nor those leaving a NIC."""
    scenario = load(TINY_RING)
    clock = VirtualClock()
    network = SimpleNamespace(fabric=Fabric(clock=clock), nics={}, clock=clock)
    meter = Meter(scenario, mode("mrc", scenario.profile), network,  # type: ignore[arg-type]
                  lambda _nic: set())

    def frame(size: int, dscp: int = 0) -> bytes:
        data = bytearray(size)
        data[14:16] = (0x60 << 8 | dscp << 6).to_bytes(2, "big")   # IPv6 version, DSCP
        return bytes(data)

    wire = [("p0-t0-0", "p0-t1-0", 100, 1_000, 12), ("p0-t1-0", "p0-t0-1", 60, 1_200, 0),
            ("p1-t0-1", "p1-t1-1", 30, 70_000, 0), ("nic0", "p0-t0-0", 500, 1_000, 12),
            ("p0-t0-0", "nic0", 80, 2_000, 12), ("p0-t0-0", "nic0", 80, 3_000, 16),
            ("p0-t0-0", "nic0", 80, 60_000, 16), ("p0-t0-0", "nic1", 80, 4_000, 8),
            ("nic1", "nic0", 80, 4_000, 12), ("host0", "nic0", 80, 5_000, 12)]
    for sender, receiver, size, at_ns, dscp in wire[:5]:
        meter.tally.count((sender, 2, receiver, 0), at_ns, frame(size, dscp))
    meter.sample(50, 0, {})
    for sender, receiver, size, at_ns, dscp in wire[5:]:
        meter.tally.count((sender, 2, receiver, 0), at_ns, frame(size, dscp))
    meter.sample(100, 0, {}, final=True)
    s = meter.series
    assert s.plane_up_bytes == {0: [100], 1: [0, 30]}
    assert s.plane_down_bytes == {0: [60]}
    assert s.plane_bytes == {0: [160], 1: [0, 30]}   # both ways, as before
    assert s.trimmed == [3, 1] and meter.totals()["trimmed"] == 4


def test_an_emulation_counts_the_time_evs_spend_in_skip() -> None:
    """An all-to-all on the tiny fabric with one T0 uplink at 2 Gb/s: its queue marks ECN (from
    2 packets queued), the marks are echoed back, and each echo puts the EV that crossed it in
    SKIP until the sender's rotation passes it over. (ecmp's one EV per connection is never
    passed over.)"""
    from controller.devices.session import Program
    from emulation.command import NIC_PROGRAM, SWITCH_PROGRAM
    from emulation.run import run_mode

    scenario = loads(f"name: skip\ntopology: {TINY}\nduration_us: 2000\n"
                     "transport: {rto_us: 100, reorder_us: 30}\n"
                     "links: {rate_gbps: 10, delay_ns: 500}\n"
                     "cables: [{link: 'p0-t0-0:2', rate_gbps: 2}]\n"
                     "qos: {ecn_threshold: 2}\n"
                     "workload: {kind: all_to_all, bytes: 32768}\n", "skip.yaml")
    skipped: list[int] = []   # nic_counter[21]: an EV set to SKIP by an ECN echo or trim NACK
    moves: list[int] = []     # ... and [23], [31]: back from ASSUMED_BAD (to SKIP if CE echoed)

    def phase(what: str, network: object) -> None:
        if what == "closing":
            for name in network.nics:  # type: ignore[attr-defined]
                counter = network.fabric.switch(name).engine.counter(  # type: ignore[attr-defined]
                    "nic_counter")
                skipped.append(counter.read(21)[0])
                moves.extend(counter.read(i)[0] for i in (21, 23, 31))

    result = run_mode(scenario, "mrc_no_controller", Program.compile(SWITCH_PROGRAM),
                      str(NIC_PROGRAM), phase=phase)
    assert result.finished
    series = result.series
    skip_ns = series.ev_time_ns["SKIP"]
    assert sum(skipped) > 0, "no ECN echo: the workload no longer congests an uplink"
    assert sum(skip_ns) > 0
    evs = 12 * 20   # 4 NICs x 3 connections, 16 EVs and 4 backups each
    assert max(skip_ns) <= evs * series.bin_us * 1000
    assert sum(skip_ns) <= sum(moves) * result.end_us * 1000   # no SKIP without a move
    assert len(skip_ns) == len(series.ev_states["SKIP"])
    for plane, rows in series.plane_bytes.items():
        up, down = series.plane_up_bytes[plane], series.plane_down_bytes[plane]
        assert sum(up) > 0 and sum(down) > 0
        assert rows == [u + d for u, d in zip(up, down, strict=True)]
