"""A NIC's EV paths under a verdict: the planned `ev_path` entries with every EV that crosses a
failed link or switch moved to a healthy T1 of the same plane, or DENIED.

The target is a pure function of the plan and the verdict, so restoring is the same call with
the link gone from the verdict, and what to write is the difference from what the NIC holds
(MODIFYs of `ev_path` only: connections, templates and switch tables are never touched).

Rules, per NIC and EV (plane p, T1 t):
- The EV is unusable when its path from this NIC, or towards any of the NIC's connection peers,
  crosses a failed T0-T1 link or a failed T1. (A NIC's EV profile serves all its connections, so
  an EV that is dead towards one peer is moved for all of them.)
- It moves to a healthy T1 of plane p, the healthy T1s taken in turn by EV so the plane's load
  stays spread (and every plane keeps its share: the EV stays in its plane).
- No healthy T1 in the plane: DENIED (`deny_path`), unless the active EVs left usable would fall
  below the profile's `ev_min_active`; then it keeps its path, and the NIC's own EV state (loss
  -> ASSUMED_BAD, probes) handles it.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Verdict

DENY = "deny_path"


def repaired_paths(plan: FabricPlan, nic: str, peers: Sequence[str],
                   planned: Sequence[PlannedEntry], profile: EvProfile,
                   verdict: Verdict) -> list[PlannedEntry]:
    """`planned` (the NIC's `ev_path` entries as planned) under `verdict`."""
    topo = plan.topology
    names = {plan.usid(s.name): s.name for s in topo.switches}
    me = topo.nic(nic)
    t0s = [me.attachments] + [topo.nic(p).attachments for p in peers]

    def usable(plane: int, t1: str) -> bool:
        return not any(verdict.crosses(plane, at[plane][0], t1) for at in t0s)

    healthy: dict[int, list[tuple[str, int]]] = {}
    for plane in range(len(me.attachments)):
        choices = plan.templates.t1_choices(plane, me.attachments[plane][0],
                                            me.attachments[plane][0])
        healthy[plane] = [(name, u) for name, u in choices if usable(plane, name)]
    out: list[PlannedEntry] = []
    denied_active = 0
    for entry in planned:
        params = dict(entry.params)
        ev = dict(entry.match)["ev"]
        plane, t1 = params.get("plane"), names.get(params.get("t1_usid", -1))
        if entry.action != "set_path" or plane is None or t1 is None or usable(plane, t1):
            out.append(entry)
            continue
        spare = healthy[plane]
        if spare:
            _, u = spare[ev % len(spare)]
            out.append(PlannedEntry(entry.table, entry.match, "set_path",
                                    (("plane", plane), ("t1_usid", u))))
        elif ev < profile.ev_count and profile.ev_count - denied_active - 1 < profile.ev_min_active:
            out.append(entry)   # the floor: keep it; the NIC's EV state takes it out if dead
        else:
            denied_active += ev < profile.ev_count
            out.append(PlannedEntry(entry.table, entry.match, DENY))
    return out


def rewrites(installed: Sequence[PlannedEntry], target: Sequence[PlannedEntry]
             ) -> list[PlannedEntry]:
    """The target entries that differ from the installed ones (same keys): the MODIFYs."""
    have = {e.key: e for e in installed}
    return [e for e in target if have.get(e.key) != e]
