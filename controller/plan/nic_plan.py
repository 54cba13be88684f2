"""One MRC NIC's entries (p4src/README.md, "The MRC NIC"), from the topology and its connections.

Per NIC: its plane ports (`plane_port`, `port_plane`), the fabric's DSCPs (`nic_dscp`), one path
template per (plane, destination row) that its connections reach (nic_rows.py: a row leads to
the peer's T0 in every plane), the EVs of its EV profile (`ev_path`: EV `e` in plane
`e mod planes`, spread over the T1s above its T0 in that plane), and per connection
`tx_connection` (by peer address and QP), `local_qp` (by its own QP) and `rx_r_key` (the memory
key the peer's writes must carry on that QP). Clone sessions
`100 + plane` send SACKs out of the plane's port.

A Clos gives every T0 pair of a plane the same T1s, so one EV profile serves every connection.
Explicit wiring may leave a T0-T1 cable out (topology/reach.py): a connection whose peer's T0 is
not cabled to every T1 above the NIC's own then gets a profile of its own (the same sizes, the
next profile id), its EVs moved off the T1s that cannot reach the peer onto the ones that can,
in the same plane. A plane where no T1 joins the two T0s is a PlanError naming the cables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from controller.plan.entries import PlannedEntry
from controller.plan.hand_off import hand_off, hand_off_steps
from controller.plan.nic_rows import Destination, RowBook
from controller.plan.plan import FabricPlan
from controller.plan.rotation import rotation
from controller.plan.switch_plan import TrimSession
from controller.plan.templates import Slot
from controller.plan.usid import (
    NIC_DECAP_USID,
    PlanError,
    carrier,
    nic_mac,
    switch_mac,
    ua_usid,
)
from controller.topology.model import Nic
from controller.topology.reach import missing_words

HOST_PORT = 1  # NIC_HOST_PORT
PLANE_PORT_BASE = 2  # plane p is NIC port 2 + p
NIC_HOST_SESSION = 99  # v1model: clone session to the host port (a received packet's copy)
SACK_SESSION_BASE = 100  # TNA: mirror session 100 + plane, to that plane's port (SACK, NACK)
# A TNA NIC's SACK/NACK mirror copies are cut to this many bytes (p4src/nic/tna/nic_arch.p4,
# FB_SESSION_BYTES: the 49-byte feedback mirror header + 134 bytes of the packet), and queued in
# the control class (NIC_FEEDBACK_PRIORITY in p4src/nic/nic_types.p4), as v1model's feedback is.
TNA_FB_SESSION_BYTES = 183
FEEDBACK_PRIORITY = 7
EV_STATES = {0: "GOOD", 1: "SKIP", 2: "ASSUMED_BAD"}  # the ev_state register's values
EV_EVENT_DIGEST = "ev_event_t"  # the digest a NIC sends on an EV's GOOD <-> ASSUMED_BAD move
MAX_CONNECTIONS = 64  # NIC_CONNECTIONS
DEFAULT_R_KEY = 7  # the memory key a connection's host registers (mrc_transport's default)
QP_BASE = 0x100  # the QP both ends use for a pair's connection: QP_BASE + the pair's number
MAX_EVS = 256  # bit<8> EVs: active set and backups together
NIC_TABLE_SIZE = 4096  # path_template and ev_path entries a NIC holds (nic_types.p4)
MAX_PROFILE = 0xFFFF  # bit<16> profile ids
NIC_ADDRESS_BASE = 0x2001_0DB8 << 96  # 2001:db8::/96 + index + 1 (controller.traffic's numbering)


def nic_address(nic: Nic) -> int:
    """The NIC's own (inner) IPv6 address, which its host transport sends from."""
    return NIC_ADDRESS_BASE + nic.index + 1


def plane_port(plane: int) -> int:
    return PLANE_PORT_BASE + plane


class EvMode(StrEnum):
    """OCP MRC's EV profile modes."""

    GENERATED = "generated"  # EVs made from fields: the plane, then the T1 (uplink) index
    EXPLICIT = "explicit"  # EVs listed one by one


@dataclass(frozen=True, slots=True)
class EvProfile:
    """An EV profile: `ev_count` active EVs spread equally over the planes, `backups` spare EVs
    per plane, never fewer than `ev_min_active` usable, `probe_successes` answered probes in a
    row bring an ASSUMED_BAD EV back, and a SKIP (an ECN echo, an in-fabric trim) holds for its
    EV's next turn for `skip_us` (a few of the fabric's round trips: p4src/nic/tx_tables.p4).

    GENERATED: EV `e` is plane `e mod planes`, T1 index `(e div planes + s * ev_count / planes)
    mod T1s`, where `s` is the NIC's place among the NICs under its T0 in that plane; backup `j`
    of a plane goes on counting from there, `s * backups` further on. With as many EVs per plane
    as T1s, every NIC covers every (plane, T1) evenly; with fewer (the sources' 128-256 EVs sample
    a few percent of a large fabric's paths), the NICs under one T0 take disjoint blocks of T1s,
    so their samples together still cover the plane instead of all crowding the first T1s. The
    backups' own offset does the same for them: without it, whenever a plane's active EVs fill
    whole rounds of its T1s, every NIC's backups would sit on the same first T1s, and the load an
    EV's retirement moves would pile onto them. EXPLICIT: `explicit` lists
    (plane, T1 index) per EV, active set then backups, EV `e` in plane `e mod planes` (the NIC
    keeps each plane's share equal that way)."""

    profile_id: int = 1
    ev_count: int = 128
    backups: int = 4
    ev_min_active: int = 8
    probe_successes: int = 3
    skip_us: int = 20
    mode: EvMode = EvMode.GENERATED
    explicit: tuple[tuple[int, int], ...] = ()

    def check(self, planes: int) -> None:
        def power_of_two(n: int) -> bool:
            return n > 0 and n & (n - 1) == 0

        where = f"EV profile {self.profile_id}"
        if not power_of_two(planes):
            raise PlanError(f"{where}: the NIC program needs a power-of-two plane count, "
                            f"not {planes}")
        if not power_of_two(self.ev_count) or self.ev_count % planes:
            raise PlanError(f"{where}: ev_count {self.ev_count} must be a power of two and a "
                            f"multiple of the {planes} planes")
        if self.backups and not power_of_two(self.backups):
            raise PlanError(f"{where}: backups {self.backups} must be 0 or a power of two")
        if self.ev_count + self.backups * planes > MAX_EVS:
            raise PlanError(f"{where}: {self.ev_count} EVs + {self.backups} backups x {planes} "
                            f"planes exceed the NIC's {MAX_EVS}")
        if not 0 <= self.skip_us < 1 << 32:
            raise PlanError(f"{where}: skip_us {self.skip_us} must be in 0..{(1 << 32) - 1}")
        if not 0 < self.ev_min_active <= self.ev_count:
            raise PlanError(f"{where}: ev_min_active {self.ev_min_active} must be in 1.."
                            f"{self.ev_count}")
        if self.mode == EvMode.EXPLICIT:
            total = self.ev_count + self.backups * planes
            if len(self.explicit) != total:
                raise PlanError(f"{where}: EXPLICIT lists {len(self.explicit)} EVs, the profile "
                                f"has {total} ({self.ev_count} + {self.backups} x {planes})")
            for ev, (plane, _) in enumerate(self.explicit):
                if plane != ev % planes:
                    raise PlanError(f"{where}: EV {ev} is in plane {plane}; EV e must be in "
                                    f"plane e mod {planes}")
        elif self.explicit:
            raise PlanError(f"{where}: EVs are listed but the mode is {self.mode.value}")

    def evs(self, planes: int) -> Iterable[tuple[int, int, int]]:
        """(EV, plane, T1 index before the NIC's spread and wrapping over the plane's T1s):
        active EVs first, then backups."""
        if self.mode == EvMode.EXPLICIT:
            for ev, (plane, t1) in enumerate(self.explicit):
                yield ev, plane, t1
            return
        per_plane = self.ev_count // planes
        for ev in range(self.ev_count):
            yield ev, ev % planes, ev // planes
        for j in range(self.backups):
            for p in range(planes):
                yield self.ev_count + j * planes + p, p, per_plane + j


@dataclass(frozen=True, slots=True)
class NicConnection:
    """One connection of a NIC: its state index, its QP, and the peer's NIC and QP.
    `initial_psn` is the first PSN the peer sends on it; `r_key` the memory key the NIC's host
    registered for it (the peer's writes carry it; the transport's default)."""

    conn: int
    peer: str
    local_qp: int
    peer_qp: int
    initial_psn: int = 0
    r_key: int = DEFAULT_R_KEY


def _check_keys(where: str, name: str, connections: Sequence[NicConnection]) -> None:
    """PlanError unless every connection has entries of its own: a connection to the NIC
    itself, or two sharing a state index, a local QP or a (peer, peer QP), would give the NIC
    two entries for one key, which no device can hold."""
    seen: dict[tuple[str, object], NicConnection] = {}
    for c in connections:
        if c.peer == name:
            raise PlanError(f"{where}: connection {c.conn} is to {name} itself")
        for key, what in ((("conn", c.conn), f"state index {c.conn}"),
                          (("qp", c.local_qp), f"local QP {c.local_qp:#x}"),
                          (("peer", (c.peer, c.peer_qp)), f"{c.peer}'s QP {c.peer_qp:#x}")):
            first = seen.setdefault(key, c)
            if first is not c:
                raise PlanError(f"{where}: its connections to {first.peer} and {c.peer} "
                                f"share {what}")


@dataclass(frozen=True)
class NicPlan:
    """A NIC's table entries (in table order) and how many planes it has (its sessions)."""

    nic: str
    entries: tuple[PlannedEntry, ...]
    planes: int

    def clone_sessions(self, target: str = "bmv2") -> dict[int, int]:
        """Session -> port, as a NIC of `target` (topology.model.TARGETS) needs them: on BMv2
        (v1model) one, to the host port, for the host's copy of a received data packet (the
        packet itself becomes its SACK); on Tofino (TNA) one per plane, to its port, for the
        SACK and NACK mirror copies."""
        if target == "bmv2":
            return {NIC_HOST_SESSION: HOST_PORT}
        return {SACK_SESSION_BASE + p: plane_port(p) for p in range(self.planes)}

    def sessions(self, target: str = "bmv2") -> list[TrimSession]:
        """The clone sessions as a NIC of `target` takes them, by id: whole copies in queue 0
        on BMv2 (its P4Runtime server refuses both a length and a class of service), cut to
        TNA_FB_SESSION_BYTES and queued in FEEDBACK_PRIORITY on Tofino."""
        cos, length = (0, 0) if target == "bmv2" else (FEEDBACK_PRIORITY, TNA_FB_SESSION_BYTES)
        return [TrimSession(sid, port, cos, length)
                for sid, port in sorted(self.clone_sessions(target).items())]


# The T1s a connection's EVs may use, per plane: () when every T1 above the NIC's T0 reaches the
# peer (a Clos; the peer under the same T0), else the T1s joining the two T0s, as (name, uSID).
Limits = tuple[tuple[tuple[str, int], ...], ...]


class NicPlanner:
    """NIC plans for one fabric plan (its uSIDs, templates and QoS)."""

    def __init__(self, plan: FabricPlan) -> None:
        self.plan = plan
        self.topology = plan.topology
        self.rows = RowBook(plan.topology)
        # NICs under one T0 share its templates, and NICs under the same T0s share an EV
        # profile's paths: made once, the entries (frozen) are shared. This is what keeps the
        # NIC plan compact at 131,072 NICs: per T0 row and per profile, not per NIC.
        self._row_templates: dict[tuple[int, str], tuple[PlannedEntry, ...]] = {}
        self._profile_paths: dict[tuple[object, ...], tuple[PlannedEntry, ...]] = {}
        self._places: dict[str, dict[int, int]] = {}   # T0 -> its NIC ports' places, by port
        self._hand_offs: dict[int, tuple[int, ...]] = {}   # id(profile paths) -> steps

    def plan_nic(self, name: str, connections: Sequence[NicConnection],
                 profile: EvProfile | None = None, *, all_rows: bool = False) -> NicPlan:
        """The NIC's entries for `connections`; path templates for the rows they reach, or
        with `all_rows` for every row of each plane (what the NIC needs to reach any NIC)."""
        profile = profile or EvProfile()
        topo = self.topology
        nic = topo.nic(name)
        planes = len(nic.attachments)
        profile.check(planes)
        where = f"NIC {name}"
        if len(connections) > MAX_CONNECTIONS:
            raise PlanError(f"{where}: {len(connections)} connections, the NIC holds "
                            f"{MAX_CONNECTIONS}")
        _check_keys(where, name, connections)
        qos = topo.qos
        entries = [PlannedEntry.default("nic_dscp", "set_dscp", {
            "trimmable": qos.dscp_trimmable, "trimmable_retx": qos.dscp_trimmable_retx,
            "control_dscp": qos.dscp_control, "trimmed": qos.dscp_trimmed,
            "trimmed_lasthop": qos.dscp_trimmed_lasthop})]
        profiles = self._profiles(nic, {c.conn: c.peer for c in connections}, profile)
        # The NIC's own profile always (a connection added later, the controller's view), then
        # each connection profile of its own.
        own_paths = {profile.profile_id: self._ev_paths(nic, profile)}
        derived = {p.profile_id: (p, limits) for p, limits in profiles.values() if limits}
        for pid, (p, limits) in sorted(derived.items()):
            own_paths[pid] = self._limited_paths(nic, profile, p, limits)
        dests: dict[int, Destination] = {}
        for c in connections:
            dest = self.rows.destination(topo.nic(c.peer))
            dests[dest.row] = dest
            own = profiles[c.conn][0]
            common = {"conn": c.conn, "profile": own.profile_id,
                      "ev_mask": own.ev_count - 1, "planes": planes,
                      "backups": own.backups, "ev_min_active": own.ev_min_active}
            steps = self._hand_off_steps(own_paths[own.profile_id], own.ev_count, planes)
            entries.append(PlannedEntry.make(
                "tx_connection", {"dst_addr": nic_address(topo.nic(c.peer)),
                                  "dest_qp": c.peer_qp},
                "set_connection", {**common, "dst_row": dest.row, "dst_ua": dest.ua,
                                   "hand_off": hand_off(steps, name, c.peer, c.peer_qp),
                                   "rotation": rotation(own.ev_count, name, c.peer,
                                                        c.peer_qp),
                                   "skip_us": own.skip_us}))
            entries.append(PlannedEntry.make(
                "local_qp", {"dest_qp": c.local_qp}, "set_local_qp",
                {**common, "probe_successes": own.probe_successes,
                 "initial_psn": c.initial_psn, "peer_qp": c.peer_qp}))
            entries.append(PlannedEntry.make(
                "rx_r_key", {"dest_qp": c.local_qp, "r_key": c.r_key}, "r_key_valid", {}))
        paths = [e for pid in sorted(own_paths) for e in own_paths[pid]]
        templates: list[PlannedEntry] = []
        for plane, (t0_name, t0_port) in enumerate(nic.attachments):
            entries += self._plane_entries(nic, plane, t0_name, t0_port)
            if all_rows:
                templates += self.row_templates(plane, t0_name)
            else:
                templates += [self._template(plane, t0_name, d.t0s[plane], row, d.ports)
                              for row, d in sorted(dests.items())]
        for table, held in (("ev_path", paths), ("path_template", templates)):
            if len(held) > NIC_TABLE_SIZE:
                raise PlanError(f"{where}: {len(held)} {table} entries exceed the NIC's "
                                f"{NIC_TABLE_SIZE}" + (f" ({1 + len(derived)} EV profiles)"
                                                       if table == "ev_path" else ""))
        entries += paths + templates
        return NicPlan(name, tuple(sorted(entries, key=_order)), planes)

    def connection_profiles(self, name: str, peers: Mapping[int, str],
                            profile: EvProfile | None = None) -> dict[int, int]:
        """The EV profile id `plan_nic` gives each connection (state index -> peer NIC):
        `profile`'s, or one of its own when some T1 above the NIC's T0 cannot reach the peer."""
        profile = profile or EvProfile()
        return {conn: p.profile_id for conn, (p, _) in
                self._profiles(self.topology.nic(name), peers, profile).items()}

    def _profiles(self, nic: Nic, peers: Mapping[int, str], profile: EvProfile
                  ) -> dict[int, tuple[EvProfile, Limits | None]]:
        """Per connection: its profile, and the limits its EVs keep to (None: none). Connections
        with the same limits share a profile; ids count on from `profile`'s, by limits."""
        limits = {conn: self.limits(nic, self.topology.nic(peer))
                  for conn, peer in peers.items()}
        distinct = sorted({lim for lim in limits.values() if any(lim)})
        if profile.profile_id + len(distinct) > MAX_PROFILE:
            raise PlanError(f"NIC {nic.name}: {len(distinct)} EV profiles after "
                            f"{profile.profile_id} run past profile id {MAX_PROFILE}")
        made = {lim: dataclasses.replace(profile, profile_id=profile.profile_id + 1 + k)
                for k, lim in enumerate(distinct)}
        return {conn: (made[lim], lim) if any(lim) else (profile, None)
                for conn, lim in limits.items()}

    def limits(self, nic: Nic, peer: Nic) -> Limits:
        """Per plane, the T1s `nic`'s EVs towards `peer` may use (see Limits); PlanError when
        no T1 joins their T0s in a plane."""
        if len(peer.attachments) != len(nic.attachments):
            raise PlanError(f"NIC {nic.name}: peer {peer.name} has {len(peer.attachments)} "
                            f"planes, not {len(nic.attachments)}")
        out = []
        for plane, ((src, _), (dst, _)) in enumerate(zip(nic.attachments, peer.attachments,
                                                         strict=True)):
            if src == dst:
                out.append(())
                continue
            joining = self.plan.templates.t1_choices(plane, src, dst)
            if not joining:
                missing = self.plan.templates.reach.missing(plane, src, dst)
                raise PlanError(f"NIC {nic.name} -> {peer.name}, plane {plane}: no T1 is cabled "
                                f"to both {src} and {dst} ({missing_words(missing, src, dst)})")
            out.append(() if joining == self._t1s(nic, plane) else joining)
        return tuple(out)

    def row_templates(self, plane: int, src_t0: str) -> tuple[PlannedEntry, ...]:
        """The `path_template` entries of every NIC under `src_t0` in `plane`: one per
        destination T0, and one per irregular row (nic_rows.py)."""
        key = (plane, src_t0)
        found = self._row_templates.get(key)
        if found is None:
            found = tuple(self._template(plane, src_t0, t0.name, t0.index)
                          for t0 in self.plan.templates.t0s(plane))
            found += tuple(self._template(plane, src_t0, t0s[plane], row, ports)
                           for (t0s, ports), row in self.rows.irregular().items())
            self._row_templates[key] = found
        return found

    def _ev_paths(self, nic: Nic, profile: EvProfile) -> tuple[PlannedEntry, ...]:
        # By the T1 choices (shared tuples: every T0 of a Clos plane has the same ones) and the
        # NIC's spread over them (0 in every plane when each NIC's EVs cover every T1).
        planes = len(nic.attachments)
        key = (profile, tuple((id(self._t1s(nic, p)), self._spreads(nic, p, profile))
                              for p in range(planes)))
        found = self._profile_paths.get(key)
        if found is None:
            found = self._profile_paths[key] = tuple(self._make_ev_paths(nic, profile))
        return found

    def _hand_off_steps(self, paths: tuple[PlannedEntry, ...], ev_count: int, planes: int
                        ) -> tuple[int, ...]:
        # Per profile's paths (shared tuples, kept in _profile_paths), not per connection.
        found = self._hand_offs.get(id(paths))
        if found is None:
            found = self._hand_offs[id(paths)] = hand_off_steps(paths, ev_count, planes)
        return found

    def _limited_paths(self, nic: Nic, base: EvProfile, own: EvProfile,
                       limits: Limits) -> tuple[PlannedEntry, ...]:
        """`base`'s EVs as profile `own`: an EV on a T1 outside its plane's limits moves to
        the plane's allowed T1s in turn (by EV), so the plane keeps its share."""
        key = (base, own.profile_id, limits,
               tuple(id(self._t1s(nic, p)) for p in range(len(nic.attachments))))
        found = self._profile_paths.get(key)
        if found is None:
            out = []
            for entry in self._ev_paths(nic, base):
                ev, params = dict(entry.match)["ev"], dict(entry.params)
                plane, t1 = params["plane"], params["t1_usid"]
                allowed = limits[plane]
                if allowed and all(u != t1 for _, u in allowed):
                    t1 = allowed[ev % len(allowed)][1]
                out.append(PlannedEntry.make("ev_path", {"profile": own.profile_id, "ev": ev},
                                             "set_path", {"plane": plane, "t1_usid": t1}))
            found = self._profile_paths[key] = tuple(out)
        return found

    def _make_ev_paths(self, nic: Nic, profile: EvProfile) -> list[PlannedEntry]:
        planes = len(nic.attachments)
        out = []
        spreads = [self._spreads(nic, plane, profile) for plane in range(planes)]
        for ev, plane, k in profile.evs(planes):
            t1s = self._t1s(nic, plane)
            if profile.mode == EvMode.EXPLICIT and k >= len(t1s):
                raise PlanError(f"NIC {nic.name}: EV {ev} names T1 index {k}; plane {plane} "
                                f"has {len(t1s)} T1s above {nic.attachments[plane][0]}")
            active, backup = spreads[plane]
            _, t1 = t1s[(k + active + (backup if ev >= profile.ev_count else 0)) % len(t1s)]
            out.append(PlannedEntry.make("ev_path", {"profile": profile.profile_id, "ev": ev},
                                         "set_path", {"plane": plane, "t1_usid": t1}))
        return out

    def _spreads(self, nic: Nic, plane: int, profile: EvProfile) -> tuple[int, int]:
        """Where the NIC's GENERATED EVs start among its T0's T1s in `plane` (its place under
        that T0 times the profile's EVs per plane), and how much further on its backups start
        (its place times the backups per plane), both wrapped; EvProfile's docstring says why."""
        if profile.mode != EvMode.GENERATED:
            return 0, 0
        t0, port = nic.attachments[plane]
        places = self._places.get(t0)
        if places is None:
            topo = self.topology
            places = self._places[t0] = {
                p: i for i, p in enumerate(p for p, peer, _ in topo.neighbors(t0)
                                           if topo.is_nic(peer))}
        place, t1s = places[port], len(self._t1s(nic, plane))
        return (place * (profile.ev_count // len(nic.attachments)) % t1s,
                place * profile.backups % t1s)

    def _t1s(self, nic: Nic, plane: int) -> tuple[tuple[str, int], ...]:
        t0 = nic.attachments[plane][0]
        # A T0 pair with itself has the T1s above that T0: every EV of the plane may use them.
        choices = self.plan.templates.t1_choices(plane, t0, t0)
        if not choices:
            raise PlanError(f"NIC {nic.name}: its T0 {t0} in plane {plane} has no T1 uplinks")
        return choices

    def _plane_entries(self, nic: Nic, plane: int, t0_name: str,
                       t0_port: int) -> list[PlannedEntry]:
        block, t0 = self.plan.block, self.plan.usid(t0_name)
        # The NIC's return address (p4src/nic/path.p4) is built from this locator.
        locator = carrier(block, [t0, ua_usid(t0_port), NIC_DECAP_USID])
        return [
            PlannedEntry.make("plane_port", {"plane": plane}, "set_plane_port",
                              {"port": plane_port(plane), "smac": nic_mac(nic, plane),
                               "dmac": switch_mac(t0), "src": locator}),
            PlannedEntry.make("port_plane", {"port": plane_port(plane)}, "set_rx_plane",
                              {"plane": plane}),
        ]

    def _template(self, plane: int, src_t0: str, dst_t0: str, row: int,
                  ports: tuple[int, ...] | None = None) -> PlannedEntry:
        tpl = self.plan.templates.template(plane, src_t0, dst_t0)
        # The slots stay zero: the NIC fills the EV's T1 and the connection's uA per packet,
        # ORing them in. A row whose peer is on another port per plane carries each plane's uA
        # itself (the connection's is then 0).
        base = carrier(self.plan.block, [
            (ua_usid(ports[plane]) if ports is not None and s is Slot.DST_PORT
             else 0 if isinstance(s, Slot) else s) for s in tpl.segments])
        action = "via_t1" if Slot.T1 in tpl.segments else "same_t0"
        return PlannedEntry.make("path_template", {"plane": plane, "dst_row": row}, action,
                                 {"base": base})


def connection_profiles(nic_plan: NicPlan) -> dict[int, int]:
    """Each connection's EV profile id in a NIC plan, from its `tx_connection` entries."""
    return {dict(e.params)["conn"]: dict(e.params)["profile"]
            for e in nic_plan.entries if e.table == "tx_connection"}


TABLE_ORDER = ("nic_dscp", "plane_port", "port_plane", "path_template",
               "ev_path", "tx_connection", "local_qp", "rx_r_key")


def _order(e: PlannedEntry) -> tuple[int, tuple[object, ...]]:
    return TABLE_ORDER.index(e.table), e.match


@dataclass(frozen=True)
class CompactSize:
    """What the controller keeps for every NIC of a fabric, and what it would be expanded."""

    nics: int
    row_templates: int  # path_template entries, one set per (plane, T0), shared by its NICs
    profile_paths: int  # ev_path entries, one set per (profile, T1 choices)
    per_nic: int  # plane entries + DSCPs per NIC (connections come on top)
    expanded_per_nic: int  # what one NIC holds once pushed (no connections)


def compact_size(planner: NicPlanner, profile: EvProfile) -> CompactSize:
    """Build every shared piece of the fabric's NIC plan and count it."""
    topo = planner.topology
    for plane in range(topo.planes):
        for t0 in planner.plan.templates.t0s(plane):
            planner.row_templates(plane, t0.name)
    for nic in topo.nics:
        planner._ev_paths(nic, profile)
    one = planner.plan_nic(topo.nics[0].name, [], profile, all_rows=True)
    per_nic = sum(e.table in ("nic_dscp", "plane_port", "port_plane") for e in one.entries)
    return CompactSize(len(topo.nics), sum(map(len, planner._row_templates.values())),
                       sum(map(len, planner._profile_paths.values())), per_nic, len(one.entries))
