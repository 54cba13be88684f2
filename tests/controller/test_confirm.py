"""controller/repair/confirm.py with scripted probe results (no devices): a suspect is declared
down only after N lost probes in a row while an alternative around it answers; an answer, even a
late one, clears it; a T1 is declared only when every cable of it is proven bad; and the
repair loop acts on nothing the probes did not prove (tiny.yaml: 2 planes x (2 T0 + 2 T1))."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from controller.daemon.probes import ProbeLoop, ProbeResult
from controller.plan.plan import FabricPlan
from controller.repair.confirm import Confirmer
from controller.repair.correlate import EvReport, Verdict
from controller.repair.repairer import Repairer
from controller.topology.yaml_io import load
from p4rt import PacketIn

TINY = Path(__file__).resolve().parents[2] / "topologies" / "tiny.yaml"
CUT = (0, "p0-t0-0", "p0-t1-0")
T0_OTHER = (0, "p0-t0-0", "p0-t1-1")     # the same T0's other cable in the plane
T1_OTHER = (0, "p0-t0-1", "p0-t1-0")     # the same T1 over the other T0


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return FabricPlan(load(TINY))


def results(link: tuple[int, str, str], answered: bool, *at_s: float) -> list[ProbeResult]:
    return [ProbeResult(link, i, t, answered, 1e-6 if answered else None)
            for i, t in enumerate(at_s)]


def test_a_cable_is_declared_after_n_lost_probes_only_once_an_alternative_answers(
        plan: FabricPlan) -> None:
    c = Confirmer(plan.topology, probes=3)
    assert c.suspect(Verdict({CUT}), 0.0)[0]["event"] == "suspect"
    assert {CUT, T0_OTHER, T1_OTHER} <= c.targets()
    records, cleared = c.probed(results(CUT, False, 0.0, 1e-5), 2e-4)
    assert not records and not cleared and CUT in c.links          # two lost: not yet
    c.probed(results(CUT, False, 2e-5), 3e-4)
    assert CUT in c.links and c.verdict == Verdict()               # three, but no alternative
    records, _ = c.probed(results(T0_OTHER, True, 3e-5), 3e-4)
    assert c.verdict == Verdict({CUT}) and not c.links and not c.targets()
    (verdict,) = records
    assert verdict["down"] is True and verdict["link"] == "p0-t0-0:p0-t1-0"
    assert verdict["probes_lost"] == 3 and verdict["alternatives_answered"] == [
        "p0-t0-0:p0-t1-1"]


def test_a_congested_cable_that_answers_is_cleared_even_after_losses(plan: FabricPlan) -> None:
    c = Confirmer(plan.topology, probes=3)
    c.suspect(Verdict({CUT}), 0.0)
    c.probed(results(T0_OTHER, True, 0.0) + results(CUT, False, 0.0, 1e-5), 2e-4)
    records, cleared = c.probed(results(CUT, True, 2e-5), 2.5e-4)   # late, but back
    assert cleared == {CUT} and c.verdict == Verdict() and not c.links
    assert records[0]["down"] is False


def test_probes_sent_before_the_suspicion_do_not_count(plan: FabricPlan) -> None:
    c = Confirmer(plan.topology, probes=2)
    c.suspect(Verdict({CUT}), 1.0)
    c.probed(results(CUT, False, 0.1, 0.2, 0.3) + results(T0_OTHER, True, 0.5), 1.0)
    assert c.verdict == Verdict() and CUT in c.links


def test_a_t1_is_declared_when_every_cable_of_it_is_lost_and_a_t0_answers_elsewhere(
        plan: FabricPlan) -> None:
    c = Confirmer(plan.topology, probes=2)
    c.suspect(Verdict({CUT, T1_OTHER}, {"p0-t1-0"}), 0.0)
    assert not c.links and c.switches.keys() == {"p0-t1-0"}   # its cables probed as its own
    c.probed(results(CUT, False, 0.0, 1e-5) + results(T1_OTHER, False, 0.0, 1e-5), 1e-3)
    assert c.verdict == Verdict()                                    # nothing else answered
    records, _ = c.probed(results((0, "p0-t0-1", "p0-t1-1"), True, 2e-5), 1e-3)
    assert c.verdict == Verdict(set(), {"p0-t1-0"}) and records[0]["switch"] == "p0-t1-0"


def test_a_suspected_cable_whose_t1_went_silent_on_every_cable_is_the_t1s_failure(
        plan: FabricPlan) -> None:
    """The reports named the cables traffic crossed; their T1's other cables, probed as
    alternatives, are lost as well while the T0 answers elsewhere: the T1 is declared, once,
    and no cable."""
    c = Confirmer(plan.topology, probes=3)
    c.suspect(Verdict({CUT, T1_OTHER}), 0.0)
    records, _ = c.probed(results(CUT, False, 0.0, 1e-5, 2e-5)
                          + results(T1_OTHER, False, 0.0, 1e-5, 2e-5)
                          + results(T0_OTHER, True, 1e-5), 1e-3)
    assert c.verdict == Verdict(set(), {"p0-t1-0"}) and not c.links
    (verdict,) = records
    assert verdict["switch"] == "p0-t1-0" and verdict["probes_lost"] == 6
    # One cable of the T1 still answering: only the silent one is declared.
    c = Confirmer(plan.topology, probes=3)
    c.suspect(Verdict({CUT}), 0.0)
    c.probed(results(CUT, False, 0.0, 1e-5, 2e-5) + results(T1_OTHER, True, 1e-5)
             + results(T0_OTHER, True, 1e-5), 1e-3)
    assert c.verdict == Verdict({CUT})


def test_a_suspected_t1_with_one_answering_cable_is_cleared_and_only_the_dead_cable_named(
        plan: FabricPlan) -> None:
    c = Confirmer(plan.topology, probes=2)
    c.suspect(Verdict({CUT, T1_OTHER}, {"p0-t1-0"}), 0.0)
    _, cleared = c.probed(results(T1_OTHER, True, 0.0) + results(T0_OTHER, True, 0.0), 1e-4)
    assert cleared == {T1_OTHER} and not c.switches and c.links.keys() == {CUT}
    c.probed(results(CUT, False, 1e-5, 2e-5), 1e-3)
    assert c.verdict == Verdict({CUT})


def test_the_probe_loop_counts_late_answers_and_loses_only_what_times_out(
        plan: FabricPlan) -> None:
    loop = ProbeLoop(plan, interval_s=1e-5, timeout_s=5e-5)
    frames: list[tuple[str, int, bytes]] = []
    send = lambda t0, port, frame: frames.append((t0, port, frame)) or True  # noqa: E731
    assert len(loop.send(0.0, {CUT, T0_OTHER}, send)) == 2
    assert loop.send(5e-6, {CUT}, send) == []                       # not due yet
    (_, port, frame), _ = frames
    assert port == 2 and Ether(frame)[IPv6].tc == plan.topology.qos.dscp_control << 2
    back = [PacketIn(frames[0][2], {})]
    answered = loop.take(4e-5, back)                                 # 40 µs: late, in time
    assert [(r.link, r.answered) for r in answered] == [(CUT, True)]
    lost = loop.take(6e-5, [])
    assert [(r.link, r.answered) for r in lost] == [(T0_OTHER, False)]
    assert loop.take(7e-5, back) == []                               # counted once only


def test_the_repair_loop_denies_nothing_the_probes_did_not_prove(plan: FabricPlan) -> None:
    repairer = Repairer(plan, [], confirm_probes=2, ports_down=lambda _nic: 0)
    reports = [EvReport(nic, peer, 0, 0, "p0-t1-0", "ASSUMED_BAD", 0.0)
               for nic, peer in (("nic0", "nic2"), ("nic1", "nic3"), ("nic2", "nic0"))]
    repairer.correlator.add(reports, 0.0)
    repairer.poll(0.0)
    assert repairer.verdict == Verdict() and repairer.confirm_targets()
    assert repairer.confirmer is not None and repairer.confirmer.switches
    # Every probe of the suspects comes back: cleared, and the evidence set aside.
    repairer.probed([ProbeResult(link, 0, 0.0, True, 1e-6)
                     for link in sorted(repairer.confirm_targets())], 1e-4)
    repairer.poll(1e-4)
    assert repairer.verdict == Verdict() and not repairer.confirm_targets()


def test_an_ev_taken_out_on_a_plane_whose_nic_port_is_down_makes_no_suspect(
        plan: FabricPlan) -> None:
    # The MRC NIC keeps such losses off its EVs (p4src/README.md); a NIC that reports them
    # anyway, or a report that raced the port-state bitmap, is the NIC's matter, at either end.
    recorded: list[dict[str, object]] = []
    repairer = Repairer(plan, [], confirm_probes=2,
                        ports_down=lambda nic: 0b01 if nic == "nic1" else 0)
    repairer.on_record = recorded.append
    repairer._found = [EvReport(nic, peer, ev, plane, t1, "ASSUMED_BAD", 0.0)
                       for nic, peer, ev, plane, t1 in (("nic1", "nic2", 0, 0, "p0-t1-0"),
                                                        ("nic3", "nic1", 2, 0, "p0-t1-1"))]
    repairer.poll(0.0)
    assert repairer.ignored == 2 and repairer.verdict == Verdict()
    assert not repairer.correlator.pending and not repairer.confirm_targets()
    assert [(r["nic"], r["reason"]) for r in recorded if r["event"] == "ev_ignored"] == [
        ("nic1", "nic_port_down"), ("nic3", "nic_port_down")]
    assert not [r for r in recorded if r["event"] in ("suspect", "verdict", "rewrite")]
    # The same report on plane 1, whose ports are up at both ends, is evidence.
    repairer._found = [EvReport("nic1", "nic2", 1, 1, "p1-t1-0", "ASSUMED_BAD", 1e-4)]
    repairer.poll(1e-4)
    assert repairer.ignored == 2 and repairer.correlator.pending


def test_a_link_lost_again_and_again_is_probed_slower_until_it_answers(
        plan: FabricPlan) -> None:
    """A suspect nothing around can confirm (every cable of a dead plane) would cost a probe,
    and an event, each interval for as long as it lasts: after `patience` losses in a row its
    probes go every `slow_interval_s`; an answer brings back the fast pace."""
    loop = ProbeLoop(plan, interval_s=1e-5, timeout_s=2e-5, patience=3, slow_interval_s=1e-4)
    frames: list[bytes] = []
    send = lambda t0, port, frame: frames.append(frame) or True  # noqa: E731
    times = []
    for step in range(40):                       # 400 µs, one round per 10 µs, nothing back
        now = step * 1e-5
        loop.take(now, [])
        if loop.send(now, {CUT}, send):
            times.append(round(now * 1e6))
    # Fast until the third loss is seen (the probe sent at 20 µs times out at 50 µs), then
    # every 100 µs.
    assert times == [0, 10, 20, 30, 40, 50, 150, 250, 350]
    assert loop.send(451e-6, {CUT}, send)
    loop.take(455e-6, [PacketIn(frames[-1], {})])   # this one comes back
    assert not loop.send(460e-6, {CUT}, send)   # next due 10 µs after the answer
    assert loop.send(466e-6, {CUT}, send) and loop.send(477e-6, {CUT}, send)
