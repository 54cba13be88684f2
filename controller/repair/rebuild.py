"""The health model rebuilt from the NICs' own tables: what a previous primary took out.

A controller that becomes primary (start, restart, takeover) keeps every `ev_path` entry a NIC
holds (daemon/keeper.py adopts them) and must then believe what they show, or its next rewrite
would put EVs back onto links the previous primary declared down. The state file
(`health.json`) says so when it is shared and current; the tables say so always:

- An EV found OFF its planned path (moved to another T1, or DENIED) was taken out because its
  planned path crosses something down: one of its T0-T1 links, up from the NIC or down to a peer
  of its profile (rewrite.py's rule). Which one, the EV alone cannot say: its CANDIDATES.
- An EV found ON a path (planned or moved to) shows that path's links were in service when it
  was written: IN USE. (Not so for the EVs of a profile's plane that also has a DENIED EV: the
  `ev_min_active` floor may have kept them on a dead path.)
- Taken out: every candidate that nothing uses. An EV all of whose candidates are in use was
  written by a repair cut short (the primary died between two NICs): all its candidates are
  taken out, so the repair is finished, never undone.

Only news counts: an EV found as this controller did not believe it was (what it wrote itself,
or the plan before it wrote anything), and that the model does not already explain (a verdict
it holds crosses its planned path): with a current `health.json` nothing is rebuilt, nor when a
NIC this controller repaired reconnects. What it rebuilds is a superset of what the previous
primary declared (on the links the EVs' paths share): those it over-blames are probed back like
any link declared down, and a link proven healthy is never blamed again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from controller.plan.entries import PlannedEntry
from controller.plan.plan import FabricPlan
from controller.repair.correlate import FabricLink, Verdict

SET_PATH, DENY = "set_path", "deny_path"


@dataclass
class _Found:
    """One NIC's tables as found: each off-plan EV's candidate links, and the links in use."""

    candidates: list[frozenset[FabricLink]] = field(default_factory=list)
    in_use: frozenset[FabricLink] = frozenset()


class TableEvidence:
    """The NICs' tables as found (`found`), and what they say was taken out (`taken_out`)."""

    def __init__(self, plan: FabricPlan) -> None:
        self.plan = plan
        self._t1 = {plan.usid(s.name): s.name for s in plan.topology.switches}
        self._found: dict[str, _Found] = {}
        self._use: Counter[FabricLink] = Counter()
        self._cleared: set[FabricLink] = set()

    def found(self, nic: str, planned: Sequence[PlannedEntry], held: Sequence[PlannedEntry],
              peers: Mapping[int, Sequence[str]],
              believed: Sequence[PlannedEntry] = ()) -> None:
        """NIC `nic` holds `held` (its `ev_path` entries as read back) where the plan has
        `planned` and this controller believed it held `believed` (default: the plan);
        `peers`: the peer NICs of each EV profile's connections."""
        have = {e.key: e for e in held}
        thought = {e.key: e for e in believed}
        floor = {(_pid(p), _plane(p)) for p in planned
                 if p.action == SET_PATH and have.get(p.key, p).action == DENY}
        candidates: list[frozenset[FabricLink]] = []
        in_use: set[FabricLink] = set()
        for p in planned:
            h = have.get(p.key, p)
            pid = _pid(p)
            if h.action == SET_PATH and (h != p or (pid, _plane(p)) not in floor):
                in_use |= self._links(nic, peers.get(pid, ()), h)
            if h != p and h != thought.get(p.key, p) and p.action == SET_PATH:
                candidates.append(frozenset(self._links(nic, peers.get(pid, ()), p)))
        old = self._found.get(nic)
        if old is not None:   # what it showed before still stands; its links in use are new
            self._use.subtract(old.in_use)
            candidates += old.candidates
        self._found[nic] = _Found(list(dict.fromkeys(c for c in candidates if c)),
                                  frozenset(in_use))
        self._use.update(in_use)

    def cleared(self, link: FabricLink) -> None:
        """Probes (or EVs answered) showed `link` healthy: the tables no longer blame it."""
        self._cleared.add(link)

    def taken_out(self, known: Verdict) -> set[FabricLink]:
        """The links the tables show taken out that `known` (the model without them) does not
        explain (module docstring)."""
        open_ = [c - self._cleared for f in self._found.values() for c in f.candidates
                 if not any(known.crosses(*link) for link in c) and c - self._cleared]
        unused = {link for c in open_ for link in c if self._use[link] <= 0}
        out = set(unused)
        for c in open_:
            if not c & unused:   # a repair cut short: keep the EV off all its path
                out |= c
        return out

    def _links(self, nic: str, peers: Sequence[str], entry: PlannedEntry) -> set[FabricLink]:
        """The T0-T1 cables of the EV's path (plane, T1) from `nic` and towards each peer."""
        params = dict(entry.params)
        plane, t1 = params["plane"], self._t1.get(params["t1_usid"])
        topo = self.plan.topology
        if t1 is None:
            return set()
        t0s = {topo.nic(n).attachments[plane][0] for n in (nic, *peers)}
        return {(plane, t0, t1) for t0 in t0s if self.plan.templates.reach.cabled(t0, t1)}


def _pid(entry: PlannedEntry) -> int:
    return int(dict(entry.match)["profile"])


def _plane(entry: PlannedEntry) -> int:
    return int(dict(entry.params).get("plane", -1))
