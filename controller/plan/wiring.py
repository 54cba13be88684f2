"""Who is behind each switch port, for both wiring forms of a Topology (explicit and "clos").

The clos form is computed on demand (a 131,072-NIC fabric has about two million cables), so a
switch's ports cost nothing until they are asked for.
"""

from __future__ import annotations

from typing import NamedTuple

from controller.plan.usid import PlanError
from controller.topology.model import Nic, Switch, Tier, Topology


class Peer(NamedTuple):
    """The far end of a cable seen from a switch port. For a NIC, `peer_port` is its plane."""

    port: int
    name: str
    peer_port: int
    is_nic: bool


class Wiring:
    """Name lookups and per-port peers of one topology."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.switches: dict[str, Switch] = {}
        for s in topology.switches:
            if s.name in self.switches:
                raise PlanError(f"{topology.source}: switch {s.name!r} is defined twice")
            self.switches[s.name] = s
        self.nics: dict[str, Nic] = {}
        for n in topology.nics:
            if n.name in self.nics or n.name in self.switches:
                raise PlanError(f"{topology.source}: name {n.name!r} is used twice")
            self.nics[n.name] = n
        self._by_pos: dict[tuple[int, Tier, int], Switch] = {}
        for s in topology.switches:
            self._by_pos[(s.plane, s.tier, s.index)] = s
        self._tier_count: dict[tuple[int, Tier], int] = {}
        for s in topology.switches:
            key = (s.plane, s.tier)
            self._tier_count[key] = self._tier_count.get(key, 0) + 1
        self._nic_by_index = {n.index: n for n in topology.nics}
        self.clos = topology.wiring == "clos"
        if topology.wiring not in ("clos", "explicit"):
            raise PlanError(f"{topology.source}: unknown wiring {topology.wiring!r}")
        self._explicit: dict[str, dict[int, Peer]] = {} if self.clos else self._index_links()
        self._last: tuple[str, list[Peer]] = ("", [])

    # -- lookups -----------------------------------------------------------------------------
    def switch(self, name: str) -> Switch:
        return self.switches[name]

    def at(self, plane: int, tier: Tier, index: int) -> Switch | None:
        return self._by_pos.get((plane, tier, index))

    def count(self, plane: int, tier: Tier) -> int:
        return self._tier_count.get((plane, tier), 0)

    # -- ports -------------------------------------------------------------------------------
    def ports(self, name: str) -> list[Peer]:
        """Every connected port of a switch, by port number."""
        if not self.clos:
            return sorted(self._explicit.get(name, {}).values())
        # Planner and checker ask for the same switch back to back: keep the last answer.
        last = self._last
        if last[0] != name:
            last = self._last = (name, self._clos_ports(self.switches[name]))
        return list(last[1])

    def peer(self, name: str, port: int) -> Peer | None:
        if not self.clos:
            return self._explicit.get(name, {}).get(port)
        s = self.switches[name]
        half = self.topology.radix // 2
        if s.tier == Tier.T1:
            t0 = self._by_pos.get((s.plane, Tier.T0, port))
            return None if t0 is None else Peer(port, t0.name, half + s.index, False)
        if 0 <= port < half:
            nic = self._nic_by_index.get(s.index * half + port)
            return None if nic is None else Peer(port, nic.name, s.plane, True)
        t1 = self._by_pos.get((s.plane, Tier.T1, port - half))
        return None if t1 is None else Peer(port, t1.name, s.index, False)

    def port_map(self, name: str) -> dict[int, Peer]:
        return {p.port: p for p in self.ports(name)}

    def _clos_ports(self, s: Switch) -> list[Peer]:
        # The model's clos rule (topology radix R): T0 i's ports 0..R/2-1 go down to NICs
        # i·R/2 + port, its port R/2 + j up to T1 j's port i.
        half = self.topology.radix // 2
        out: list[Peer] = []
        if s.tier == Tier.T0:
            for q in range(half):
                nic = self._nic_by_index.get(s.index * half + q)
                if nic is not None:
                    out.append(Peer(q, nic.name, s.plane, True))
            for j in range(self.count(s.plane, Tier.T1)):
                t1 = self._by_pos.get((s.plane, Tier.T1, j))
                if t1 is not None:
                    out.append(Peer(half + j, t1.name, s.index, False))
        else:
            for i in range(self.count(s.plane, Tier.T0)):
                t0 = self._by_pos.get((s.plane, Tier.T0, i))
                if t0 is not None:
                    out.append(Peer(i, t0.name, half + s.index, False))
        return out

    def _index_links(self) -> dict[str, dict[int, Peer]]:
        ports: dict[str, dict[int, Peer]] = {}

        def attach(sw: str, port: int, peer: Peer) -> None:
            if sw not in self.switches:
                raise PlanError(f"{self.topology.source}: a link names unknown switch {sw!r}")
            have = ports.setdefault(sw, {}).get(port)
            if have is not None and have != peer:
                raise PlanError(f"{self.topology.source}: {sw} port {port} is cabled twice "
                                f"({have.name} and {peer.name})")
            ports[sw][port] = peer

        for link in self.topology.links:
            a_nic, b_nic = link.a in self.nics, link.b in self.nics
            if a_nic and b_nic:
                raise PlanError(f"{self.topology.source}: link {link.a} - {link.b} joins two NICs")
            if not a_nic:
                attach(link.a, link.a_port, Peer(link.a_port, link.b, link.b_port, b_nic))
            if not b_nic:
                attach(link.b, link.b_port, Peer(link.b_port, link.a, link.a_port, a_nic))
        for nic in self.topology.nics:
            for plane, (sw, port) in enumerate(nic.attachments):
                attach(sw, port, Peer(port, nic.name, plane, True))
        return ports
