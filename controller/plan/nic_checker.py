"""Prove a NIC's plan delivers every EV, both ways, without packets.

For each connection of the NIC and each EV of its profile, the carrier is made from the planned
entries exactly as p4src/nic/path.p4 makes it (the `path_template` base of (plane, destination
row) with the EV's T1 uSID and the connection's uA filled in), then walked hop by hop over the
switch plan (checker.walk_address): it must reach the peer's port of that plane, inside the
plane, as the NIC decap SID. The EV's return address (the NIC's `plane_port` locator behind the
same T1) is walked the other way, from the peer back to this NIC: that is where the peer's SACKs
and NACKs go. EV `e` must be in plane `e mod planes` and its plane's port cabled to that plane.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.plan.checker import PlanChecker
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import NicPlan, nic_address, plane_port
from controller.plan.plan import FabricPlan
from controller.plan.usid import format_address
from controller.topology.model import Topology

_LOW96 = (1 << 96) - 1
_BLOCK = ((1 << 32) - 1) << 96


@dataclass
class NicCheckResult:
    nic: str
    paths: int = 0  # forward and return walks
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        state = "OK" if self.ok else f"{len(self.errors)} error(s)"
        return f"NIC {self.nic}: {self.paths} EV paths (forward and return) checked: {state}"


def return_address(locator: int, t1_usid: int, via_t1: bool) -> int:
    """The outer source of data through `t1_usid` (path.p4): the locator behind that T1."""
    if not via_t1:
        return locator
    return (locator & _BLOCK) | t1_usid << 80 | (locator & _LOW96) >> 16


def check_nic_plan(topology: Topology, plan: FabricPlan, nic_plan: NicPlan,
                   max_errors: int = 10) -> NicCheckResult:
    result = NicCheckResult(nic_plan.nic)
    checker = PlanChecker(topology, plan, max_errors)
    nic = topology.nic(nic_plan.nic)
    by_address = {nic_address(n): n.name for n in topology.nics}
    tables: dict[str, list[PlannedEntry]] = {}
    for e in nic_plan.entries:
        tables.setdefault(e.table, []).append(e)
    ports = {dict(e.match)["plane"]: dict(e.params) for e in tables.get("plane_port", [])}
    templates = {(dict(e.match)["plane"], dict(e.match)["dst_row"]): e
                 for e in tables.get("path_template", [])}

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
        for ev_entry in tables.get("ev_path", []):
            if dict(ev_entry.match)["profile"] != params["profile"]:
                continue
            ev = dict(ev_entry.match)["ev"]
            path = dict(ev_entry.params)
            plane, t1 = path["plane"], path["t1_usid"]
            where = f"EV {ev} to {peer} (plane {plane})"
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
            base, via_t1 = dict(tpl.params)["base"], tpl.action == "via_t1"
            ua = params["dst_ua"]
            forward = (base | t1 << 64 | ua << 32) if via_t1 else (base | ua << 64)
            hops = 3 if via_t1 else 1
            back = return_address(ports[plane]["src"], t1, via_t1)
            for label, src, dst, addr in (("forward", nic.name, peer, forward),
                                          ("return", peer, nic.name, back)):
                result.paths += 1
                error = checker.walk_address(f"{where}, {label} to {format_address(addr)}",
                                             src, dst, plane, addr, hops)
                if error and fail(error):
                    return result
    for problem in checker.result.errors:  # the switch tables' own problems, if any
        if fail(problem):
            break
    return result
