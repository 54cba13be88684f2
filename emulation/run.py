"""One scenario in one mode: the discrete-event loop of an emulated network.

Virtual time moves from one event to the next — a packet leaving a queue or reaching the end
of a cable (softswitch/fabric.py), a host transport's timer, an action on the agenda (a
failure, a controller round, a sampling boundary) — and at each instant everything that can
happen then is done before time moves on (`_settle`): the devices run until idle, the NICs'
host ports are handed to the transports, their answers sent. Nothing depends on the wall
clock, so a scenario and seed give the same run on any machine.

The workload's messages are written when what they wait for has arrived (workloads.py); each
carries its id as the write's immediate, so its arrival is known from the receiver's
completion, and its bytes are compared with what was sent. The controller (mode `mrc`) is
controller/repair's loop with controller/daemon's link probes, every `controller.period_us`:
EV-event digests in and NIC path tables rewritten over P4Runtime, probes out and back over
the T0s' PacketOut and PacketIn.
"""

from __future__ import annotations

import functools
import gc
import hashlib
from collections.abc import Callable, Sequence

from controller.daemon.cable_activity import PortCounts, read_t0_ports
from controller.daemon.idle_probes import IdleSweep
from controller.daemon.probe_rounds import ProbeRounds
from controller.daemon.probes import LinkProber, ProbeLoop
from controller.devices.session import Program
from controller.plan.nic_plan import EV_STATES, NicConnection, connection_profiles, nic_address
from controller.plan.usid import format_address
from controller.repair.damping import Damper
from controller.repair.repairer import DirectNic, ManagedNic, Repairer
from emulation.drops import DropCounter, Drops
from emulation.events import Agenda
from emulation.failures import Failures
from emulation.measure import EV_SLOTS, Meter
from emulation.metrics import ConnectionFate, MessageRecord, RunResult
from emulation.modes import Mode, mode
from emulation.network import Network
from emulation.scenario import Scenario
from emulation.workloads import Message, connections, messages
from mrc_transport.config import ConnectionConfig
from mrc_transport.nic_host import Connection, NicHost
from softswitch.fabric import Host as FabricHost
from softswitch.schedule import DeviceSchedule

VA_BASE = 0x1000
# What the messages write is derived from this and the seed (payload_block, message_data).
PAYLOAD_KEY = b"mrc-emulation-payload"
# The length of the run's byte stream every message is cut from (its period): a prime, so that
# no multiple of an MTU is one (a packet placed at another offset of its message reads
# differently), and 4 MiB, so that two messages' packets rarely hold the same bytes.
PAYLOAD_PERIOD = 4194301
# (virtual µs now, messages arrived, messages in all, wire hops so far)
Progress = Callable[[int, int, int, int], None]


class _End:
    """One end of a connection: its transport, and where each message it receives is placed
    (a place of its own in the connection's memory)."""

    def __init__(self, connection: Connection, offsets: dict[int, int]) -> None:
        self.sender = connection.sender
        self.receiver = connection.receiver
        self.offsets = offsets


class RunState:
    """Everything one run holds; `run()` executes it."""

    def __init__(self, scenario: Scenario, mode_: Mode, network: Network,
                 schedule: Sequence[Message], progress: Progress | None = None,
                 on_collect: Callable[[], None] | None = None) -> None:
        self.scenario = scenario
        self.mode = mode_
        self.net = network
        self.schedule = list(schedule)
        self.progress = progress
        self.on_collect = on_collect   # run_mode's
        self.clock = network.clock
        self.topology = scenario.topology
        self.records = [MessageRecord(m.id, m.src, m.dst, m.size, m.flow) for m in schedule]
        self.agenda = Agenda()
        self.failures = Failures(scenario, network, self.agenda, reconverge=mode_.pinned)
        self.failures_seen: list[tuple[float, str]] = []
        self.log: list[dict[str, object]] = []
        self._build_hosts()
        self._waiting = {m.id: len(m.after) for m in schedule}
        self._dependents: dict[int, list[int]] = {}
        for m in schedule:
            for before in m.after:
                self._dependents.setdefault(before, []).append(m.id)
        self.arrived = 0
        self._written: dict[int, bytes] = {}   # what each posted message writes, to its arrival
        self._block = payload_block(scenario.seed)   # what every message's bytes are cut from
        self.repairer: Repairer | None = None
        self.probes: ProbeRounds | None = None
        if mode_.controller:
            timing = scenario.controller
            self.repairer = self._repairer()
            per_s = 1e6   # divided by, as before: 20 / 1e6 is 2e-05, 20 * 1e-6 is not
            self.probes = ProbeRounds(
                LinkProber(network.plan, timing.probe_interval_us / per_s,
                           timing.probe_successes),
                # Confirmation probes: one per suspect cable per round.
                ProbeLoop(network.plan, timing.period_us / per_s,
                          timing.probe_timeout_us / per_s, patience=timing.confirm_probes,
                          slow_interval_s=timing.probe_interval_us / per_s),
                IdleSweep(network.plan, timing.idle_probe_interval_us / per_s,
                          timing.probe_timeout_us / per_s, read=self._t0_ports)
                if timing.idle_probe_interval_us and timing.confirm_probes else None)
            network.open_t0_sessions()
        self.meter = Meter(scenario, mode_, network, self._denied)
        self.drop_counter = DropCounter(network, self.failures)
        self._drops_sampled: Drops | None = None
        # (NIC, local QP) -> when its transport gave up, and the EVs out of service then
        self._gave_up: dict[tuple[str, int], tuple[float, tuple[int, ...]]] = {}
        self._failed_seen = dict.fromkeys(self.hosts, 0)

    # -- setup -----------------------------------------------------------------------------

    def _build_hosts(self) -> None:
        t = self.scenario.transport
        incoming: dict[tuple[str, str], dict[int, int]] = {}
        for m in self.schedule:
            incoming.setdefault((m.dst, m.src), {})[m.id] = m.size
        self.hosts: dict[str, NicHost] = {}
        self.ends: dict[str, list[_End]] = {}   # NIC -> its connections' ends
        self.by_peer: dict[tuple[str, str], _End] = {}
        # Hosts by index, in the order an instant visits them (by name). Only hosts with
        # something to do are visited: the fabric handed them frames (`_inbox`, from the
        # wire's waker), a message was posted to them, or their transport's deadline is due
        # (`_host_schedule`: its timers are the deadlines each host reported after its visit).
        self._host_list: list[tuple[str, NicHost, FabricHost, list[_End]]] = []
        self._host_index: dict[str, int] = {}
        self._host_schedule = DeviceSchedule()
        self._inbox: set[int] = set()
        path_rtt = self.scenario.longest_path_rtt_us()
        for name, nic in sorted(self.net.nics.items()):
            me = self.topology.nic(name)
            host = self.hosts[name] = NicHost()
            index = self._host_schedule.add()   # visited at the first instant
            self._host_index[name] = index
            self._host_list.append((name, host, nic.wire, self.ends.setdefault(name, [])))
            nic.wire.set_waker(functools.partial(self._inbox.add, index))
            for c in nic.connections.values():
                planes = self._planes_of(name, c)
                offsets, at = {}, VA_BASE
                for mid, size in incoming.get((name, c.peer), {}).items():
                    offsets[mid] = at
                    at += size
                config = ConnectionConfig(
                    local_addr=format_address(nic_address(me)),
                    peer_addr=format_address(nic_address(self.topology.nic(c.peer))),
                    local_qp=c.local_qp, peer_qp=c.peer_qp, initial_psn=c.initial_psn,
                    mtu=self.scenario.mtu, window=t.window, rto_us=t.rto_us,
                    reorder_us=t.reorder_us, rto_min_us=t.rto_min_us, rto_max_us=t.rto_max_us,
                    give_up_us=t.give_up_us, max_retries=t.max_retries,
                    retry_linear_cnt=t.retry_linear_cnt, probe_interval_us=t.probe_interval_us,
                    probe_successes=self.mode.profile.probe_successes,
                    cc=t.nscc(path_rtt, self.scenario.mtu,
                              self._linkspeed_gbps((name, c.peer), planes)),
                    tx_gbps=self.scenario.nic_line_rate_gbps(name, self.topology.planes),
                    planes=len(planes))
                end = _End(host.add_connection(config, at), offsets)
                self.ends[name].append(end)
                self.by_peer[(name, c.peer)] = end

    def _planes_of(self, nic: str, c: NicConnection) -> tuple[int, ...]:
        """The planes a connection sends on: one for a connection on one path (a pinned flow,
        ECMP's hash: the plane of its first path), else all of them."""
        if (nic, c.peer) in self.net.pins:
            return (self.net.pins[(nic, c.peer)][0],)
        if self.mode.pinned:
            return (self.net.pinned[(nic, c.conn)].plane,)
        return tuple(range(self.topology.planes))

    def _linkspeed_gbps(self, ends: tuple[str, str], planes: Sequence[int]) -> float:
        """NSCC's line rate for a connection between two NICs (the spec's BDP takes the lower
        of the two ends'): each end's ports on the planes the connection sends on."""
        return min(sum(self.scenario.nic_port_rate_gbps(end, p) for p in planes)
                   for end in ends)

    def _repairer(self) -> Repairer:
        timing = self.scenario.controller
        # Each connection's own profile: on irregular wiring a connection may have one of its
        # own (nic_plan.py), and a pinned flow a one-EV profile the controller leaves alone.
        managed = [ManagedNic(name, DirectNic(nic.session, name),
                              {c.conn: c.peer for c in nic.connections.values()},
                              self.mode.profile,
                              [e for e in nic.plan.entries if e.table == "ev_path"],
                              profiles=connection_profiles(nic.plan))
                   for name, nic in sorted(self.net.nics.items())]
        repairer = Repairer(self.net.plan, managed, window_s=timing.window_us / 1e6,
                            settle_s=timing.settle_us / 1e6,
                            damper=Damper(hold_s=timing.hold_us / 1e6),
                            confirm_probes=timing.confirm_probes)
        repairer.on_record = self._controller_record
        return repairer

    def _controller_record(self, record: dict[str, object]) -> None:
        """The controller's suspects, probes and verdicts (with their evidence) into the run's
        events."""
        if record.get("event") in ("suspect", "probe", "verdict", "ev_ignored"):
            self.log.append({"at_us": self.clock(),
                             **{k: v for k, v in record.items() if k != "at_s"}})

    def _denied(self, nic: str, conn: int) -> set[int]:
        """The EVs of connection `conn` of `nic` the controller has DENIED now (ev_path is
        keyed by profile: only the connection's own profile's entries count)."""
        if self.repairer is None:
            return set()
        managed = self.repairer.nics[nic]
        profile = managed.profile_of(conn)
        return {match["ev"] for e in managed.installed if e.action == "deny_path"
                and (match := dict(e.match))["profile"] == profile}

    # -- the workload ----------------------------------------------------------------------

    def _post(self, mid: int) -> None:
        m = self.schedule[mid]
        far = self.by_peer[(m.dst, m.src)]
        data = self._written[mid] = message_data(self._block, m)   # made once
        self.by_peer[(m.src, m.dst)].sender.write(data, far.offsets[mid],
                                                  immediate=mid, now_us=self.clock())
        self._host_schedule.wake(self._host_index[m.src])   # its sender has packets to send
        self.records[mid].posted_us = self.clock.us()

    def _post_all(self, ids: Sequence[int]) -> None:
        for mid in ids:
            self._post(mid)

    def _arrive(self, nic: str, end: _End) -> None:
        for _msn, va, length, immediate in end.receiver.completions():
            if immediate is None or not 0 <= immediate < len(self.schedule):
                continue
            m = self.schedule[immediate]
            record = self.records[immediate]
            if record.arrived_us is not None or m.dst != nic:
                continue
            record.arrived_us = self.clock.us()
            memory = end.receiver.memory
            written = self._written.pop(m.id, None) or message_data(self._block, m)
            record.intact = (length == m.size and va == end.offsets[m.id]
                             and memory[va:va + length] == written)
            self.arrived += 1
            for later in self._dependents.get(m.id, ()):
                self._waiting[later] -= 1
                if self._waiting[later] == 0:
                    self._post(later)

    # -- the loop --------------------------------------------------------------------------

    def _settle(self) -> None:
        """Everything that can happen at this instant: passes of the fabric run until idle,
        the frames it handed hosts given to their transports, then the hosts polled, until
        nothing moves. A pass visits, in host order, only the hosts with frames, then only
        those with something to do (woken, or their deadline due): a host left out would have
        taken no frame and its poll would have sent nothing and changed nothing."""
        now_us = self.clock()
        fabric = self.net.fabric
        meter = self.meter
        hosts = self._host_list
        inbox = self._inbox
        schedule = self._host_schedule
        self.drop_counter.watch()   # a switch powered off or on: its pipeline replaced
        while True:
            fabric.run_until_idle()
            moved = False
            if inbox:
                handed = sorted(inbox)
                inbox.clear()
                for i in handed:
                    name, host, wire, ends = hosts[i]
                    frames = wire.take()
                    for frame in frames:
                        meter.host_frame(name, frame, now_us)
                        host.on_frame(frame, now_us)
                    if frames:
                        moved = True
                        schedule.wake(i)   # what arrived may let it send, or stop a timer
                        for end in ends:
                            self._arrive(name, end)
            if schedule.start_pass(now_us):   # a deadline d is due when d <= now (int µs)
                while (i := schedule.pop()) is not None:
                    name, host, wire, _ = hosts[i]
                    for frame in host.poll(now_us):
                        moved = True
                        wire.send(frame)
                    schedule.idle(i, host.next_deadline_us(now_us))
                    if len(failed := host.failed) != self._failed_seen[name]:
                        self._failed_seen[name] = len(failed)
                        self._note_gave_up(name, failed)
            if not moved:
                return

    def _note_gave_up(self, nic: str, failed: Sequence[Connection]) -> None:
        """A transport gave up now (NoAnswer: nothing answered it for give_up_us; or the
        retry limit): when, and on which EVs its NIC had it stuck."""
        for connection in failed:
            key = (nic, connection.config.local_qp)
            if key not in self._gave_up:
                self._gave_up[key] = (self.clock.us(), self._out_of_service(*key))

    def _out_of_service(self, nic: str, local_qp: int) -> tuple[int, ...]:
        """The EVs of the connection on `local_qp` that `nic` has out of service now (SKIP,
        ASSUMED_BAD, or DENIED by the controller)."""
        conn = next(c.conn for c in self.net.nics[nic].connections.values()
                    if c.local_qp == local_qp)
        register = self.net.fabric.switch(nic).engine.register("ev_state")
        denied = self._denied(nic, conn)
        return tuple(ev for ev in range(self.meter.evs)
                     if ev in denied or EV_STATES[register.read(conn * EV_SLOTS + ev)] != "GOOD")

    def _next_timer_ns(self) -> int | None:
        """When a transport's timer (a timeout, a resend, a probe) next needs it polled: the
        earliest deadline the hosts reported after their visits (unchanged since: only a
        frame, a posted message or a poll changes it, and each wakes the host), and those of
        hosts woken but not visited yet, asked."""
        now_us = self.clock()
        schedule = self._host_schedule
        times = [t for i in schedule.ready()
                 if (t := self._host_list[i][1].next_deadline_us(now_us)) is not None]
        if (earliest := schedule.earliest()) is not None:
            times.append(int(earliest))
        return max(min(times) * 1000, self.clock.now_ns + 1) if times else None

    def _sample(self, final: bool = False) -> None:
        self.drop_counter.note()
        drops = self._drops_sampled = self.drop_counter.read()
        retransmitted = sum(e.sender.counters["retransmitted"]
                            for ends in self.ends.values() for e in ends)
        self.meter.sample(self.clock.us(), retransmitted, drops.total, final=final)

    def run(self) -> RunResult:
        s = self.scenario
        # A bin's sample first at its boundary: what a failure at that instant destroys
        # belongs to the bin it starts, not to the one that ended.
        for k in range(1, s.duration_us // s.bin_us + 2):
            self.agenda.at(k * s.bin_us, self._sample)
        self.failures.schedule()
        if self.repairer is not None:
            for k in range(1, s.duration_us // s.controller.period_us + 1):
                self.agenda.at(k * s.controller.period_us, self._controller_round)
        # The first messages go on the agenda after the failures: a failure at the same
        # instant (at_us 0 too) applies before their first packet.
        starts: dict[int, list[int]] = {}
        for m in self.schedule:
            if not m.after:
                starts.setdefault(m.start_us, []).append(m.id)
        for start_us, ids in sorted(starts.items()):
            self.agenda.at(start_us, functools.partial(self._post_all, ids))
        limit_ns = s.duration_us * 1000
        steps = 0
        finished = False
        while True:
            self._settle()
            if self.arrived == len(self.schedule):
                finished = True
                break
            fabric_ns = self.net.fabric.next_event_ns()
            others = [t for t in (self._next_timer_ns(), self.agenda.next_ns()) if t is not None]
            times = others if fabric_ns is None else [fabric_ns, *others]
            if not times or min(times) > limit_ns:
                break
            # Until a host or the agenda is due, only the fabric moves: on the native core its
            # instants run in C without coming back here (each as the steps below would run it).
            bound_ns = min(limit_ns + 1, *others)
            if fabric_ns is not None and fabric_ns < bound_ns and \
                    self.net.fabric.run_span(fabric_ns, bound_ns):
                steps += 1
                continue
            self.clock.advance_to(max(min(times), self.clock.now_ns))
            for event in self.agenda.due(self.clock.now_ns):
                if event.failure:
                    self.failures_seen.append((event.at_ns / 1000, event.failure))
                event.action()
            steps += 1
            if self.progress is not None and steps % 200 == 0:
                self.progress(self.clock(), self.arrived, len(self.schedule),
                              self.net.fabric.wire_hops)
        end_us = self.clock.us()
        self._sample(final=True)
        if self.progress is not None:
            self.progress(self.clock(), self.arrived, len(self.schedule),
                          self.net.fabric.wire_hops)
        repaired = sum(sum(log.written.values()) for log in self.repairer.history) \
            if self.repairer is not None else 0
        if self.on_collect is not None:
            self.on_collect()
        drops = self._final_drops()
        totals = {
            "sent": sum(e.sender.counters["sent"] for ends in self.ends.values() for e in ends),
            **self.meter.totals(),
            "dropped": drops.dropped,
            "duplicates": drops.duplicates,
            "ev_events": sum(n.raised for n in self.net.nics.values()),
            "rewrites": self.failures.rewrites + repaired,
        }
        series = self.meter.series
        series.grow(int(end_us // s.bin_us) + 1)
        return RunResult(self.mode.name, end_us, finished, self.records, series, totals,
                         self.failures_seen, self.log, connections=self._fates(end_us),
                         drops=drops.total, drop_sites=drops.at)

    def _final_drops(self) -> Drops:
        """The drops as a collector reads them at the end (the P4 counters over P4Runtime);
        the bins were read from the engines: both must agree."""
        drops = self.drop_counter.read_p4runtime()
        sampled = self._drops_sampled
        if sampled is None or sampled.total != drops.total or \
                sampled.duplicates != drops.duplicates:
            raise RuntimeError("drop counters read over P4Runtime differ from the engines': "
                               f"{drops.total} != {sampled and sampled.total}")
        return drops

    def _fates(self, end_us: float) -> list[ConnectionFate]:
        """What became of each connection that carried messages (one direction each)."""
        carried: dict[tuple[str, str], list[MessageRecord]] = {}
        for record in self.records:
            carried.setdefault((record.src, record.dst), []).append(record)
        fates = []
        for (src, dst), records in sorted(carried.items()):
            qp = next(c.local_qp for c in self.net.nics[src].connections.values()
                      if c.peer == dst)
            error = self.hosts[src].connection(qp).error
            undelivered = tuple(r.id for r in records if not r.delivered)
            if error is not None:
                at_us, evs = self._gave_up.get((src, qp), (end_us, ()))
                fates.append(ConnectionFate(src, dst, qp, "gave_up", at_us,
                                            getattr(error, "retries", 0), evs, str(error),
                                            undelivered))
            elif not undelivered:
                fates.append(ConnectionFate(src, dst, qp, "done"))
            else:
                fates.append(ConnectionFate(src, dst, qp, "open", end_us, 0,
                                            self._out_of_service(src, qp),
                                            _why_open(records), undelivered))
        return fates

    def _controller_round(self) -> None:
        """One round of the controller, as `mrc-ctl run`'s: EV events in and NICs rewritten,
        then the probes of the cables taken out (a cable proven healthy is given back to the
        NICs after the hold-down)."""
        assert self.repairer is not None and self.probes is not None
        self.net.settle_digests()
        now_s = self.clock.us() / 1e6
        received = self.net.packet_ins()
        # Probe answers first: what they prove is acted on by this round's poll.
        self.probes.take(self.repairer, now_s, received)
        log = self.repairer.poll(now_s)
        healthy = self.probes.send(self.repairer, now_s, received, self._send_probe)
        if healthy:
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
                             "switches_down": sorted(log.verdict.switches_down),
                             "denied": sum(e.action == "deny_path"
                                           for n in self.repairer.nics.values()
                                           for e in n.installed)})

    def _t0_ports(self, t0: str) -> PortCounts | None:
        """A T0's port counters, read over P4Runtime as `mrc-ctl run` reads them (None while
        the switch is down)."""
        if t0 in self.failures.down_switches:
            return None
        return read_t0_ports(self.net.t0s[t0][0])

    def _send_probe(self, t0: str, port: int, frame: bytes) -> bool:
        if t0 in self.failures.down_switches:
            return False
        self.net.packet_out(t0, port, [frame])
        return True


def _why_open(records: Sequence[MessageRecord]) -> str:
    """What an open connection still owed when the run ended."""
    missing = [r for r in records if not r.delivered]
    never = sum(r.posted_us is None for r in missing)
    corrupt = sum(r.arrived_us is not None for r in missing)
    parts = [f"{len(missing)} of {len(records)} messages not delivered"]
    if never:
        parts.append(f"{never} never posted (waiting on messages before them)")
    if corrupt:
        parts.append(f"{corrupt} arrived corrupt")
    return ", ".join(parts)


def payload_block(seed: int) -> bytes:
    """The run's PAYLOAD_PERIOD bytes every message's are cut from: SHAKE-128 of the seed
    (once per run: 6 ms)."""
    return hashlib.shake_128(PAYLOAD_KEY + seed.to_bytes(8, "little")).digest(PAYLOAD_PERIOD)


def message_data(block: bytes, m: Message) -> bytes:
    """What message `m` writes (the same bytes for the same seed, every run): byte i is
    block[(i + start) mod PAYLOAD_PERIOD], from a start of its own (its id's). A slice, where
    SHAKE-128 of every message's bytes took 1.5 ms a MiB."""
    start = m.id * 7919 % PAYLOAD_PERIOD   # 7919, a prime: neighbouring ids start far apart
    end = start + m.size
    if end <= PAYLOAD_PERIOD:
        return block[start:end]
    # past the block's end: its tail, whole laps, a head; one copy (the block repeated and cut
    # copied the laps twice, 4 MiB and more for a 1 MiB message)
    laps, rest = divmod(end, PAYLOAD_PERIOD)
    view = memoryview(block)
    return b"".join((view[start:], *([view] * (laps - 1)), view[:rest]))


def run_mode(scenario: Scenario, mode_name: str, switch_program: Program, nic_program: str,
             progress: Progress | None = None,
             phase: Callable[[str, Network], None] | None = None,
             on_collect: Callable[[], None] | None = None) -> RunResult:
    """Run the scenario in one mode on a network of its own. `phase("built" | "closing",
    network)`, when given, is told when everything before the first instant is done (the
    network up, the hosts and the run's state built, the collector's pass over them made) and
    when the run is over (a benchmark times the run apart from the setup); `on_collect()`,
    when virtual time has stopped and the closing read of the P4 counters over P4Runtime
    begins (a cost per device, not per packet: the benchmark shows it apart)."""
    chosen = mode(mode_name, scenario.profile)
    schedule = messages(scenario.workloads, scenario.seed)
    with _SetupHeap() as heap, Network.of(scenario, switch_program, nic_program, chosen,
                                          connections(schedule)) as network:
        state = RunState(scenario, chosen, network, schedule, progress, on_collect)
        network.fabric.attach_native()   # the native core's set-up is setup's (when it runs)
        heap.freeze()
        if phase is not None:
            phase("built", network)
        try:
            return state.run()
        finally:
            if phase is not None:
                phase("closing", network)


class _SetupHeap:
    """The garbage collector around one run: what setup built (programs, tables, devices,
    P4Runtime servers, hosts: hundreds of MiB on a large fabric) lives for the whole run, so
    at the end of setup (`freeze`) it is collected once and frozen out of the collector's
    generations, so the run's passes see only what the run allocates; back in them afterwards,
    so a process running many scenarios frees each one. (Pausing the collector during setup
    saves its passes there but costs more in that one collection: measured, a net loss.)"""

    def __enter__(self) -> _SetupHeap:
        self._frozen = False
        return self

    def freeze(self) -> None:
        gc.collect()
        gc.freeze()
        self._frozen = True

    def __exit__(self, *exc: object) -> None:
        if self._frozen:
            gc.unfreeze()
