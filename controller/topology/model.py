"""The topology model every part of the controller reads: planes, switches, NICs, links.

A fabric has P planes; each plane is a two-tier Clos of T0 (leaf) and T1 (spine) switches that
shares no switch with another plane. Every NIC has one port per plane, attached to a T0 of that
plane. Links are numbered by switch port on both ends. The YAML form (topology/yaml_io.py) maps
onto these classes one to one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


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


@dataclass(frozen=True)
class Switch:
    name: str
    tier: Tier
    plane: int  # 0-based
    index: int  # 0-based within its tier and plane
    endpoint: Endpoint | None = None
    radix: int = 0  # ports; 0 = the topology's radix


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


@dataclass
class Topology:
    """A whole fabric. `source` names the YAML file it came from (for error messages).

    Links: `links` lists them explicitly (small and irregular fabrics). With `wiring == "clos"`
    the standard wiring is implied instead of listed, so a 131,072-NIC fabric (about two million
    links) needs no list: T0 i's up-port R/2 + j ↔ T1 j's port i, and NIC n's plane-p port ↔ T0
    n // (R/2) port n % (R/2) of plane p. Code must not assume `links` is complete: use
    `iter_links()`, `peer(switch, port)` and `neighbors(switch)`, which cover both forms.
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

    def switch(self, name: str) -> Switch:
        for s in self.switches:
            if s.name == name:
                return s
        raise KeyError(name)

    def switches_of(self, plane: int, tier: Tier) -> list[Switch]:
        return [s for s in self.switches if s.plane == plane and s.tier == tier]
