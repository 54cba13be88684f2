"""The topology model every part of the controller reads: planes, switches, NICs, links.

A fabric has P planes; each plane is a two-tier Clos of T0 (leaf) and T1 (spine) switches that
shares no switch with another plane. Every NIC has one port per plane, attached to a T0 of that
plane. Links are numbered by switch port on both ends. The YAML form (topology/yaml_io.py) maps
onto these classes one to one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from controller.topology.errors import TopologyError
from p4rt.role_config import RoleConfig


class Tier(StrEnum):
    T0 = "T0"
    T1 = "T1"


class PortRole(StrEnum):
    """What a switch port faces; p4src/README.md `set_port_role` values are HOST 1, FABRIC 2,
    EXTERNAL 3."""

    HOST = "host"
    FABRIC = "fabric"
    EXTERNAL = "external"

    @property
    def p4_value(self) -> int:
        return {"host": 1, "fabric": 2, "external": 3}[self.value]


@dataclass(frozen=True)
class Endpoint:
    """How the controller reaches a switch's P4Runtime server."""

    grpc_address: str  # host:port
    device_id: int = 1
    election_id: tuple[int, int] = (0, 1)  # (high, low)
    role: str = ""  # P4Runtime role name; "" = default role
    tls_ca: str | None = None  # paths; all None = plaintext
    tls_cert: str | None = None
    tls_key: str | None = None
    role_config: RoleConfig | None = None  # sent when arbitrating (Stratum's P4RoleConfig)


# What a switch runs, so what `p4_device_config` it takes: BMv2 (or softswitch) JSON, Stratum's
# BfPipelineConfig, or PI's legacy Tofino packing (controller/devices/tofino_config.py).
TARGETS = ("bmv2", "tofino-stratum", "tofino-pi")


@dataclass(frozen=True)
class Switch:
    name: str
    tier: Tier
    plane: int  # 0-based
    index: int  # 0-based within its tier and plane
    endpoint: Endpoint | None = None
    radix: int = 0  # ports; 0 = the topology's radix
    target: str = "bmv2"  # one of TARGETS: which p4_device_config the switch takes


@dataclass(frozen=True)
class Link:
    """A cable between two switch ports, or between a switch port and a NIC port."""

    a: str  # switch or NIC name
    a_port: int  # switch port number, or the NIC's plane for a NIC end
    b: str
    b_port: int


@dataclass(frozen=True)
class Nic:
    """A GPU NIC: one port per plane; `attachments[p]` = (T0 name, T0 port) in plane p."""

    name: str
    index: int  # 0-based, global
    attachments: tuple[tuple[str, int], ...]
    mac: int = 0  # 48-bit; 0 = derived by the planner


@dataclass(frozen=True)
class QosConfig:
    """DSCP code points (mrc-srv6.md §4.7) and the per-port thresholds the switches use."""

    dscp_trimmable: int = 4
    dscp_trimmable_retx: int = 8
    dscp_trimmed: int = 12
    dscp_trimmed_lasthop: int = 16
    dscp_control: int = 46
    trim_threshold: int = 16  # packets in the egress queue (enq_qdepth)
    trim_bytes: int = 160  # keep every header through RETH
    ecn_threshold: int = 8  # fabric-facing ports only
    # Tofino's enq_qdepth counts 80-byte cells, not packets: a threshold of N packets is
    # N * this many cells on a Tofino switch (53: a 4 KiB RoCEv2 write segment with its
    # SRv6 headers, about 4,200 B).
    tofino_cells_per_packet: int = 53


@dataclass
class Topology:
    """A whole fabric. `source` names the YAML file it came from (for error messages).

    Links: `links` lists them explicitly (small and irregular fabrics). With `wiring == "clos"`
    the standard wiring is implied instead of listed, so a 131,072-NIC fabric (about two million
    links) needs no list: T0 i's up-port R/2 + j ↔ T1 j's port i, and NIC n's plane-p port ↔ T0
    n // (R/2) port n % (R/2) of plane p. Code must not assume `links` is complete: use
    `iter_links()`, `peer(switch, port)` and `neighbors(switch)`, which cover both forms.
    `port_roles` holds only roles configured by hand (YAML `port_roles`); `port_role()` and
    `port_roles_of()` give the effective ones (HOST towards NICs, FABRIC towards switches).
    """

    name: str
    planes: int
    radix: int  # ports per switch (per-plane radix R)
    sid_block: str  # F3216 locator block, e.g. "fcbb:bbbb::/32"
    switches: list[Switch] = field(default_factory=list)
    nics: list[Nic] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    port_roles: dict[tuple[str, int], PortRole] = field(default_factory=dict)
    qos: QosConfig = field(default_factory=QosConfig)
    wiring: str = "explicit"  # "explicit" (links lists every cable) or "clos" (see above)
    source: str = "<memory>"

    # The lookups below go through an index built on first use and rebuilt when the lists change
    # length; after editing entries in place, call `reindex()`. Building the index checks what
    # the lookups rely on (unique names, each port cabled once) and raises TopologyError.

    def switch(self, name: str) -> Switch:
        return self._idx().switches[name]

    def nic(self, name: str) -> Nic:
        return self._idx().nics[name]

    def has_node(self, name: str) -> bool:
        """Whether `name` is a switch or a NIC of this topology."""
        ix = self._idx()
        return name in ix.switches or name in ix.nics

    def switches_of(self, plane: int, tier: Tier) -> list[Switch]:
        """The switches of one tier in one plane, by index."""
        return list(self._idx().grid.get((plane, tier), ()))

    def switch_at(self, plane: int, tier: Tier, index: int) -> Switch:
        return self._idx().grid[(plane, tier)][index]

    def radix_of(self, switch: str) -> int:
        return self.switch(switch).radix or self.radix

    def iter_links(self) -> Iterator[Link]:
        """Every cable: switch-switch links first, then each NIC's port per plane, as
        Link(T0, T0 port, NIC, plane)."""
        if self.wiring == "clos":
            half = self.radix // 2
            for plane in range(self.planes):
                t1s = self._idx().grid.get((plane, Tier.T1), [])
                for t0 in self._idx().grid.get((plane, Tier.T0), []):
                    for t1 in t1s:
                        yield Link(t0.name, half + t1.index, t1.name, t0.index)
            listed: set[tuple[str, int]] = set()
        else:
            yield from self.links
            # A hand-made topology may list NIC cables in `links` too: yield each cable once.
            nics = self._idx().nics
            listed = {(end, port) for link in self.links
                      for end, port in ((link.a, link.a_port), (link.b, link.b_port))
                      if end in nics}
        for nic in self.nics:
            for plane, (t0, port) in enumerate(nic.attachments):
                if (nic.name, plane) not in listed:
                    yield Link(t0, port, nic.name, plane)

    def link_count(self) -> int:
        """len(list(iter_links())) without walking a large clos fabric."""
        if self.wiring != "clos":
            return sum(1 for _ in self.iter_links())
        nic_links = sum(len(n.attachments) for n in self.nics)
        ix = self._idx()
        return nic_links + sum(len(ix.grid.get((p, Tier.T0), ())) * len(ix.grid.get((p, Tier.T1), ()))
                               for p in range(self.planes))

    def peer(self, node: str, port: int) -> tuple[str, int] | None:
        """What the cable on `node`'s `port` leads to: (switch, port) or (NIC, plane); None when
        the port is unconnected. For a NIC, `port` is the plane."""
        ix = self._idx()
        if node in ix.nics:
            atts = ix.nics[node].attachments
            return atts[port] if 0 <= port < len(atts) else None
        if self.wiring != "clos":
            if node not in ix.switches:
                raise KeyError(node)
            return ix.peers.get((node, port))
        sw = ix.switches[node]
        half = self.radix // 2
        t0s = ix.grid.get((sw.plane, Tier.T0), [])
        if sw.tier == Tier.T1:
            return (t0s[port].name, half + sw.index) if 0 <= port < len(t0s) else None
        if 0 <= port < half:
            n = sw.index * half + port
            return (self.nics[n].name, sw.plane) if n < len(self.nics) else None
        t1s = ix.grid.get((sw.plane, Tier.T1), [])
        j = port - half
        return (t1s[j].name, sw.index) if 0 <= j < len(t1s) else None

    def neighbors(self, switch: str) -> list[tuple[int, str, int]]:
        """Every connected port of `switch`: (port, peer name, peer port or NIC plane), by port."""
        ix = self._idx()
        if self.wiring != "clos":
            if switch not in ix.switches:
                raise KeyError(switch)
            return sorted((p, peer, pp) for p, (peer, pp) in ix.ports_of.get(switch, {}).items())
        sw = ix.switches[switch]
        half = self.radix // 2
        t0s = ix.grid.get((sw.plane, Tier.T0), [])
        if sw.tier == Tier.T1:
            return [(i, t0.name, half + sw.index) for i, t0 in enumerate(t0s)]
        first = sw.index * half
        out = [(p, nic.name, sw.plane) for p, nic in enumerate(self.nics[first:first + half])]
        out += [(half + j, t1.name, sw.index)
                for j, t1 in enumerate(ix.grid.get((sw.plane, Tier.T1), []))]
        return out

    def is_nic(self, name: str) -> bool:
        return name in self._idx().nics

    def is_switch(self, name: str) -> bool:
        return name in self._idx().switches

    def port_role(self, switch: str, port: int) -> PortRole | None:
        """The effective role of a port: `port_roles` when it names the port, else HOST for a
        NIC-facing port and FABRIC for a switch-facing one; None for an unconnected port."""
        role = self.port_roles.get((switch, port))
        if role is not None:
            return role
        found = self.peer(switch, port)
        if found is None:
            return None
        return PortRole.HOST if found[0] in self._idx().nics else PortRole.FABRIC

    def port_roles_of(self, switch: str) -> dict[int, PortRole]:
        """Every port of `switch` with a role (connected ports and `port_roles` entries)."""
        roles: dict[int, PortRole] = {}
        nics = self._idx().nics
        for port, peer, _ in self.neighbors(switch):
            roles[port] = PortRole.HOST if peer in nics else PortRole.FABRIC
        for (sw, port), role in self.port_roles.items():
            if sw == switch:
                roles[port] = role
        return dict(sorted(roles.items()))

    def reindex(self) -> None:
        """Rebuild the index now (after editing entries in place); raises TopologyError."""
        self.__dict__.pop("_index", None)
        self._idx()

    def _idx(self) -> _Index:
        # Hot (millions of calls when planning a large fabric): compare the lists themselves.
        ix: _Index | None = self.__dict__.get("_index")
        if (ix is None or ix.lists[0] is not self.switches or ix.lists[1] is not self.nics
                or ix.lists[2] is not self.links
                or ix.sizes != (len(self.switches), len(self.nics), len(self.links))):
            ix = _Index.build(self)
            self.__dict__["_index"] = ix
        return ix


@dataclass
class _Index:
    """Name and position lookups for one Topology (rebuilt when its lists change)."""

    lists: tuple[list[Switch], list[Nic], list[Link]]  # what it indexes, and their lengths then
    sizes: tuple[int, int, int]
    switches: dict[str, Switch]
    nics: dict[str, Nic]
    grid: dict[tuple[int, Tier], list[Switch]]
    peers: dict[tuple[str, int], tuple[str, int]]  # explicit wiring: switch port → peer
    ports_of: dict[str, dict[int, tuple[str, int]]]  # explicit wiring: switch → port → peer

    @staticmethod
    def build(topo: Topology) -> _Index:
        def fail(message: str) -> TopologyError:
            return TopologyError(message, topo.source)

        if topo.wiring not in ("clos", "explicit"):
            raise fail(f"unknown wiring {topo.wiring!r}")
        switches = {s.name: s for s in topo.switches}
        if len(switches) != len(topo.switches):
            seen: set[str] = set()
            for s in topo.switches:
                if s.name in seen:
                    raise fail(f"switch {s.name!r} is defined twice")
                seen.add(s.name)
        nics = {n.name: n for n in topo.nics}
        if len(nics) != len(topo.nics) or not switches.keys().isdisjoint(nics):
            seen = set(switches)
            for n in topo.nics:
                if n.name in seen:
                    raise fail(f"name {n.name!r} is used twice")
                seen.add(n.name)
        grid: dict[tuple[int, Tier], list[Switch]] = {}
        for s in sorted(topo.switches, key=lambda s: (s.plane, s.tier, s.index)):
            grid.setdefault((s.plane, s.tier), []).append(s)
        peers: dict[tuple[str, int], tuple[str, int]] = {}
        ports_of: dict[str, dict[int, tuple[str, int]]] = {}
        if topo.wiring != "clos":

            def add(a: str, ap: int, b: str, bp: int) -> None:
                if a not in switches:
                    raise fail(f"a link names unknown switch {a!r}")
                have = peers.get((a, ap))
                if have is not None and have != (b, bp):
                    raise fail(f"{a} port {ap} is cabled twice ({have[0]} and {b})")
                peers[(a, ap)] = (b, bp)
                ports_of.setdefault(a, {})[ap] = (b, bp)

            for link in topo.links:
                if link.a in nics and link.b in nics:
                    raise fail(f"link {link.a} - {link.b} joins two NICs")
                if link.a not in nics:
                    add(link.a, link.a_port, link.b, link.b_port)
                if link.b not in nics:
                    add(link.b, link.b_port, link.a, link.a_port)
            for nic in topo.nics:
                for plane, (t0, port) in enumerate(nic.attachments):
                    add(t0, port, nic.name, plane)
        lists = (topo.switches, topo.nics, topo.links)
        return _Index(lists, (len(lists[0]), len(lists[1]), len(lists[2])), switches, nics, grid,
                      peers, ports_of)
