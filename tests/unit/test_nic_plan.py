"""controller/plan/nic_plan.py: a NIC's entries from the topology, checked against the switch
plan's uSIDs and templates, and its refusals."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from controller.plan.entries import PlannedEntry
from controller.plan.hand_off import hand_off_steps
from controller.plan.nic_checker import check_nic_plan
from controller.plan.nic_plan import (
    EvMode,
    EvProfile,
    NicConnection,
    NicPlanner,
    nic_address,
    plane_port,
)
from controller.plan.plan import FabricPlan
from controller.plan.usid import NIC_DECAP_USID, PlanError, carrier, switch_mac, ua_usid
from controller.topology.generate import generate
from controller.topology.yaml_io import load

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"
MISSING = ROOT / "tests" / "topologies" / "tiny-missing-cable.yaml"
MOVED = ROOT / "tests" / "topologies" / "tiny-moved-nics.yaml"


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return FabricPlan(load(TINY))


def entries_of(plan: FabricPlan, nic: str, peer: str, profile: EvProfile) -> dict:
    made = NicPlanner(plan).plan_nic(nic, [NicConnection(3, peer, 0x11, 0x22, 7)], profile)
    by_table: dict[str, list] = {}
    for e in made.entries:
        by_table.setdefault(e.table, []).append(e)
    return {"plan": made, **by_table}


def test_a_nic_on_another_t0_gets_via_t1_templates_and_its_evs_spread_over_t1s(
        plan: FabricPlan) -> None:
    profile = EvProfile(ev_count=16, backups=2, ev_min_active=4)
    got = entries_of(plan, "nic0", "nic2", profile)
    assert got["plan"].clone_sessions("bmv2") == {99: 1}             # the host's copies
    assert got["plan"].clone_sessions("tofino-stratum") == {100: 2, 101: 3}   # feedback
    assert [s.class_of_service for s in got["plan"].sessions("tofino-stratum")] == [7, 7]
    assert [s.class_of_service for s in got["plan"].sessions("bmv2")] == [0]
    u = plan.usid
    for e in got["path_template"]:
        m, params = dict(e.match), dict(e.params)
        plane = m["plane"]
        assert m["dst_row"] == 1 and e.action == "via_t1"
        assert params["base"] == carrier(plan.block, [u(f"p{plane}-t0-0"), 0, u(f"p{plane}-t0-1"),
                                                      0, NIC_DECAP_USID])
    paths = Counter((dict(e.params)["plane"], dict(e.params)["t1_usid"]) for e in got["ev_path"])
    # 16 + 2 x 2 EVs; each (plane, T1) of the tiny fabric carries the same number.
    assert sum(paths.values()) == 20 and set(paths.values()) == {5}
    for e in got["ev_path"]:
        assert dict(e.params)["plane"] == dict(e.match)["ev"] % 2   # EV e in plane e mod 2
    (tx,) = got["tx_connection"]
    assert dict(tx.match) == {"dst_addr": nic_address(plan.topology.nic("nic2")), "dest_qp": 0x22}
    assert dict(tx.params)["dst_ua"] == ua_usid(0) and dict(tx.params)["ev_mask"] == 15
    (rx,) = got["local_qp"]
    assert dict(rx.match) == {"dest_qp": 0x11}
    assert dict(rx.params)["initial_psn"] == 7 and dict(rx.params)["peer_qp"] == 0x22
    for e in got["plane_port"]:
        plane, params = dict(e.match)["plane"], dict(e.params)
        assert params["port"] == plane_port(plane)
        assert params["dmac"] == switch_mac(u(f"p{plane}-t0-0"))
        assert params["src"] == carrier(plan.block, [u(f"p{plane}-t0-0"), ua_usid(0),
                                                     NIC_DECAP_USID])


def test_a_nic_on_the_same_t0_gets_same_t0_templates(plan: FabricPlan) -> None:
    got = entries_of(plan, "nic0", "nic1", EvProfile(ev_count=8, backups=0, ev_min_active=2))
    assert {e.action for e in got["path_template"]} == {"same_t0"}
    assert {dict(e.match)["dst_row"] for e in got["path_template"]} == {0}


@pytest.mark.parametrize(("profile", "message"), [
    (EvProfile(ev_count=12), "power of two"),
    (EvProfile(ev_count=1), "multiple of the 2 planes"),
    (EvProfile(ev_count=16, backups=3), "backups 3"),
    (EvProfile(ev_count=256, backups=2), "exceed the NIC's 256"),
])
def test_bad_profiles_are_refused_with_the_reason(plan: FabricPlan, profile: EvProfile,
                                                  message: str) -> None:
    with pytest.raises(PlanError, match=message):
        NicPlanner(plan).plan_nic("nic0", [NicConnection(0, "nic2", 1, 2)], profile)


def test_a_peer_on_different_ports_per_plane_gets_a_row_whose_templates_carry_its_ua(
        plan: FabricPlan) -> None:
    topo = plan.topology
    swapped = {"nic2": ("p1-t0-1", 1), "nic3": ("p1-t0-1", 0)}   # plane 1 cables crossed
    nics = [dataclasses.replace(n, attachments=(n.attachments[0], swapped[n.name]))
            if n.name in swapped else n for n in topo.nics]
    other = FabricPlan(dataclasses.replace(topo, nics=nics, links=[
        link for link in topo.links if "nic" not in link.a + link.b]))
    made = NicPlanner(other).plan_nic("nic0", [NicConnection(0, "nic2", 1, 2),
                                               NicConnection(1, "nic3", 3, 4)])
    tx = {dict(e.params)["conn"]: dict(e.params) for e in made.entries
          if e.table == "tx_connection"}
    # Rows after the T0 rows (0, 1), one per peer; the connection's own uA is 0.
    assert {c: (p["dst_row"], p["dst_ua"]) for c, p in tx.items()} == {0: (2, 0), 1: (3, 0)}
    u = other.usid
    bases = {(dict(e.match)["plane"], dict(e.match)["dst_row"]): dict(e.params)["base"]
             for e in made.entries if e.table == "path_template"}
    for plane in range(2):
        for row, peer in ((2, "nic2"), (3, "nic3")):
            port = other.topology.nic(peer).attachments[plane][1]
            assert bases[(plane, row)] == carrier(other.block, [
                u(f"p{plane}-t0-0"), 0, u(f"p{plane}-t0-1"), ua_usid(port), NIC_DECAP_USID])
    result = check_nic_plan(other.topology, other, made)
    assert result.ok and result.paths == 2 * 136 * 2, result.errors


def test_a_peer_under_another_t0_per_plane_gets_a_row_to_each(plan: FabricPlan) -> None:
    moved = FabricPlan(load(MOVED))   # nic0 under p0-t0-0 and p1-t0-1, nic2 the other way
    conns = [NicConnection(0, "nic0", 1, 1), NicConnection(1, "nic1", 2, 2)]
    made = NicPlanner(moved).plan_nic("nic3", conns, EvProfile(ev_count=8, backups=0,
                                                                 ev_min_active=2))
    rows = {dict(e.params)["conn"]: dict(e.params)["dst_row"] for e in made.entries
            if e.table == "tx_connection"}
    assert rows == {0: 2, 1: 0}   # nic1 keeps its T0 row; nic0 a row of its own
    templates = {(dict(e.match)["plane"], dict(e.match)["dst_row"]): e
                 for e in made.entries if e.table == "path_template"}
    u = moved.usid
    # nic3 (p0-t0-1, p1-t0-1) to nic0: across the T1s in plane 0, under one T0 in plane 1.
    assert templates[(0, 2)].action == "via_t1"
    assert dict(templates[(0, 2)].params)["base"] == carrier(
        moved.block, [u("p0-t0-1"), 0, u("p0-t0-0"), 0, NIC_DECAP_USID])
    assert templates[(1, 2)].action == "same_t0"
    assert dict(templates[(1, 0)].params)["base"] == carrier(
        moved.block, [u("p1-t0-1"), 0, u("p1-t0-0"), 0, NIC_DECAP_USID])
    assert check_nic_plan(moved.topology, moved, made).ok


def test_a_missing_cable_gives_the_connection_a_profile_that_avoids_it() -> None:
    missing = FabricPlan(load(MISSING))   # no p0-t0-0 - p0-t1-1 cable
    profile = EvProfile(ev_count=16, backups=2, ev_min_active=4)
    conns = [NicConnection(0, "nic3", 1, 1), NicConnection(1, "nic0", 2, 2)]
    planner = NicPlanner(missing)
    made = planner.plan_nic("nic2", conns, profile)
    tx = {dict(e.params)["conn"]: dict(e.params)["profile"] for e in made.entries
          if e.table == "tx_connection"}
    # nic3 shares nic2's T0: every T1 serves; nic0's T0 is not cabled to p0-t1-1.
    assert tx == {0: 1, 1: 2} == planner.connection_profiles("nic2", {0: "nic3", 1: "nic0"},
                                                              profile)
    paths: dict[int, Counter] = {1: Counter(), 2: Counter()}
    for e in made.entries:
        if e.table == "ev_path":
            params = dict(e.params)
            paths[dict(e.match)["profile"]][(params["plane"], params["t1_usid"])] += 1
    u = missing.usid
    assert paths[1] == {(0, u("p0-t1-0")): 5, (0, u("p0-t1-1")): 5,
                        (1, u("p1-t1-0")): 5, (1, u("p1-t1-1")): 5}
    # The same EVs, plane by plane; plane 0's on the one T1 that reaches nic0.
    assert paths[2] == {(0, u("p0-t1-0")): 10, (1, u("p1-t1-0")): 5, (1, u("p1-t1-1")): 5}
    result = check_nic_plan(missing.topology, missing, made)
    assert result.ok and result.paths == 2 * 20 * 2, result.errors


def test_a_plane_where_no_t1_joins_the_t0s_is_refused_naming_the_cables() -> None:
    topo = load(MISSING)
    cut = dataclasses.replace(topo, links=[link for link in topo.links
                                           if (link.a, link.a_port) != ("p0-t0-1", 2)])
    with pytest.raises(PlanError) as refused:
        NicPlanner(FabricPlan(cut)).plan_nic("nic2", [NicConnection(0, "nic0", 1, 1)])
    assert str(refused.value) == (
        "NIC nic2 -> nic0, plane 0: no T1 is cabled to both p0-t0-1 and p0-t0-0 "
        "(missing: p0-t0-1 - p0-t1-0, p0-t0-0 - p0-t1-1)")


def test_every_ev_of_a_nic_plan_delivers_both_ways(plan: FabricPlan) -> None:
    profile = EvProfile(ev_count=16, backups=2, ev_min_active=4)
    conns = [NicConnection(i, peer, 0x10 + i, 0x20 + i) for i, peer in
             enumerate(("nic1", "nic2", "nic3"))]
    made = NicPlanner(plan).plan_nic("nic0", conns, profile)
    result = check_nic_plan(plan.topology, plan, made)
    assert result.ok, result.errors
    assert result.paths == 3 * 20 * 2       # 3 peers x 20 EVs x (forward, return)


def test_an_ev_path_in_the_wrong_plane_is_caught_naming_the_ev(plan: FabricPlan) -> None:
    made = NicPlanner(plan).plan_nic("nic0", [NicConnection(0, "nic2", 1, 2)],
                                     EvProfile(ev_count=8, backups=0, ev_min_active=2))
    t1_of_plane1 = plan.usid("p1-t1-0")
    broken = tuple(dataclasses.replace(e, params=(("plane", 0), ("t1_usid", t1_of_plane1)))
                   if e.table == "ev_path" and dict(e.match)["ev"] == 2 else e
                   for e in made.entries)
    result = check_nic_plan(plan.topology, plan, dataclasses.replace(made, entries=broken))
    assert result.errors == ["NIC nic0: EV 2 to nic2 (plane 0): via T1 p1-t1-0: no cable "
                             "p0-t0-0 - p1-t1-0 (nic0's T0 in plane 0)"]


@pytest.mark.parametrize("step", [1, 0, 8, 3])
def test_a_hand_off_outside_the_plane_or_onto_its_own_slot_is_caught(plan: FabricPlan,
                                                                     step: int) -> None:
    made = NicPlanner(plan).plan_nic("nic0", [NicConnection(0, "nic2", 1, 2)],
                                     EvProfile(ev_count=8, backups=0, ev_min_active=2))
    assert check_nic_plan(plan.topology, plan, made).ok
    broken = tuple(dataclasses.replace(e, params=tuple(
                       (k, step if k == "hand_off" else v) for k, v in e.params))
                   if e.table == "tx_connection" else e for e in made.entries)
    result = check_nic_plan(plan.topology, plan, dataclasses.replace(made, entries=broken))
    assert result.errors == [f"NIC nic0: tx_connection to nic2: hand_off {step} must be a "
                             "multiple of the 2 planes and not of the 8 EVs (a passed-over "
                             "turn stays in its plane and leaves its slot)"]


def test_explicit_profiles_list_their_evs(plan: FabricPlan) -> None:
    evs = ((0, 1), (1, 1), (0, 1), (1, 0))          # EV e in plane e mod 2
    profile = EvProfile(ev_count=4, backups=0, ev_min_active=2, mode=EvMode.EXPLICIT,
                        explicit=evs)
    made = NicPlanner(plan).plan_nic("nic0", [NicConnection(0, "nic2", 1, 2)], profile)
    t1s = [dict(e.params)["t1_usid"] for e in made.entries if e.table == "ev_path"]
    assert t1s == [plan.usid(f"p{p}-t1-{i}") for p, i in evs]
    assert check_nic_plan(plan.topology, plan, made).ok
    with pytest.raises(PlanError, match="EV 1 is in plane 0"):
        EvProfile(ev_count=2, backups=0, ev_min_active=1, mode=EvMode.EXPLICIT,
                  explicit=((0, 0), (0, 1))).check(2)
    with pytest.raises(PlanError, match="T1 index 5"):
        NicPlanner(plan).plan_nic("nic0", [NicConnection(0, "nic2", 1, 2)], EvProfile(
            ev_count=2, backups=0, ev_min_active=1, mode=EvMode.EXPLICIT,
            explicit=((0, 0), (1, 5))))


def active_t1s(plan: FabricPlan, nic: str, profile: EvProfile,
               backups: bool = False) -> dict[int, list[int]]:
    """Per plane, the T1 uSIDs of the NIC's active EVs (or its backups), by EV."""
    made = NicPlanner(plan).plan_nic(nic, [], profile)
    out: dict[int, list[int]] = {}
    for e in sorted((e for e in made.entries if e.table == "ev_path"),
                    key=lambda e: dict(e.match)["ev"]):
        if (dict(e.match)["ev"] >= profile.ev_count) == backups:
            out.setdefault(dict(e.params)["plane"], []).append(dict(e.params)["t1_usid"])
    return out


def test_the_backups_of_a_t0s_nics_take_disjoint_t1s_too() -> None:
    # The emulator's profile on the medium fabric: 4 EVs per plane fill the 4 T1s, so every
    # NIC's active set starts at T1 0. Backups right after it would all be T1s 0 and 1 (every
    # retirement under spread loss would move load there); each NIC's 2 go on from its place.
    plan = FabricPlan(load(ROOT / "topologies" / "medium.yaml"))
    profile = EvProfile(ev_count=16, backups=2, ev_min_active=4)
    names = {plan.usid(f"p{p}-t1-{i}"): i for p in range(4) for i in range(4)}
    for t0 in range(8):
        uplinks: Counter[tuple[int, int]] = Counter()
        for place in range(4):
            nic = f"nic{t0 * 4 + place}"
            assert all(sorted(names[u] for u in t1s) == [0, 1, 2, 3]
                       for t1s in active_t1s(plan, nic, profile).values())
            for plane, t1s in active_t1s(plan, nic, profile, backups=True).items():
                indexes = [names[u] for u in t1s]
                assert indexes == [(2 * place) % 4, (2 * place + 1) % 4]
                uplinks.update((plane, i) for i in indexes)
        assert set(uplinks.values()) == {2} and len(uplinks) == 16   # every T1, evenly


def test_fewer_evs_per_plane_than_t1s_spread_the_nics_of_a_t0_over_disjoint_t1s() -> None:
    # 2 planes, radix 16: 8 NICs under each T0, 8 T1s per plane. 4 EVs (2 per plane) sample
    # a quarter of a plane's T1s: the T0's NICs take the blocks in turn, so the T0's uplinks
    # carry the same share instead of every NIC crowding T1s 0 and 1.
    plan = FabricPlan(generate(2, 16, 32))
    profile = EvProfile(ev_count=4, backups=0, ev_min_active=2)
    names = {plan.usid(f"p{p}-t1-{i}"): i for p in range(2) for i in range(8)}
    for t0 in range(4):
        uplinks: Counter[tuple[int, int]] = Counter()
        for place in range(8):
            got = active_t1s(plan, f"nic{t0 * 8 + place}", profile)
            for plane, t1s in got.items():
                indexes = [names[u] for u in t1s]
                assert indexes == [(2 * place) % 8, (2 * place + 1) % 8]
                uplinks.update((plane, i) for i in indexes)
        assert set(uplinks.values()) == {2} and len(uplinks) == 16   # every T1, evenly


def test_as_many_evs_per_plane_as_t1s_keep_every_nic_on_every_t1_in_ev_order() -> None:
    plan = FabricPlan(generate(2, 8, 16))           # 4 T1s per plane, 4 NICs under each T0
    profile = EvProfile(ev_count=8, backups=2, ev_min_active=2)
    want = {p: [plan.usid(f"p{p}-t1-{i}") for i in range(4)] for p in range(2)}
    for n in range(16):
        assert active_t1s(plan, f"nic{n}", profile) == want


def hand_offs(plan: FabricPlan, nic: str, peers: list[str], profile: EvProfile
              ) -> tuple[dict[str, int], dict[int, int]]:
    """Per peer, the `hand_off` of the NIC's connection to it; and its active EVs' T1s."""
    conns = [NicConnection(i, peer, 0x100 + i, 0x200 + i) for i, peer in enumerate(peers)]
    made = NicPlanner(plan).plan_nic(nic, conns, profile)
    t1 = {dict(e.match)["ev"]: dict(e.params)["t1_usid"] for e in made.entries
          if e.table == "ev_path" and dict(e.match)["profile"] == profile.profile_id}
    steps = {peers[dict(e.params)["conn"]]: dict(e.params)["hand_off"] for e in made.entries
             if e.table == "tx_connection"}
    return steps, t1


def test_a_passed_over_turn_lands_on_another_t1_and_the_senders_spread_their_steps() -> None:
    # 4 T1s per plane: a sender whose EVs on one T1 sit out lands on another T1 (and its
    # further tries on the two others), and the senders towards one NIC do not all land on the
    # same one (the herd mrc-srv6.md §3.3's pseudo-random choice avoids).
    plan = FabricPlan(generate(2, 8, 16))
    profile = EvProfile()   # 128 EVs, 64 slots per plane
    shifts = set()
    for n in range(1, 16):
        steps, t1 = hand_offs(plan, f"nic{n}", ["nic0"], profile)
        step = steps["nic0"]
        assert step % 2 == 0 and 0 < step < 128
        for s in range(128):
            assert len({t1[(s + k * step) % 128] for k in range(4)}) == 4, (n, step, s)
        shifts.add(step // 2 % 4)
    assert shifts == {1, 3}
    assert hand_offs(plan, "nic5", ["nic0"], profile) == hand_offs(plan, "nic5", ["nic0"],
                                                                   profile)


def test_with_two_t1s_per_plane_a_passed_over_turn_goes_to_the_planes_next_slot(
        plan: FabricPlan) -> None:
    steps, _ = hand_offs(plan, "nic0", ["nic1", "nic2", "nic3"], EvProfile(ev_count=16))
    assert steps == {"nic1": 2, "nic2": 2, "nic3": 2}


def test_a_plane_with_one_t1_does_not_hold_back_the_other_planes_steps() -> None:
    # Plane 0's EVs all on one T1 (the only one reaching some peer): no step leaves it, but
    # plane 1's four T1s still give two (steps 2 and 6: T1 +1 or -1, the tries after it on to
    # every other T1; 4 lands on T1 +2 but its second try back on the T1 passed over, 8 on that
    # T1 at once, 10 as 2 does).
    paths = [PlannedEntry.make("ev_path", {"profile": 2, "ev": ev}, "set_path",
                               {"plane": ev % 2, "t1_usid": 0xA if ev % 2 == 0
                                else 0xB0 + ev // 2 % 4})
             for ev in range(16)]
    assert hand_off_steps(paths, 16, 2) == (2, 6)
    one_t1 = [PlannedEntry.make("ev_path", {"profile": 2, "ev": ev}, "set_path",
                                {"plane": 0, "t1_usid": 0xA}) for ev in range(8)]
    assert hand_off_steps(one_t1, 8, 1) == (1,)   # nowhere else to go: the next slot


def test_the_connections_towards_one_nic_start_their_rotations_at_different_slots() -> None:
    # Every connection lists its EVs in one order (slot e: plane e mod planes, the T1s in
    # turn); started at one slot, the senders of an all-to-all would all send on the same T1s
    # in step (mrc-srv6.md §3.3: QPs sharing a profile must not synchronise).
    plan = FabricPlan(generate(4, 8, 32))
    profile = EvProfile(ev_count=16, backups=2, ev_min_active=4)
    planner = NicPlanner(plan)
    starts = []
    for n in range(1, 32):
        made = planner.plan_nic(f"nic{n}", [NicConnection(0, "nic0", 1, 2)], profile)
        (start,) = [dict(e.params)["rotation"] for e in made.entries
                    if e.table == "tx_connection"]
        assert 0 <= start < 16
        starts.append(start)
        assert check_nic_plan(plan.topology, plan, made).ok
    # 31 senders over 16 starts: no start taken by more than a few of them, most taken
    assert max(starts.count(s) for s in range(16)) <= 5 and len(set(starts)) >= 12
    again = NicPlanner(plan).plan_nic("nic7", [NicConnection(0, "nic0", 1, 2)], profile)
    assert [dict(e.params)["rotation"] for e in again.entries
            if e.table == "tx_connection"] == [starts[6]]
