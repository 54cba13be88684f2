"""controller/repair: EV events correlated to links and switches, and NIC path rewrites, without
devices, on topologies/medium.yaml (4 planes x (4 T1 + 8 T0), 32 NICs, 4 under each T0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.plan.nic_plan import EvProfile, NicConnection, NicPlanner
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Correlator, EvReport, Verdict
from controller.repair.rewrite import repaired_paths, rewrites
from controller.topology.yaml_io import load

MEDIUM = Path(__file__).resolve().parents[2] / "topologies" / "medium.yaml"
PROFILE = EvProfile(ev_count=16, backups=1, ev_min_active=4)   # 4 planes x 4 T1s


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return FabricPlan(load(MEDIUM))


def under(t0: int) -> list[str]:
    return [f"nic{4 * t0 + i}" for i in range(4)]


def cut_reports(link: tuple[int, int, int], at: float = 0.0) -> list[EvReport]:
    """What a cut (plane, T0 i, T1 j) makes NICs report: every NIC under T0 i towards a peer
    under each other T0, and one NIC under each other T0 towards a NIC under T0 i."""
    plane, i, j = link
    t1 = f"p{plane}-t1-{j}"
    out = [EvReport(nic, under(k)[0], 0, plane, t1, "ASSUMED_BAD", at)
           for nic in under(i) for k in range(8) if k != i]
    out += [EvReport(under(k)[1], under(i)[2], 0, plane, t1, "ASSUMED_BAD", at)
            for k in range(8) if k != i]
    return out


def test_a_cut_link_is_named_and_its_t1_is_not(plan: FabricPlan) -> None:
    c = Correlator(plan.topology)
    verdict = c.add(cut_reports((1, 2, 3)), now_s=0.1)
    assert verdict.links_down == {(1, "p1-t0-2", "p1-t1-3")}
    assert verdict.switches_down == set()


def test_a_dead_t1_is_named_when_most_of_its_links_fail(plan: FabricPlan) -> None:
    c = Correlator(plan.topology)
    reports = [r for i in range(8) for r in cut_reports((0, i, 1))]
    verdict = c.add(reports, now_s=0.1)
    assert "p0-t1-1" in verdict.switches_down
    assert verdict.crosses(0, "p0-t0-5", "p0-t1-1") and not verdict.crosses(0, "p0-t0-5", "p0-t1-0")


def test_one_nic_alone_declares_nothing(plan: FabricPlan) -> None:
    c = Correlator(plan.topology)
    alone = [EvReport("nic0", peer, ev, 2, "p2-t1-0", "ASSUMED_BAD", 0.0)
             for ev, peer in enumerate(("nic9", "nic13", "nic30"))]
    assert c.add(alone, now_s=0.0) == Verdict()
    with pytest.raises(ValueError, match="one NIC alone"):
        Correlator(plan.topology, min_nics=1)


def test_old_evidence_is_forgotten_and_good_reports_restore(plan: FabricPlan) -> None:
    c = Correlator(plan.topology, window_s=1.0)
    c.add(cut_reports((3, 0, 0))[:1], now_s=0.0)          # one NIC: not enough
    assert c.add(cut_reports((3, 0, 0))[5:6], now_s=5.0).links_down == set()   # too late
    verdict = c.add(cut_reports((3, 0, 0), at=6.0), now_s=6.0)
    assert verdict.links_down == {(3, "p3-t0-0", "p3-t1-0")}
    back = EvReport("nic0", "nic9", 4, 3, "p3-t1-0", "GOOD", 7.0)
    assert c.add([back], now_s=7.0).links_down == set()


def nic_paths(plan: FabricPlan, nic: str, peers: list[str], profile: EvProfile = PROFILE):
    made = NicPlanner(plan).plan_nic(nic, [NicConnection(i, p, i + 1, i + 1)
                                           for i, p in enumerate(peers)], profile)
    return [e for e in made.entries if e.table == "ev_path"]


def t1_of(plan: FabricPlan, entry) -> str | None:
    params = dict(entry.params)
    names = {plan.usid(s.name): s.name for s in plan.topology.switches}
    return names.get(params.get("t1_usid", -1))


def test_evs_across_a_failed_link_move_to_healthy_t1s_of_their_plane(plan: FabricPlan) -> None:
    verdict = Verdict(links_down={(1, "p1-t0-0", "p1-t1-3")})
    wide = EvProfile(ev_count=32, backups=1, ev_min_active=4)   # 2 EVs per (plane, T1)
    planned = nic_paths(plan, "nic0", ["nic9"], wide)      # nic0 under T0 0: the uplink is cut
    target = repaired_paths(plan, "nic0", ["nic9"], planned, wide, verdict)
    changed = rewrites(planned, target)
    moved = {dict(e.match)["ev"] for e in changed}
    assert moved == {dict(e.match)["ev"] for e in planned if t1_of(plan, e) == "p1-t1-3"}
    for e in changed:
        assert dict(e.params)["plane"] == 1 and t1_of(plan, e) in {"p1-t1-0", "p1-t1-1", "p1-t1-2"}
    assert len({t1_of(plan, e) for e in changed}) > 1        # spread, not piled on one T1
    # A NIC elsewhere talking to nic0 moves too (its EVs would come down the cut link) ...
    far = nic_paths(plan, "nic20", ["nic1"])
    assert rewrites(far, repaired_paths(plan, "nic20", ["nic1"], far, PROFILE, verdict))
    # ... one that does not talk to T0 0 keeps every path, and restoring undoes the rewrite.
    other = nic_paths(plan, "nic20", ["nic9"])
    assert rewrites(other, repaired_paths(plan, "nic20", ["nic9"], other, PROFILE, verdict)) == []
    # Restoring is planning from the original entries again: back to them exactly.
    assert repaired_paths(plan, "nic0", ["nic9"], planned, wide, Verdict()) == planned


def test_the_nics_that_lose_a_t1_spread_their_moved_evs_over_the_healthy_ones(
        plan: FabricPlan) -> None:
    # 2 EVs per plane on 4 T1s: the NICs under a T0 take T1 blocks {0, 1} and {2, 3} in turn
    # (nic_plan.py), so EV 4 (plane 0's second) of half the fabric's NICs crosses p0-t1-1.
    # Counted from EV 4 alone, all of them would land on one healthy T1.
    narrow = EvProfile(ev_count=8, backups=0, ev_min_active=4)
    verdict = Verdict(switches_down={"p0-t1-1"})
    landed: dict[str, int] = {}
    for n in range(32):
        nic, peer = f"nic{n}", f"nic{(n + 4) % 32}"
        planned = nic_paths(plan, nic, [peer], narrow)
        changed = rewrites(planned, repaired_paths(plan, nic, [peer], planned, narrow, verdict))
        assert [dict(e.match)["ev"] for e in changed] == ([4] if n % 2 == 0 else [])
        for e in changed:
            landed[t1_of(plan, e)] = landed.get(t1_of(plan, e), 0) + 1
    assert set(landed) == {"p0-t1-0", "p0-t1-2", "p0-t1-3"}
    assert sum(landed.values()) == 16 and max(landed.values()) - min(landed.values()) <= 1


def test_a_plane_without_healthy_t1s_is_denied_down_to_the_floor(plan: FabricPlan) -> None:
    dead = {f"p2-t1-{j}" for j in range(4)}
    planned = nic_paths(plan, "nic0", ["nic9"])
    target = repaired_paths(plan, "nic0", ["nic9"], planned, PROFILE,
                            Verdict(switches_down=dead))
    denied = [e for e in target if e.action == "deny_path"]
    assert {dict(e.match)["ev"] % 4 for e in denied} == {2}   # plane 2's EVs only
    assert len(denied) == 5                                   # 4 active + 1 backup
    floor = EvProfile(ev_count=16, backups=1, ev_min_active=14)
    kept = repaired_paths(plan, "nic0", ["nic9"], planned, floor,
                          Verdict(switches_down=dead))
    active_denied = [e for e in kept if e.action == "deny_path" and dict(e.match)["ev"] < 16]
    assert len(active_denied) == 16 - 14                     # never below ev_min_active
