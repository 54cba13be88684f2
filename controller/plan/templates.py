"""NIC path templates: for each plane and (source T0, destination T0), the carrier of every path.

A carrier is `block : uN(source T0) : uN(T1) : uN(destination T0) : uA(port) : NIC decap`, or
`block : uN(T0) : uA(port) : NIC decap` when both NICs hang off the same T0 (one path per plane).
The T1 and the destination NIC's port are slots, so a template serves every NIC pair of its two
T0s: R²/4 pairs at radix R, which keeps a 131,072-NIC plan at 2 million templates, not 10^13
paths. An EV picks a T1; the NIC fills the port of the destination it sends to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from controller.plan.usid import NIC_DECAP_USID, PlanError, carrier, ua_usid
from controller.topology.model import Nic, Switch, Tier, Topology
from controller.topology.reach import Reach


class Slot(StrEnum):
    T1 = "T1"  # filled with the chosen T1's uSID
    DST_PORT = "uA(dst port)"  # the destination T0's local uA for the NIC's port


@dataclass(frozen=True, slots=True)
class PathTemplate:
    plane: int
    src_t0: str
    dst_t0: str
    segments: tuple[int | Slot, ...]  # the uSIDs after the block, slots included
    t1_choices: tuple[tuple[str, int], ...]  # (T1 name, uSID); empty when src_t0 == dst_t0

    @property
    def hops(self) -> int:
        """Switches on every path of this template."""
        return 3 if Slot.T1 in self.segments else 1

    def usids(self, t1: str | None, dst_port: int) -> list[int]:
        """The uSIDs of one path: `t1` is one of `t1_choices` (None for a same-T0 template)."""
        t1_usid: int | None = None
        if Slot.T1 in self.segments:
            for name, u in self.t1_choices:
                if name == t1:
                    t1_usid = u
                    break
            else:
                raise PlanError(f"plane {self.plane}: {t1!r} is not a T1 between "
                                f"{self.src_t0} and {self.dst_t0}")
        out: list[int] = []
        for seg in self.segments:
            if seg is Slot.T1:
                assert t1_usid is not None
                out.append(t1_usid)
            elif seg is Slot.DST_PORT:
                out.append(ua_usid(dst_port))
            else:
                out.append(int(seg))
        return out

    def expand(self, block: int, t1: str | None, dst_port: int) -> int:
        """One path's carrier (the outer IPv6 destination address)."""
        return carrier(block, self.usids(t1, dst_port))

    def to_json(self) -> dict[str, object]:
        return {
            "plane": self.plane, "src_t0": self.src_t0, "dst_t0": self.dst_t0,
            "segments": [s.value if isinstance(s, Slot) else f"{s:#06x}" for s in self.segments],
            "t1": {name: f"{u:#06x}" for name, u in self.t1_choices},
        }


class TemplateBook:
    """Every template of a fabric, made on demand; per-plane T1 choices are shared tuples."""

    def __init__(self, topology: Topology, usid_of: Callable[[str], int]) -> None:
        self.topology = topology
        self.usid_of = usid_of
        self.reach = Reach(topology)
        self._choices: dict[tuple[int, int, int], tuple[tuple[str, int], ...]] = {}
        self._t0s: dict[int, list[Switch]] = {}

    def t0s(self, plane: int) -> list[Switch]:
        if plane not in self._t0s:
            self._t0s[plane] = self.topology.switches_of(plane, Tier.T0)
        return self._t0s[plane]

    def t1_choices(self, plane: int, src_t0: str, dst_t0: str) -> tuple[tuple[str, int], ...]:
        """The T1s of `plane` cabled to both T0s, by index (the shared tuple for equal sets)."""
        # Interned sets: T0s with the same uplinks (all of them, in a Clos) share one key.
        a, b = self.reach.uplinks(src_t0), self.reach.uplinks(dst_t0)
        key = (plane, id(a), id(b))
        choices = self._choices.get(key)
        if choices is None:
            common = a & b
            sw = self.topology.switch
            names = sorted((n for n in common if sw(n).plane == plane),
                           key=lambda n: sw(n).index)
            choices = tuple((n, self.usid_of(n)) for n in names)
            self._choices[key] = choices
        return choices

    def template(self, plane: int, src_t0: str, dst_t0: str) -> PathTemplate:
        src, dst = self.usid_of(src_t0), self.usid_of(dst_t0)
        if src_t0 == dst_t0:
            return PathTemplate(plane, src_t0, dst_t0, (src, Slot.DST_PORT, NIC_DECAP_USID), ())
        return PathTemplate(plane, src_t0, dst_t0,
                            (src, Slot.T1, dst, Slot.DST_PORT, NIC_DECAP_USID),
                            self.t1_choices(plane, src_t0, dst_t0))

    def __iter__(self) -> Iterator[PathTemplate]:
        """Every template: plane, then source T0, then destination T0, by index."""
        for plane in range(self.topology.planes):
            yield from self.in_plane(plane)

    def in_plane(self, plane: int) -> Iterator[PathTemplate]:
        t0s = self.t0s(plane)
        for a in t0s:
            for b in t0s:
                yield self.template(plane, a.name, b.name)

    def count(self) -> int:
        return sum(len(self.t0s(p)) ** 2 for p in range(self.topology.planes))

    def for_pair(self, src: Nic, dst: Nic, plane: int) -> tuple[PathTemplate, int]:
        """The template a NIC pair uses in a plane, and the destination's T0 port."""
        if plane >= len(src.attachments) or plane >= len(dst.attachments):
            raise PlanError(f"plane {plane}: NIC {src.name} or {dst.name} has no port in it")
        src_t0, _ = src.attachments[plane]
        dst_t0, dst_port = dst.attachments[plane]
        return self.template(plane, src_t0, dst_t0), dst_port

    def paths(self, src: Nic, dst: Nic, plane: int) -> list[tuple[str | None, list[int]]]:
        """Every path of a NIC pair in a plane: (T1 or None, its uSIDs)."""
        tpl, port = self.for_pair(src, dst, plane)
        if not tpl.t1_choices:
            return [(None, tpl.usids(None, port))] if tpl.hops == 1 else []
        return [(name, tpl.usids(name, port)) for name, _ in tpl.t1_choices]
