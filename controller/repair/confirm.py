"""Suspects to verdicts: the data plane confirms a failure before the controller acts on it.

EV events are evidence, not verdicts: the correlator (correlate.py) names SUSPECTS, cables and T1s
whose paths carried the reported EVs. Congestion raises EV events too (packets queued behind a
burst time out), and then spread over many cables at once; a probe over a congested but working
cable is delayed, not lost. So a suspect is probed over exactly that element — the controller's
link probe (daemon/probes.py: a PacketOut at the T0 out to the T1, back over the same cable,
punted by the T0) — and declared down only when:

- its last `probes` probes in a row were lost (none came back within the probe timeout: a probe
  answered late is an answer), and none sent since it became suspect was answered; and
- at least one ALTERNATIVE around it answered since then: another cable of the same T0 in that
  plane (the T0 and the controller's path to it work), or the same T1 over another T0 (the T1
  works). Without one, a dead T0 or a dead controller path would be blamed on the cable: it
  stays a suspect, still probed.

A suspect that answers is cleared (its evidence set aside). A suspected T1 is probed over each of
its cables: it is declared down when every cable of it is proven bad; when some answer, only the
proven-bad ones are declared (as cables), and the T1 is cleared. A suspected cable whose T1's
other cables (probed as its alternatives) all went silent with it is its T1's failure: the T1
is declared, as the switch (the reports named only the cables traffic crossed). What is
declared is only what the probes proved bad (`Verdict`): the rewrite (rewrite.py) acts on
nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from controller.daemon.probes import ProbeResult
from controller.repair.correlate import FabricLink, Verdict
from controller.topology.model import Topology
from controller.topology.reach import Reach

RESULTS_KEPT = 64   # per link: enough for any run of `probes` and the alternatives' answers


@dataclass
class _Suspicion:
    since_s: float
    reporters: tuple[str, ...] = ()


@dataclass
class Confirmer:
    """The confirmation state machine; feed it suspects (`suspect`) and probe results
    (`probed`), probe what `targets` names, act on `verdict`."""

    topology: Topology
    probes: int = 3
    verdict: Verdict = field(default_factory=Verdict)
    links: dict[FabricLink, _Suspicion] = field(default_factory=dict)
    switches: dict[str, _Suspicion] = field(default_factory=dict)
    _results: dict[FabricLink, list[ProbeResult]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.probes < 1:
            raise ValueError("confirm_probes must be at least 1")
        self.reach = Reach(self.topology)

    # -- the fabric around an element ------------------------------------------------------

    def cables_of(self, t1: str) -> set[FabricLink]:
        """Every T0-T1 cable of `t1`."""
        topo = self.topology
        plane = topo.switch(t1).plane
        return {(plane, t0, t1) for _, t0, _ in topo.neighbors(t1)
                if topo.is_switch(t0) and self.reach.cabled(t0, t1)}

    def _t0_cables(self, plane: int, t0: str) -> set[FabricLink]:
        topo = self.topology
        return {(plane, t0, t1) for _, t1, _ in topo.neighbors(t0)
                if topo.is_switch(t1) and topo.switch(t1).plane == plane
                and topo.switch(t1).name != t0 and self.reach.cabled(t0, t1)}

    def alternatives(self, element: FabricLink | str) -> set[FabricLink]:
        """The cables whose answer shows the ends of `element` work: for a cable, the T0's
        other cables in the plane and the T1's cables to other T0s; for a T1, the other cables
        of its T0s."""
        if isinstance(element, str):
            mine = self.cables_of(element)
            out: set[FabricLink] = set()
            for plane, t0, _ in mine:
                out |= self._t0_cables(plane, t0)
            return out - mine
        plane, t0, t1 = element
        return (self._t0_cables(plane, t0) | self.cables_of(t1)) - {element}

    # -- inputs ----------------------------------------------------------------------------

    def suspect(self, suspects: Verdict, now_s: float,
                reporters: dict[FabricLink, set[str]] | None = None) -> list[dict[str, object]]:
        """Take the correlator's suspects (what is already declared is not suspected again);
        the records of the new ones."""
        records: list[dict[str, object]] = []
        for t1 in sorted(suspects.switches_down - self.verdict.switches_down - set(self.switches)):
            who = sorted({n for link in self.cables_of(t1) for n in (reporters or {}).get(link, ())})
            self.switches[t1] = _Suspicion(now_s, tuple(who))
            records.append({"event": "suspect", "switch": t1, "reporters": who})
        for link in sorted(suspects.links_down - self.verdict.links_down - set(self.links)):
            if not self.reach.cabled(link[1], link[2]) or link[2] in self.switches \
                    or link[2] in self.verdict.switches_down:
                continue   # no such cable; or probed as part of its T1
            who = sorted((reporters or {}).get(link, ()))
            self.links[link] = _Suspicion(now_s, tuple(who))
            records.append({"event": "suspect", "link": _name(link), "reporters": who})
        return records

    def targets(self) -> set[FabricLink]:
        """The cables to probe now: every suspect (a T1's cables) and their alternatives."""
        out: set[FabricLink] = set()
        for link in self.links:
            out |= {link} | self.alternatives(link)
        for t1 in self.switches:
            out |= self.cables_of(t1) | self.alternatives(t1)
        return out

    def probed(self, results: Iterable[ProbeResult], now_s: float
               ) -> tuple[list[dict[str, object]], set[FabricLink]]:
        """Take probe results and decide what they prove: the verdict records, and the links
        cleared (the caller sets their evidence aside: correlate.Correlator.recovered)."""
        for r in results:
            kept = self._results.setdefault(r.link, [])
            kept.append(r)
            del kept[:-RESULTS_KEPT]
        records: list[dict[str, object]] = []
        cleared: set[FabricLink] = set()
        for t1, s in sorted(self.switches.items()):
            cables = self.cables_of(t1)
            states = {link: self._state(link, s.since_s) for link in cables}
            alive = self._answered(self.alternatives(t1), s.since_s)
            if any(state == "answered" for state in states.values()):
                bad = {link for link, state in states.items() if state == "lost" and alive}
                del self.switches[t1]
                self.verdict.links_down |= bad
                cleared |= {link for link, state in states.items() if state == "answered"}
                for link, state in states.items():   # undecided: still suspects, as cables
                    if state == "open" or (state == "lost" and not alive):
                        self.links.setdefault(link, s)
                records.append(self._record(t1, s, False, cables, alive, now_s))
                records += [self._record(link, s, True, {link}, alive, now_s)
                            for link in sorted(bad)]
            elif cables and alive and all(state == "lost" for state in states.values()):
                del self.switches[t1]
                self.verdict.switches_down.add(t1)
                records.append(self._record(t1, s, True, cables, alive, now_s))
        for link, s in sorted(self.links.items()):
            if link not in self.links:
                continue   # taken with its T1 below
            state = self._state(link, s.since_s)
            alive = self._answered(self.alternatives(link), s.since_s)
            if state == "answered":
                del self.links[link]
                cleared.add(link)
                records.append(self._record(link, s, False, {link}, alive, now_s))
            elif state == "lost" and alive:
                t1 = link[2]
                cables = self.cables_of(t1)
                around = self._answered(self.alternatives(t1), s.since_s)
                if len(cables) > 1 and around and all(
                        self._state(c, s.since_s) == "lost" for c in cables):
                    # Its T1's other cables, probed as its alternatives, went silent too: what
                    # failed is the T1 (its T0s answer elsewhere), declared as the switch.
                    for c in cables:
                        self.links.pop(c, None)
                        self.verdict.links_down.discard(c)
                    self.verdict.switches_down.add(t1)
                    records.append(self._record(t1, s, True, cables, around, now_s))
                    continue
                del self.links[link]
                self.verdict.links_down.add(link)
                records.append(self._record(link, s, True, {link}, alive, now_s))
        return records, cleared

    def recovered(self, link: FabricLink) -> None:
        """Probes proved `link` (and its T1) healthy again."""
        self.verdict.links_down.discard(link)
        self.verdict.switches_down.discard(link[2])

    def allow(self, link: FabricLink | None = None, switch: str | None = None) -> None:
        if link is not None:
            self.verdict.links_down.discard(link)
            self.links.pop(link, None)
        if switch is not None:
            self.verdict.switches_down.discard(switch)
            self.switches.pop(switch, None)

    # -- evidence --------------------------------------------------------------------------

    def _since(self, link: FabricLink, since_s: float) -> list[ProbeResult]:
        return [r for r in self._results.get(link, ()) if r.sent_s >= since_s]

    def _state(self, link: FabricLink, since_s: float) -> str:
        """"answered" (a probe sent since `since_s` came back), "lost" (the last `probes` in a
        row did not), or "open" (not enough evidence yet)."""
        seen = self._since(link, since_s)
        if any(r.answered for r in seen):
            return "answered"
        return "lost" if len(seen) >= self.probes else "open"

    def _answered(self, links: Iterable[FabricLink], since_s: float) -> list[FabricLink]:
        return sorted(link for link in links
                      if any(r.answered for r in self._since(link, since_s)))

    def _record(self, element: FabricLink | str, s: _Suspicion, down: bool,
                probed: set[FabricLink], alive: list[FabricLink],
                now_s: float) -> dict[str, object]:
        seen = [r for link in probed for r in self._since(link, s.since_s)]
        kind = "switch" if isinstance(element, str) else "link"
        return {"event": "verdict", kind: _name(element), "down": down,
                "suspected_at_s": round(s.since_s, 6),
                "after_us": round((now_s - s.since_s) * 1e6, 1),
                "reporters": list(s.reporters),
                "probes_sent": len(seen), "probes_answered": sum(r.answered for r in seen),
                "probes_lost": sum(not r.answered for r in seen),
                "alternatives_answered": [_name(link) for link in alive]}


def _name(element: FabricLink | str) -> str:
    return element if isinstance(element, str) else f"{element[1]}:{element[2]}"
