"""What a run measures as it goes, into `metrics.Series`: packets on the T0-T1 cables (per
plane) and trimmed packets reaching NICs (a tap on every wire), write payload handed to each
NIC's host (goodput), and at every bin's end the growth of retransmissions and drops and the
EVs in each state (read from the NICs' `ev_state` registers; DENIED from the installed paths)."""

from __future__ import annotations

from collections.abc import Callable

from controller.plan.nic_plan import EV_STATES
from emulation.metrics import Series
from emulation.modes import Mode
from emulation.network import Network
from emulation.scenario import Scenario
from mrc_transport.wire import IMM_OPCODES, WRITE_OPCODES
from softswitch.fabric import Delivery

EV_SLOTS = 256   # EV state cells per connection (nic_types.p4)
_ETH = 14        # the outer IPv6 header starts here
_BTH = 62        # Ethernet 14 + IPv6 40 + UDP 8: a host frame's BTH (12 bytes) starts here
_WRITE_HEADERS = _BTH + 12 + 4 + 16   # BTH, METH, RETH in every write; ImmDt 4 more with IMM


def dscp(frame: bytes) -> int:
    """The outer IPv6 DSCP (-1 for a frame too short)."""
    if len(frame) < _ETH + 2:
        return -1
    return (((frame[_ETH] & 0x0F) << 4) | (frame[_ETH + 1] >> 4)) >> 2


def write_payload(frame: bytes) -> int:
    """Payload bytes of an RDMA write frame at a host port (0 for anything else)."""
    if len(frame) < _WRITE_HEADERS or frame[_BTH] not in WRITE_OPCODES:
        return 0
    return len(frame) - _WRITE_HEADERS - (4 if frame[_BTH] in IMM_OPCODES else 0)


class Meter:
    """`on_wire` is a fabric observer; `host_frame` sees what a NIC hands its host; `sample`
    runs at bin boundaries. `denied(nic)`: the EVs a NIC has DENIED now."""

    def __init__(self, scenario: Scenario, mode: Mode, network: Network,
                 denied: Callable[[str], set[int]]) -> None:
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
        self.hops = 0
        self.trimmed = 0
        self._last = {"retransmitted": 0, "dropped": 0}
        network.fabric.add_observer(self.on_wire)

    def on_wire(self, d: Delivery) -> None:
        self.hops += 1
        at_us = d.time_ns / 1000
        if d.receiver in self.nics:
            if d.sender not in self.nics and dscp(d.data) in self.trimmed_dscps:
                self.trimmed += 1
                self.series.add(self.series.trimmed, at_us, 1)
        elif d.sender in self.planes and d.receiver in self.planes:   # switch to switch
            plane = self.planes[d.sender]
            self.series.add(self.series.plane_bytes.setdefault(plane, []), at_us, len(d.data))

    def host_frame(self, nic: str, frame: bytes, at_us: float) -> None:
        size = write_payload(frame)
        if size:
            self.series.add(self.series.goodput_bytes.setdefault(nic, []), at_us, size)

    def sample(self, now_us: float, retransmitted: int, dropped: int, *,
               final: bool = False) -> None:
        """At a bin boundary: the counters' growth in the bin that ended, and the EVs in each
        state at its end; `final`: at the run's end, into the bin it ends in."""
        bin_us = self.series.bin_us
        at = max(0, int(now_us // bin_us) - (0 if final else 1)) * bin_us
        for name, total in (("retransmitted", retransmitted), ("dropped", dropped)):
            self.series.add(getattr(self.series, name), at, total - self._last[name])
            self._last[name] = total
        counts = dict.fromkeys((*EV_STATES.values(), "DENIED"), 0)
        for name, nic in sorted(self.net.nics.items()):
            register = self.net.fabric.switch(name).engine.register("ev_state")
            denied = self.denied(name)
            for c in nic.connections.values():
                for ev in range(self.evs):
                    state = "DENIED" if ev in denied else EV_STATES[
                        register.read(c.conn * EV_SLOTS + ev)]
                    counts[state] += 1
        for state, n in counts.items():
            self.series.set(self.series.ev_states.setdefault(state, []), at, n)

    def totals(self) -> dict[str, int]:
        return {"retransmitted": self._last["retransmitted"], "dropped": self._last["dropped"],
                "trimmed": self.trimmed, "packet_hops": self.hops}
