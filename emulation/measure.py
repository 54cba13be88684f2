"""What a run measures as it goes, into `metrics.Series`: bytes on the T0-T1 cables (per plane
and direction) and trimmed packets reaching NICs (the fabric's wire tally, folded in at every
sample: softswitch/wire_tally.py), write payload handed to
each NIC's host (goodput), the time EVs spend in SKIP and ASSUMED_BAD (every write of the NICs'
`ev_state` registers, observed), and at every bin's end the growth of retransmissions and of
drops (per cause, emulation/drops.py) and the EVs in each state (read from the NICs'
`ev_state` registers; DENIED from the installed paths)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from controller.plan.nic_plan import EV_STATES, connection_profiles
from controller.topology.model import Tier
from emulation.metrics import Series
from emulation.modes import ECMP_PROFILE_BASE, Mode
from emulation.network import Network
from emulation.scenario import Scenario
from emulation.state_time import StateTime
from mrc_transport.wire import IMM_OPCODES, WRITE_OPCODES

EV_SLOTS = 256   # EV state cells per connection (nic_types.p4)
_BTH = 62        # Ethernet 14 + IPv6 40 + UDP 8: a host frame's BTH (12 bytes) starts here
_WRITE_HEADERS = _BTH + 12 + 4 + 16   # BTH, METH, RETH in every write; ImmDt 4 more with IMM


def write_payload(frame: bytes) -> int:
    """Payload bytes of an RDMA write frame at a host port (0 for anything else)."""
    if len(frame) < _WRITE_HEADERS or frame[_BTH] not in WRITE_OPCODES:
        return 0
    return len(frame) - _WRITE_HEADERS - (4 if frame[_BTH] in IMM_OPCODES else 0)


class Meter:
    """`host_frame` sees what a NIC hands its host; `sample` runs at bin boundaries and folds
    in what the fabric's wires carried (`fold`). `denied(nic, conn)`: the EVs the NIC has DENIED for that
    connection now."""

    def __init__(self, scenario: Scenario, mode: Mode, network: Network,
                 denied: Callable[[str, int], set[int]]) -> None:
        self.series = Series(scenario.bin_us)
        self.net = network
        self.mode = mode
        self.denied = denied
        topology = scenario.topology
        self.nics = {n.name for n in topology.nics}
        self.planes = {s.name: s.plane for s in topology.switches}
        self.trimmed_dscps = (topology.qos.dscp_trimmed, topology.qos.dscp_trimmed_lasthop)
        self.evs = 1 if mode.pinned else (mode.profile.ev_count
                                          + mode.profile.backups * topology.planes)
        self.trimmed = 0
        self._last = {"retransmitted": 0, "dropped": 0}
        self._drops: dict[str, int] = {}   # per cause, at the latest sample
        self.tally = network.fabric.tally(scenario.bin_us * 1000, self.trimmed_dscps)
        self.t0s = {s.name for s in topology.switches if s.tier == Tier.T0}
        self.ev_time = self._watch_ev_states()

    def fold(self) -> None:
        """What the wires carried since the last fold, into the series: trimmed packets that
        reached a NIC (from a switch or a host), bytes between two switches per plane and
        direction (up: from a T0), each in the bin it was put on the wire in."""
        series = self.series
        nics, planes, t0s = self.nics, self.planes, self.t0s
        bin_us = series.bin_us
        for r in self.tally.take():
            at_us = r.bin * bin_us
            if r.receiver in nics:
                if r.marked and r.sender not in nics:
                    self.trimmed += r.marked
                    series.add(series.trimmed, at_us, r.marked)
            elif r.sender in planes and r.receiver in planes:   # switch to switch
                plane = planes[r.sender]
                way = series.plane_up_bytes if r.sender in t0s else series.plane_down_bytes
                series.add(way.setdefault(plane, []), at_us, r.bytes)
                series.add(series.plane_bytes.setdefault(plane, []), at_us, r.bytes)

    def _watch_ev_states(self) -> StateTime:
        """Integrate the time each EV in use spends in SKIP and ASSUMED_BAD from every write
        of the NICs' `ev_state` registers (series.ev_time_ns shares the rows)."""
        watched = {v: name for v, name in EV_STATES.items() if name != "GOOD"}
        clock = StateTime(self.series.bin_us * 1000, watched)
        self.series.ev_time_ns = {name: clock.rows[v] for v, name in watched.items()}
        now = self.net.clock
        for name, nic in sorted(self.net.nics.items()):
            register = self.net.fabric.switch(name).engine.register("ev_state")
            cells = {c.conn * EV_SLOTS + ev for c in nic.connections.values()
                     for ev in range(self.evs)}
            for cell in sorted(cells):
                clock.move((name, cell), register.read(cell), now.now_ns)

            def written(index: int, value: int, name: str = name,
                        cells: set[int] = cells) -> None:
                if index in cells:
                    clock.move((name, index), value, now.now_ns)
            register.observe(written)
        return clock

    def host_frame(self, nic: str, frame: bytes, at_us: float) -> None:
        size = write_payload(frame)
        if size:
            self.series.add(self.series.goodput_bytes.setdefault(nic, []), at_us, size)

    def sample(self, now_us: float, retransmitted: int, drops: Mapping[str, int], *,
               final: bool = False) -> None:
        """At a bin boundary: the counters' growth in the bin that ended (`drops`: every
        cause's count so far, emulation/drops.py), and the EVs in each state at its end;
        `final`: at the run's end, into the bin it ends in."""
        self.fold()
        bin_us = self.series.bin_us
        at = max(0, int(now_us // bin_us) - (0 if final else 1)) * bin_us
        self._count_drops(at, drops)
        for name, total in (("retransmitted", retransmitted),
                            ("dropped", sum(drops.values()))):
            self.series.add(getattr(self.series, name), at, total - self._last[name])
            self._last[name] = total
        counts = dict.fromkeys((*EV_STATES.values(), "DENIED"), 0)
        for name, nic in sorted(self.net.nics.items()):
            register = self.net.fabric.switch(name).engine.register("ev_state")
            pinned = {conn for conn, profile in connection_profiles(nic.plan).items()
                      if profile >= ECMP_PROFILE_BASE}   # a flow pinned to one path: one EV
            for c in nic.connections.values():
                denied = self.denied(name, c.conn)
                for ev in range(1 if c.conn in pinned else self.evs):
                    state = "DENIED" if ev in denied else EV_STATES[
                        register.read(c.conn * EV_SLOTS + ev)]
                    counts[state] += 1
        for state, n in counts.items():
            self.series.set(self.series.ev_states.setdefault(state, []), at, n)
        self.ev_time.flush(round(now_us * 1000))

    def _count_drops(self, at: float, drops: Mapping[str, int]) -> None:
        """Each cause's growth in its own row (a row from the first bin it grows in on)."""
        rows = self.series.drops
        for cause, total in drops.items():
            grown = total - self._drops.get(cause, 0)
            if grown or cause in rows:
                self.series.add(rows.setdefault(cause, []), at, grown)
            self._drops[cause] = total

    def totals(self) -> dict[str, int]:
        return {"retransmitted": self._last["retransmitted"], "dropped": self._last["dropped"],
                "trimmed": self.trimmed, "wire_hops": self.net.fabric.wire_hops,
                "host_handoffs": self.net.fabric.host_handoffs}
