"""One switch's static entries (mrc-srv6.md §10.3), in the names of p4src/README.md.

Per switch: port roles (ingress and egress tables), the SID block, `my_sid` (its uN `/48`; for
each host port a local uA `/48` and the combined `block:uN:uA::/64` that carriers use for the last
hop to a NIC), `route_v6` (a `/48` to every neighbour switch's uSID, `block::/32 → drop`), the
hop-limit policy, DSCP priorities, trimmable DSCPs, trimming on every connected port (TRIMMED on
fabric ports, TRIMMED_LASTHOP on host ports) and ECN on fabric ports. Entries come table by table
in TABLE_ORDER, each table sorted by key, so a plan is deterministic and diffs line by line.

Trimming on TNA also needs a clone session per trimming port (`trim_sessions`): the switch
mirrors a trimmed copy to it (p4src/README.md, "Trimming on TNA"). Only Tofino switches get them:
BMv2 trims by recirculation, and its P4Runtime server refuses a class of service.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from controller.plan.entries import PlannedEntry
from controller.plan.usid import nic_mac, switch_mac, ua_usid, usid_prefix
from controller.topology.model import PortRole, Switch, Topology

TABLE_ORDER = ("port_role", "egress_port_role", "sid_block", "my_sid", "route_v6",
               "hop_limit_policy", "dscp_priority", "trimmable_dscp", "trim_config", "ecn_config")
HIGH_PRIORITY = 7
DATA_PRIORITY = 0
# p4src/include/defines.p4: session TRIM_SESSION_BASE + port, truncating to trim_bytes plus the
# TRIM_MIRROR_BYTES mirror header the copy carries.
TRIM_SESSION_BASE = 256
TRIM_MIRROR_BYTES = 4


class TrimSession(NamedTuple):
    """The clone session a TNA switch mirrors one port's trimmed copies to."""

    session_id: int
    port: int
    class_of_service: int
    packet_length_bytes: int


class Peer(NamedTuple):
    """The far end of a cable seen from a switch port. For a NIC, `peer_port` is its plane."""

    port: int
    name: str
    peer_port: int
    is_nic: bool


def peers_of(topology: Topology, switch: str) -> list[Peer]:
    """`topology.neighbors(switch)` with each far end marked NIC or switch."""
    is_nic = topology.is_nic
    return [Peer(port, name, pp, is_nic(name)) for port, name, pp in topology.neighbors(switch)]


def port_roles(ports: list[Peer], overrides: Mapping[int, PortRole]) -> dict[int, PortRole]:
    """HOST towards NICs, FABRIC towards switches; the topology's `port_roles` override both."""
    roles = {p.port: PortRole.HOST if p.is_nic else PortRole.FABRIC for p in ports}
    roles.update(overrides)
    return roles


class SwitchPlanner:
    """Makes switch entries for one topology. Entries that do not name the switch (port roles,
    QoS, trimming, ECN: the same on every switch with the same port) are made once and shared,
    which halves the work at 15 million entries."""

    def __init__(self, topology: Topology, block: int, usid_of: Callable[[str], int]) -> None:
        self.topology = topology
        self.block = block
        self.usid_of = usid_of
        self._port_entries: dict[tuple[int, PortRole, int], tuple[PlannedEntry, ...]] = {}
        self._fixed = self._fixed_entries()

    def entries(self, sw: Switch,
                role_overrides: Mapping[int, PortRole] | None = None) -> list[PlannedEntry]:
        """Every entry of one switch, in TABLE_ORDER, each table sorted by key."""
        block, usid_of, nic = self.block, self.usid_of, self.topology.nic
        ports = peers_of(self.topology, sw.name)
        roles = port_roles(ports, role_overrides or {})
        cells = 1 if sw.target == "bmv2" else self.topology.qos.tofino_cells_per_packet
        per_port = [self._for_port(port, role, cells) for port, role in sorted(roles.items())]
        me = usid_of(sw.name)
        my_mac = switch_mac(me)
        un: list[PlannedEntry] = [_entry("my_sid", "dst_addr", usid_prefix(block, me), "usid_un")]
        ua: list[PlannedEntry] = []
        routes: list[PlannedEntry] = [_entry("route_v6", "dst_addr", (block, 32), "drop")]
        for p in ports:
            role = roles.get(p.port)
            if p.is_nic:
                if role != PortRole.HOST:
                    continue  # an operator-disabled host port gets no way in
                fwd = (("dmac", nic_mac(nic(p.name), p.peer_port)), ("port", p.port),
                       ("smac", my_mac))
                local = ua_usid(p.port)
                ua.append(_entry("my_sid", "dst_addr", usid_prefix(block, local), "usid_ua", fwd))
                un.append(_entry("my_sid", "dst_addr", usid_prefix(block, me, local),
                                 "usid_ua_combined", fwd))
            elif role != PortRole.EXTERNAL:
                peer_usid = usid_of(p.name)
                fwd = (("dmac", switch_mac(peer_usid)), ("port", p.port), ("smac", my_mac))
                routes.append(_entry("route_v6", "dst_addr", usid_prefix(block, peer_usid),
                                     "forward", fwd))
        out = [e[0] for e in per_port]
        out += [e[1] for e in per_port]
        out.append(self._fixed[0])  # sid_block
        my_sid = un + ua
        my_sid.sort(key=_lpm_key)  # already in order for a Clos; explicit wiring may not be
        out += my_sid
        routes.sort(key=_lpm_key)
        out += routes
        out += self._fixed[1:]  # hop limit, DSCP priorities, trimmable DSCPs
        out += [e[2] for e in per_port if len(e) > 2]
        out += [e[3] for e in per_port if len(e) > 3]
        return out

    def trim_sessions(self, sw: Switch,
                      role_overrides: Mapping[int, PortRole] | None = None) -> list[TrimSession]:
        """One per port with a trim_config entry (every port not EXTERNAL), by port."""
        roles = port_roles(peers_of(self.topology, sw.name), role_overrides or {})
        length = self.topology.qos.trim_bytes + TRIM_MIRROR_BYTES
        return [TrimSession(TRIM_SESSION_BASE + port, port, HIGH_PRIORITY, length)
                for port, role in sorted(roles.items()) if role != PortRole.EXTERNAL]

    def _for_port(self, port: int, role: PortRole, cells: int) -> tuple[PlannedEntry, ...]:
        """(port_role, egress_port_role[, trim_config[, ecn_config]]) of one port; queue
        thresholds in units of `cells` per packet (1 on BMv2, which counts packets)."""
        key = (port, role, cells)
        found = self._port_entries.get(key)
        if found is not None:
            return found
        qos = self.topology.qos
        out = [_entry("port_role", "port", port, "set_port_role", (("role", role.p4_value),)),
               _entry("egress_port_role", "port", port, "set_egress_port_role",
                      (("role", role.p4_value),))]
        if role != PortRole.EXTERNAL:
            trimmed = qos.dscp_trimmed_lasthop if role == PortRole.HOST else qos.dscp_trimmed
            out.append(_entry("trim_config", "port", port, "set_trim",
                              (("threshold", _depth(qos.trim_threshold, cells)),
                               ("trim_bytes", qos.trim_bytes),
                               ("trimmed_dscp", trimmed))))
        if role == PortRole.FABRIC:
            out.append(_entry("ecn_config", "port", port, "set_ecn_threshold",
                              (("threshold", _depth(qos.ecn_threshold, cells)),)))
        self._port_entries[key] = found = tuple(out)
        return found

    def _fixed_entries(self) -> list[PlannedEntry]:
        """sid_block, then hop_limit_policy, dscp_priority, trimmable_dscp: the same everywhere."""
        qos = self.topology.qos
        out = [_entry("sid_block", "dst_addr", (self.block, 32), "in_sid_block"),
               # Punt: the controller's link probes come back to it this way (daemon/probes.py).
               PlannedEntry.default("hop_limit_policy", "punt_hop_limit")]
        high = {qos.dscp_control, qos.dscp_trimmed, qos.dscp_trimmed_lasthop}
        data = {qos.dscp_trimmable, qos.dscp_trimmable_retx} - high
        for dscp in sorted(high | data):
            prio = HIGH_PRIORITY if dscp in high else DATA_PRIORITY
            out.append(_entry("dscp_priority", "dscp", dscp, "set_priority", (("prio", prio),)))
        for dscp in sorted({qos.dscp_trimmable, qos.dscp_trimmable_retx}):
            out.append(_entry("trimmable_dscp", "dscp", dscp, "set_trimmable"))
        return out


def _entry(table: str, field: str, value: int | tuple[int, int], action: str,
           params: tuple[tuple[str, int], ...] = ()) -> PlannedEntry:
    # One key field and params already in name order: PlannedEntry.make's sorting is not needed.
    return PlannedEntry(table, ((field, value),), action, params)


def _lpm_key(e: PlannedEntry) -> tuple[int, int]:
    return e.match[0][1]  # type: ignore[return-value]


def _depth(packets: int, cells: int) -> int:
    """A queue-depth threshold of `packets` in units of `cells` per packet, within enq_qdepth's
    19 bits."""
    return min(packets * cells, (1 << 19) - 1)
