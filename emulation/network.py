"""A topology as an emulated network in virtual time: the fabric switch program on every switch,
the MRC NIC program on every NIC, all programmed over P4Runtime as real devices are, every
cable with the scenario's line rate and propagation delay (softswitch/fabric.py).

The NICs are programmed for one mode (emulation/modes.py) with their connections: one per
pair of NICs that write to each other, both ends (the peer's writes and the feedback for our
sends arrive on it). The NIC sessions stay open: the EV-event digests come over them, and
`settle_digests` waits (in wall time) until every digest a NIC has raised has arrived, so a
controller reading them at a virtual instant sees exactly what was raised before it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

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
)
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Verdict
from controller.topology.model import Topology
from emulation.modes import EcmpPaths, Mode, PinnedPath, nic_plan
from p4rt import SwitchConnection
from softswitch.clock import VirtualClock
from softswitch.fabric import Fabric
from softswitch.fabric import Host as FabricHost

DIGEST_WAIT_S = 5.0   # wall seconds a digest may take to arrive before something is wrong


@dataclass
class NicDevice:
    """One NIC: its connections (index -> NicConnection), the P4Runtime session, the wire to
    its host port, its plan, and how many EV-event digests it has raised."""

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


class Network:
    """See the module docstring. `close` (or `with`) stops the P4Runtime servers."""

    def __init__(self, topology: Topology, switch_program: Program, nic_program: str,
                 mode: Mode, pairs: Sequence[tuple[str, str]], *, rate_bps: float,
                 delay_ns: int, queue_packets: int, seed: int) -> None:
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
        self.nics: dict[str, NicDevice] = {}
        try:
            for node in self.fabric.switches:
                self.set_rates(node.name)
            self.push_switches()
            self._program_nics(pair_connections(pairs))
        except BaseException:
            self.close()
            raise

    # -- building -------------------------------------------------------------------------

    def set_rates(self, name: str) -> None:
        """A device's ports as the scenario's cables and buffers (again after a reboot)."""
        device = self.fabric.switch(name).device
        device.set_line_rate(None, self.rate_bps)
        device.set_queue_depth(None, self.queue_packets)
        if name in {n.name for n in self.topology.nics}:
            # The host port is the NIC's PCIe side, faster than all its planes together.
            device.set_line_rate(HOST_PORT, None)

    def push_switches(self, names: Sequence[str] | None = None) -> None:
        """Push the static plan (pipeline and entries) to `names` (default: every switch)."""
        report = push(self.running, self.plan, self.switch_program, switches=names)
        if not report.ok:
            raise RuntimeError("switch push failed:\n" + "\n".join(
                f"{r.name}: {e}" for r in report.switches for e in r.errors))

    def _program_nics(self, connections: dict[str, list[NicConnection]]) -> None:
        planner = NicPlanner(self.plan)
        for name, conns in connections.items():
            pinned = []
            if self.mode.pinned:
                for c in conns:
                    path = self.ecmp.pick(name, c, Verdict())
                    self.pinned[(name, c.conn)] = path
                    pinned.append(path)
            plan = nic_plan(planner, self.mode, name, conns, pinned)
            node = self.fabric.switch(name)
            # No ack cache: every event is sent, whatever was acknowledged when.
            session = program_nic(node, plan, ack_timeout_ns=0)
            nic = NicDevice(name, {c.conn: c for c in conns}, session,
                            self.fabric.host(nic_host_name(name)), plan)
            node.device.add_digest_listener(lambda _d, nic=nic: _raised(nic))
            self.nics[name] = nic

    # -- control ---------------------------------------------------------------------------

    def write_nic(self, nic: str, entries: Sequence[PlannedEntry], kind: str = "modify") -> None:
        """MODIFY (or INSERT) entries of a NIC over its session."""
        session = self.nics[nic].session
        built = [to_table_entry(session.schema, e) for e in entries]
        if kind == "insert":
            session.insert(built)
        else:
            session.modify(built)

    def settle_digests(self) -> None:
        """Wait until every EV-event digest raised so far has reached its session."""
        deadline = time.monotonic() + DIGEST_WAIT_S
        for nic in self.nics.values():
            while nic.session.digests_received < nic.raised:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{nic.name}: {nic.raised - nic.session.digests_received}"
                                       " EV event(s) raised but not received")
                time.sleep(0.0002)

    @property
    def now_us(self) -> int:
        return self.clock()

    def close(self) -> None:
        for nic in self.nics.values():
            nic.session.close()
        self.fabric.close()

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _raised(nic: NicDevice) -> None:
    nic.raised += 1
