"""The load-balancing modes compared, all on the same P4 programs: only the NICs' table entries
and the controller differ.

- `mrc`: the scenario's EV profile (spraying over every plane and T1, EVs taken out of service
  on loss, same-plane backups) and the controller's repair loop (controller/repair).
- `mrc_no_controller`: the same NICs, no controller: each NIC repairs only what it sees.
- `spray`: oblivious spraying: the same EVs, no backups and `ev_min_active` = `ev_count`, so
  the NIC never takes an EV out of service nor passes one over (its data plane suppresses every
  demotion, SKIP and port-balance move: the rotation alone decides).
- `ecmp`: each connection pinned to one path, (plane, T1) picked by a hash of the connection
  among the T1s that reach the peer's T0, as a switch's ECMP hash picks an uplink: a profile of one EV per connection (`ev_mask` 0,
  one plane, no backups). A failed cable is routed around `ecmp_convergence_us` after it
  fails (the routing protocol's reconvergence): connections pinned across it are hashed again
  over the paths still alive, and hashed back when it returns.

Caveat of `ecmp`: the NIC's port-state check looks at plane 0 for a one-plane profile, so a
`nic_port_down` scenario is not meaningful in this mode.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile, NicConnection, NicPlan, NicPlanner
from controller.plan.plan import FabricPlan
from controller.plan.usid import PlanError
from controller.repair.correlate import Verdict

# profile ids: the scenario's profile keeps its own; ecmp gives connection c its own.
ECMP_PROFILE_BASE = 0x100


@dataclass(frozen=True)
class Mode:
    name: str
    profile: EvProfile
    controller: bool
    pinned: bool


def mode(name: str, profile: EvProfile) -> Mode:
    if name == "mrc":
        return Mode(name, profile, True, False)
    if name == "mrc_no_controller":
        return Mode(name, profile, False, False)
    if name == "spray":
        return Mode(name, dataclasses.replace(profile, backups=0,
                                              ev_min_active=profile.ev_count), False, False)
    if name == "ecmp":
        return Mode(name, profile, False, True)
    raise ValueError(f"unknown mode {name!r}")


@dataclass(frozen=True)
class PinnedPath:
    """One ecmp connection's path: its NIC, connection index, plane and T1 (name, uSID)."""

    nic: str
    conn: int
    plane: int
    t1: str
    t1_usid: int

    def entry(self) -> PlannedEntry:
        return PlannedEntry.make("ev_path", {"profile": ECMP_PROFILE_BASE + self.conn, "ev": 0},
                                 "set_path", {"plane": self.plane, "t1_usid": self.t1_usid})


class EcmpPaths:
    """Which path each connection is hashed to, given what the routing protocol knows is down."""

    def __init__(self, plan: FabricPlan, seed: int) -> None:
        self.plan = plan
        self.seed = seed

    def choices(self, nic: str, peer: str | None = None) -> list[tuple[int, str, int]]:
        """(plane, T1 name, T1 uSID) above the NIC's T0 in every plane; with `peer`, only the
        T1s that reach the peer's T0 too (a fabric may leave a T0-T1 cable out), every T1 of a
        plane where both sit under one T0 (no T1 on the way)."""
        topology = self.plan.topology
        me = topology.nic(nic).attachments
        there = topology.nic(peer).attachments if peer is not None else me
        out = []
        for plane, ((t0, _), (dst, _)) in enumerate(zip(me, there, strict=True)):
            ups = self.plan.templates.t1_choices(plane, t0, t0)
            reach = ups if dst == t0 else self.plan.templates.t1_choices(plane, t0, dst)
            out += [(plane, name, usid) for name, usid in reach]
        return out

    def pick(self, nic: str, connection: NicConnection, down: Verdict) -> PinnedPath:
        topology = self.plan.topology
        me, peer = topology.nic(nic), topology.nic(connection.peer)
        options = self.choices(nic, connection.peer)
        if not options:
            raise PlanError(f"NIC {nic} -> {connection.peer}: no T1 reaches the peer's T0 in "
                            "any plane")

        def alive(option: tuple[int, str, int]) -> bool:
            plane, t1, _ = option
            src, dst = me.attachments[plane][0], peer.attachments[plane][0]
            if src == dst:   # under one T0: no T1 on the way
                return True
            return not (down.crosses(plane, src, t1) or down.crosses(plane, dst, t1))

        live = [o for o in options if alive(o)] or options
        key = f"{nic}>{connection.peer}:{connection.local_qp}:{self.seed}".encode()
        plane, t1, usid = live[zlib.crc32(key) % len(live)]
        return PinnedPath(nic, connection.conn, plane, t1, usid)


def nic_plan(planner: NicPlanner, mode: Mode, nic: str, connections: Sequence[NicConnection],
             pinned: Iterable[PinnedPath] = ()) -> NicPlan:
    """The NIC's entries in `mode`: the planner's, and for ecmp its connections re-pointed to
    one-EV profiles whose single EV is the pinned path."""
    plan = planner.plan_nic(nic, connections, mode.profile)
    if not mode.pinned:
        return plan
    one_ev = {"ev_mask": 0, "planes": 1, "backups": 0, "ev_min_active": 1}
    entries: list[PlannedEntry] = []
    for entry in plan.entries:
        if entry.table == "ev_path":
            continue   # the profile's EVs: replaced by one pinned EV per connection
        if entry.table in ("tx_connection", "local_qp"):
            params = dict(entry.params)
            params.update(one_ev, profile=ECMP_PROFILE_BASE + params["conn"])
            entry = dataclasses.replace(entry, params=tuple(sorted(params.items())))
        entries.append(entry)
    entries += [p.entry() for p in pinned]
    return dataclasses.replace(plan, entries=tuple(entries))
