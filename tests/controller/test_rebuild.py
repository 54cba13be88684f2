"""repair/rebuild.py: the health model rebuilt from NIC tables a previous primary left, on
topologies/medium.yaml (4 planes x (4 T1 + 8 T0), 32 NICs, 4 under each T0). Whatever it had
declared, the rebuilt model rewrites no NIC (its target is what the NIC holds) and never puts an
EV back onto what it took out; a repair cut short is finished, not undone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile, NicConnection, NicPlanner
from controller.plan.plan import FabricPlan
from controller.repair.correlate import FabricLink, Verdict
from controller.repair.rebuild import TableEvidence
from controller.repair.rewrite import repaired_paths
from controller.topology.model import Tier
from controller.topology.yaml_io import load

MEDIUM = Path(__file__).resolve().parents[2] / "topologies" / "medium.yaml"
PROFILE = EvProfile(ev_count=16, backups=1, ev_min_active=4)   # 4 planes x 4 T1s


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return FabricPlan(load(MEDIUM))


def fabric_nics(plan: FabricPlan, seed: int) -> dict[str, tuple[list[str], list[PlannedEntry]]]:
    """Every NIC with three random peers (under other T0s): (peers, planned ev_path)."""
    rng = random.Random(seed)
    names = [n.name for n in plan.topology.nics]
    planner = NicPlanner(plan)
    out = {}
    for i, nic in enumerate(names):
        peers = rng.sample([n for j, n in enumerate(names) if j // 4 != i // 4], 3)
        made = planner.plan_nic(nic, [NicConnection(k, p, k + 1, k + 1)
                                      for k, p in enumerate(peers)], PROFILE)
        out[nic] = (peers, [e for e in made.entries if e.table == "ev_path"])
    return out


def held_under(plan: FabricPlan, nics: dict[str, tuple[list[str], list[PlannedEntry]]],
               verdict: Verdict) -> dict[str, list[PlannedEntry]]:
    """What a primary that declared `verdict` left in every NIC."""
    return {nic: repaired_paths(plan, nic, peers, planned, PROFILE, verdict)
            for nic, (peers, planned) in nics.items()}


def rebuilt(plan: FabricPlan, nics: dict[str, tuple[list[str], list[PlannedEntry]]],
            held: dict[str, list[PlannedEntry]], known: Verdict | None = None
            ) -> set[FabricLink]:
    tables = TableEvidence(plan)
    for nic, (peers, planned) in nics.items():
        tables.found(nic, planned, held[nic], {PROFILE.profile_id: peers})
    return tables.taken_out(known or Verdict())


def crossed(plan: FabricPlan, entries: list[PlannedEntry], nic: str, peers: list[str]
            ) -> set[FabricLink]:
    """Every T0-T1 cable the NIC's set_path entries use (from it and towards its peers)."""
    names = {plan.usid(s.name): s.name for s in plan.topology.switches}
    out = set()
    for e in entries:
        if e.action == "set_path":
            params = dict(e.params)
            plane, t1 = params["plane"], names[params["t1_usid"]]
            out |= {(plane, plan.topology.nic(n).attachments[plane][0], t1)
                    for n in (nic, *peers)}
    return out


def cables(plan: FabricPlan) -> list[FabricLink]:
    topo = plan.topology
    return sorted((s.plane, s.name, t1) for s in topo.switches if s.tier == Tier.T0
                  for _, t1, _ in topo.neighbors(s.name) if topo.is_switch(t1))


@pytest.mark.parametrize("seed", range(8))
def test_a_rebuilt_model_rewrites_nothing_and_never_uses_what_was_taken_out(
        plan: FabricPlan, seed: int) -> None:
    rng = random.Random(seed)
    nics = fabric_nics(plan, seed)
    if seed % 2 == 0:   # a cable or three
        before = Verdict(set(rng.sample(cables(plan), 1 + seed % 4)))
    else:          # a whole T1
        t1s = [s.name for s in plan.topology.switches if s.tier == Tier.T1]
        before = Verdict(switches_down={rng.choice(t1s)})
    held = held_under(plan, nics, before)
    model = Verdict(rebuilt(plan, nics, held))
    after = held_under(plan, nics, model)
    assert after == held   # the new primary writes nothing
    for nic, (peers, _) in nics.items():
        assert not any(before.crosses(*link) for link in crossed(plan, after[nic], nic, peers))
    # The same tables under the old primary's own model: nothing left to rebuild.
    assert rebuilt(plan, nics, held, known=before) == set()


def test_a_repair_cut_short_is_finished_not_undone(plan: FabricPlan) -> None:
    nics = fabric_nics(plan, 7)
    cut = (1, "p1-t0-2", "p1-t1-3")
    repaired = held_under(plan, nics, Verdict({cut}))
    planned = {nic: entries for nic, (_, entries) in nics.items()}
    moved = sorted(n for n in nics if repaired[n] != planned[n])
    assert len(moved) > 2
    # The primary died after writing the first NIC: the others still hold the plan.
    held = {**planned, moved[0]: repaired[moved[0]]}
    model = Verdict(rebuilt(plan, nics, held))
    assert cut in model.links_down
    after = held_under(plan, nics, model)
    assert after[moved[0]] == held[moved[0]]   # the repaired NIC is left as it is
    for nic in moved:                          # and every other one is taken off the cut
        peers = nics[nic][0]
        assert cut not in crossed(plan, after[nic], nic, peers), nic


def test_a_link_probed_healthy_is_not_rebuilt_again(plan: FabricPlan) -> None:
    nics = fabric_nics(plan, 8)
    cut = (2, "p2-t0-5", "p2-t1-0")
    held = held_under(plan, nics, Verdict({cut}))
    tables = TableEvidence(plan)
    for nic, (peers, planned) in nics.items():
        tables.found(nic, planned, held[nic], {PROFILE.profile_id: peers})
    found = tables.taken_out(Verdict())
    assert cut in found
    tables.cleared(cut)
    assert cut not in tables.taken_out(Verdict())


def test_tables_this_controller_wrote_itself_are_no_news(plan: FabricPlan) -> None:
    """A NIC it repaired reconnects (its stream broke) after the link came back: what it holds
    is what this controller believed it held, so nothing is blamed again."""
    nics = fabric_nics(plan, 9)
    held = held_under(plan, nics, Verdict({(3, "p3-t0-1", "p3-t1-2")}))
    tables = TableEvidence(plan)
    for nic, (peers, planned) in nics.items():
        tables.found(nic, planned, held[nic], {PROFILE.profile_id: peers}, believed=held[nic])
    assert tables.taken_out(Verdict()) == set()
