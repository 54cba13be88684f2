"""Idle monitoring (controller/daemon/idle_probes.py, repairer.idle_probed): every T0-T1 cable is
probed once per interval, the T1s spread over it; a lost probe makes a suspect (a cable, or its
T1 when its cables go silent together), never a verdict; the confirmation probes decide
(tiny.yaml: 2 planes x (2 T0 + 2 T1), 8 cables; medium.yaml for the spread)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.daemon.idle_probes import IdleSweep, fabric_cables
from controller.daemon.probes import (
    CONFIRM_SEQ_BASE,
    IDLE_SEQ_BASE,
    ProbeLoop,
    ProbeResult,
    parse_probe,
)
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Verdict
from controller.repair.repairer import IDLE_REPORTER, Repairer
from controller.topology.model import Tier
from controller.topology.yaml_io import load
from p4rt import PacketIn

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"
CUT = (0, "p0-t0-0", "p0-t1-0")
T0_OTHER = (0, "p0-t0-0", "p0-t1-1")


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return FabricPlan(load(TOPOLOGIES / "tiny.yaml"))


class Wire:
    """What the sweep sends, and PacketIns for the probes a healthy fabric would return."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, str, int, bytes]] = []
        self.now_s = 0.0

    def send(self, t0: str, port: int, frame: bytes) -> bool:
        self.sent.append((self.now_s, t0, port, frame))
        return True

    def links_sent(self) -> list[tuple[int, str, str]]:
        return [parsed[0] for *_, frame in self.sent if (parsed := parse_probe(frame))]

    def back(self, *, but: tuple[int, str, str] | None = None) -> list[PacketIn]:
        """Every probe sent so far returned, but those over `but`; the record is emptied."""
        out = [PacketIn(frame, {}) for *_, frame in self.sent
               if (parsed := parse_probe(frame)) and parsed[0] != but]
        self.sent.clear()
        return out


def test_every_cable_of_the_fabric_is_covered(plan: FabricPlan) -> None:
    cables = fabric_cables(plan)
    assert len(cables) == len(set(cables)) == 8
    assert {t0 for _, t0, _ in cables} == {"p0-t0-0", "p0-t0-1", "p1-t0-0", "p1-t0-1"}
    medium = FabricPlan(load(TOPOLOGIES / "medium.yaml"))
    topo = medium.topology
    expected = sum(1 for s in topo.switches if s.tier == Tier.T1 for _, peer, _ in
                   topo.neighbors(s.name) if topo.is_switch(peer))
    assert len(fabric_cables(medium)) == expected > 8


def test_one_probe_per_cable_per_interval_the_t1s_spread_over_it(plan: FabricPlan) -> None:
    sweep = IdleSweep(plan, interval_s=100e-6, timeout_s=60e-6)
    wire = Wire()
    per_round: list[list[tuple[int, str, str]]] = []
    for step in range(10):   # 10 rounds of 20 µs: two intervals
        wire.now_s = step * 20e-6
        before = len(wire.sent)
        sweep.send(wire.now_s, wire.send)
        per_round.append(wire.links_sent()[before:])
    first = [link for r in per_round[:5] for link in r]
    assert sorted(first) == sorted(fabric_cables(plan))      # each once in the first interval
    assert sorted(link for r in per_round[5:] for link in r) == sorted(first)   # and again
    assert max(len(r) for r in per_round) == 2               # a T1's two cables, not all 8
    for r in per_round:
        assert len({t1 for _, _, t1 in r}) <= 1              # a T1's cables go together
    assert all(IDLE_SEQ_BASE < (parse_probe(f) or (None, 0))[1] < CONFIRM_SEQ_BASE
               for *_, f in wire.sent)


def test_skipped_cables_are_not_probed_and_answers_and_losses_come_back(
        plan: FabricPlan) -> None:
    sweep = IdleSweep(plan, interval_s=10e-6, timeout_s=30e-6)
    wire = Wire()
    sweep.send(0.0, wire.send, {CUT})
    sweep.send(10e-6, wire.send, {CUT})                       # every T1 due by now
    assert CUT not in wire.links_sent() and len(set(wire.links_sent())) == 7
    sweep.send(20e-6, wire.send)                              # CUT back in: probed
    assert CUT in wire.links_sent()
    results = sweep.take(25e-6, wire.back(but=CUT))
    assert results and all(r.answered for r in results) and CUT not in {r.link for r in results}
    lost = sweep.take(60e-6, [])
    assert [r.link for r in lost] == [CUT] and not lost[0].answered
    assert sweep.lost == 1


def test_another_probers_packets_are_not_taken_for_the_sweeps(plan: FabricPlan) -> None:
    sweep = IdleSweep(plan, interval_s=10e-6, timeout_s=30e-6)
    confirm = ProbeLoop(plan, interval_s=10e-6, timeout_s=30e-6)
    wire = Wire()
    sweep.send(10e-6, wire.send)
    sweep_frames = wire.back()
    confirm.send(10e-6, {CUT}, wire.send)
    confirm_frames = wire.back()
    assert sweep.take(15e-6, confirm_frames) == []
    assert confirm.take(15e-6, sweep_frames) == []
    assert len(confirm.take(16e-6, confirm_frames)) == 1


def test_the_interval_must_be_positive(plan: FabricPlan) -> None:
    with pytest.raises(ValueError, match=r"must be positive.*not -1"):
        IdleSweep(plan, interval_s=-1)


def lost(link: tuple[int, str, str], at_s: float, seq: int = 0) -> ProbeResult:
    return ProbeResult(link, seq, at_s, False)


def answered(link: tuple[int, str, str], at_s: float, seq: int = 0) -> ProbeResult:
    return ProbeResult(link, seq, at_s, True, 1e-6)


def test_a_lost_idle_probe_makes_a_suspect_and_only_confirmation_declares_it(
        plan: FabricPlan) -> None:
    repairer = Repairer(plan, [], confirm_probes=3, ports_down=lambda _nic: 0)
    records = repairer.idle_probed([lost(CUT, 0.0), answered(T0_OTHER, 0.0)], 1e-4)
    assert [r["event"] for r in records] == ["probe", "suspect"]
    assert records[1] == {"event": "suspect", "link": "p0-t0-0:p0-t1-0",
                          "reporters": [IDLE_REPORTER]}
    assert repairer.confirmer is not None and CUT in repairer.confirmer.links
    repairer.poll(1e-4)
    assert repairer.verdict == Verdict() and CUT in repairer.confirm_targets()
    # The confirmation probes: three lost over it, its T0's other cable answers.
    repairer.probed([lost(CUT, 1e-4 + i * 1e-5, i) for i in range(3)]
                    + [answered(T0_OTHER, 1.1e-4, 9)], 3e-4)
    repairer.poll(3e-4)
    assert repairer.verdict == Verdict({CUT})
    # Declared: a later idle loss on it is no new suspect.
    assert repairer.idle_probed([lost(CUT, 3e-4)], 4e-4) == [
        {"event": "probe", "sweep": "idle", "link": "p0-t0-0:p0-t1-0", "seq": 0,
         "answered": False, "sent_at_s": 0.0003}]


def test_a_suspect_found_idle_that_answers_is_cleared_and_nothing_denied(
        plan: FabricPlan) -> None:
    repairer = Repairer(plan, [], confirm_probes=3, ports_down=lambda _nic: 0)
    repairer.idle_probed([lost(CUT, 0.0)], 1e-4)   # one probe lost to a bit error
    repairer.probed([answered(CUT, 1.1e-4)], 2e-4)
    repairer.poll(2e-4)
    assert repairer.verdict == Verdict() and not repairer.confirm_targets()


def test_a_t1_whose_cables_all_go_silent_is_suspected_as_the_switch(plan: FabricPlan) -> None:
    repairer = Repairer(plan, [], confirm_probes=2, ports_down=lambda _nic: 0)
    cables = [(0, "p0-t0-0", "p0-t1-0"), (0, "p0-t0-1", "p0-t1-0")]
    records = repairer.idle_probed([lost(link, 0.0) for link in cables], 1e-4)
    assert [r for r in records if r["event"] == "suspect"] == [
        {"event": "suspect", "switch": "p0-t1-0", "reporters": [IDLE_REPORTER]}]
    repairer.probed([lost(link, 1e-4 + i * 1e-5, i) for link in cables for i in range(2)]
                    + [answered(T0_OTHER, 1.1e-4)], 3e-4)
    repairer.poll(3e-4)
    assert repairer.verdict == Verdict(set(), {"p0-t1-0"})


def test_without_confirmation_idle_results_are_ignored(plan: FabricPlan) -> None:
    repairer = Repairer(plan, [], confirm_probes=0, ports_down=lambda _nic: 0)
    assert repairer.idle_probed([lost(CUT, 0.0)], 1e-4) == []
    repairer.poll(1e-4)
    assert repairer.verdict == Verdict()


class Counters:
    """A fabric's T0 port counters as the sweep reads them: packets up and down per cable."""

    def __init__(self, plan: FabricPlan) -> None:
        self.plan = plan
        self.cells: dict[str, dict[int, list[int]]] = {}
        self.dead: set[str] = set()

    def port(self, link: tuple[int, str, str]) -> int:
        return next(p for _, peer, p in self.plan.topology.neighbors(link[2]) if peer == link[1])

    def add(self, link: tuple[int, str, str], up: int = 0, down: int = 0) -> None:
        cell = self.cells.setdefault(link[1], {}).setdefault(self.port(link), [0, 0])
        cell[0] += up
        cell[1] += down

    def read(self, t0: str) -> dict[int, tuple[int, int]] | None:
        if t0 in self.dead:
            return None
        ports = {p for p, peer, _ in self.plan.topology.neighbors(t0)
                 if self.plan.topology.is_switch(peer)}
        cells = self.cells.get(t0, {})
        return {p: tuple(cells.get(p, (0, 0))) for p in ports}  # type: ignore[misc]


def test_only_the_cables_idle_over_the_last_interval_are_probed(plan: FabricPlan) -> None:
    counters = Counters(plan)
    sweep = IdleSweep(plan, interval_s=100e-6, timeout_s=60e-6, read=counters.read)
    wire = Wire()
    sweep.send(0.0, wire.send)                      # the first look: nothing to compare with
    assert wire.sent == [] and sweep.busy == set(fabric_cables(plan))
    counters.add(CUT, up=5)                         # data up one cable,
    counters.add(T0_OTHER, down=1)                  # a SACK down another
    for step in range(5):                           # the next interval, round by round
        wire.now_s = 100e-6 + step * 20e-6
        sweep.send(wire.now_s, wire.send)
    assert sweep.busy == {CUT, T0_OTHER}
    assert sorted(wire.links_sent()) == sorted(set(fabric_cables(plan)) - {CUT, T0_OTHER})
    # Its own probes' answers counted at the T0 do not make a cable busy: back over every
    # cable probed, and counted down there, they leave every cable idle but those with data.
    probed = wire.links_sent()
    for link in probed:
        counters.add(link, down=1)
    sweep.take(270e-6, wire.back())
    counters.add(CUT, up=1)
    sweep.send(300e-6, wire.send)
    assert sweep.busy == {CUT}
    # A T0 that cannot be read: its cables are not probed (nothing is known of them).
    counters.dead.add("p0-t0-0")
    sweep.send(400e-6, wire.send)
    assert {link for link in fabric_cables(plan) if link[1] == "p0-t0-0"} <= sweep.busy


def test_a_switch_reset_counts_as_busy_not_idle(plan: FabricPlan) -> None:
    counters = Counters(plan)
    sweep = IdleSweep(plan, interval_s=100e-6, timeout_s=60e-6, read=counters.read)
    counters.add(CUT, up=10)
    sweep.send(0.0, Wire().send)
    counters.cells["p0-t0-0"][counters.port(CUT)] = [0, 0]   # rebooted: counters from 0
    sweep.send(100e-6, Wire().send)
    assert CUT in sweep.busy
    sweep.send(200e-6, Wire().send)                           # then idle again
    assert CUT not in sweep.busy
