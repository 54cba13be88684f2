"""Irregular explicit wiring (topologies/README.md): a T0-T1 cable left out, a NIC under another
T0 or on another port per plane. The loader refuses what cannot be served, `mrc-ctl check`
proves what can, and fails on a plan that would send where the wiring cannot carry; the repair
loop, the link prober and ecmp only ever use cables that exist. (The emulated runs on the same
topologies: tests/integration/test_irregular_fabric.py.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from controller.cli import main
from controller.daemon.probes import LinkProber, t0_port
from controller.plan.nic_plan import EvProfile, NicConnection, NicPlanner
from controller.plan.nic_rows import Destination, RowBook
from controller.plan.plan import FabricPlan
from controller.plan.usid import ua_usid
from controller.repair.correlate import Correlator, EvReport, Verdict
from controller.repair.repairer import ManagedNic, Repairer
from controller.topology.errors import TopologyError
from controller.topology.model import Nic
from controller.topology.yaml_io import load, loads
from emulation.modes import EcmpPaths

ROOT = Path(__file__).resolve().parents[2]
TOPOLOGIES = ROOT / "tests" / "topologies"
MISSING = TOPOLOGIES / "tiny-missing-cable.yaml"   # no p0-t0-0 - p0-t1-1
MOVED = TOPOLOGIES / "tiny-moved-nics.yaml"        # nic0, nic2 under other T0s in plane 1
CROSSED = TOPOLOGIES / "tiny-crossed-ports.yaml"   # nic0, nic1 on crossed ports in plane 1
SMALL = ["--ev-count", "16", "--backups", "2", "--ev-min-active", "4"]
PROFILE = EvProfile(ev_count=16, backups=2, ev_min_active=4)


@pytest.mark.parametrize("path", [MISSING, MOVED, CROSSED], ids=lambda p: p.stem)
def test_check_proves_the_irregular_fabrics_the_planner_serves(path: Path, capsys) -> None:
    assert main(["check", str(path), *SMALL]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("OK (paths): 8 switches")
    # 4 NICs x 3 peers x 20 EVs, each held against the wiring
    assert out[1].startswith("NIC plans: 4 NICs, 12 connections, 240 EV routes held against "
                             "the wiring: OK")
    for nic in ("nic0", "nic1", "nic2", "nic3"):
        assert main(["check", str(path), "--nic", nic, *SMALL]) == 0
        assert ": OK (peers " in capsys.readouterr().out


def test_the_loader_refuses_two_t0s_no_t1_joins_naming_the_cables(tmp_path: Path) -> None:
    text = MISSING.read_text().replace("  - [p0-t0-1:2, p0-t1-0:1]\n", "")
    with pytest.raises(TopologyError) as refused:
        loads(text, "cut.yaml")
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "name: nic2," in s)
    assert str(refused.value) == (
        f"cut.yaml:{line}:26: error: nics[2].ports[0]: NIC nic2 cannot reach NIC nic0 in "
        "plane 0: no T1 is cabled to both p0-t0-1 and p0-t0-0 (missing: p0-t0-1 - p0-t1-0, "
        "p0-t0-0 - p0-t1-1)")
    path = tmp_path / "cut.yaml"
    path.write_text(text)
    assert main(["check", str(path)]) == 2


def _old_limits(self: NicPlanner, nic: Nic, peer: Nic) -> tuple[tuple[()], ...]:
    """The planner before irregular wiring: every T1 above the NIC's T0 for every peer."""
    return tuple(() for _ in nic.attachments)


def _old_destination(self: RowBook, peer: Nic) -> Destination:
    """... and the peer's plane-0 T0 row and port for every plane."""
    t0, port = peer.attachments[0]
    return Destination(self.topology.switch(t0).index, ua_usid(port),
                       tuple(t0 for t0, _ in peer.attachments))


def test_check_fails_a_plan_that_sends_over_a_t1_that_cannot_reach_the_peer(
        monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(NicPlanner, "limits", _old_limits)
    assert main(["check", str(MISSING), *SMALL]) == 1
    out = capsys.readouterr().out
    assert out.startswith("OK (paths)")   # the switch plan is sound: the NICs are not
    assert ("NIC nic2: EV 2 to nic0 (plane 0): via T1 p0-t1-1: no cable p0-t0-0 - p0-t1-1 "
            "(nic0's T0 in plane 0)") in out
    assert main(["check", str(MISSING), "--nic", "nic2", *SMALL]) == 1
    assert "no cable p0-t0-0 - p0-t1-1" in capsys.readouterr().out


def test_check_fails_a_plan_that_sends_to_the_wrong_t0_or_port(
        monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(RowBook, "destination", _old_destination)
    assert main(["check", str(MOVED), *SMALL]) == 1
    assert ("NIC nic0: EV 1 to nic2 (plane 1): its path_template row leads to p1-t0-1, but nic2 "
            "is under p1-t0-0 in plane 1") in capsys.readouterr().out
    assert main(["check", str(CROSSED), *SMALL]) == 1
    assert ("NIC nic0: EV 1 to nic1 (plane 1): its uA 0xfe01 is not nic1's port 0 on p1-t0-0 "
            "(0xfe00)") in capsys.readouterr().out


def test_no_report_blames_and_no_probe_goes_to_a_cable_that_is_not_there() -> None:
    plan = FabricPlan(load(MISSING))
    # Reports of EVs through p0-t1-1 towards nic0 (what the old plan sent): only the cable
    # that exists, p0-t0-1 - p0-t1-1, can be blamed.
    reports = [EvReport(nic, "nic0", 2, 0, "p0-t1-1", "ASSUMED_BAD", 0.0)
               for nic in ("nic2", "nic3")]
    verdict = Correlator(plan.topology).add(reports, 0.0)
    assert verdict.links_down == {(0, "p0-t0-1", "p0-t1-1")}
    sent: list[tuple[str, int]] = []

    def send(t0: str, port: int, frame: bytes) -> bool:
        sent.append((t0, port))
        return True

    prober = LinkProber(plan, interval_s=1.0)
    assert t0_port(plan, (0, "p0-t0-0", "p0-t1-1")) is None
    assert prober.round(0.0, {(0, "p0-t0-0", "p0-t1-1"), (0, "p0-t0-1", "p0-t1-1")}, send,
                        []) == set()
    assert sent == [("p0-t0-1", 3)]


class _Offline:
    session = None
    ready = False

    def write(self, updates: object, descriptions: object) -> list[bool]:
        raise AssertionError("not written")


def test_the_repair_loop_keeps_each_connections_evs_on_t1s_that_reach_its_peer() -> None:
    plan = FabricPlan(load(MISSING))
    conns = [NicConnection(0, "nic3", 1, 1), NicConnection(1, "nic0", 2, 2)]
    made = NicPlanner(plan).plan_nic("nic2", conns, PROFILE)
    planned = [e for e in made.entries if e.table == "ev_path"]
    managed = ManagedNic("nic2", _Offline(), {0: "nic3", 1: "nic0"}, PROFILE, planned)
    repairer = Repairer(plan, [managed])
    assert managed.profiles == {0: 1, 1: 2}   # as the planner gave them
    names = {plan.usid(s.name): s.name for s in plan.topology.switches}
    # p0-t0-1 - p0-t1-0 fails: towards nic3 (same T0) plane 0 moves to p0-t1-1; towards nic0
    # no T1 is left in plane 0 (p0-t1-1 has no cable to nic0's T0): DENIED to the floor.
    repairer.verdict = Verdict(links_down={(0, "p0-t0-1", "p0-t1-0")})
    target = repairer.target("nic2")
    by_profile: dict[int, set[str]] = {1: set(), 2: set()}
    for e in target:
        if dict(e.params).get("plane") == 0:
            by_profile[dict(e.match)["profile"]].add(names[dict(e.params)["t1_usid"]])
        elif e.action == "deny_path":
            by_profile[dict(e.match)["profile"]].add("DENIED")
    assert by_profile == {1: {"p0-t1-1"}, 2: {"DENIED"}}
    assert managed.path_of(2, profile=2) == (0, plan.usid("p0-t1-0"))
    repairer.close()


def test_ecmp_pins_only_paths_that_reach_the_peer() -> None:
    plan = FabricPlan(load(MISSING))
    paths = EcmpPaths(plan, seed=1)
    assert {(p, t1) for p, t1, _ in paths.choices("nic2", "nic0")} == {
        (0, "p0-t1-0"), (1, "p1-t1-0"), (1, "p1-t1-1")}
    assert len(paths.choices("nic2", "nic3")) == 4   # one T0: any T1 of it
    for seed in range(20):
        picked = EcmpPaths(plan, seed).pick("nic2", NicConnection(0, "nic0", 1, 1), Verdict())
        assert (picked.plane, picked.t1) != (0, "p0-t1-1")


def test_regular_peers_keep_their_t0_row_and_the_others_get_rows_of_their_own() -> None:
    topo = load(MOVED)
    rows = RowBook(topo)
    assert [rows.destination(n).row for n in topo.nics] == [2, 0, 3, 1]
    crossed = RowBook(load(CROSSED))
    assert [dataclasses.astuple(crossed.destination(n))[:2] for n in crossed.topology.nics] == [
        (2, 0), (3, 0), (1, ua_usid(0)), (1, ua_usid(1))]
