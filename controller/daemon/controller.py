"""`mrc-ctl run`: the long-running controller.

One `DeviceKeeper` per switch and per NIC keeps the device programmed across restarts of either
side (keeper.py: push and reconcile on every connect); the repair loop (controller.repair) turns
the NICs' EV-event digests into a fabric health model and rewrites NIC path tables from it; link
probes (probes.py) show when a link taken out is healthy again. Everything is driven by
`poll(now_s)`: the caller says what time it is, so the same controller runs against hardware on
the wall clock (`run_forever`) and inside an emulated fabric in virtual time.

    controller = Controller(topology, switch_program, nic_program, nics, state=Path(".mrc-ctl"),
                            targets={"tofino-stratum": tna_switch}, nic_targets={...})
    controller.poll(now_s)        # again and again; controller.close() at the end

Every device gets the program of its target (`bmv2`, or a Tofino one from `targets`), the same
choice as `mrc-ctl push` (devices/target_programs.program_for), on every push and re-push.

What it keeps on disk (the state directory, repair/operator.py): `health.json` (declared down,
saved before the NICs are rewritten, read at start: a controller killed mid-repair finishes the
repair when it comes back), `status.json` (`mrc-ctl status`), `events.jsonl` (every EV event,
device connect/loss/reconcile, failed write, rewrite, probe result), `denied.json` (the
operator's deny-list). A bad `health.json` or `denied.json` refuses the start (OperatorError).

Becoming primary (start, restart, takeover) never undoes a repair: a NIC's `ev_path` entries are
kept as found and the health model takes in what they show (keeper.py `adopt`, repairer.py
`adopt`, rebuild.py), `health.json` is read again on a takeover, and the EVs the NIC's
`ev_state` register holds ASSUMED_BAD (raised while no controller listened) are evidence.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from controller.daemon.cable_activity import PortCounts, read_t0_ports
from controller.daemon.idle_probes import IdleSweep
from controller.daemon.keeper import DesiredState, DeviceKeeper, SyncReport
from controller.daemon.probe_rounds import ProbeRounds
from controller.daemon.probes import LinkProber, ProbeLoop
from controller.devices.session import Program
from controller.devices.target_programs import program_for_target
from controller.plan.nic_plan import (
    EV_EVENT_DIGEST,
    EV_STATES,
    MAX_EVS,
    EvProfile,
    NicConnection,
    NicPlan,
    NicPlanner,
)
from controller.plan.plan import FabricPlan
from controller.repair.correlate import FabricLink
from controller.repair.damping import Damper
from controller.repair.operator import write_status
from controller.repair.repairer import ManagedNic, Repairer
from controller.topology.model import Endpoint, Topology
from p4rt import PacketIn, RegisterEntry, SwitchConnection
from p4rt.errors import P4RuntimeClientError

SHOWN_EVENTS = ("device_ready", "device_down", "device_lost", "device_backup", "device_refused",
                "takeover", "write_failed", "link_down", "link_up", "switch_down", "switch_up",
                "probed_healthy", "verdict", "health_resumed", "health_rebuilt", "ev_found",
                "state_file_bad")
MISSING_SHOWN = 5  # devices named when a target has no program


@dataclass(frozen=True)
class NicSpec:
    """A NIC the controller programs: where its P4Runtime server is, its connections, and what
    it runs (topology.model.TARGETS: a Tofino NIC's SACK/NACK sessions cut their copies)."""

    endpoint: Endpoint
    connections: tuple[NicConnection, ...] = ()
    target: str = "bmv2"


@dataclass(frozen=True)
class DaemonConfig:
    """Timing rules (seconds of the clock `poll` is given)."""

    connect_timeout_s: float = 2.0   # real seconds: a connect attempt, on a worker thread
    retry_s: float = 0.5             # first reconnect back-off, doubling...
    max_retry_s: float = 30.0        # ...up to this
    takeover_s: float | None = None  # as a backup: take over after this long with no primary
    probe_interval_s: float = 0.1
    probe_successes: int = 3
    confirm_probes: int = 3          # lost probes in a row that confirm a suspect (repair/confirm.py)
    confirm_interval_s: float = 0.01  # one confirmation probe per suspect cable this often
    probe_timeout_s: float = 0.05    # a probe back later than this is lost (many RTTs)
    # Idle monitoring (daemon/idle_probes.py): every T0-T1 cable idle over the last interval
    # probed this often (0: off). Clustermapper's agents do it about every 1 ms from every node,
    # in the data plane; ours are the controller's PacketOuts (2,048 idle cables at 0.1 s: 20K
    # a second).
    idle_probe_interval_s: float = 0.1
    status_every_s: float = 1.0
    workers: int = 16                # threads connecting and reconciling devices
    writers: int = 16                # NICs a repair writes at once
    hold_s: float = 1.0              # flap damping (repair/damping.py): first hold-down...
    max_hold_s: float = 60.0         # ...doubling per flap up to this


class Controller:
    """See the module docstring."""

    def __init__(self, topology: Topology, switch_program: Program,
                 nic_program: Program | None = None,
                 nics: Mapping[str, NicSpec] | None = None, *, profile: EvProfile | None = None,
                 state: Path | None = None, config: DaemonConfig | None = None,
                 election_id: tuple[int, int] | None = None,
                 targets: Mapping[str, Program] | None = None,
                 nic_targets: Mapping[str, Program] | None = None,
                 echo: Callable[[str], None] | None = None, settle_s: float = 0.05,
                 **rules: float) -> None:
        """Each device gets the program of its target, as `mrc-ctl push` chooses it
        (devices/target_programs.program_for): `switch_program` / `nic_program` on `bmv2`, `targets` /
        `nic_targets` (target -> Program, e.g. bf-p4c's output packed for it) on a Tofino
        target; ValueError naming the devices none is given for. `election_id` replaces every
        endpoint's (a second controller runs with a lower one as the backup); `echo` gets one
        line per notable event (stderr by default); `rules` are the Correlator's
        (repair/correlate.py)."""
        nics = dict(nics or {})
        # Checked before anything else: a fabric missing a program is refused whole, not
        # pushed in part.
        switch_programs = _programs_by_device(
            "switch", [(s.name, s.target) for s in topology.switches], switch_program, targets,
            "--tofino-out")
        nic_programs = _programs_by_device(
            "NIC", [(name, spec.target) for name, spec in nics.items()], nic_program,
            nic_targets, "--tofino-nic-out")
        self.topology = topology
        self.plan = FabricPlan(topology)
        self.config = config or DaemonConfig()
        self.state = state
        self.profile = profile or EvProfile()
        self.echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
        self._pool = ThreadPoolExecutor(self.config.workers, thread_name_prefix="mrc-ctl")
        planner = NicPlanner(self.plan)
        self.nic_plans: dict[str, NicPlan] = {
            name: planner.plan_nic(name, spec.connections, self.profile)
            for name, spec in nics.items()}
        self.keepers: dict[str, DeviceKeeper] = {}
        managed = []
        for name, spec in nics.items():
            keeper = self._keeper(name, spec.endpoint,
                                  self._nic_desired(name, nic_programs[name], spec.target),
                                  election_id, self._nic_synced,
                                  _ev_state_reader(spec.connections, self.nic_plans[name]))
            self.keepers[name] = keeper
            peers = {c.conn: c.peer for c in spec.connections}
            if not peers:   # no connection yet: keep its EVs off failures towards anyone
                peers = {-1 - i: n.name for i, n in enumerate(topology.nics) if n.name != name}
            managed.append(ManagedNic(name, keeper, peers, self.profile, [
                e for e in self.nic_plans[name].entries if e.table == "ev_path"]))
        self.repairer = Repairer(self.plan, managed, state=state, settle_s=settle_s,
                                 damper=Damper(self.config.hold_s, self.config.max_hold_s),
                                 writers=self.config.writers,
                                 confirm_probes=self.config.confirm_probes, **rules)
        self.repairer.on_record = self._echo_record
        self.repairer.status_of = lambda _now_s: self.status_json()
        c = self.config
        self.probes = ProbeRounds(
            LinkProber(self.plan, c.probe_interval_s, c.probe_successes),
            ProbeLoop(self.plan, c.confirm_interval_s, c.probe_timeout_s,
                      patience=c.confirm_probes, slow_interval_s=c.probe_interval_s),
            IdleSweep(self.plan, c.idle_probe_interval_s, c.probe_timeout_s,
                      read=self._t0_ports)
            if c.idle_probe_interval_s != 0 and c.confirm_probes > 0 else None)
        for switch in topology.switches:
            if switch.endpoint is None:
                raise ValueError(f"switch {switch.name} has no P4Runtime endpoint")
            entries = self.plan.switch(switch.name)
            # Only a Tofino switch trims by mirroring (BMv2 refuses the class of service).
            trims = self.plan.trim_sessions(switch.name) if switch.target != "bmv2" else []
            desired = DesiredState(switch_programs[switch.name], entries, trims)
            self.keepers[switch.name] = self._keeper(switch.name, switch.endpoint,
                                                     lambda d=desired: d, election_id, None)
        self._status_at: float | None = None
        self._states: tuple[str, ...] = ()
        self._resumed = False   # health.json read again for the takeover under way
        self.now_s = 0.0

    def _keeper(self, name: str, endpoint: Endpoint, desired: Callable[[], DesiredState],
                election_id: tuple[int, int] | None,
                on_ready: Callable[[DeviceKeeper, SyncReport], None] | None,
                observe: Callable[[SwitchConnection], object] | None = None) -> DeviceKeeper:
        if election_id is not None:
            endpoint = dataclasses.replace(endpoint, election_id=election_id)
        c = self.config
        return DeviceKeeper(name, endpoint, desired, self._pool, self._record,
                            connect_timeout=c.connect_timeout_s, retry_s=c.retry_s,
                            max_retry_s=c.max_retry_s, takeover_s=c.takeover_s,
                            on_ready=on_ready, on_takeover=self._takeover, observe=observe)

    def _nic_desired(self, name: str, program: Program,
                     target: str) -> Callable[[], DesiredState]:
        nic_plan = self.nic_plans[name]
        fixed = [e for e in nic_plan.entries if e.table != "ev_path"]
        sessions = nic_plan.sessions(target)

        def desired() -> DesiredState:
            # The EV paths as the health model wants them now, not as first planned.
            # The entries it holds are kept as they are (`adopt`): the model learns from them.
            return DesiredState(program, [*fixed, *self.repairer.target(name)],
                                sessions, (EV_EVENT_DIGEST,), adopt=("ev_path",))
        return desired

    def _nic_synced(self, keeper: DeviceKeeper, report: SyncReport) -> None:
        observed = report.observed
        if isinstance(observed, str):   # the registers could not be read: no evidence lost
            self._record({"event": "ev_states_unread", "device": keeper.name, "error": observed})
        bad = observed if isinstance(observed, list) else []
        self.repairer.adopt(keeper.name, report.held, bad, self.now_s)

    def _takeover(self, keeper: DeviceKeeper) -> None:
        """A keeper is taking over from a primary that died: the first one reads the shared
        health model again (before any NIC is reconciled); every keeper arbitrates with its
        new election id from its next connect (a device down now, back later)."""
        if not self._resumed and not any(k.ready for k in self.keepers.values()):
            self.repairer.resume(self.now_s)
            self._resumed = True   # once for all the keepers taking over together
        for other in self.keepers.values():
            other.raise_election_id(keeper.election_id)

    # -- the loop ----------------------------------------------------------------------------

    def poll(self, now_s: float) -> None:
        """One round: devices connected and reconciled, EV events and idle probes taken and
        acted on, links probed, status written."""
        self.now_s = now_s
        for keeper in self.keepers.values():
            keeper.tick(now_s)
        # A backup writes none of the primary's state files (they may be shared).
        self.repairer.primary = any(k.ready for k in self.keepers.values())
        self._resumed = self._resumed and not self.repairer.primary
        received = self._packet_ins()
        # Suspects are confirmed (or cleared) by probes before the poll acts on anything.
        self.probes.take(self.repairer, now_s, received)
        self.repairer.poll(now_s)
        self.probes.send(self.repairer, now_s, received, self._send_probe, self._unready_cables())
        states = tuple(k.state for k in self.keepers.values())
        if self.state is not None and (states != self._states or self._status_at is None or
                                       now_s - self._status_at >= self.config.status_every_s):
            self._status_at, self._states = now_s, states
            write_status(self.state, self.status_json())

    def _packet_ins(self) -> list[PacketIn]:
        out: list[PacketIn] = []
        for switch in self.plan.topology.switches:
            keeper = self.keepers[switch.name]
            if keeper.ready and keeper.session is not None:
                while (packet := keeper.session.get_packet_in(timeout=0)) is not None:
                    out.append(packet)
        return out

    def _unready_cables(self) -> set[FabricLink]:
        """The cables of the switches not programmed yet (bring-up, a reboot being re-pushed):
        they cannot answer and the controller knows why, so the idle sweep leaves them out."""
        if self.probes.idle is None:
            return set()
        unready = {name for name, keeper in self.keepers.items()
                   if not keeper.ready and name not in self.nic_plans}
        return {link for link in self.probes.idle.cables
                if link[1] in unready or link[2] in unready} if unready else set()

    def _t0_ports(self, t0: str) -> PortCounts | None:
        """A T0's port counters (the idle sweep's look at traffic); None when it cannot be read
        now (its cables then count as busy: nothing is known)."""
        keeper = self.keepers[t0]
        if not keeper.ready or keeper.session is None:
            return None
        try:
            return read_t0_ports(keeper.session)
        except P4RuntimeClientError as error:
            self._record({"event": "counters_unread", "device": t0, "error": str(error)})
            return None

    def _send_probe(self, t0: str, port: int, frame: bytes) -> bool:
        keeper = self.keepers[t0]
        if not keeper.ready or keeper.session is None:
            return False
        keeper.session.packet_out(frame, egress_port=port, pad=0)
        return True

    def ready(self) -> bool:
        """Every device is primary-programmed (a backup controller never is)."""
        return all(k.ready for k in self.keepers.values())

    def states(self) -> dict[str, str]:
        return {name: k.state for name, k in self.keepers.items()}

    def status_json(self) -> dict[str, object]:
        status = self.repairer.status_json(self.now_s)
        status["devices"] = {state: sorted(n for n, k in self.keepers.items() if k.state == state)
                             for state in ("down", "connecting", "backup", "refused")
                             if any(k.state == state for k in self.keepers.values())}
        idle = self.probes.idle
        if idle is not None:
            status["idle_probes"] = {"interval_s": idle.interval_s, "sent": idle.sent,
                                     "lost": idle.lost}
        status["devices_ready"] = sum(k.ready for k in self.keepers.values())
        status["devices_total"] = len(self.keepers)
        return status

    def _record(self, record: dict[str, object]) -> None:
        self.repairer.record([record], self.now_s)

    def _echo_record(self, record: dict[str, object]) -> None:
        kind = record.get("event")
        if kind not in SHOWN_EVENTS:
            return
        if kind in ("write_failed", "state_file_bad"):
            self.echo(str(record["message"]))
            return
        rest = " ".join(f"{k}={v}" for k, v in record.items() if k not in ("event", "at_s"))
        self.echo(f"mrc-ctl: {kind} {rest}")

    def close(self) -> None:
        for keeper in self.keepers.values():
            keeper.close()
        self.repairer.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Controller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _programs_by_device(kind: str, devices: Sequence[tuple[str, str]], program: Program | None,
                        targets: Mapping[str, Program] | None,
                        option: str) -> dict[str, Program]:
    """name -> Program for (name, target) devices (target_programs.program_for_target); one ValueError
    naming the devices (the first few) of the first target that has none."""
    chosen: dict[str, Program] = {}
    missing: dict[str, tuple[list[str], str]] = {}
    for name, target in devices:
        try:
            chosen[name] = program_for_target(target, program, targets, option)
        except ValueError as error:
            missing.setdefault(target, ([], str(error)))[0].append(name)
    if missing:
        names, reason = next(iter(missing.values()))
        shown = ", ".join(names[:MISSING_SHOWN])
        more = f" and {len(names) - MISSING_SHOWN} more" if len(names) > MISSING_SHOWN else ""
        raise ValueError(f"{kind} {shown}{more}: {reason}")
    return chosen


def _ev_state_reader(connections: Sequence[NicConnection], plan: NicPlan
                     ) -> Callable[[SwitchConnection], list[tuple[int, int]] | str]:
    """What a NIC keeper reads on becoming primary: the (connection, EV)s its `ev_state`
    register holds ASSUMED_BAD (index conn * 256 + EV; readable on BMv2 and Tofino alike),
    each connection's EVs being those its plan has `ev_path` entries for; the error instead
    when the register cannot be read."""
    evs = sorted({dict(e.match)["ev"] for e in plan.entries if e.table == "ev_path"})
    cells = [c.conn * MAX_EVS + ev for c in connections for ev in evs]
    bad = next(code for code, name in EV_STATES.items() if name == "ASSUMED_BAD")

    def read(session: SwitchConnection) -> list[tuple[int, int]] | str:
        if not cells or session.schema is None:
            return []
        try:
            found = session.read([RegisterEntry(session.schema, "ev_state", i) for i in cells])
            return [divmod(int(e.index or 0), MAX_EVS) for e in found
                    if isinstance(e, RegisterEntry) and e.value == bad]
        except P4RuntimeClientError as error:
            return str(error)
    return read


def run_forever(controller: Controller, stop: threading.Event, period_s: float = 0.01,
                clock: Callable[[], float] = time.monotonic) -> None:
    """Poll on the wall clock every `period_s` until `stop` is set."""
    start = clock()
    while not stop.is_set():
        controller.poll(clock() - start)
        stop.wait(period_s)


def nic_specs(endpoints: Mapping[str, Endpoint],
              connections: Mapping[str, Sequence[NicConnection]],
              targets: Mapping[str, str] | None = None) -> dict[str, NicSpec]:
    """NicSpecs from an inventory's parts (inventory.load_nics); a NIC not in `targets` is
    `bmv2`."""
    return {name: NicSpec(endpoint, tuple(connections.get(name, ())),
                          (targets or {}).get(name, "bmv2"))
            for name, endpoint in endpoints.items()}

