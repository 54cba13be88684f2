"""Idle monitoring: the T0-T1 cables no traffic crosses, probed on a steady cadence.

The NICs' EV events only speak for the cables traffic crosses. On a large fabric each NIC's
128-256 EVs sample a few percent of the paths (mrc-srv6.md §2), and a connection only sends on
its own; so a cable or a T1 can fail where nothing, and so no event, shows it. The sources'
Clustermapper covers every T0-T1 link with SRv6 loops about once a millisecond (mrc-srv6.md §6,
"idle monitoring"); `IdleSweep` does it with the controller's link probe (probes.py: PacketOut
at the T0, back over the cable, punted by the T0), one per cable per `interval_s`, the T1s
spread over the interval so that the PacketOuts do not come in one burst, and the cables of one
T1 probed together (a dead T1 loses all of them in the same round: the repairer suspects the
switch, not each cable).

Given `read` (a T0's port counters, cable_activity.py), only the cables idle over the last
interval are probed: where traffic crosses a cable, a failure of it raises EV events from the
NICs sending over it, and a probe would add nothing but a packet in the queues data shares.
The caller skips those already probed for another reason too (a suspect and its alternatives,
a cable taken out).

A lost probe is evidence, not a verdict: the repairer (`idle_probed`) makes its cable, or its
T1, a suspect, and the confirmation probes decide (repair/confirm.py: lost again and again
while an alternative answers). Answers go to the confirmer as well: an alternative that
answered shows the ends of a suspect work.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from controller.daemon.cable_activity import CableActivity, PortCounts
from controller.daemon.probes import IDLE_SEQ_BASE, ProbeLoop, ProbeResult
from controller.plan.plan import FabricPlan
from controller.repair.correlate import FabricLink
from controller.topology.model import Tier
from controller.topology.reach import Reach
from p4rt import PacketIn


def fabric_cables(plan: FabricPlan) -> list[FabricLink]:
    """Every T0-T1 cable of the fabric, by plane, then T1, then T0."""
    topo = plan.topology
    reach = Reach(topo)
    out: list[FabricLink] = []
    for t1 in sorted(topo.switches, key=lambda s: (s.plane, s.index)):
        if t1.tier != Tier.T1:
            continue
        out += [(t1.plane, t0, t1.name) for _, t0, _ in topo.neighbors(t1.name)
                if topo.is_switch(t0) and reach.cabled(t0, t1.name)]
    return out


@dataclass
class IdleSweep:
    """One probe per cable not skipped per `interval_s`, each lost when not back within
    `timeout_s`.

    repairer.idle_probed(sweep.take(now_s, packet_ins), now_s)   # answers and losses in
    sweep.send(now_s, send, skip)                                # the probes due out
    """

    plan: FabricPlan
    interval_s: float = 1e-3
    timeout_s: float = 50e-3
    cables: list[FabricLink] = field(default_factory=list)   # default: every cable
    # A T0's port counters (cable_activity.read_t0_ports; None: not readable now). Given, only
    # the cables idle over the last interval are probed; None: every cable, always.
    read: Callable[[str], PortCounts | None] | None = None

    def __post_init__(self) -> None:
        if self.interval_s <= 0:
            raise ValueError(f"the idle probe interval must be positive (0: no idle probes), "
                             f"not {self.interval_s:g}")
        self.cables = self.cables or fabric_cables(self.plan)
        # T1 0 of every plane first, then T1 1...: the T0s' PacketOuts spread over the planes.
        topo = self.plan.topology
        t1s = sorted({link[2] for link in self.cables},
                     key=lambda t1: (topo.switch(t1).index, topo.switch(t1).plane, t1))
        slot = self.interval_s / max(1, len(t1s))
        offsets = {t1: i * slot for i, t1 in enumerate(t1s)}
        self.loop = ProbeLoop(self.plan, self.interval_s, self.timeout_s, IDLE_SEQ_BASE,
                              {link: offsets[link[2]] for link in self.cables})
        self.activity = CableActivity(self.plan, self.cables)
        self.busy: set[FabricLink] = set()
        self._answered: Counter[FabricLink] = Counter()
        self._look_s: float | None = None

    def take(self, now_s: float, received: Iterable[PacketIn]) -> list[ProbeResult]:
        """The answers in `received`, then the probes timed out (lost)."""
        results = self.loop.take(now_s, received)
        self._answered.update(r.link for r in results if r.answered)
        return results

    def send(self, now_s: float, send: Callable[[str, int, bytes], bool],
             skip: set[FabricLink] | frozenset[FabricLink] = frozenset()) -> None:
        """Send the probes due now over the cables idle over the last interval (looked at once
        per interval), but those in `skip` (probed for another reason already)."""
        if self.read is not None and (self._look_s is None
                                      or now_s >= self._look_s + self.interval_s):
            self.busy = self.activity.look(self.read, self._answered, self.loop.outstanding())
            self._answered.clear()
            self._look_s = now_s
        self.loop.send(now_s, [link for link in self.cables
                               if link not in skip and link not in self.busy], send)

    @property
    def sent(self) -> int:
        return self.loop.sent

    @property
    def lost(self) -> int:
        return self.loop.lost
