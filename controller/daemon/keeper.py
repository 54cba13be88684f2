"""One device kept as planned: connect, arbitrate, push the pipeline unless it already runs,
read back and write only the difference — and all of it again whenever the device or the
controller restarts, with no operator action.

States: `down` → `connecting` → `backup` | `ready`; a stream that ends (the device rebooted, the
network broke) takes a device back to `down`, and it is tried again with a doubling back-off.
A desired state no retry can write (two planned entries for one key) makes it `refused`: said
once, never retried.
Connecting and reconciling run on a worker thread, so an unreachable or slow device never holds
up the controller's loop; `tick(now_s)` moves the state on, and is all the loop calls.

A backup writes nothing. When its device announces that there is no primary any more (the
primary controller died) and that lasts `takeover_s`, the backup arbitrates again with an
election id above the highest the device has seen (P4Runtime 1.3+: only such an id becomes
primary), then reconciles: reading back and writing only what is not already right.

Tables the desired state `adopt`s (a NIC's `ev_path`) are the health model's, not the plan's:
an entry the device holds is kept as it is and reported (`SyncReport.held`), only a missing one
is written. So becoming primary (start, restart, takeover) never rewrites what a previous
primary repaired; the controller learns from the report instead (repair/rebuild.py). An
`observe` hook reads what else the controller wants to know from the device on the same worker
thread (a NIC's EV-state registers), into `SyncReport.observed`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from finsy.proto import p4r, rpc_code

from controller.devices.codec import PlanCodec
from controller.devices.logged_write import write_each
from controller.devices.reconcile import PlanConflict, compare, read_back, read_requests
from controller.devices.session import Program, channel_credentials
from controller.devices.trim_sessions import held_sessions, session_changes
from controller.plan.entries import PlannedEntry
from controller.plan.switch_plan import TrimSession
from controller.topology.model import Endpoint
from p4rt import CloneSessionEntry, DigestEntry, SwitchConnection
from p4rt.client import ResponseType, to_update
from p4rt.entities import INSERT
from p4rt.errors import P4RuntimeClientError, P4RuntimeRpcError
from p4rt.role_config import pack_role_config

Log = Callable[[dict[str, object]], None]


@dataclass(frozen=True)
class DesiredState:
    """What a device should hold: its program, table entries, clone sessions (each to one
    port, with its class of service and truncation length: a NIC's SACK/NACK copies, a Tofino
    switch's trim copies) and the digests whose lists the controller receives."""

    program: Program
    entries: Sequence[PlannedEntry]
    clone_sessions: Sequence[TrimSession] = ()
    digests: tuple[str, ...] = ()
    adopt: tuple[str, ...] = ()   # tables whose entries the device holds are kept as they are


@dataclass
class SyncReport:
    """One reconciliation: the desired state used and what was written."""

    desired: DesiredState
    pipeline_pushed: bool = False
    written: int = 0
    unchanged: int = 0
    failed: int = 0
    seconds: float = 0.0
    held: list[PlannedEntry] = field(default_factory=list)   # the adopted tables' entries now
    observed: object = None   # what the keeper's `observe` read


class DeviceKeeper:
    """Keeps the device at `endpoint` holding `desired()` (see the module docstring)."""

    def __init__(self, name: str, endpoint: Endpoint, desired: Callable[[], DesiredState],
                 pool: ThreadPoolExecutor, log: Log, *, connect_timeout: float = 2.0,
                 retry_s: float = 0.5, max_retry_s: float = 30.0,
                 takeover_s: float | None = None,
                 on_ready: Callable[[DeviceKeeper, SyncReport], None] | None = None,
                 on_takeover: Callable[[DeviceKeeper], None] | None = None,
                 observe: Callable[[SwitchConnection], object] | None = None) -> None:
        self.name = name
        self.endpoint = endpoint
        self.desired = desired
        self.election_id = endpoint.election_id
        self.state = "down"
        self.session: SwitchConnection | None = None
        self.last_sync: SyncReport | None = None
        self.syncs = 0
        self._pool = pool
        self._log = log
        self._connect_timeout = connect_timeout
        self._retry_s = retry_s
        self._max_retry_s = max_retry_s
        self._retry = retry_s
        self._next_try = 0.0
        self._takeover_s = takeover_s
        self._no_primary_since: float | None = None
        self._on_ready = on_ready
        self._on_takeover = on_takeover
        self._observe = observe
        self._job: Future[tuple[str, SwitchConnection, SyncReport | None]] | None = None

    @property
    def ready(self) -> bool:
        """Primary, reconciled, and its stream still up: writes may go to it."""
        return (self.state == "ready" and self.session is not None
                and self.session.stream_open and self.session.is_primary)

    def raise_election_id(self, election_id: tuple[int, int]) -> None:
        """Arbitrate with at least `election_id` from the next connect on: a controller that
        took over elsewhere holds one id everywhere (a device that was down during the takeover
        would otherwise get its old one, which another controller may hold or outbid). A connect
        under way with the old id is done again with the new one."""
        self.election_id = max(self.election_id, election_id)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the connect or reconcile on the worker thread is done (True at once when
        none runs; False after `timeout` s). The next `tick` takes its result: a caller in
        virtual time waits for gRPC's real time with this instead of sleeping."""
        job = self._job
        return job is None or bool(wait([job], timeout).done)

    # -- the state machine ----------------------------------------------------------------------

    def tick(self, now_s: float) -> None:
        if self._job is not None:
            if self._job.done():
                self._finish(now_s)
            return
        if self.state in ("ready", "backup") and not (self.session and self.session.stream_open):
            self._lost(now_s)
        elif self.state == "ready" and self.session is not None and not self.session.is_primary:
            # Another controller arbitrated with a higher election id: stop writing.
            self.state = "backup"
            self._log({"event": "device_backup", "device": self.name,
                       "election_id": list(self.election_id)})
        if self.state == "down" and now_s >= self._next_try:
            self.state = "connecting"
            self._job = self._pool.submit(self._connect, self.election_id)
        elif self.state == "backup":
            self._watch_primary(now_s)

    def _finish(self, now_s: float) -> None:
        assert self._job is not None
        job, self._job = self._job, None
        try:
            state, session, report = job.result()
        except PlanConflict as error:   # the plan's own bug: retrying would loop for ever
            self.session, self.state = None, "refused"
            self._log({"event": "device_refused", "device": self.name, "error": str(error)})
            return
        except (P4RuntimeClientError, OSError, ValueError) as error:
            self._down(now_s, str(error))
            return
        except Exception as error:   # one device's surprise must not stop the controller
            self._down(now_s, f"{type(error).__name__}: {error}")
            return
        if session.election_id != self.election_id:
            # The id was raised (a takeover) while this connect ran: the stream holds the old
            # one, which the next standby may want. Connect again at once with the new one.
            session.close()
            self.session, self.state, self._next_try = None, "down", now_s
            self._log({"event": "device_reconnect", "device": self.name,
                       "election_id": list(self.election_id),
                       "stale_election_id": list(session.election_id)})
            return
        self.session, self.state = session, state
        if state == "backup":
            self._log({"event": "device_backup", "device": self.name,
                       "election_id": list(self.election_id)})
            self._watch_primary(now_s)
            return
        assert report is not None
        self._retry = self._retry_s
        self.last_sync, self.syncs = report, self.syncs + 1
        self._log({"event": "device_ready", "device": self.name,
                   "pipeline_pushed": report.pipeline_pushed, "written": report.written,
                   "unchanged": report.unchanged, "failed": report.failed})
        if self._on_ready is not None:
            self._on_ready(self, report)

    def _down(self, now_s: float, reason: str) -> None:
        if self.session is not None:
            self.session.close()
        self.session, self.state = None, "down"
        self._next_try = now_s + self._retry
        self._log({"event": "device_down", "device": self.name, "error": reason,
                   "retry_in_s": round(self._retry, 6)})
        self._retry = min(self._retry * 2, self._max_retry_s)

    def _lost(self, now_s: float) -> None:
        error = self.session.stream_error if self.session is not None else None
        self._retry = self._retry_s   # it was up: try again at once, then back off
        self._next_try = now_s
        if self.session is not None:
            self.session.close()
        self.session, self.state = None, "down"
        self._log({"event": "device_lost", "device": self.name,
                   "error": str(error) if error else "stream closed"})

    def _watch_primary(self, now_s: float) -> None:
        session = self.session
        assert session is not None
        if session.is_primary:   # our re-arbitration was granted
            self.state = "connecting"
            self._job = self._pool.submit(self._reconcile_job, session)
            return
        update = session.last_arbitration
        if update is None or update.status.code != rpc_code.NOT_FOUND:
            self._no_primary_since = None   # another controller is primary
            return
        if self._no_primary_since is None:
            self._no_primary_since = now_s
        if self._takeover_s is None or now_s - self._no_primary_since < self._takeover_s:
            return
        high, low = update.election_id.high, update.election_id.low
        bumped = (high + (low + 1 >> 64), (low + 1) & (1 << 64) - 1)
        self.election_id = max(self.election_id, bumped)
        self._no_primary_since = None
        self._log({"event": "takeover", "device": self.name, "election_id": list(self.election_id)})
        if self._on_takeover is not None:   # before any reconcile as primary
            self._on_takeover(self)
        session.rearbitrate(self.election_id)

    # -- on the worker thread -------------------------------------------------------------------

    def _connect(self, election_id: tuple[int, int]
                 ) -> tuple[str, SwitchConnection, SyncReport | None]:
        e = self.endpoint
        desired = self.desired()
        role_config = (pack_role_config(desired.program.schema, e.role_config)
                       if e.role_config is not None else None)
        session = SwitchConnection(e.grpc_address, e.device_id, election_id, e.role,
                                   channel_credentials(e), rpc_timeout=30.0,
                                   role_config=role_config)
        try:
            if not session.connect(timeout=self._connect_timeout):
                return "backup", session, None
            return "ready", session, self.reconcile(session, desired)
        except BaseException:
            session.close()
            raise

    def _reconcile_job(self, session: SwitchConnection
                       ) -> tuple[str, SwitchConnection, SyncReport | None]:
        return "ready", session, self.reconcile(session)

    def reconcile(self, session: SwitchConnection,
                  desired: DesiredState | None = None) -> SyncReport:
        """Bring the device to `desired` (default `desired()`): pipeline by cookie, then
        entries, clone sessions and digests by reading back and writing the difference.
        Failed updates are logged one line each; a refused request or a lost connection
        raises."""
        started = time.monotonic()
        desired = desired or self.desired()
        report = SyncReport(desired)
        program = desired.program
        report.pipeline_pushed = self._ensure_pipeline(session, program)
        schema = program.schema
        session.schema = schema
        codec = PlanCodec(schema)
        have = read_back(codec, session.read_raw(read_requests(schema, desired.entries)))
        entries = adopted(codec, desired, have)
        difference = compare(codec, entries, have)
        report.held = [e for e in entries if e.table in desired.adopt]
        report.unchanged = difference.unchanged
        for _, kind, entries in difference.steps():
            self._count(report, self._write(
                session, [codec.update(kind, e) for e in entries],
                [f"{p4r.Update.Type.Name(kind)} {e.describe()}" for e in entries]))
        changes: list[tuple[int, CloneSessionEntry | DigestEntry]] = []
        if desired.clone_sessions:
            held = held_sessions(session.read_raw(CloneSessionEntry()))
            clones, same = session_changes(held, desired.clone_sessions)
            changes += clones
            report.unchanged += same
        for name in desired.digests:
            if list(session.read_raw(DigestEntry(schema, name))):
                report.unchanged += 1
            else:
                changes.append((INSERT, DigestEntry(schema, name)))
        if changes:
            self._count(report, self._write(
                session, [to_update(change) for change in changes],
                [f"{p4r.Update.Type.Name(kind)} {entity!r}" for kind, entity in changes]))
        if self._observe is not None:
            report.observed = self._observe(session)
        report.seconds = time.monotonic() - started
        return report

    @staticmethod
    def _count(report: SyncReport, ok: list[bool]) -> None:
        report.written += sum(ok)
        report.failed += len(ok) - sum(ok)

    def _ensure_pipeline(self, session: SwitchConnection, program: Program) -> bool:
        try:
            config = session.get_pipeline(ResponseType.COOKIE_ONLY)
            cookie = config.cookie.cookie if config.HasField("cookie") else 0
        except P4RuntimeRpcError as error:
            if error.code != "FAILED_PRECONDITION":   # no pipeline yet
                raise
            cookie = 0
        if cookie == program.cookie:
            return False
        session.set_pipeline(program.p4info, program.device_config, program.cookie)
        return True

    def write(self, updates: Sequence[p4r.Update], descriptions: Sequence[str]) -> list[bool]:
        """Write `updates` to this (ready) device; per update whether it was written (each
        failure logged as one line naming the device and the entry)."""
        if self.session is None:
            return [False] * len(updates)
        return self._write(self.session, updates, descriptions)

    def _write(self, session: SwitchConnection, updates: Sequence[p4r.Update],
               descriptions: Sequence[str]) -> list[bool]:
        return write_each(session, self.name, updates, descriptions, lambda line: self._log(
            {"event": "write_failed", "device": self.name, "message": line}))

    def close(self) -> None:
        if self._job is not None:
            self._job.cancel()
            try:
                _, session, _ = self._job.result(timeout=self._connect_timeout + 30)
                session.close()
            except Exception:   # closing: whatever the job ended with
                pass
            self._job = None
        if self.session is not None:
            self.session.close()
        self.session, self.state = None, "down"



def adopted(codec: PlanCodec, desired: DesiredState,
            have: dict[tuple[object, ...], PlannedEntry]) -> list[PlannedEntry]:
    """`desired.entries` with those of the adopted tables that the device holds (`have`, read
    back) replaced by what it holds: their action and parameters are not the keeper's to
    change."""
    if not desired.adopt:
        return list(desired.entries)
    out = []
    for entry in desired.entries:
        found = have.get(codec.canonical(entry).key) if entry.table in desired.adopt else None
        out.append(entry if found is None else
                   dataclasses.replace(entry, action=found.action, params=found.params))
    return out
