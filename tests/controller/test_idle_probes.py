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
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile, NicConnection, NicPlanner
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Verdict
from controller.repair.repairer import IDLE_REPORTER, DirectNic, ManagedNic, Repairer
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


def t1_name(plan: FabricPlan, entry: PlannedEntry) -> str:
    return next(s.name for s in plan.topology.switches
                if plan.usid(s.name) == dict(entry.params)["t1_usid"])


def managed(plan: FabricPlan, nic: str, peers: list[str], profile: EvProfile) -> ManagedNic:
    connections = [NicConnection(i, p, i + 1, i + 1) for i, p in enumerate(peers)]
    entries = NicPlanner(plan).plan_nic(nic, connections, profile).entries
    return ManagedNic(nic, DirectNic(None, nic), dict(enumerate(peers)),  # type: ignore[arg-type]
                      profile, [e for e in entries if e.table == "ev_path"])


def test_the_sweep_leaves_out_the_cables_connections_evs_cross_as_installed_now() -> None:
    """medium.yaml (4 planes x 4 T1s, 4 NICs per T0) with 2 EVs per plane: nic0's EVs sample
    T1s 0 and 1 of each plane (nic_plan.py), so a connection of it to another T0 covers their
    cables from both T0s, and nothing else; one to a NIC of its own T0 covers nothing."""
    medium = FabricPlan(load(TOPOLOGIES / "medium.yaml"))
    narrow = EvProfile(ev_count=8, backups=0, ev_min_active=4)
    topo = medium.topology
    t0 = {n: topo.nic(n).attachments[0][0] for n in ("nic0", "nic1", "nic9")}
    assert t0["nic0"] == t0["nic1"] != t0["nic9"]
    local = Repairer(medium, [managed(medium, "nic0", ["nic1"], narrow)])
    assert local.covered_cables() == set()
    nic0 = managed(medium, "nic0", ["nic9"], narrow)
    repairer = Repairer(medium, [nic0])
    covered = repairer.covered_cables()
    assert covered == {(p, topo.nic(n).attachments[p][0], f"p{p}-t1-{i}")
                       for p in range(4) for n in ("nic0", "nic9") for i in (0, 1)}
    assert repairer.covered_cables() is covered            # unchanged entries: not recomputed
    # EV 0 (plane 0, T1 0) rewritten onto T1 2: its old cables are no longer covered.
    (ev0,) = [e for e in nic0.installed if dict(e.match)["ev"] == 0]
    assert t1_name(medium, ev0) == "p0-t1-0"
    moved = PlannedEntry.make("ev_path", dict(ev0.match), ev0.action,
                              {**dict(ev0.params), "t1_usid": medium.usid("p0-t1-2")})
    nic0.install([moved], 0.0)
    now = repairer.covered_cables()
    assert (0, t0["nic0"], "p0-t1-2") in now and (0, t0["nic9"], "p0-t1-2") in now
    assert (0, t0["nic0"], "p0-t1-0") not in now and (0, t0["nic9"], "p0-t1-0") not in now
    assert covered - now == {(0, t0["nic0"], "p0-t1-0"), (0, t0["nic9"], "p0-t1-0")}
