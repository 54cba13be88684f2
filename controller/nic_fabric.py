"""A topology in one process in virtual time: the fabric switch program on every switch, the MRC
NIC program on every NIC, a host transport (mrc_transport) behind each NIC, all programmed over
P4Runtime as on real devices.

    fab = NicFabric(topology, SWITCH_P4, NIC_P4, pairs=[("nic0", "nic2")])
    msn = fab.host("nic0").sender.write(data, va=0x1000)
    fab.run()                                    # until every write is acknowledged
    fab.host("nic2").receiver.memory[0x1000:...]

Time is a `VirtualClock` (softswitch/clock.py) the fabric's devices and the transports share; `step` moves every
packet that may move now, hands the NICs' host-port frames to the transports, polls them, and
advances the clock to the next queue departure (or by `poll_us`). Every port drains at
`link_pps` packets per second, so queues, trimming and ECN see real depths, and a run gives the
same result on any machine. Switches are pushed by `controller.devices.push`; NICs get their
`controller.plan.nic_plan` entries, clone sessions and the EV-event digest over a P4Runtime
session that stays open (`events` collects the digests).

A NIC runs one connection here (the transport's Host is one connection).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.devices.push import push
from controller.devices.reconcile import diff, to_table_entry
from controller.devices.session import Program
from controller.fabric_up import build_fabric, nic_host_name
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import (
    EV_EVENT_DIGEST,
    EV_STATES,
    HOST_PORT,
    QP_BASE,
    EvProfile,
    NicConnection,
    NicPlan,
    NicPlanner,
    nic_address,
)
from controller.plan.plan import FabricPlan
from controller.plan.usid import format_address
from controller.repair.repairer import DirectNic, ManagedNic
from controller.topology.model import Endpoint, Topology
from mrc_transport.config import ConnectionConfig
from mrc_transport.host import Host
from p4rt import CloneSessionEntry, DigestEntry, SwitchConnection
from softswitch.clock import VirtualClock
from softswitch.fabric import Fabric, FabricSwitch
from softswitch.fabric import Host as FabricHost


@dataclass(frozen=True)
class EvEvent:
    """One EV event digest (OCP MRC's): a GOOD <-> ASSUMED_BAD transition."""

    nic: str
    conn: int
    profile: int
    ev: int
    state: str
    drops: int


@dataclass
class NicEnd:
    """One NIC: its device, the host port's wire, the transport, its P4Runtime session."""

    name: str
    connection: NicConnection
    transport: Host
    wire: FabricHost
    session: SwitchConnection | None   # None when a controller (controller.daemon) owns the NIC
    events: list[EvEvent] = field(default_factory=list)


class NicFabric:
    """See the module docstring. Close it (or use `with`) to stop the P4Runtime servers."""

    def __init__(self, topology: Topology, switch_program: Path | str,
                 nic_program: Path | str, pairs: Sequence[tuple[str, str]], *,
                 profile: EvProfile | None = None, link_pps: float = 1_000_000,
                 poll_us: int = 5, memory: int = 4 << 20, program: bool = True,
                 **transport: Any) -> None:
        """`program=False`: switches and NICs come up blank (no tables; NICs run their
        program), for a controller (controller.daemon) to program: switches at `running`'s
        endpoints, NICs at `nic_endpoints()`."""
        self.topology = topology
        self.plan = FabricPlan(topology)
        self.profile = profile or EvProfile()
        self.clock = VirtualClock()
        self.poll_us = poll_us
        self.fabric: Fabric
        self.fabric, self.running = build_fabric(topology, ephemeral_ports=True,
                                                 nic_program=nic_program, clock=self.clock)
        self.nics: dict[str, NicEnd] = {}
        self.nic_plans: dict[str, NicPlan] = {}
        self._periodic: list[tuple[int, Callable[[int], None]]] = []
        self._next_periodic: list[int] = []
        self.link_pps = link_pps
        self._nic_program = nic_program
        try:
            if program:
                report = push(self.running, self.plan, Program.compile(switch_program))
                if not report.ok:
                    raise RuntimeError("switch push failed:\n" + "\n".join(
                        f"{r.name}: {e}" for r in report.switches for e in r.errors))
            self._program_nics(pairs, memory, transport, program)
            for node in self.fabric.switches:
                self._set_rates(node.name)
        except BaseException:
            self.close()
            raise

    def _set_rates(self, name: str) -> None:
        device = self.fabric.switch(name).device
        device.set_queue_rate(None, self.link_pps)
        if name in self.nics:
            # The host port is the NIC's PCIe side, faster than all its planes together: a
            # packet the NIC has SACKed must reach the host.
            device.set_queue_rate(HOST_PORT, None)

    def _program_nics(self, pairs: Sequence[tuple[str, str]], memory: int,
                      transport: dict[str, Any], program: bool) -> None:
        planner = NicPlanner(self.plan)
        ends: dict[str, NicConnection] = {}
        for conn, (a, b) in enumerate(pairs):
            for me, peer in ((a, b), (b, a)):
                if me in ends:
                    raise ValueError(f"NIC {me} is in two pairs; a NIC runs one connection here")
                ends[me] = NicConnection(conn, peer, QP_BASE + conn, QP_BASE + conn)
        for name, connection in ends.items():
            nic_plan = planner.plan_nic(name, [connection], self.profile)
            self.nic_plans[name] = nic_plan
            session = self._program_nic(name, nic_plan) if program else None
            me, peer = self.topology.nic(name), self.topology.nic(connection.peer)
            config = ConnectionConfig(
                local_addr=format_address(nic_address(me)),
                peer_addr=format_address(nic_address(peer)), local_qp=connection.local_qp,
                peer_qp=connection.peer_qp, initial_psn=connection.initial_psn,
                probe_successes=self.profile.probe_successes, **transport)
            self.nics[name] = NicEnd(name, connection, Host(config, memory),
                                     self.fabric.host(nic_host_name(name)), session)

    def _program_nic(self, name: str, nic_plan: NicPlan) -> SwitchConnection:
        return program_nic(self.fabric.switch(name), nic_plan)

    # -- access -------------------------------------------------------------------------------

    @property
    def connections(self) -> dict[str, list[NicConnection]]:
        """Each NIC's connections (what its host transport runs)."""
        return {name: [end.connection] for name, end in self.nics.items()}

    def nic_endpoints(self) -> dict[str, Endpoint]:
        """Where each NIC's P4Runtime server listens."""
        out = {}
        for name in self.nics:
            node = self.fabric.switch(name)
            assert node.grpc_address is not None
            out[name] = Endpoint(node.grpc_address, node.device.device_id)
        return out

    def power_off(self, name: str) -> None:
        """Pull a switch's or NIC's power: tables gone, P4Runtime server down (fabric.py)."""
        self.fabric.power_off(name)

    def power_on(self, name: str) -> None:
        """Boot it again blank, its ports draining at the fabric's rate; a controller must
        program it (a NIC boots with its program and no entries, as the fabric built it)."""
        self.fabric.power_on(name, self._nic_program if name in self.nics else None)
        self._set_rates(name)

    def _session(self, nic: str) -> SwitchConnection:
        session = self.nics[nic].session
        if session is None:
            raise RuntimeError(f"{nic} is programmed by a controller here (program=False): "
                               "use its session")
        return session

    @property
    def now(self) -> int:
        return self.clock()

    def host(self, nic: str) -> Host:
        return self.nics[nic].transport

    def ev_states(self, nic: str) -> dict[int, str]:
        """Every EV of the NIC's connection (active and backups) and its state now, read
        from the NIC's `ev_state` register."""
        end = self.nics[nic]
        register = self.fabric.switch(nic).engine.register("ev_state")
        count = self.profile.ev_count + self.profile.backups * len(
            self.topology.nic(nic).attachments)
        base = end.connection.conn * 256
        return {ev: EV_STATES[register.read(base + ev)] for ev in range(count)}

    def ev_t1(self, nic: str) -> dict[int, tuple[int, str]]:
        """EV -> (plane, T1 name) of the NIC's EV profile as planned (its ev_path entries)."""
        names = {self.plan.usid(s.name): s.name for s in self.topology.switches}
        out: dict[int, tuple[int, str]] = {}
        for entry in self.nic_plans[nic].entries:
            if entry.table == "ev_path":
                params = dict(entry.params)
                out[dict(entry.match)["ev"]] = (params["plane"], names[params["t1_usid"]])
        return out

    def counter(self, nic: str, index: int) -> int:
        """Packets counted at `index` of the NIC's `nic_counter`."""
        return self.fabric.switch(nic).engine.counter("nic_counter").read(index)[0]

    def inject_loss(self, nic: str, probability: float, plane: int | None = None) -> None:
        """Drop what arrives at `nic` (on `plane`, or on every plane) with `probability`: the
        NIC's inline loss injector, set by a table entry as the paper's loss experiments did."""
        threshold = min(int(probability * (1 << 32)), (1 << 32) - 1)
        match = {} if plane is None else {"plane": (plane, 0x7)}
        entry = PlannedEntry.make("loss_injector", match, "drop_randomly",
                                  {"threshold": threshold}, priority=1)
        session = self._session(nic)
        session.insert(to_table_entry(session.schema, entry))

    def queue_drops(self) -> dict[str, int]:
        """Tail drops (full egress queues) so far, per device that had any."""
        drops = {n.name: n.device.queues.dropped for n in self.fabric.switches}
        return {name: count for name, count in drops.items() if count}

    def events(self, nic: str) -> list[EvEvent]:
        """The EV events the NIC has sent so far (digests on its P4Runtime stream, acked)."""
        end = self.nics[nic]
        session = self._session(nic)
        while (digest := session.get_digest(timeout=0.2)) is not None:
            session.ack_digest(digest)
            for fields in digest.data:   # one dict per ev_event_t
                end.events.append(EvEvent(
                    nic, fields["conn"], fields["profile"], fields["ev"],
                    EV_STATES.get(fields["state"], str(fields["state"])), fields["drops"]))
        return list(end.events)

    # -- running ------------------------------------------------------------------------------

    def every(self, period_us: int, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call `fn(now_us)` every `period_us` of virtual time (a controller loop, a probe);
        returns what stops it."""
        self._periodic.append((period_us, fn))
        self._next_periodic.append(self.now + period_us)

        def cancel() -> None:
            for i, (_, registered) in enumerate(self._periodic):
                if registered is fn:
                    del self._periodic[i], self._next_periodic[i]
                    return
        return cancel

    def managed_nics(self) -> list[ManagedNic]:
        """Every NIC as the repair loop sees it (its session, connection, planned EV paths)."""
        return [ManagedNic(name, DirectNic(self._session(name), name),
                           {end.connection.conn: end.connection.peer},
                           self.profile, [e for e in self.nic_plans[name].entries
                                          if e.table == "ev_path"])
                for name, end in self.nics.items()]

    def step(self) -> None:
        for i, (period, fn) in enumerate(self._periodic):
            if self.now >= self._next_periodic[i]:
                fn(self.now)
                self._next_periodic[i] = self.now + period
        fabric = self.fabric
        fabric.run_until_idle()
        now = self.clock()
        for end in self.nics.values():
            for frame in end.wire.take():
                end.transport.on_frame(frame, now)
            for frame in end.transport.poll(now):
                end.wire.send(frame)
        fabric.run_until_idle()
        moves = fabric.next_event_ns()   # a queue departure, a packet's arrival
        later = now + self.poll_us if moves is None else min(now + self.poll_us,
                                                             math.ceil(moves / 1000))
        self.clock.advance_to(max(now + 1, later) * 1000)

    def run(self, until: Callable[[], bool] | None = None, limit_us: int = 1_000_000) -> None:
        """Step until `until()` (default: every transport's writes acknowledged); TimeoutError
        when `limit_us` of virtual time pass first."""
        until = until or self.idle
        end = self.now + limit_us
        while not until():
            if self.now >= end:
                raise TimeoutError(f"not done after {limit_us} µs of virtual time")
            self.step()

    def run_for(self, us: int) -> None:
        end = self.now + us
        self.run(lambda: self.now >= end, limit_us=us + 1)

    def idle(self) -> bool:
        return all(end.transport.sender.done for end in self.nics.values())

    def close(self) -> None:
        for end in self.nics.values():
            if end.session is not None:
                end.session.close()
        self.fabric.close()

    def __enter__(self) -> NicFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def program_nic(node: FabricSwitch, nic_plan: NicPlan,
                ack_timeout_ns: int = 1_000_000_000, timeout: float = 10.0) -> SwitchConnection:
    """Program a NIC of an in-process fabric (it runs its program already) over a primary
    P4Runtime session, which is returned open: its entries, clone sessions and the EV-event
    digest (`ack_timeout_ns` 0: every event is sent, acknowledged or not). `timeout`: wall
    seconds the connection and each RPC may take."""
    session = SwitchConnection(node.grpc_address, node.device.device_id, election_id=(0, 1),
                               rpc_timeout=max(timeout, 30.0))
    session.connect(timeout)
    session.get_pipeline()  # the NIC already runs the program: adopt its P4Info
    schema = session.schema
    for _, updates in diff(schema, nic_plan.entries, []).phases(schema):
        session.write(updates)
    session.insert([CloneSessionEntry(sid).add(port)
                    for sid, port in sorted(nic_plan.clone_sessions().items())])
    session.insert(DigestEntry(schema, EV_EVENT_DIGEST, ack_timeout_ns=ack_timeout_ns))
    return session


@dataclass(frozen=True)
class WriteResult:
    """One timed write: virtual µs to completion, the wall seconds the emulation took, data
    packets sent and retransmitted, the sender's EVs left ASSUMED_BAD, and whether every byte
    arrived."""

    virtual_us: int
    wall_seconds: float
    sent: int
    retransmitted: int
    assumed_bad: list[int]
    intact: bool


def timed_write(fab: NicFabric, sender: str, receiver: str, size: int, *,
                cut: tuple[str, int] | None = None, cut_at_us: int = 250, va: int = 0x1000,
                seed: int = 7, limit_us: int = 1_000_000) -> WriteResult:
    """Write `size` seeded random bytes from `sender` to `receiver`, cutting the cable on `cut`
    (switch, port) `cut_at_us` into it, and run until the write is acknowledged."""
    data = random.Random(seed).randbytes(size)
    started, start_us = time.perf_counter(), fab.now
    transport = fab.host(sender).sender
    transport.write(data, va)
    if cut is not None:
        fab.run_for(cut_at_us)
        fab.fabric.set_link_up(*cut, False)
    fab.run(limit_us=limit_us)
    memory = fab.host(receiver).receiver.memory
    bad = [ev for ev, state in fab.ev_states(sender).items() if state == "ASSUMED_BAD"]
    return WriteResult(fab.now - start_us, time.perf_counter() - started,
                       transport.counters["sent"], transport.counters["retransmitted"], bad,
                       bytes(memory[va:va + size]) == data)
