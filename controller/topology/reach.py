"""Which T1s join two T0s: the fabric paths the wiring can carry.

In a Clos every T0 of a plane is cabled to every T1 of it, so any T1 joins any two of its T0s.
Explicit wiring (topologies/README.md) may leave cables out: a T1 then joins two T0s only when it
is cabled to both, and a path from one to the other through any other T1 is dropped by that T1
(it has no route down). The planner spreads a NIC pair's EVs over the joining T1s only; two T0s
with NICs under both and no T1 joining them in their plane cannot be served at all: the loader
refuses such a topology and the checker reports it, each naming the cables that are missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from controller.topology.model import Tier, Topology


@dataclass(frozen=True, slots=True)
class Unjoined:
    """Two T0s of `plane` with NICs under both (`nic_a` under `t0_a`, `nic_b` under `t0_b`)
    that no T1 joins; `missing` the T0-T1 cables that would each make one T1 join them."""

    plane: int
    t0_a: str
    nic_a: str
    t0_b: str
    nic_b: str
    missing: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        return (f"NIC {self.nic_b} cannot reach NIC {self.nic_a} in plane {self.plane}: no T1 "
                f"is cabled to both {self.t0_b} and {self.t0_a} "
                f"({missing_words(self.missing, self.t0_a, self.t0_b)})")


def missing_words(missing: tuple[tuple[str, str], ...], t0_a: str, t0_b: str) -> str:
    if not missing:
        return f"neither {t0_a} nor {t0_b} has a T1 uplink"
    return "missing: " + ", ".join(f"{t0} - {t1}" for t0, t1 in missing)


class Reach:
    """The T1 uplinks of each T0, made on demand and interned: T0s with the same uplinks (every
    T0 of a Clos plane) share one frozenset, so callers can key caches by its id."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self._up: dict[str, frozenset[str]] = {}
        self._interned: dict[frozenset[str], frozenset[str]] = {}
        self._joining: dict[tuple[int, int], frozenset[str]] = {}

    def uplinks(self, t0: str) -> frozenset[str]:
        """The T1s of its plane cabled to `t0` (none for a name that is not a switch)."""
        ups = self._up.get(t0)
        if ups is None:
            topo = self.topology
            found: frozenset[str] = frozenset()
            if topo.is_switch(t0):
                plane = topo.switch(t0).plane
                found = frozenset(name for _, name, _ in topo.neighbors(t0)
                                  if topo.is_switch(name) and topo.switch(name).tier == Tier.T1
                                  and topo.switch(name).plane == plane)
            ups = self._up[t0] = self._interned.setdefault(found, found)
        return ups

    def cabled(self, t0: str, t1: str) -> bool:
        return t1 in self.uplinks(t0)

    def joining(self, t0_a: str, t0_b: str) -> frozenset[str]:
        """The T1s cabled to both T0s."""
        a, b = self.uplinks(t0_a), self.uplinks(t0_b)
        key = (id(a), id(b))
        found = self._joining.get(key)
        if found is None:
            found = self._joining[key] = a & b
        return found

    def missing(self, plane: int, t0_a: str, t0_b: str) -> tuple[tuple[str, str], ...]:
        """(T0, T1) cables absent between the two T0s and the T1s of `plane` cabled to one of
        them: each would make its T1 join them."""
        a, b = self.uplinks(t0_a), self.uplinks(t0_b)
        out = []
        for t1 in self.topology.switches_of(plane, Tier.T1):
            if t1.name in a and t1.name not in b:
                out.append((t0_b, t1.name))
            elif t1.name in b and t1.name not in a:
                out.append((t0_a, t1.name))
        return tuple(out)

    def unjoined(self) -> Iterator[Unjoined]:
        """Every pair of T0s with NICs under both that no T1 joins, plane by plane. A Clos
        (`wiring: clos`) has none: it is not walked."""
        topo = self.topology
        if topo.wiring == "clos":
            return
        for plane in range(topo.planes):
            first: dict[str, str] = {}   # T0 -> the first NIC under it, in NIC order
            for nic in topo.nics:
                if plane < len(nic.attachments):
                    first.setdefault(nic.attachments[plane][0], nic.name)
            t0s = list(first)
            for i, b in enumerate(t0s):
                for a in t0s[:i]:
                    if not self.joining(a, b):
                        yield Unjoined(plane, a, first[a], b, first[b],
                                       self.missing(plane, a, b))
