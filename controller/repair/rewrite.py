"""A NIC's EV paths under a verdict: the planned `ev_path` entries with every EV that crosses a
failed link or switch moved to a healthy T1 of the same plane, or DENIED.

The target is a pure function of the plan and the verdict, so restoring is the same call with
the link gone from the verdict, and what to write is the difference from what the NIC holds
(MODIFYs of `ev_path` only: connections, templates and switch tables are never touched).

Rules, per NIC, EV profile and EV (plane p, T1 t):
- The EV is unusable when its path from this NIC, or towards any peer of the connections on its
  profile, crosses a failed T0-T1 link or a failed T1. (A profile serves all its connections, so
  an EV that is dead towards one peer is moved for all of them.)
- It moves to a healthy T1 of plane p, the healthy T1s taken in turn by EV, counted from the
  NIC's own index, so the plane's load stays spread: over one NIC's EVs, and over the NICs whose
  EVs crossed the failure (with fewer EVs per plane than T1s those EVs share numbers: counted
  from 0 they would all land on one T1). Every plane keeps its share: the EV stays in its
  plane. A T1 is a candidate only if it is cabled to this NIC's T0 and to the T0 of every such
  peer (topology/reach.py): a fabric with a cable left out has T1s that reach some T0s only,
  and a T1 with no cable to a T0 is not "down" there, it is never a path.
- No healthy T1 in the plane: DENIED (`deny_path`), unless the active EVs of the profile left
  usable would fall below its `ev_min_active`; then it keeps its path, and the NIC's own EV
  state (loss -> ASSUMED_BAD, probes) handles it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Verdict

DENY = "deny_path"


def repaired_paths(plan: FabricPlan, nic: str, peers: Sequence[str],
                   planned: Sequence[PlannedEntry], profile: EvProfile, verdict: Verdict, *,
                   by_profile: Mapping[int, Sequence[str]] | None = None) -> list[PlannedEntry]:
    """`planned` (the NIC's `ev_path` entries as planned) under `verdict`. `by_profile`: the
    peers of each profile's connections; without it every peer counts for every profile."""
    topo = plan.topology
    reach = plan.templates.reach
    names = {plan.usid(s.name): s.name for s in topo.switches}
    me = topo.nic(nic).attachments
    turn = topo.nic(nic).index   # where this NIC starts taking the healthy T1s in turn
    t0s_of: dict[int, list[tuple[tuple[str, int], ...]]] = {}   # profile -> attachments

    def t0s(pid: int) -> list[tuple[tuple[str, int], ...]]:
        found = t0s_of.get(pid)
        if found is None:
            group = peers if by_profile is None else by_profile.get(pid, ())
            found = t0s_of[pid] = [me] + [topo.nic(p).attachments for p in group]
        return found

    def usable(pid: int, plane: int, t1: str) -> bool:
        return all(reach.cabled(at[plane][0], t1) and not verdict.crosses(plane, at[plane][0], t1)
                   for at in t0s(pid) if at is me or at[plane][0] != me[plane][0])

    healthy: dict[tuple[int, int], list[tuple[str, int]]] = {}
    out: list[PlannedEntry] = []
    denied_active: dict[int, int] = {}
    for entry in planned:
        params = dict(entry.params)
        pid, ev = dict(entry.match)["profile"], dict(entry.match)["ev"]
        plane, t1 = params.get("plane"), names.get(params.get("t1_usid", -1))
        if entry.action != "set_path" or plane is None or t1 is None or usable(pid, plane, t1):
            out.append(entry)
            continue
        spare = healthy.get((pid, plane))
        if spare is None:
            choices = plan.templates.t1_choices(plane, me[plane][0], me[plane][0])
            spare = healthy[(pid, plane)] = [(name, u) for name, u in choices
                                             if usable(pid, plane, name)]
        if spare:
            _, u = spare[(ev + turn) % len(spare)]
            out.append(PlannedEntry(entry.table, entry.match, "set_path",
                                    (("plane", plane), ("t1_usid", u))))
        elif (ev < profile.ev_count
              and profile.ev_count - denied_active.get(pid, 0) - 1 < profile.ev_min_active):
            out.append(entry)   # the floor: keep it; the NIC's EV state takes it out if dead
        else:
            denied_active[pid] = denied_active.get(pid, 0) + (ev < profile.ev_count)
            out.append(PlannedEntry(entry.table, entry.match, DENY))
    return out


def rewrites(installed: Sequence[PlannedEntry], target: Sequence[PlannedEntry]
             ) -> list[PlannedEntry]:
    """The target entries that differ from the installed ones (same keys): the MODIFYs."""
    have = {e.key: e for e in installed}
    return [e for e in target if have.get(e.key) != e]
