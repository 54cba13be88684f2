"""One scenario in one mode: the discrete-event loop of an emulated network.

Virtual time moves from one event to the next — a packet leaving a queue or reaching the end
of a cable (softswitch/fabric.py), a host transport's timer, a scheduled failure, a
controller round, a sampling boundary — and at each instant everything that can happen then is
done before time moves on (`_settle`): the devices run until idle, the NICs' host ports are
handed to the transports, their answers sent. Nothing depends on the wall clock, so a scenario
and seed give the same run on any machine.

The controller (mode `mrc`) is the repair loop of controller/repair, reading the NICs'
EV-event digests over P4Runtime and rewriting their path tables over P4Runtime, every
`controller.period_us`. A switch that reboots comes back blank and is pushed its plan again
when it is up, in every mode (the fabric's management plane does that whatever the NICs run).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from controller.daemon.probes import LinkProber
from controller.devices.session import Program
from controller.fabric_up import nic_host_name
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EV_STATES, nic_address, plane_port
from controller.plan.usid import format_address
from controller.repair.correlate import FabricLink, Verdict
from controller.repair.damping import Damper
from controller.repair.repairer import DirectNic, ManagedNic, Repairer
from controller.topology.model import Tier
from emulation.metrics import MessageRecord, RunResult, Series
from emulation.modes import Mode, mode
from emulation.network import Network
from emulation.scenario import Failure, Scenario
from emulation.workloads import Message, connections, messages
from mrc_transport.config import ConnectionConfig
from mrc_transport.nic_host import Connection, NicHost
from mrc_transport.wire import IMM_OPCODES, WRITE_OPCODES
from softswitch.fabric import Delivery

EV_SLOTS = 256           # EV state cells per connection (nic_types.p4)
VA_BASE = 0x1000
# (virtual µs now, messages arrived, messages in all, packet hops so far)
Progress = Callable[[int, int, int, int], None]

# outer IPv6 traffic class -> DSCP: byte 14 low nibble, byte 15 high nibble (after Ethernet)
_ETH = 14


def _dscp(frame: bytes) -> int:
    if len(frame) < _ETH + 2:
        return -1
    return (((frame[_ETH] & 0x0F) << 4) | (frame[_ETH + 1] >> 4)) >> 2


@dataclass(order=True)
class _Event:
    at_ns: int
    seq: int
    action: Callable[[], None] = field(compare=False)
    failure: str = field(compare=False, default="")   # what the report marks ("": nothing)


class _Connection:
    """One end of a connection: its transport and where its incoming messages are placed
    (each has a place of its own in the connection's memory)."""

    def __init__(self, connection: Connection, offsets: dict[int, int]) -> None:
        self.sender = connection.sender
        self.receiver = connection.receiver
        self.offsets = offsets


class RunState:
    """Everything one run holds; `run()` executes it."""

    def __init__(self, scenario: Scenario, mode_: Mode, network: Network,
                 schedule: Sequence[Message], progress: Progress | None = None) -> None:
        self.scenario = scenario
        self.mode = mode_
        self.net = network
        self.schedule = list(schedule)
        self.progress = progress
        self.clock = network.clock
        self.topology = scenario.topology
        self.nic_names = {n.name for n in self.topology.nics}
        self.records = [MessageRecord(m.id, m.src, m.dst, m.size, m.flow) for m in schedule]
        self.series = Series(scenario.bin_us)
        self.events: list[_Event] = []
        self._seq = 0
        self.failures_seen: list[tuple[float, str]] = []
        self.log: list[dict[str, object]] = []
        self.hops = 0
        self.trimmed = 0
        self.dropped_power = 0   # what a switch held when it lost power
        self.rewrites = 0
        self._last = {"retx": 0, "drops": 0}
        self.down_links: set[FabricLink] = set()
        self.down_switches: set[str] = set()
        self._lossy: dict[tuple[str, int], float] = {}
        self._rng = random.Random(scenario.seed)
        self._build_connections()
        self._waiting = {m.id: len(m.after) for m in schedule}
        self._dependents: dict[int, list[int]] = {}
        for m in schedule:
            for before in m.after:
                self._dependents.setdefault(before, []).append(m.id)
        self.arrived = 0
        self.repairer = self._repairer() if mode_.controller else None
        self.prober: LinkProber | None = None
        if self.repairer is not None:
            timing = scenario.controller
            self.prober = LinkProber(network.plan, timing.probe_interval_us / 1e6,
                                     timing.probe_successes)
            network.open_t0_sessions()
        network.fabric.add_observer(self._on_wire)
        self._cables = self._cable_map()

    # -- setup -----------------------------------------------------------------------------

    def _build_connections(self) -> None:
        t = self.scenario.transport
        incoming: dict[tuple[str, str], dict[int, int]] = {}
        for m in self.schedule:
            incoming.setdefault((m.dst, m.src), {})[m.id] = m.size
        self.hosts: dict[str, NicHost] = {}
        self.ends: dict[str, list[_Connection]] = {}   # NIC -> its connections' ends
        self.by_peer: dict[tuple[str, str], _Connection] = {}
        for name, nic in sorted(self.net.nics.items()):
            me = self.topology.nic(name)
            host = self.hosts[name] = NicHost()
            for c in nic.connections.values():
                peer = self.topology.nic(c.peer)
                offsets, at = {}, VA_BASE
                for mid, size in incoming.get((name, c.peer), {}).items():
                    offsets[mid] = at
                    at += size
                config = ConnectionConfig(
                    local_addr=format_address(nic_address(me)),
                    peer_addr=format_address(nic_address(peer)), local_qp=c.local_qp,
                    peer_qp=c.peer_qp, initial_psn=c.initial_psn, mtu=self.scenario.mtu,
                    window=t.window, rto_us=t.rto_us, reorder_us=t.reorder_us,
                    probe_successes=self.mode.profile.probe_successes)
                end = _Connection(host.add_connection(config, at), offsets)
                self.ends.setdefault(name, []).append(end)
                self.by_peer[(name, c.peer)] = end

    def _repairer(self) -> Repairer:
        timing = self.scenario.controller
        managed = [ManagedNic(name, DirectNic(nic.session, name),
                              {c.conn: c.peer for c in nic.connections.values()},
                              self.mode.profile,
                              [e for e in nic.plan.entries if e.table == "ev_path"])
                   for name, nic in sorted(self.net.nics.items())]
        return Repairer(self.net.plan, managed, window_s=timing.window_us / 1e6,
                        settle_s=timing.settle_us / 1e6,
                        damper=Damper(hold_s=timing.hold_us / 1e6))

    def _cable_map(self) -> dict[tuple[str, int], FabricLink]:
        """Both ends of every T0-T1 cable -> (plane, T0, T1)."""
        out: dict[tuple[str, int], FabricLink] = {}
        for link in self.topology.iter_links():
            names = {s.name: s for s in self.topology.switches}
            a, b = names.get(link.a), names.get(link.b)
            if a is None or b is None:
                continue
            t0, t1 = (a, b) if a.tier == Tier.T0 else (b, a)
            out[(link.a, link.a_port)] = out[(link.b, link.b_port)] = (t0.plane, t0.name, t1.name)
        return out

    # -- scheduling ------------------------------------------------------------------------

    def at(self, us: float, action: Callable[[], None], failure: str = "") -> None:
        """Run `action` at `us`; a `failure` is marked on the report's plots."""
        self._seq += 1
        heapq.heappush(self.events, _Event(int(us * 1000), self._seq, action, failure))

    def _schedule_failures(self) -> None:
        for f in self.scenario.failures:
            self._schedule_failure(f)

    def _schedule_failure(self, f: Failure) -> None:
        conv = self.scenario.ecmp_convergence_us
        if f.kind in ("link_down", "link_up"):
            up = f.kind == "link_up"
            assert f.link is not None
            self.at(f.at_us, lambda: self._set_link(f.link, up), f.describe())  # type: ignore[arg-type]
        elif f.kind == "flap":
            assert f.link is not None
            t = f.at_us
            for k in range(f.count):
                self.at(t, lambda: self._set_link(f.link, False),  # type: ignore[arg-type]
                        f"flap {_end(f.link)} down ({k + 1} of {f.count})")  # type: ignore[arg-type]
                self.at(t + f.down_us, lambda: self._set_link(f.link, True))  # type: ignore[arg-type]
                t += f.down_us + f.up_us
        elif f.kind == "switch_reboot":
            self.at(f.at_us, lambda: self._power(f.switch, False), f.describe())
            self.at(f.at_us + f.down_us, lambda: self._power(f.switch, True))
        elif f.kind == "loss":
            assert f.link is not None
            self.at(f.at_us, lambda: self._set_loss(f.link, f.percent / 100), f.describe())  # type: ignore[arg-type]
            if f.until_us:
                self.at(f.until_us, lambda: self._set_loss(f.link, 0.0))  # type: ignore[arg-type]
        elif f.kind == "nic_port_down":
            self.at(f.at_us, lambda: self._nic_port(f.nic, f.plane, False), f.describe())
            if f.until_us:
                self.at(f.until_us, lambda: self._nic_port(f.nic, f.plane, True))
        if self.mode.pinned:   # the routing protocol notices, later
            self.at(f.at_us + conv, self._reconverge)
            if f.kind in ("switch_reboot", "flap", "link_up", "nic_port_down"):
                end = {"switch_reboot": f.at_us + f.down_us,
                       "flap": f.at_us + f.count * (f.down_us + f.up_us),
                       "nic_port_down": f.until_us}.get(f.kind, f.at_us)
                if end:
                    self.at(end + conv, self._reconverge)

    # -- failures --------------------------------------------------------------------------

    def _set_link(self, end: tuple[str, int], up: bool) -> None:
        self.net.fabric.set_link_up(end[0], end[1], up)
        cable = self._cables[end]
        (self.down_links.discard if up else self.down_links.add)(cable)

    def _power(self, switch: str, on: bool) -> None:
        fabric = self.net.fabric
        if on:
            fabric.power_on(switch)
            self.net.set_rates(switch)
            self.net.push_switches([switch])
            self.net.rebooted(switch)
            self.down_switches.discard(switch)
        else:
            device = fabric.switch(switch).device
            self.dropped_power += len(device.queues)   # stepped: nothing waits at its input
            fabric.power_off(switch)
            self.down_switches.add(switch)

    def _set_loss(self, end: tuple[str, int], fraction: float) -> None:
        peer = self.net.fabric.switch(end[0]).links[end[1]]
        for side in (end, peer):
            if fraction:
                self._lossy[side] = fraction
            else:
                self._lossy.pop(side, None)
        self.net.fabric.set_link_loss(end[0], end[1], fraction, self._rng)

    def _nic_port(self, nic: str, plane: int, up: bool) -> None:
        self.net.fabric.set_link_up(nic, plane_port(plane), up)
        # What the NIC's firmware does on a PHY change: the data plane's port bitmap.
        down = 0
        for p in range(self.topology.planes):
            if not self.net.fabric.link_is_up(nic, plane_port(p)):
                down |= 1 << p
        entry = PlannedEntry.default("local_port_state", "set_port_state", {"down_planes": down})
        self.net.write_nic(nic, [entry])

    def _reconverge(self) -> None:
        verdict = Verdict(set(self.down_links), set(self.down_switches))
        for (nic, conn), old in sorted(self.net.pinned.items()):
            connection = self.net.nics[nic].connections[conn]
            new = self.net.ecmp.pick(nic, connection, verdict)
            if new != old:
                self.net.write_nic(nic, [new.entry()])
                self.net.pinned[(nic, conn)] = new
                self.rewrites += 1

    # -- measuring -------------------------------------------------------------------------

    def _on_wire(self, d: Delivery) -> None:
        self.hops += 1
        at_us = d.time_ns / 1000
        sender, receiver = d.sender, d.receiver
        if receiver in self.nic_names and sender not in self.nic_names:
            dscp = _dscp(d.data)
            qos = self.topology.qos
            if dscp in (qos.dscp_trimmed, qos.dscp_trimmed_lasthop):
                self.trimmed += 1
                self.series.add(self.series.trimmed, at_us, 1)
        elif receiver is not None and sender not in self.nic_names and receiver not in \
                self.nic_names and not receiver.endswith(".host"):
            plane = self.topology.switch(sender).plane
            self.series.add(self.series.plane_bytes.setdefault(plane, []), at_us, len(d.data))

    def _sample(self) -> None:
        """At a bin boundary: the counters' growth in the bin that ended, and EV states."""
        now_us = self.clock.us()
        k = max(0, int(now_us // self.scenario.bin_us) - 1)
        at = k * self.scenario.bin_us
        retx = sum(e.sender.counters["retransmitted"]
                   for ends in self.ends.values() for e in ends)
        drops = self._drops()
        self.series.add(self.series.retransmitted, at, retx - self._last["retx"])
        self.series.add(self.series.dropped, at, drops - self._last["drops"])
        self._last.update(retx=retx, drops=drops)
        counts = dict.fromkeys((*EV_STATES.values(), "DENIED"), 0)
        for name, nic in sorted(self.net.nics.items()):
            register = self.net.fabric.switch(name).engine.register("ev_state")
            denied = self._denied(name)
            evs = 1 if self.mode.pinned else (self.mode.profile.ev_count + self.mode.profile.backups
                                               * self.topology.planes)
            for c in nic.connections.values():
                for ev in range(evs):
                    state = "DENIED" if ev in denied else EV_STATES[
                        register.read(c.conn * EV_SLOTS + ev)]
                    counts[state] += 1
        for state, n in counts.items():
            self.series.add(self.series.ev_states.setdefault(state, []), at, n)

    def _denied(self, nic: str) -> set[int]:
        if self.repairer is None:
            return set()
        managed = self.repairer.nics[nic]
        return {dict(e.match)["ev"] for e in managed.installed if e.action == "deny_path"}

    def _drops(self) -> int:
        fabric = self.net.fabric
        return (fabric.link_down_drops + fabric.loss_drops + self.dropped_power
                + sum(n.device.queues.dropped + n.device.dropped_no_pipeline
                      for n in fabric.switches))

    # -- the workload ----------------------------------------------------------------------

    def _post(self, mid: int) -> None:
        m = self.schedule[mid]
        end = self.by_peer[(m.src, m.dst)]
        data = _data(self.scenario.seed, m)
        far = self.by_peer[(m.dst, m.src)]
        end.sender.write(data, far.offsets[mid], immediate=mid, now_us=self.clock())
        self.records[mid].posted_us = self.clock.us()

    def _arrive(self, nic: str, end: _Connection) -> None:
        for _msn, va, length, immediate in end.receiver.completions():
            if immediate is None or not 0 <= immediate < len(self.schedule):
                continue
            m = self.schedule[immediate]
            record = self.records[immediate]
            if record.arrived_us is not None or m.dst != nic:
                continue
            record.arrived_us = self.clock.us()
            memory = end.receiver.memory
            record.intact = (length == m.size and va == end.offsets[m.id]
                             and bytes(memory[va:va + length]) == _data(self.scenario.seed, m))
            self.arrived += 1
            for later in self._dependents.get(m.id, ()):
                self._waiting[later] -= 1
                if self._waiting[later] == 0:
                    self._post(later)

    # -- the loop --------------------------------------------------------------------------

    def _settle(self) -> None:
        """Everything that can happen at this instant."""
        now_us = self.clock()
        fabric = self.net.fabric
        while True:
            fabric.run_until_idle()
            moved = False
            for name, host in self.hosts.items():
                frames = self.net.nics[name].wire.take()
                for frame in frames:
                    self._goodput(name, frame)
                    host.on_frame(frame, now_us)
                if frames:
                    moved = True
                    for end in self.ends[name]:
                        self._arrive(name, end)
            for name, host in self.hosts.items():
                wire = self.net.nics[name].wire
                for frame in host.poll(now_us):
                    moved = True
                    wire.send(frame)
            if not moved:
                return

    def _goodput(self, nic: str, frame: bytes) -> None:
        size = _write_payload(frame)
        if size:
            self.series.add(self.series.goodput_bytes.setdefault(nic, []), self.clock.us(), size)

    def _next_timer_ns(self) -> int | None:
        """When a transport's timer (a timeout, a resend, a probe) next needs it polled."""
        now_us = self.clock()
        times = [t for host in self.hosts.values()
                 if (t := host.next_deadline_us(now_us)) is not None]
        return max(min(times) * 1000, self.clock.now_ns + 1) if times else None

    def run(self) -> RunResult:
        s = self.scenario
        self._schedule_failures()
        if self.repairer is not None:
            period = s.controller.period_us
            for k in range(1, s.duration_us // period + 1):
                self.at(k * period, self._controller_round)
        for k in range(1, s.duration_us // s.bin_us + 2):
            self.at(k * s.bin_us, self._sample)
        for m in self.schedule:
            if not m.after:
                self._post(m.id)
        limit_ns = s.duration_us * 1000
        steps = 0
        finished = False
        while True:
            self._settle()
            if self.arrived == len(self.schedule):
                finished = True
                break
            candidates = [t for t in (self.net.fabric.next_event_ns(), self._next_timer_ns(),
                                      self.events[0].at_ns if self.events else None)
                          if t is not None]
            if not candidates:
                break
            t = min(candidates)
            if t > limit_ns:
                break
            if t > self.clock.now_ns:
                self.clock.advance_to(t)
            while self.events and self.events[0].at_ns <= self.clock.now_ns:
                event = heapq.heappop(self.events)
                if event.failure:
                    self.failures_seen.append((event.at_ns / 1000, event.failure))
                event.action()
            steps += 1
            if self.progress is not None and steps % 200 == 0:
                self.progress(self.clock(), self.arrived, len(self.schedule), self.hops)
        end_us = self.clock.us()
        self._sample()
        if self.progress is not None:
            self.progress(self.clock(), self.arrived, len(self.schedule), self.hops)
        totals = {
            "sent": sum(e.sender.counters["sent"] for ends in self.ends.values()
                        for e in ends),
            "retransmitted": self._last["retx"], "trimmed": self.trimmed,
            "dropped": self._last["drops"], "packet_hops": self.hops,
            "ev_events": sum(n.raised for n in self.net.nics.values()),
            "rewrites": self.rewrites + (sum(sum(log.written.values()) for log in
                                             self.repairer.history) if self.repairer else 0),
        }
        self.series.grow(int(end_us // s.bin_us) + 1)
        return RunResult(self.mode.name, end_us, finished, self.records, self.series, totals,
                         self.failures_seen, self.log)

    def _controller_round(self) -> None:
        """One round of the controller, as `mrc-ctl run`'s: EV events in and NICs rewritten,
        then the probes of the cables taken out (a cable proven healthy is given back to the
        NICs after the hold-down)."""
        assert self.repairer is not None and self.prober is not None
        self.net.settle_digests()
        now_s = self.clock.us() / 1e6
        log = self.repairer.poll(now_s)
        healthy = self.prober.round(now_s, self.repairer.probe_targets(), self._send_probe,
                                    self.net.packet_ins())
        if healthy:
            self.repairer.proven_healthy(healthy, now_s)
            self.log.append({"at_us": self.clock(), "event": "probed_healthy",
                             "links": sorted(f"{p}:{a}-{b}" for p, a, b in healthy)})
        for report in log.reports:
            self.log.append({"at_us": self.clock(), "event": "ev_event", "nic": report.nic,
                             "ev": report.ev, "state": report.state})
        if log.written:
            self.log.append({"at_us": self.clock(), "event": "rewrite",
                             "entries": dict(sorted(log.written.items())),
                             "links_down": sorted(f"{p}:{a}-{b}" for p, a, b in
                                                  log.verdict.links_down),
                             "switches_down": sorted(log.verdict.switches_down)})


    def _send_probe(self, t0: str, port: int, frame: bytes) -> bool:
        if t0 in self.down_switches:
            return False
        self.net.packet_out(t0, port, [frame])
        return True


def _end(end: tuple[str, int]) -> str:
    return f"{end[0]}:{end[1]}"


def _data(seed: int, m: Message) -> bytes:
    return random.Random(seed * 1_000_003 + m.id).randbytes(m.size)


# Ethernet 14 + IPv6 40 + UDP 8 = 62: BTH (12 bytes) starts there.
_BTH = 62


# BTH 12, METH 4, RETH 16 in every write packet; ImmDt 4 more in the *_IMM opcodes.
_WRITE_HEADERS = _BTH + 12 + 4 + 16


def _write_payload(frame: bytes) -> int:
    """Payload bytes of an RDMA write frame (0 for anything else)."""
    if len(frame) < _WRITE_HEADERS or frame[_BTH] not in WRITE_OPCODES:
        return 0
    return len(frame) - _WRITE_HEADERS - (4 if frame[_BTH] in IMM_OPCODES else 0)


def run_mode(scenario: Scenario, mode_name: str, switch_program: Program, nic_program: str,
             progress: Progress | None = None) -> RunResult:
    """Run the scenario in one mode on a network of its own."""
    chosen = mode(mode_name, scenario.profile)
    schedule = messages(scenario.workload, scenario.seed)
    with Network(scenario.topology, switch_program, nic_program, chosen, connections(schedule),
                 rate_bps=scenario.links.rate_gbps * 1e9, delay_ns=scenario.links.delay_ns,
                 queue_packets=scenario.links.queue_packets, seed=scenario.seed) as network:
        return RunState(scenario, chosen, network, schedule, progress).run()


__all__ = ["RunState", "nic_host_name", "run_mode"]
