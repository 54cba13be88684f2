"""Prove a plan delivers every path, without packets.

Every (source NIC, destination NIC, plane, T1) path must reach the destination NIC's port in that
plane, loop-free, through the expected number of switches (3 across T0s, 1 under one T0), never
leaving its plane. Each switch hop is simulated on the planned tables the way the switch program
runs them (p4src/README.md): port role, SID block, hop limit, `my_sid` LPM (uN shift,
uA / combined uA shift and forward), `route_v6` LPM, `block::/32 → drop`.

Two modes:
- "paths" (small fabrics): walk every path from the NIC, hop by hop.
- "per-hop" (large fabrics: 10^13 paths at 131,072 NICs): prove the same from per-hop facts, each
  a simulated hop on a *prefix* of the destination address, with a proof that the rest of the
  address cannot change the outcome (no longer LPM entry agrees with the prefix). A source T0
  forwards `block:T0:T1…` to that T1 for every T1 cabled to it, a T1 forwards `block:T1:T0…` to
  that T0 for every T0 cabled to it, a destination T0 forwards `block:T0:uA(q):NIC-decap` to the NIC
  on port q for every host port. With every template's structure checked (its T1 choices are T1s
  of its plane cabled to both its T0s, its uSIDs are the allocated ones), each path is a chain of
  proven hops.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from controller.plan.entries import PlannedEntry
from controller.plan.plan import FabricPlan
from controller.plan.switch_plan import Peer, peers_of
from controller.plan.templates import PathTemplate, Slot
from controller.plan.usid import (
    LOCAL_MIN,
    NIC_DECAP_USID,
    decode_usid,
    format_address,
    nic_mac,
    switch_mac,
    ua_usid,
    usid_prefix,
)
from controller.topology.model import PortRole, Switch, Tier, Topology
from controller.topology.reach import missing_words

NIC_HOP_LIMIT = 64  # what a NIC puts in the outer header
PATH_WALK_LIMIT = 200_000  # above this many paths, prove from per-hop facts
_MASK128 = (1 << 128) - 1
_BLOCK_MASK = ((1 << 32) - 1) << 96
_ROLE_OF = {1: PortRole.HOST, 2: PortRole.FABRIC, 3: PortRole.EXTERNAL}


@dataclass
class CheckResult:
    mode: str  # "paths" or "per-hop"
    errors: list[str] = field(default_factory=list)  # the first offending path first
    paths: int = 0  # paths walked ("paths" mode) or covered by the proof ("per-hop")
    facts: int = 0  # per-hop facts proven
    templates: int = 0
    switches: int = 0
    entries: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        head = (f"{'OK' if self.ok else 'FAILED'} ({self.mode}): {self.switches} switches, "
                f"{self.entries} entries, {self.templates} templates, {self.paths} paths")
        if self.mode == "per-hop":
            head += f" ({self.facts} per-hop facts)"
        return head


# -- the switch program on planned tables ---------------------------------------------------

class _Lpm:
    def __init__(self) -> None:
        self.by_len: dict[int, dict[int, PlannedEntry]] = {}
        self._order: list[tuple[int, int, dict[int, PlannedEntry]]] = []  # longest first
        self._longer: dict[int, list[set[int]]] = {}

    def add(self, value: int, plen: int, e: PlannedEntry) -> None:
        d = self.by_len.get(plen)
        if d is None:
            d = self.by_len[plen] = {}
            mask = (_MASK128 << (128 - plen)) & _MASK128
            self._order.append((plen, mask, d))
            self._order.sort(key=lambda x: -x[0])
        d[value] = e
        self._longer.clear()

    def lookup(self, addr: int, known: int = 128) -> tuple[PlannedEntry | None, bool]:
        """The LPM hit for `addr` of which only the first `known` bits are given, and whether
        those bits decide it (no entry longer than `known` agrees with them)."""
        if known < 128:
            cached = self._longer.get(known)
            if cached is None:
                cached = [{v >> (128 - known) for v in d} for p, d in self.by_len.items()
                          if p > known]
                self._longer[known] = cached
            head = addr >> (128 - known)
            for prefixes in cached:
                if head in prefixes:
                    return None, False
        for plen, mask, d in self._order:
            if plen <= known:
                e = d.get(addr & mask)
                if e is not None:
                    return e, True
        return None, True


class SwitchTables:
    """The lookups of one switch's planned entries; `problems` lists inconsistent entries."""

    def __init__(self, name: str, entries: list[PlannedEntry]) -> None:
        self.name = name
        self.roles: dict[int, PortRole] = {}
        self.sid_block = _Lpm()
        self.my_sid = _Lpm()
        self.route = _Lpm()
        self.punt_hop_limit = False
        self.problems: list[str] = []
        lpm = {"sid_block": self.sid_block, "my_sid": self.my_sid, "route_v6": self.route}
        for e in entries:
            table = e.table
            if table == "port_role":
                role = dict(e.params).get("role", 3) if e.action == "set_port_role" else 3
                self.roles[e.match[0][1]] = _ROLE_OF.get(role, PortRole.EXTERNAL)  # type: ignore[index]
            elif table in lpm:
                if not e.is_default:
                    value, plen = e.match[0][1]  # type: ignore[misc]
                    lpm[table].add(value, plen, e)
            elif table == "hop_limit_policy":
                self.punt_hop_limit = e.action == "punt_hop_limit"
        if len({(e.table, e.match, e.priority, e.is_default) for e in entries}) != len(entries):
            seen: set[tuple[object, ...]] = set()
            for e in entries:
                if e.key in seen:
                    self.problems.append(f"{name} has two entries for {e.describe()}")
                seen.add(e.key)


@dataclass
class Hop:
    """The outcome of one switch hop: forwarded (port, MACs, new address) or not (why)."""

    port: int = -1
    smac: int = 0
    dmac: int = 0
    dst: int = 0
    known: int = 128
    hop_limit: int = 0
    error: str = ""


def simulate_hop(t: SwitchTables, in_port: int, dst: int, hop_limit: int,
                 known: int = 128) -> Hop:
    """What the switch does with a packet to `dst` (first `known` bits given) from `in_port`."""
    role = t.roles.get(in_port, PortRole.EXTERNAL)
    in_block, decided = t.sid_block.lookup(dst, known)
    if not decided:
        return Hop(error=f"{t.name}: sid_block lookup depends on more than {known} bits")
    if role == PortRole.EXTERNAL and in_block is not None:
        return Hop(error=f"{t.name} drops it: port {in_port} is EXTERNAL (SR traffic refused)")
    if in_block is None:
        return Hop(error=f"{t.name}: {_addr(dst)} is outside the SID block")
    if hop_limit <= 1:
        return Hop(error=f"{t.name} drops it: hop limit expired")
    sid, decided = t.my_sid.lookup(dst, known)
    if not decided:
        return Hop(error=f"{t.name}: my_sid lookup on {_addr(dst)} depends on bits the carrier "
                         f"does not fix")
    hop_limit -= 1
    if sid is not None:
        if sid.action == "usid_un":
            if dst & ((1 << 80) - 1) == 0:
                return Hop(error=f"{t.name}: the carrier ends at this switch (uN with no argument)")
            dst, known = _shift(dst, 16), max(32, known - 16)
        elif sid.action in ("usid_ua", "usid_ua_combined"):
            n = 16 if sid.action == "usid_ua" else 32
            p = dict(sid.params)
            return Hop(p["port"], p["smac"], p["dmac"], _shift(dst, n), max(32, known - n),
                       hop_limit)
        else:
            return Hop(error=f"{t.name}: unexpected local SID behaviour {sid.action}")
    route, decided = t.route.lookup(dst, known)
    if not decided:
        return Hop(error=f"{t.name}: route_v6 lookup on {_addr(dst)} depends on bits the "
                         f"carrier does not fix")
    if route is None or route.action != "forward":
        return Hop(error=f"{t.name} has no route for uSID {(dst >> 80) & 0xFFFF:#06x}")
    p = dict(route.params)
    return Hop(p["port"], p["smac"], p["dmac"], dst, known, hop_limit)


def _shift(dst: int, n: int) -> int:
    return (dst & _BLOCK_MASK) | ((dst << n) & _MASK128 & ~_BLOCK_MASK)


def _addr(a: int) -> str:
    return format_address(a)


# -- the check ------------------------------------------------------------------------------

class PlanChecker:
    """The checks of one plan; `walk_address` follows one packet over the planned tables."""

    def __init__(self, topology: Topology, plan: FabricPlan, max_errors: int) -> None:
        self.topo = topology
        self.plan = plan
        self.max_errors = max_errors
        self.result = CheckResult("paths")
        self._tables: dict[str, SwitchTables] = {}

    def fail(self, msg: str) -> bool:
        """Record an error; True when enough have been found to stop."""
        if msg not in self.result.errors:
            self.result.errors.append(msg)
        return len(self.result.errors) >= self.max_errors

    def tables(self, name: str, cache: bool = True) -> SwitchTables:
        t = self._tables.get(name)
        if t is None:
            entries = self.plan.switch(name)
            self.result.entries += len(entries)
            t = SwitchTables(name, entries)
            for problem in t.problems:
                self.fail(problem)
            if cache:
                self._tables[name] = t
        return t

    # -- topology lookups that tolerate names a broken plan or NIC may give -------------------
    def _switch(self, name: str) -> Switch | None:
        try:
            return self.topo.switch(name)
        except KeyError:
            return None

    def _tier(self, switch: str) -> Tier:
        return self.topo.switch(switch).tier

    def _peer(self, switch: str, port: int) -> Peer | None:
        found = self.topo.peer(switch, port)
        if found is None:
            return None
        name, peer_port = found
        return Peer(port, name, peer_port, self.topo.is_nic(name))

    # -- facts that do not depend on paths --------------------------------------------------
    def check_allocation(self) -> bool:
        """Every switch has its own uSID, global, encoding its plane and tier."""
        owner: dict[int, str] = {}
        for s in self.topo.switches:
            u = self.plan.usid(s.name)
            decoded = decode_usid(u)
            if u in owner:
                problem = f"uSID {u:#06x} is allocated to both {owner[u]} and {s.name}"
            elif u == 0 or u >= LOCAL_MIN:
                problem = f"{s.name}: uSID {u:#06x} is {'0' if u == 0 else 'a local SID'}"
            elif decoded is None or decoded[0] != s.plane or decoded[1] != s.tier:
                problem = f"{s.name}: uSID {u:#06x} does not encode plane {s.plane}, {s.tier}"
            else:
                problem = ""
            owner.setdefault(u, s.name)
            if problem and self.fail(problem):
                break
        return self.result.ok

    def check_nics(self) -> bool:
        """Each NIC has one port per plane, on a T0 of that plane whose port leads back to it."""
        for nic in self.topo.nics:
            problems = []
            if len(nic.attachments) != self.topo.planes:
                problems.append(f"NIC {nic.name} has {len(nic.attachments)} ports for "
                                f"{self.topo.planes} planes")
            for plane, (sw, port) in enumerate(nic.attachments):
                s = self._switch(sw)
                peer = self._peer(sw, port) if s is not None else None
                if s is None or s.tier != Tier.T0 or s.plane != plane:
                    problems.append(f"NIC {nic.name}'s plane-{plane} port is cabled to {sw}, "
                                    f"not a T0 of plane {plane}")
                elif peer is None or peer.name != nic.name:
                    problems.append(f"NIC {nic.name}: {sw} port {port} does not lead back to it")
            for problem in problems:
                if self.fail(problem):
                    return False
        return self.result.ok

    # -- small fabrics: every path ------------------------------------------------------------
    def walk_all(self) -> None:
        nics = self.topo.nics
        for plane in range(self.topo.planes):
            for src in nics:
                for dst in nics:
                    if src is dst:
                        continue
                    tpl, port = self.plan.templates.for_pair(src, dst, plane)
                    if tpl.hops == 3 and not tpl.t1_choices:
                        missing = self.plan.templates.reach.missing(plane, tpl.src_t0,
                                                                    tpl.dst_t0)
                        err = (f"NIC {src.name} → {dst.name}, plane {plane}: no T1 joins "
                               f"{tpl.src_t0} and {tpl.dst_t0} "
                               f"({missing_words(missing, tpl.src_t0, tpl.dst_t0)})")
                        if self.fail(err):
                            return
                    for t1 in [n for n, _ in tpl.t1_choices] or [None]:
                        if t1 is None and tpl.hops == 3:
                            continue
                        self.result.paths += 1
                        err = self.walk(src.name, dst.name, plane, t1, tpl, port)
                        if err and self.fail(err):
                            return

    def walk(self, src: str, dst: str, plane: int, t1: str | None, tpl: PathTemplate,
             dst_port: int) -> str:
        """Follow one path; "" when it is delivered as expected, else what went wrong."""
        return self.walk_address(_path_words(src, dst, plane, t1, tpl), src, dst, plane,
                                 tpl.expand(self.plan.block, t1, dst_port), tpl.hops)

    def walk_address(self, where: str, src: str, dst: str, plane: int, addr: int,
                     hops: int) -> str:
        """Follow a packet NIC `src` sends to `addr` on `plane`: "" when it reaches `dst`'s
        port of that plane through `hops` switches as the NIC's decap SID, else what went wrong
        (prefixed by `where`)."""
        sw, in_port = self.topo.nic(src).attachments[plane]
        hop_limit = NIC_HOP_LIMIT
        seen: set[tuple[str, int]] = set()
        visited: list[str] = []
        mac_error = ""  # reported only if the path is otherwise right: where it goes matters more
        while True:
            if (sw, addr) in seen:
                return f"{where}: loops ({' → '.join([*visited, sw])})"
            seen.add((sw, addr))
            visited.append(sw)
            s = self.topo.switch(sw)
            if s.plane != plane:
                return f"{where}: leaves plane {plane} at {' → '.join(visited)} (plane {s.plane})"
            hop = simulate_hop(self.tables(sw), in_port, addr, hop_limit)
            if hop.error:
                return f"{where}: {hop.error}"
            peer = self._peer(sw, hop.port)
            if peer is None:
                return f"{where}: {sw} sends it out of port {hop.port}, which is not cabled"
            mac_error = mac_error or self._check_link(s, hop, peer)
            if peer.is_nic:
                if peer.name != dst or peer.peer_port != plane:
                    return (f"{where}: delivered to NIC {peer.name}'s plane-{peer.peer_port} "
                            f"port instead")
                if len(visited) != hops:
                    return f"{where}: {len(visited)} switches, expected {hops}"
                if hop.dst != usid_prefix(self.plan.block, NIC_DECAP_USID)[0]:
                    return f"{where}: arrives as {_addr(hop.dst)}, not the NIC's decap SID"
                return f"{where}: {mac_error}" if mac_error else ""
            sw, in_port, addr, hop_limit = peer.name, peer.peer_port, hop.dst, hop.hop_limit

    def _check_link(self, s: Switch, hop: Hop, peer: Peer | None) -> str:
        if peer is None:
            return f"{s.name} sends it out of port {hop.port}, which is not cabled"
        if hop.smac != switch_mac(self.plan.usid(s.name)):
            return f"{s.name} port {hop.port}: source MAC {hop.smac:#014x} is not the switch's"
        if peer.is_nic:
            want = nic_mac(self.topo.nic(peer.name), peer.peer_port)
        elif self.topo.is_switch(peer.name):
            want = switch_mac(self.plan.usid(peer.name))
        else:
            return f"{s.name} port {hop.port} leads to unknown {peer.name}"
        if hop.dmac != want:
            return (f"{s.name} port {hop.port}: destination MAC {hop.dmac:#014x} is not "
                    f"{peer.name}'s {want:#014x}")
        return ""

    # -- large fabrics: per-hop facts ---------------------------------------------------------
    def prove_plane(self, plane: int) -> None:
        """Every per-hop fact of the plane's switches, then the structure of its templates."""
        self.result.mode = "per-hop"
        for s in self.topo.switches:
            if s.plane != plane:
                continue
            t = self.tables(s.name, cache=False)
            ports = peers_of(self.topo, s.name)
            if s.tier == Tier.T0:
                done = self._t0_facts(s, t, ports)
            else:
                done = self._t1_facts(s, t, ports)
            if done:
                return
        self._check_templates(plane)
        if self.result.ok:
            self.result.paths = self._path_count(plane)

    def _t0_facts(self, s: Switch, t: SwitchTables, ports: list[Peer]) -> bool:
        block, me = self.plan.block, self.plan.usid(s.name)
        hosts = [p for p in ports if p.is_nic]
        ups = [p for p in ports if not p.is_nic and self._tier(p.name) == Tier.T1]
        if self._port_problems(s, t, hosts, ups):
            return True
        in_host = hosts[0].port if hosts else None
        # Leaving: block:me:T1 from a NIC goes up to that T1, whatever follows.
        if in_host is not None:
            for p in ups:
                self.result.facts += 1
                addr = block | me << 80 | self.plan.usid(p.name) << 64
                err = self._fact(s, t, in_host, addr, 64, p)
                if err and self.fail(self._example_up(s, p.name, err)):
                    return True
        # Arriving (from a T1 or a NIC under the same T0): block:me:uA(q):decap to the NIC on q.
        decap = usid_prefix(block, NIC_DECAP_USID)[0]
        in_ports = [x for x in (ups[0].port if ups else None, in_host) if x is not None]
        for in_port in in_ports:
            for p in hosts:
                self.result.facts += 1
                addr = block | me << 80 | ua_usid(p.port) << 64 | NIC_DECAP_USID << 48
                err = self._fact(s, t, in_port, addr, 128, p, decap)
                if err and self.fail(self._example_down(s, p, err)):
                    return True
        return False

    def _t1_facts(self, s: Switch, t: SwitchTables, ports: list[Peer]) -> bool:
        block, me = self.plan.block, self.plan.usid(s.name)
        downs = [p for p in ports if not p.is_nic and self._tier(p.name) == Tier.T0]
        if self._port_problems(s, t, [], downs):
            return True
        if not downs:
            return False
        in_port = downs[0].port
        # Down: block:me:T0 from any T0 goes to that T0, whatever follows.
        for p in downs:
            self.result.facts += 1
            addr = block | me << 80 | self.plan.usid(p.name) << 64
            err = self._fact(s, t, in_port, addr, 64, p)
            if err and self.fail(self._example_t1(s, p.name, err)):
                return True
        return False

    def _port_problems(self, s: Switch, t: SwitchTables, hosts: list[Peer],
                       fabric: list[Peer]) -> bool:
        """Roles of the ports paths use (HOST to NICs, FABRIC between switches) and NIC cabling;
        True when enough errors were found to stop."""
        problems = []
        for p in hosts:
            atts = self.topo.nic(p.name).attachments
            if t.roles.get(p.port) != PortRole.HOST:
                problems.append(f"{s.name} port {p.port} (NIC {p.name}) is not a HOST port")
            if p.peer_port != s.plane or s.plane >= len(atts) or atts[s.plane] != (s.name, p.port):
                problems.append(f"{s.name} port {p.port} leads to NIC {p.name}, whose "
                                f"plane-{s.plane} port is not cabled there")
        for p in fabric:
            if t.roles.get(p.port) != PortRole.FABRIC:
                problems.append(f"{s.name} port {p.port} ({p.name}) is not a FABRIC port")
        return any(self.fail(problem) for problem in problems)

    def _fact(self, s: Switch, t: SwitchTables, in_port: int, addr: int, known: int,
              want: Peer, want_dst: int | None = None) -> str:
        """One hop on `addr` (first `known` bits fixed) must go to `want` (as `want_dst`)."""
        hop = simulate_hop(t, in_port, addr, NIC_HOP_LIMIT, known)
        if hop.error:
            return hop.error
        if want_dst is not None and hop.dst != want_dst:
            return f"{s.name} sends it on as {_addr(hop.dst)}, not {_addr(want_dst)}"
        if hop.port != want.port:
            peer = self._peer(s.name, hop.port)
            got = f"{peer.name}" if peer else "nothing"
            return f"{s.name} sends it out of port {hop.port} (to {got}), not to {want.name}"
        return self._check_link(s, hop, want)

    def _check_templates(self, plane: int) -> None:
        ok_choices: set[tuple[int, str]] = set()
        for tpl in self.plan.templates.in_plane(plane):
            self.result.templates += 1
            err = self._template_error(tpl, ok_choices)
            if err and self.fail(err):
                return

    def _template_error(self, tpl: PathTemplate, ok_choices: set[tuple[int, str]]) -> str:
        words = f"template plane {tpl.plane} {tpl.src_t0} → {tpl.dst_t0}"
        plane = tpl.plane
        src, dst = self._switch(tpl.src_t0), self._switch(tpl.dst_t0)
        for x in (src, dst):
            if x is None or x.tier != Tier.T0 or x.plane != plane:
                return f"{words}: {x.name if x else '?'} is not a T0 of plane {plane}"
        assert src is not None and dst is not None
        u = self.plan.usid
        if src is dst:
            want: tuple[object, ...] = (u(src.name), Slot.DST_PORT, NIC_DECAP_USID)
        else:
            want = (u(src.name), Slot.T1, u(dst.name), Slot.DST_PORT, NIC_DECAP_USID)
            if not tpl.t1_choices:
                return f"{words}: no T1 choice"
        if tpl.segments != want:
            return f"{words}: segments {tpl.to_json()['segments']} are not {want}"
        for end in (src.name, dst.name) if tpl.t1_choices else ():
            key = (id(tpl.t1_choices), end)
            if key in ok_choices:
                continue
            ports = {name for _, name, _ in self.topo.neighbors(end)}
            for name, t1u in tpl.t1_choices:
                t1 = self._switch(name)
                if t1 is None or t1.tier != Tier.T1 or t1.plane != plane:
                    return f"{words}: T1 choice {name} is not a T1 of plane {plane}"
                if t1u != u(name):
                    return f"{words}: T1 choice {name} has uSID {t1u:#06x}, not {u(name):#06x}"
                if name not in ports:
                    return f"{words}: T1 choice {name} is not cabled to {end}"
            ok_choices.add(key)
        return ""

    def _path_count(self, plane: int) -> int:
        # Paths proven: every ordered NIC pair in the plane, one per T1 choice of its template.
        per_t0: dict[str, int] = {}
        for nic in self.topo.nics:
            if plane < len(nic.attachments):
                sw = nic.attachments[plane][0]
                per_t0[sw] = per_t0.get(sw, 0) + 1
        total = 0
        choices = self.plan.templates.t1_choices
        for a, na in per_t0.items():
            for b, nb in per_t0.items():
                if a == b:
                    total += na * (na - 1)
                else:
                    total += na * nb * len(choices(plane, a, b))
        return total

    # -- words: an example path for a failed fact --------------------------------------------
    def _nic_on(self, t0: str, exclude: str = "") -> str | None:
        for p in peers_of(self.topo, t0):
            if p.is_nic and p.name != exclude:
                return p.name
        return None

    def _other_t0(self, s: Switch, t1: str | None = None) -> str | None:
        for p in peers_of(self.topo, t1) if t1 else ():
            if p.name != s.name and self._nic_on(p.name):
                return p.name
        return None

    def _example_up(self, s: Switch, t1: str, err: str) -> str:
        src = self._nic_on(s.name)
        other = self._other_t0(s, t1)
        dst = self._nic_on(other) if other else None
        if src and dst:
            return f"NIC {src} → {dst}, plane {s.plane} via T1 {t1}: {err}"
        return f"T0 {s.name} towards T1 {t1}: {err}"

    def _example_t1(self, t1: Switch, t0: str, err: str) -> str:
        dst = self._nic_on(t0)
        src = None
        for p in peers_of(self.topo, t1.name):
            if p.name != t0:
                src = self._nic_on(p.name)
                if src:
                    break
        if src and dst:
            return f"NIC {src} → {dst}, plane {t1.plane} via T1 {t1.name}: {err}"
        return f"T1 {t1.name} towards T0 {t0}: {err}"

    def _example_down(self, s: Switch, p: Peer, err: str) -> str:
        src = self._nic_on(s.name, exclude=p.name)
        if src:
            return f"NIC {src} → {p.name}, plane {s.plane} (same T0 {s.name}): {err}"
        return f"T0 {s.name} towards NIC {p.name}: {err}"


def check(topology: Topology, plan: FabricPlan, mode: str = "auto", max_errors: int = 10,
          workers: int | None = None) -> CheckResult:
    """Check `plan` against `topology`; mode "paths", "per-hop" or "auto" (by path count).
    The per-hop proof runs in `workers` forked processes (default: one per CPU)."""
    c = PlanChecker(topology, plan, max_errors)
    c.result.switches = len(topology.switches)
    if not c.check_allocation() or not c.check_nics():
        return c.result
    if mode == "auto":
        mode = "paths" if _estimated_paths(plan) <= PATH_WALK_LIMIT else "per-hop"
    if mode == "paths":
        for name in plan.switch_names:
            c.tables(name)
        c.result.templates = plan.templates.count()
        if c.result.ok:
            c.walk_all()
    elif mode == "per-hop":
        _prove(c, workers if workers is not None else (os.cpu_count() or 1))
    else:
        raise ValueError(f"unknown check mode {mode!r}")
    return c.result


def _prove(c: PlanChecker, workers: int) -> None:
    """Per-hop proof, plane by plane; planes share nothing, so forked workers split them."""
    planes = list(range(c.topo.planes))
    workers = min(workers, len(planes))
    per_plane: dict[int, CheckResult] = {}
    # Small fabrics are proven faster than a process starts.
    if workers > 1 and len(c.topo.switches) >= 256 and "fork" in mp.get_all_start_methods():
        ctx = mp.get_context("fork")  # the child inherits the plan: nothing big is pickled
        jobs = []
        for k in range(workers):
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_prove_planes, args=(c, planes[k::workers], send),
                               daemon=True)
            proc.start()
            send.close()
            jobs.append((proc, recv))
        for proc, recv in jobs:
            try:
                per_plane.update(recv.recv())
            except EOFError:
                raise RuntimeError(f"plan checker worker died (exit code {proc.exitcode})") from None
            proc.join()
    else:
        per_plane = _planes_results(c, planes)
    result = c.result
    result.mode = "per-hop"
    for plane in planes:
        r = per_plane[plane]
        result.errors.extend(r.errors)
        result.paths += r.paths
        result.facts += r.facts
        result.templates += r.templates
        result.entries += r.entries
    del result.errors[c.max_errors:]
    if result.errors:
        result.paths = 0


def _planes_results(c: PlanChecker, planes: list[int]) -> dict[int, CheckResult]:
    out: dict[int, CheckResult] = {}
    for plane in planes:
        sub = PlanChecker(c.topo, c.plan, c.max_errors)
        sub.prove_plane(plane)
        out[plane] = sub.result
    return out


def _prove_planes(c: PlanChecker, planes: list[int], send: Connection) -> None:
    send.send(_planes_results(c, planes))
    send.close()


def _estimated_paths(plan: FabricPlan) -> int:
    t = plan.topology
    t1s = max((sum(1 for s in t.switches if s.plane == p and s.tier == Tier.T1)
               for p in range(t.planes)), default=1)
    return len(t.nics) ** 2 * t.planes * max(t1s, 1)


def _path_words(src: str, dst: str, plane: int, t1: str | None, tpl: PathTemplate) -> str:
    if t1 is None:
        return f"NIC {src} → {dst}, plane {plane} (same T0 {tpl.src_t0})"
    return f"NIC {src} → {dst}, plane {plane} via T1 {t1}"
