"""Push a plan to every switch of a topology, concurrently, writing only the difference.

Per switch (one asyncio task each, at most `concurrency` at once): connect and arbitrate with
the endpoint's election id and role (a backup stops there, reported); push the pipeline unless
the switch already runs it (cookie); read what the switch holds; write the difference
(reconcile.compare) in batches. So pushing twice writes nothing, and a restarted or wiped switch
is repaired by the next push. A switch that holds none of the plan's entries is written while the
plan is still being checked (reconcile.fresh_phases). A failure on one switch never stops the
others.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from controller.devices.codec import PlanCodec
from controller.devices.reconcile import compare, fresh_phases, read_back, read_requests
from controller.devices.session import Program, Session
from controller.devices.target_programs import program_for
from controller.devices.trim_sessions import sync_trim_sessions
from controller.plan.entries import PlannedEntry
from controller.plan.switch_plan import TrimSession
from controller.topology.model import Switch, Topology
from p4rt.client import DEFAULT_BATCH_SIZE
from p4rt.protowire import collections_deferred
from p4rt.role_config import pack_role_config
from softswitch.errors import ControlPlaneError

ERRORS_SHOWN = 5  # per switch in the summary; SwitchReport.errors keeps them all


class PlanLike(Protocol):
    def switch(self, name: str) -> list[PlannedEntry]: ...


@dataclass
class SwitchReport:
    """What happened on one switch."""

    name: str
    address: str = ""
    status: str = "pending"  # "ok", "failed", "backup"
    pipeline_pushed: bool = False
    inserted: int = 0
    modified: int = 0
    deleted: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    started: float = 0.0   # wall-clock time (time.time()) the push of this switch began

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def written(self) -> int:
        return self.inserted + self.modified + self.deleted

    def line(self) -> str:
        pipeline = "pipeline pushed" if self.pipeline_pushed else "pipeline kept"
        text = (f"{self.name:<14} {self.status:<7} {self.address:<22} {pipeline:<15} "
                f"+{self.inserted} ~{self.modified} -{self.deleted} ={self.unchanged} "
                f"({self.seconds:.2f} s)")
        if self.errors:
            text += f"  {len(self.errors)} error(s): {self.errors[0]}"
            if len(self.errors) > 1:
                text += f" (and {len(self.errors) - 1} more)"
        return text


@dataclass
class PushReport:
    switches: list[SwitchReport]
    seconds: float = 0.0
    # client CPU time of the push (this process's threads; with worker processes, theirs too)
    cpu_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(report.ok for report in self.switches)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def failed(self) -> list[SwitchReport]:
        return [report for report in self.switches if not report.ok]

    @property
    def written(self) -> int:
        return sum(report.written for report in self.switches)

    def switch(self, name: str) -> SwitchReport:
        for report in self.switches:
            if report.name == name:
                return report
        raise KeyError(name)

    def summary(self) -> str:
        """A table, one line per switch, then the totals."""
        header = (f"{'switch':<14} {'status':<7} {'address':<22} {'pipeline':<15} "
                  "+inserted ~modified -deleted =unchanged")
        lines = [header, *(report.line() for report in self.switches)]
        total = self.switches
        lines.append(
            f"{len(total)} switch(es), {len(self.failed)} failed; entries: "
            f"+{sum(r.inserted for r in total)} ~{sum(r.modified for r in total)} "
            f"-{sum(r.deleted for r in total)} ={sum(r.unchanged for r in total)}; "
            f"{self.seconds:.2f} s")
        for report in self.failed:
            for error in report.errors[:ERRORS_SHOWN]:
                lines.append(f"error: {report.name}: {error}")
            if len(report.errors) > ERRORS_SHOWN:
                lines.append(f"error: {report.name}: ... and "
                             f"{len(report.errors) - ERRORS_SHOWN} more")
        return "\n".join(lines)


class Progress:
    """Progress on a terminal: one updating line on a tty, a plain line per switch otherwise."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.failed = 0
        self.written = 0
        self.started = time.monotonic()

    def finished(self, report: SwitchReport) -> None:
        self.done += 1
        self.failed += not report.ok
        self.written += report.written
        if self.tty:
            elapsed = time.monotonic() - self.started
            self.stream.write(f"\r\x1b[Kpush: {self.done}/{self.total} switches, "
                              f"{self.failed} failed, {self.written} entries written, "
                              f"{elapsed:.1f} s")
        else:
            self.stream.write(f"push: [{self.done}/{self.total}] {report.line()}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.done:
            self.stream.write("\n")
            self.stream.flush()


def _entries_of(plan: PlanLike | Mapping[str, Sequence[PlannedEntry]],
                name: str) -> list[PlannedEntry]:
    if isinstance(plan, Mapping):
        return list(plan.get(name, ()))
    return list(plan.switch(name))


async def push_switch(switch: Switch, entries: Sequence[PlannedEntry], program: Program, *,
                      batch_size: int = DEFAULT_BATCH_SIZE, rpc_timeout: float = 30.0,
                      connect_timeout: float = 10.0,
                      trim_sessions: Sequence[TrimSession] = ()) -> SwitchReport:
    """Bring one switch to its planned entries (and a Tofino switch's trim clone sessions);
    never raises for a switch-side problem."""
    started = time.monotonic()
    report = SwitchReport(switch.name, started=time.time())
    if switch.endpoint is None:
        report.status = "failed"
        report.errors.append("the topology gives no P4Runtime endpoint for this switch")
        return report
    report.address = switch.endpoint.grpc_address
    session = Session(switch.name, switch.endpoint, rpc_timeout=rpc_timeout,
                      connect_timeout=connect_timeout, batch_size=batch_size)
    try:
        if switch.endpoint.role_config is not None:
            session.role_config = pack_role_config(program.schema, switch.endpoint.role_config)
        if not await session.connect():
            report.status = "backup"
            session.require_primary()  # raises NotPrimaryError with the election ids
        report.pipeline_pushed = await session.ensure_pipeline(program)
        schema = program.schema
        codec = PlanCodec(schema)
        current = await session.read_encoded(read_requests(schema, entries))
        with collections_deferred():
            have = read_back(codec, current)
            del current
            if have:
                difference = compare(codec, entries, have)
                report.unchanged = difference.unchanged
                phases = difference.encoded_phases(codec)
            else:   # a new or wiped switch: writing starts at once
                phases = fresh_phases(codec, entries)
        for kind, updates in phases:
            failed = await session.write_encoded(updates)
            setattr(report, kind, updates.count - len(failed))
            report.errors.extend(str(error) for error in failed)
        if trim_sessions:
            synced = await sync_trim_sessions(session, trim_sessions)
            report.inserted += synced.inserted
            report.modified += synced.modified
            report.unchanged += synced.unchanged
            report.errors.extend(synced.errors)
        if report.status != "backup":
            report.status = "failed" if report.errors else "ok"
    except (ControlPlaneError, ValueError) as error:
        if report.status != "backup":
            report.status = "failed"
        report.errors.append(str(error))
    except Exception as error:  # one switch's surprise must not stop the others
        report.status = "failed"
        report.errors.append(f"{type(error).__name__}: {error}")
    finally:
        await session.close()
        report.seconds = time.monotonic() - started
    return report


async def push_async(topology: Topology, plan: PlanLike | Mapping[str, Sequence[PlannedEntry]],
                     program: Program, *, concurrency: int = 64,
                     switches: Sequence[str] | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                     connect_timeout: float = 10.0, rpc_timeout: float = 30.0,
                     progress: Progress | None = None,
                     on_done: Callable[[SwitchReport], None] | None = None,
                     targets: Mapping[str, Program] | None = None) -> PushReport:
    """Push to every switch (or those named in `switches`), at most `concurrency` at once.

    `program` goes to `bmv2` switches; a switch of another target (tofino-stratum, tofino-pi)
    gets `targets[its target]`, and fails when there is none."""
    started = time.monotonic()
    chosen = [topology.switch(name) for name in switches] if switches else topology.switches
    limit = asyncio.Semaphore(max(1, concurrency))

    def prepare(switch: Switch
                ) -> tuple[list[PlannedEntry], Program, list[TrimSession]] | str:
        """(entries, program, trim sessions) for `switch`, or why it cannot be pushed."""
        try:
            chosen_program = program_for(switch, program, targets)
        except ValueError as error:
            return str(error)
        try:
            # only a Tofino switch trims by mirroring (BMv2 refuses the class of service)
            sessions = getattr(plan, "trim_sessions", None)
            trims = sessions(switch.name) if sessions and switch.target != "bmv2" else []
            return _entries_of(plan, switch.name), chosen_program, trims
        except (KeyError, ValueError) as error:
            return f"no plan for this switch: {error}"

    async def one(switch: Switch) -> SwitchReport:
        async with limit:
            ready = prepare(switch)
            if isinstance(ready, str):
                report = SwitchReport(switch.name, status="failed", errors=[ready])
            else:
                entries, chosen, trims = ready
                report = await push_switch(switch, entries, chosen, batch_size=batch_size,
                                           rpc_timeout=rpc_timeout,
                                           connect_timeout=connect_timeout,
                                           trim_sessions=trims)
        if progress is not None:
            progress.finished(report)
        if on_done is not None:
            on_done(report)
        return report

    reports = await asyncio.gather(*(one(switch) for switch in chosen))
    if progress is not None:
        progress.close()
    return PushReport(list(reports), time.monotonic() - started)


def push(topology: Topology, plan: PlanLike | Mapping[str, Sequence[PlannedEntry]],
         program: Program, *, concurrency: int = 64, switches: Sequence[str] | None = None,
         batch_size: int = DEFAULT_BATCH_SIZE, connect_timeout: float = 10.0, rpc_timeout: float = 30.0,
         progress: Progress | bool = False,
         targets: Mapping[str, Program] | None = None) -> PushReport:
    """`push_async` in its own event loop. `progress=True` reports on stderr."""
    shown = Progress(len(switches or topology.switches)) if progress is True else progress
    cpu = time.process_time()
    report = asyncio.run(push_async(topology, plan, program, concurrency=concurrency,
                                    switches=switches, batch_size=batch_size,
                                    connect_timeout=connect_timeout, rpc_timeout=rpc_timeout,
                                    progress=shown or None, targets=targets))
    report.cpu_seconds = time.process_time() - cpu
    return report
