"""A topology as an emulated network in virtual time: the fabric switch program on every switch,
the MRC NIC program on every NIC, all programmed over P4Runtime as real devices are, every
cable with the scenario's line rate and propagation delay (softswitch/fabric.py).

Cables may have their own rate, delay and queue depth (the scenario's `cables`), re-applied
when a switch boots again. The NICs are programmed for one mode (emulation/modes.py) with
their connections: one per pair of NICs that write to each other, both ends (the peer's writes
and the feedback for our sends arrive on it); a connection a scenario pins to one path (a
`flow` with a `path`) takes only that path, in every mode. The NIC sessions stay open: the
EV-event digests come over them, and `settle_digests` waits (in wall time) until every digest
a NIC has raised has arrived, so a controller reading them at a virtual instant sees exactly
what was raised before it.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import grpc._common as grpc_common

from controller.devices.push import push
from controller.devices.reconcile import to_table_entry
from controller.devices.session import Program
from controller.fabric_up import build_fabric, nic_host_name
from controller.nic_fabric import program_nic
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import (
    HOST_PORT,
    QP_BASE,
    NicConnection,
    NicPlan,
    NicPlanner,
    plane_port,
)
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Verdict
from controller.topology.model import Tier, Topology
from emulation.modes import ECMP_PROFILE_BASE, EcmpPaths, Mode, PinnedPath, nic_plan
from emulation.scenario import CableOverride, Scenario
from p4rt import PacketIn, SwitchConnection
from softswitch.clock import VirtualClock
from softswitch.fabric import Fabric
from softswitch.fabric import Host as FabricHost

STREAM_WAIT_S = 5.0   # wall seconds a stream message may take before something is wrong
# Switches pushed at once. Their P4Runtime servers run in this process, under one GIL: more
# pushes at once gain nothing, and on a large fabric (hundreds of switches) dozens of servers
# building their pipelines together each take long enough to miss the push's RPC deadlines.
PUSH_CONCURRENCY = 4
# Wall seconds a device's server may take to answer setup's sessions (arbitration, each RPC):
# it shares this process's CPU with every other device's server, so on a large fabric or a
# loaded machine a healthy one can miss the controller's defaults (10 s, 30 s) for real devices.
PUSH_TIMEOUT_S = 300.0
# The GIL's switch interval while a Network is open (CPython's default: 5 ms). This process
# runs a thread per device that wakes on its own (grpc's `_serve`, five times a second) and two
# per open session (its stream's reader, ten times a second, and its channel's poller, five),
# each wanting the GIL for a moment. A thread waiting for the GIL wakes every switch interval to ask for it: once a few
# hundred wait together (the CPU shared with another such process), their own wake-ups take
# the CPU (futex calls, sys time far above user) and each hand-over waits behind them, so more
# pile up: a convoy that does not recover (two scale-256-cut runs side by side took 870 s for
# two modes of four, sys 13x user). At 50 ms the waiters wake ten times less and the same pair
# ran its four modes in 154 s each, sys a third of user. Results do not depend on it (virtual
# time); a thread that needs the GIL from a busy one waits up to this long.
SWITCH_INTERVAL_S = 0.05
# How often grpc's blocking waits wake while a Network is open (grpc._common's
# MAXIMUM_WAIT_TIMEOUT: 0.1 s, so that a main thread blocked in a call sees Ctrl-C). Every open
# session's stream reader blocks in one, so at 0.1 s each device's reader wakes ten times a
# second for nothing, wanting the GIL each time: 2,300 wake-ups a second on the 64-NIC
# permutation's 80 devices (the servers' own `_serve` threads are most of the rest), 26,000
# on 896; and the main thread gives the GIL up at every call into C (cffi releases it), so a
# waker takes it there and the loop waits behind it. At 2 s the 64-NIC fabric wakes 980 times a
# second; turn about, the 256-NIC scale scenario's stepping (spray) took 4.3-4.6 s of wall time
# instead of 6.1-8.9 (CPU 4.5 instead of 5.8-6.2), 512 NICs 11.1-11.8 instead of 17.0-24.4. A
# reader still wakes at once for a message or its call's end (grpc notifies the wait); only
# Ctrl-C during a blocking call waits up to this long.
GRPC_WAIT_S = 2.0


@dataclass
class NicDevice:
    """One NIC: its connections (index -> NicConnection), the P4Runtime session, the wire to
    its host port, its plan (what a controller may rewrite: the paths of connections a
    scenario pins are programmed but left out, as a tenant's static route would be), and how
    many EV-event digests it has raised."""

    name: str
    connections: dict[int, NicConnection]
    session: SwitchConnection
    wire: FabricHost
    plan: NicPlan
    raised: int = 0


def pair_connections(pairs: Sequence[tuple[str, str]]) -> dict[str, list[NicConnection]]:
    """One connection per unordered pair of `pairs`, at both ends: NIC -> its connections,
    connection k of a NIC on QP QP_BASE + k, the peer's QP for it its own."""
    index: dict[str, dict[str, int]] = {}
    for a, b in pairs:
        for me, peer in ((a, b), (b, a)):
            mine = index.setdefault(me, {})
            if peer not in mine:
                mine[peer] = len(mine)
    return {me: [NicConnection(k, peer, QP_BASE + k, QP_BASE + index[peer][me])
                 for peer, k in peers.items()]
            for me, peers in index.items()}


def fabric_port(topology: Topology, end: tuple[str, int]) -> tuple[str, int]:
    """A cable end as the fabric knows it: a switch's port as it is, a NIC's end (NIC, plane)
    as the NIC device's port of that plane."""
    name, port = end
    return (name, plane_port(port)) if topology.is_nic(name) else end


class Network:
    """See the module docstring. `close` (or `with`) stops the P4Runtime servers. `cables`:
    per-cable overrides of `rate_bps`, `delay_ns` and `queue_packets`; `pins`: (src, dst) ->
    (plane, T1 index), the connection between the two NICs on that one path."""

    @classmethod
    def of(cls, scenario: Scenario, switch_program: Program, nic_program: str, mode: Mode,
           pairs: Sequence[tuple[str, str]]) -> Network:
        """The network a scenario describes, in `mode`, with connections for `pairs`."""
        return cls(scenario.topology, switch_program, nic_program, mode, pairs,
                   rate_bps=scenario.links.rate_gbps * 1e9, delay_ns=scenario.links.delay_ns,
                   queue_packets=scenario.links.queue_packets, seed=scenario.seed,
                   cables=scenario.cables,
                   pins={(w.src, w.dst): w.path for w in scenario.workloads
                         if w.path is not None})

    def __init__(self, topology: Topology, switch_program: Program, nic_program: str,
                 mode: Mode, pairs: Sequence[tuple[str, str]], *, rate_bps: float,
                 delay_ns: int, queue_packets: int, seed: int,
                 cables: Sequence[CableOverride] = (),
                 pins: Mapping[tuple[str, str], tuple[int, int]] | None = None) -> None:
        self.topology = topology
        self.mode = mode
        self.plan = FabricPlan(topology)
        self.clock = VirtualClock()
        self.switch_program = switch_program
        self.ecmp = EcmpPaths(self.plan, seed)
        self.pinned: dict[tuple[str, int], PinnedPath] = {}
        self.fabric: Fabric
        self.fabric, self.running = build_fabric(topology, ephemeral_ports=True,
                                                 nic_program=nic_program, clock=self.clock,
                                                 link_delay_ns=delay_ns)
        self.rate_bps = rate_bps
        self.queue_packets = queue_packets
        self.pins = {pair: path for (a, b), path in (pins or {}).items()
                     for pair in ((a, b), (b, a))}   # one connection carries both ways
        self.nics: dict[str, NicDevice] = {}
        self.t0s: dict[str, tuple[SwitchConnection, list[int]]] = {}   # session, packet-ins sent
        # device -> (port, line rate in bit/s or None, queue depth or None): both cable ends
        self._ports: dict[str, list[tuple[int, float | None, int | None]]] = {}
        self._switch_interval = sys.getswitchinterval()   # restored by close
        sys.setswitchinterval(max(self._switch_interval, SWITCH_INTERVAL_S))
        self._grpc_wait = _lengthen_grpc_wait(GRPC_WAIT_S)   # restored by close
        try:
            for c in cables:
                self._override(c)
            for node in self.fabric.switches:
                self.set_rates(node.name)
            self.push_switches()
            self._program_nics(pair_connections(pairs))
        except BaseException:
            self.close()
            raise

    # -- building -------------------------------------------------------------------------

    def _override(self, cable: CableOverride) -> None:
        """One cable's own delay now, and its rate and depth for `set_rates` at both ends."""
        name, port = fabric_port(self.topology, cable.link)
        if cable.delay_ns is not None:
            self.fabric.set_link_delay(name, port, cable.delay_ns)
        rate = None if cable.rate_gbps is None else cable.rate_gbps * 1e9
        for end, end_port in ((name, port), self.fabric.switch(name).links[port]):
            self._ports.setdefault(end, []).append((end_port, rate, cable.queue_packets))

    def set_rates(self, name: str) -> None:
        """A device's ports as the scenario's cables and buffers (again after a reboot)."""
        device = self.fabric.switch(name).device
        device.set_line_rate(None, self.rate_bps)
        device.set_queue_depth(None, self.queue_packets)
        if name in {n.name for n in self.topology.nics}:
            # The host port is the NIC's PCIe side, faster than all its planes together.
            device.set_line_rate(HOST_PORT, None)
        for port, rate, depth in self._ports.get(name, ()):
            if rate is not None:
                device.set_line_rate(port, rate)
            if depth is not None:
                device.set_queue_depth(port, depth)

    def push_switches(self, names: Sequence[str] | None = None) -> None:
        """Push the static plan (pipeline and entries) to `names` (default: every switch)."""
        report = push(self.running, self.plan, self.switch_program, switches=names,
                      concurrency=PUSH_CONCURRENCY, connect_timeout=PUSH_TIMEOUT_S,
                      rpc_timeout=PUSH_TIMEOUT_S)
        if not report.ok:
            raise RuntimeError("switch push failed:\n" + "\n".join(
                f"{r.name}: {e}" for r in report.switches for e in r.errors))

    def _program_nics(self, connections: dict[str, list[NicConnection]]) -> None:
        planner = NicPlanner(self.plan)
        for name, conns in connections.items():
            fixed = {c.conn: self._fixed(name, c, self.pins[(name, c.peer)])
                     for c in conns if (name, c.peer) in self.pins}
            pinned = []
            if self.mode.pinned:
                for c in conns:
                    path = fixed.get(c.conn)
                    if path is None:   # hashed, and hashed again as routing reconverges
                        path = self.ecmp.pick(name, c, Verdict())
                        self.pinned[(name, c.conn)] = path
                    pinned.append(path)
            plan = nic_plan(planner, self.mode, name, conns, pinned)
            if fixed and not self.mode.pinned:
                plan = _pin(plan, fixed.values())
            node = self.fabric.switch(name)
            # No ack cache: every event is sent, whatever was acknowledged when.
            session = program_nic(node, plan, ack_timeout_ns=0, timeout=PUSH_TIMEOUT_S)
            paths = {p.entry() for p in fixed.values()}
            managed = dataclasses.replace(plan, entries=tuple(
                e for e in plan.entries if e not in paths))
            nic = NicDevice(name, {c.conn: c for c in conns}, session,
                            self.fabric.host(nic_host_name(name)), managed)
            node.device.add_digest_listener(lambda _d, nic=nic: _raised(nic))
            self.nics[name] = nic

    def _fixed(self, nic: str, connection: NicConnection, path: tuple[int, int]) -> PinnedPath:
        """`connection` of `nic` on (plane, T1 index) `path` (a T1 that reaches the peer)."""
        plane, index = path
        t1 = self.topology.switches_of(plane, Tier.T1)[index].name
        for option in self.ecmp.choices(nic, connection.peer):
            if option[:2] == (plane, t1):
                return PinnedPath(nic, connection.conn, plane, t1, option[2])
        raise ValueError(f"{nic} -> {connection.peer}: no path over {t1} in plane {plane} "
                         "(no cable from a T0 of theirs to it)")

    # -- control ---------------------------------------------------------------------------

    def write_nic(self, nic: str, entries: Sequence[PlannedEntry]) -> None:
        """MODIFY entries of a NIC over its session."""
        session = self.nics[nic].session
        session.modify([to_table_entry(session.schema, e) for e in entries])

    def settle_digests(self) -> None:
        """Wait until every EV-event digest raised so far has reached its session."""
        for nic in self.nics.values():
            _wait(lambda nic=nic: nic.session.digests_received >= nic.raised,  # type: ignore[misc]
                  f"{nic.name}: EV events raised but not received")

    # -- the T0s' sessions: link probes ----------------------------------------------------

    def open_t0_sessions(self) -> None:
        """A primary session to every T0, kept open: probes go out as packet-outs and come
        back as packet-ins on it (controller/daemon/probes.py)."""
        for switch in self.running.switches:
            if switch.tier == Tier.T0:
                self._open_t0(switch.name)

    def _open_t0(self, name: str) -> None:
        endpoint = self.running.switch(name).endpoint
        assert endpoint is not None
        session = SwitchConnection(endpoint.grpc_address, endpoint.device_id,
                                   election_id=endpoint.election_id,
                                   rpc_timeout=PUSH_TIMEOUT_S)
        session.connect(PUSH_TIMEOUT_S)
        session.get_pipeline()
        old = self.t0s.get(name)
        if old is not None:
            old[0].close()
        counter = [0]
        self.fabric.switch(name).device.add_packet_in_listener(
            lambda _data, counter=counter: counter.__setitem__(0, counter[0] + 1))
        self.t0s[name] = (session, counter)

    def rebooted(self, name: str) -> None:
        """`name` is up and programmed again: a T0's session is opened anew."""
        if name in self.t0s:
            self._open_t0(name)

    def packet_out(self, t0: str, port: int, frames: Sequence[bytes]) -> None:
        """Send `frames` out of `port` of T0 `t0` (PacketOut), and wait until the switch has
        them (the stream is asynchronous; virtual time must not move before they are in)."""
        session, _ = self.t0s[t0]
        device = self.fabric.switch(t0).device
        waiting = device.received_waiting()
        for frame in frames:
            session.packet_out(frame, egress_port=port, pad=0)
        _wait(lambda: device.received_waiting() >= waiting + len(frames),
              f"{t0}: packet-outs sent but not received")

    def packet_ins(self) -> list[PacketIn]:
        """Every packet-in the T0s have sent so far and not yet taken, in T0 order."""
        out: list[PacketIn] = []
        for name, (session, counter) in sorted(self.t0s.items()):
            _wait(lambda session=session, counter=counter:
                  session.packet_ins_received >= counter[0],
                  f"{name}: packet-ins sent but not received")
            while (packet := session.get_packet_in(timeout=0)) is not None:
                out.append(packet)
        return out

    @property
    def now_us(self) -> int:
        return self.clock()

    def close(self) -> None:
        for nic in self.nics.values():
            nic.session.close()
        for session, _ in self.t0s.values():
            session.close()
        self.fabric.close()
        sys.setswitchinterval(self._switch_interval)
        if self._grpc_wait is not None:
            grpc_common.MAXIMUM_WAIT_TIMEOUT = self._grpc_wait

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pin(plan: NicPlan, paths: Iterable[PinnedPath]) -> NicPlan:
    """`plan` with each of `paths`' connections on its one path: as modes.nic_plan pins an
    ecmp connection, a profile of one EV (in one plane, no backups) of its own."""
    by_conn = {p.conn: p for p in paths}
    one_ev = {"ev_mask": 0, "planes": 1, "backups": 0, "ev_min_active": 1}
    entries: list[PlannedEntry] = []
    for entry in plan.entries:
        params = dict(entry.params)
        if entry.table in ("tx_connection", "local_qp") and params["conn"] in by_conn:
            params.update(one_ev, profile=ECMP_PROFILE_BASE + params["conn"])
            entry = dataclasses.replace(entry, params=tuple(sorted(params.items())))
        entries.append(entry)
    entries += [p.entry() for p in by_conn.values()]
    return dataclasses.replace(plan, entries=tuple(entries))


def _lengthen_grpc_wait(seconds: float) -> float | None:
    """grpc's blocking waits wake at least `seconds` apart from now (GRPC_WAIT_S); how far
    apart they woke before (None: this grpc has no such setting, nothing changed)."""
    before = getattr(grpc_common, "MAXIMUM_WAIT_TIMEOUT", None)
    if not isinstance(before, float):
        return None
    grpc_common.MAXIMUM_WAIT_TIMEOUT = max(before, seconds)
    return before


def _raised(nic: NicDevice) -> None:
    nic.raised += 1


def _wait(done: Callable[[], bool], what: str) -> None:
    """Wait (wall time) for a message on its way between a device and its session."""
    deadline = time.monotonic() + STREAM_WAIT_S
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {STREAM_WAIT_S} s")
        time.sleep(0.0002)
