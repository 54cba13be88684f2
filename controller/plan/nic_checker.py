"""Prove a NIC's plan delivers every EV, both ways, without packets.

For each connection of the NIC and each EV of its profile, the carrier is made from the planned
entries exactly as p4src/nic/path.p4 makes it (the `path_template` base of (plane, destination
row) with the EV's T1 uSID and the connection's uA filled in), then walked hop by hop over the
switch plan (checker.walk_address): it must reach the peer's port of that plane, inside the
plane, as the NIC decap SID. The EV's return address (the NIC's `plane_port` locator behind the
same T1) is walked the other way, from the peer back to this NIC: that is where the peer's SACKs
and NACKs go. EV `e` must be in plane `e mod planes` and its plane's port cabled to that plane.

Before walking, each (connection, EV) is held against the wiring, which names what is wrong
where a walk would only say where the packet died: the row's template must lead to the peer's
T0 of the plane and carry (with the connection's uA) the peer's port there, and the EV's T1 must
be cabled to both T0s (topology/reach.py). `check_every_nic` does only that, cheaply, for every
NIC towards every other: `mrc-ctl check` runs it after the switch plan's walk, so a plan whose
paths are sound but whose NICs would send over a T1 that cannot reach the peer does not pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.plan.checker import PlanChecker
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import (
    MAX_CONNECTIONS,
    QP_BASE,
    EvProfile,
    NicConnection,
    NicPlan,
    NicPlanner,
    nic_address,
    plane_port,
)
from controller.plan.plan import FabricPlan
from controller.plan.usid import PlanError, carrier_usids, format_address, ua_usid
from controller.topology.model import Nic, Topology
from controller.topology.reach import Reach

_LOW96 = (1 << 96) - 1
_BLOCK = ((1 << 32) - 1) << 96


@dataclass
class NicCheckResult:
    nic: str
    paths: int = 0  # forward and return walks
    routes: int = 0  # (connection, EV) routes held against the wiring
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        state = "OK" if self.ok else f"{len(self.errors)} error(s)"
        return f"NIC {self.nic}: {self.paths} EV paths (forward and return) checked: {state}"


class Routes:
    """Holds one EV's route against the wiring (see the module docstring)."""

    def __init__(self, plan: FabricPlan) -> None:
        self.plan = plan
        self.reach = Reach(plan.topology)
        self.names = {plan.usid(s.name): s.name for s in plan.topology.switches}

    def error(self, nic: Nic, peer: Nic, plane: int, template: PlannedEntry, dst_ua: int,
              t1_usid: int) -> str:
        """What is wrong with the route from `nic` to `peer` in `plane` through the T1 of
        `t1_usid`, the row's `template` and the connection's `dst_ua`; "" when nothing."""
        src, (dst, port) = nic.attachments[plane][0], peer.attachments[plane]
        usids = carrier_usids(dict(template.params)["base"])
        via_t1 = template.action == "via_t1"
        to = usids[2] if via_t1 else usids[0]
        goes_to = self.names.get(to, f"uSID {to:#06x}")
        if goes_to != dst:
            return (f"its path_template row leads to {goes_to}, but {peer.name} is under "
                    f"{dst} in plane {plane}")
        ua = usids[3 if via_t1 else 1] | dst_ua
        if ua != ua_usid(port):
            return f"its uA {ua:#06x} is not {peer.name}'s port {port} on {dst} ({ua_usid(port):#06x})"
        if via_t1:
            t1 = self.names.get(t1_usid)
            if t1 is None:
                return f"its T1 uSID {t1_usid:#06x} is no switch's"
            for t0, whose in ((src, nic.name), (dst, peer.name)):
                if not self.reach.cabled(t0, t1):
                    return f"via T1 {t1}: no cable {t0} - {t1} ({whose}'s T0 in plane {plane})"
        return ""


def return_address(locator: int, t1_usid: int, via_t1: bool) -> int:
    """The outer source of data through `t1_usid` (path.p4): the locator behind that T1."""
    if not via_t1:
        return locator
    return (locator & _BLOCK) | t1_usid << 80 | (locator & _LOW96) >> 16


def check_nic_plan(topology: Topology, plan: FabricPlan, nic_plan: NicPlan,
                   max_errors: int = 10, *, walk: bool = True,
                   routes: Routes | None = None) -> NicCheckResult:
    """Every (connection, EV) of `nic_plan` held against the wiring and, with `walk`, walked
    both ways over the switch plan."""
    result = NicCheckResult(nic_plan.nic)
    checker = PlanChecker(topology, plan, max_errors)
    routes = routes or Routes(plan)
    nic = topology.nic(nic_plan.nic)
    by_address = {nic_address(n): n for n in topology.nics}
    tables: dict[str, list[PlannedEntry]] = {}
    for e in nic_plan.entries:
        tables.setdefault(e.table, []).append(e)
    ports = {dict(e.match)["plane"]: dict(e.params) for e in tables.get("plane_port", [])}
    templates = {(dict(e.match)["plane"], dict(e.match)["dst_row"]): e
                 for e in tables.get("path_template", [])}
    paths: dict[int, list[tuple[int, int, int]]] = {}   # profile -> (EV, plane, T1 uSID)
    for e in tables.get("ev_path", []):
        if e.action == "set_path":
            match, params = dict(e.match), dict(e.params)
            paths.setdefault(match["profile"], []).append(
                (match["ev"], params["plane"], params["t1_usid"]))

    def fail(message: str) -> bool:
        result.errors.append(f"NIC {nic.name}: {message}")
        return len(result.errors) >= max_errors

    planes = len(nic.attachments)
    for plane, params in sorted(ports.items()):
        if params["port"] != plane_port(plane) and fail(
                f"plane {plane} is on NIC port {params['port']}, not {plane_port(plane)}"):
            return result
    for conn in tables.get("tx_connection", []):
        match, params = dict(conn.match), dict(conn.params)
        peer = by_address.get(match["dst_addr"])
        if peer is None:
            if fail(f"tx_connection to {format_address(match['dst_addr'])}: no NIC has that "
                    "address"):
                return result
            continue
        # (A connection with one slot per plane, as ECMP's one pinned EV, has nowhere to go.)
        ev_count, sprayed, step = params["ev_mask"] + 1, params["planes"], params["hand_off"]
        if (step % sprayed or (ev_count > sprayed and step % ev_count == 0)) and fail(
                f"tx_connection to {peer.name}: hand_off {step} must be a multiple of the "
                f"{sprayed} planes and not of the {ev_count} EVs (a passed-over turn stays in "
                "its plane and leaves its slot)"):
            return result
        for ev, plane, t1 in paths.get(params["profile"], []):
            where = f"EV {ev} to {peer.name} (plane {plane})"
            if plane != ev % planes:
                if fail(f"{where}: EV {ev} must be in plane {ev % planes}"):
                    return result
                continue
            tpl = templates.get((plane, params["dst_row"]))
            if tpl is None or plane not in ports:
                if fail(f"{where}: no path_template for row {params['dst_row']} or no "
                        "plane_port"):
                    return result
                continue
            result.routes += 1
            error = routes.error(nic, peer, plane, tpl, params["dst_ua"], t1)
            if error:
                if fail(f"{where}: {error}"):
                    return result
                continue
            if not walk:
                continue
            base, via_t1 = dict(tpl.params)["base"], tpl.action == "via_t1"
            ua = params["dst_ua"]
            forward = (base | t1 << 64 | ua << 32) if via_t1 else (base | ua << 64)
            hops = 3 if via_t1 else 1
            back = return_address(ports[plane]["src"], t1, via_t1)
            for label, src, dst, addr in (("forward", nic.name, peer.name, forward),
                                          ("return", peer.name, nic.name, back)):
                result.paths += 1
                error = checker.walk_address(f"{where}, {label} to {format_address(addr)}",
                                             src, dst, plane, addr, hops)
                if error and fail(error):
                    return result
    for problem in checker.result.errors:  # the switch tables' own problems, if any
        if fail(problem):
            break
    return result


@dataclass
class EveryNicResult:
    nics: int = 0
    connections: int = 0
    routes: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        state = "OK" if self.ok else f"{len(self.errors)} error(s)"
        return (f"NIC plans: {self.nics} NICs, {self.connections} connections, {self.routes} "
                f"EV routes held against the wiring: {state}")


def check_every_nic(topology: Topology, plan: FabricPlan, profile: EvProfile,
                    max_errors: int = 10) -> EveryNicResult:
    """Every NIC's plan towards every other NIC (64 connections at a time, as a NIC holds),
    each (connection, EV) held against the wiring; what the planner refuses is an error too."""
    result = EveryNicResult()
    planner, routes = NicPlanner(plan), Routes(plan)
    for nic in topology.nics:
        result.nics += 1
        peers = [n.name for n in topology.nics if n is not nic]
        for first in range(0, len(peers), MAX_CONNECTIONS):
            group = peers[first:first + MAX_CONNECTIONS]
            conns = [NicConnection(i, p, QP_BASE + i, QP_BASE + i) for i, p in enumerate(group)]
            try:
                made = planner.plan_nic(nic.name, conns, profile)
            except PlanError as error:
                if str(error) not in result.errors:
                    result.errors.append(str(error))
                if len(result.errors) >= max_errors:
                    return result
                continue
            result.connections += len(conns)
            one = check_nic_plan(topology, plan, made, max_errors - len(result.errors),
                                 walk=False, routes=routes)
            result.routes += one.routes
            result.errors += one.errors
            if len(result.errors) >= max_errors:
                return result
    return result
