"""From EV events to failed links and switches: the fabric health model's inference.

An EV event says NIC N took EV e out of service (ASSUMED_BAD) on a connection to peer P. EV →
path is deterministic: e is (plane p, T1 t), so the path is N's T0 in p → t → P's T0 in p; the
failure is on one of its two T0-T1 links (or t itself). One event cannot say which; many can:

- Rule (links): a link is declared DOWN when at least `min_nics` distinct NICs reported EVs whose
  paths cross it within the last `window_s` seconds, and it explains more of those reports than
  any other candidate. Candidates are taken greedily: the link explaining the most distinct NICs
  is declared, the reports it explains are set aside, and the next is considered, so a cut
  T0a-T1 link (reported by NICs under T0a towards everyone, and by everyone towards T0a) is
  declared while the T1's healthy links to other T0s (each crossed by a few of those reports) are
  not.
- Rule (switches): a T1 is declared DOWN when its links to at least half (`switch_fraction`) of
  its T0s, and at least two, are down at once (a switch failure looks like all its links failing
  together). On a fabric with two T0s per plane a cut link and a dead T1 look the same.
- A single NIC never declares a fabric link (`min_nics` ≥ 2): one NIC's own port going down is a
  NIC-T0 problem the NIC already handles by its port-state bitmap, not a fabric failure.
- A link or switch comes back UP when an EV across it is reported GOOD again (probes succeeded)
  or on operator command; evidence older than the window is forgotten.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from controller.topology.model import Topology
from controller.topology.reach import Reach

FabricLink = tuple[int, str, str]  # (plane, T0, T1): one T0-T1 cable


@dataclass(frozen=True, slots=True)
class EvReport:
    """One EV event, placed on its path: NIC `nic` (on connection to `peer`) reported EV `ev`,
    which runs in `plane` through `t1`, as `state` at `at_s` seconds."""

    nic: str
    peer: str
    ev: int
    plane: int
    t1: str
    state: str  # "ASSUMED_BAD" or "GOOD"
    at_s: float


@dataclass
class Verdict:
    """What the health model believes now."""

    links_down: set[FabricLink] = field(default_factory=set)
    switches_down: set[str] = field(default_factory=set)

    def crosses(self, plane: int, t0: str, t1: str) -> bool:
        """Whether the T0-T1 hop (plane, t0, t1) is unusable."""
        return t1 in self.switches_down or (plane, t0, t1) in self.links_down


class Correlator:
    """Accumulates EV reports and infers failed links and T1 switches (rules above)."""

    def __init__(self, topology: Topology, *, min_nics: int = 2, window_s: float = 1.0,
                 switch_fraction: float = 0.5) -> None:
        if min_nics < 2:
            raise ValueError("min_nics must be at least 2: one NIC alone never declares a "
                             "fabric link")
        self.topology = topology
        self.reach = Reach(topology)
        self.min_nics = min_nics
        self.window_s = window_s
        self.switch_fraction = switch_fraction
        self._bad: list[EvReport] = []
        self.verdict = Verdict()

    def _t0(self, nic: str, plane: int) -> str:
        return self.topology.nic(nic).attachments[plane][0]

    def path_links(self, report: EvReport) -> tuple[FabricLink, ...]:
        """The T0-T1 links of the reported EV's path (up from the NIC, down to its peer) that
        exist: a cable that is not there is never blamed (nor later probed)."""
        p = report.plane
        links = ((p, self._t0(report.nic, p), report.t1), (p, self._t0(report.peer, p), report.t1))
        return tuple(link for link in links if self.reach.cabled(link[1], link[2]))

    @property
    def pending(self) -> list[EvReport]:
        """The ASSUMED_BAD reports still in the window (the evidence)."""
        return list(self._bad)

    def add(self, reports: Iterable[EvReport], now_s: float) -> Verdict:
        """Take new reports, forget old evidence, and return the verdict (changed or not)."""
        for r in reports:
            if r.state == "ASSUMED_BAD":
                self._bad.append(r)
            elif r.state == "GOOD":
                self._recover(r)
        self._bad = [r for r in self._bad if now_s - r.at_s <= self.window_s]
        self._infer()
        return self.verdict

    def _recover(self, report: EvReport) -> None:
        """A probe-answered EV: its links and T1 carry traffic again."""
        for link in self.path_links(report):
            self.recovered(link)

    def recovered(self, link: FabricLink) -> None:
        """Traffic crossed `link` (an EV's probe, or the controller's link probe): it and its
        T1 are up, and the evidence against it is set aside."""
        self.verdict.links_down.discard(link)
        self.verdict.switches_down.discard(link[2])
        self._bad = [r for r in self._bad if link not in self.path_links(r)]

    def _infer(self) -> None:
        pending = list(self._bad)
        while pending:
            nics: dict[FabricLink, set[str]] = defaultdict(set)
            for r in pending:
                for link in self.path_links(r):
                    nics[link].add(r.nic)
            if not nics:
                break
            most = max(len(reporters) for reporters in nics.values())
            if most < self.min_nics:
                break
            # Ties are all declared: the evidence cannot tell them apart, and using a dead
            # link costs more than avoiding a live one.
            chosen = {link for link, reporters in nics.items() if len(reporters) == most}
            self.verdict.links_down |= chosen
            pending = [r for r in pending if not chosen & set(self.path_links(r))]
        by_t1: dict[str, set[str]] = defaultdict(set)
        for _, t0, t1 in self.verdict.links_down:
            by_t1[t1].add(t0)
        for t1, t0s in by_t1.items():
            if len(t0s) >= max(2, self.switch_fraction * self._t0_count(t1)):
                self.verdict.switches_down.add(t1)

    def _t0_count(self, t1: str) -> int:
        topo = self.topology
        return sum(1 for _, name, _ in topo.neighbors(t1) if topo.is_switch(name))

    def allow(self, link: FabricLink | None = None, switch: str | None = None) -> None:
        """The operator's word: this link or switch is back."""
        if link is not None:
            self.verdict.links_down.discard(link)
        if switch is not None:
            self.verdict.switches_down.discard(switch)
