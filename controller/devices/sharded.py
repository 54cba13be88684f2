"""A push whose throughput grows with cores: worker processes, each owning a share of the
devices (every `workers`-th switch), each running `push_async` for its share with its own event
loop, gRPC channels and codec. Each worker plans its own switches from the topology (planning is
deterministic), so only the topology, the program and the names cross the process boundary;
the reports come back and are merged into one.

    report = push_sharded(topology, program, workers=4)   # as push(), plan made per worker
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from multiprocessing.context import BaseContext

from controller.devices.push import PlanLike, PushReport, SwitchReport, push, push_async
from controller.devices.session import Program
from controller.topology.model import Topology

# What a worker plans its switches with, given the topology: a module-level callable (workers
# import it by name); `controller.plan.plan.build_plan` unless the caller names another.
PlanMaker = Callable[[Topology], PlanLike]


def _build_plan(topology: Topology) -> PlanLike:
    from controller.plan.plan import build_plan

    return build_plan(topology)


def _push_share(topology: Topology, p4info: bytes, device_config: bytes, names: list[str],
                concurrency: int, batch_size: int, connect_timeout: float,
                plan: PlanMaker, targets: dict[str, tuple[bytes, bytes]] | None = None
                ) -> tuple[list[SwitchReport], float]:
    """One worker's push: its reports and the CPU time it took (planning included)."""
    from finsy.proto import p4i

    cpu = time.process_time()
    program = Program(p4i.P4Info.FromString(p4info), device_config)
    by_target = {target: Program(p4i.P4Info.FromString(info), config)
                 for target, (info, config) in (targets or {}).items()}
    report = asyncio.run(push_async(topology, plan(topology), program,
                                    concurrency=concurrency, switches=names,
                                    batch_size=batch_size, connect_timeout=connect_timeout,
                                    targets=by_target))
    return report.switches, time.process_time() - cpu


def _context() -> BaseContext:
    """How workers start: not by fork, since the caller may run threads (gRPC, a fabric) that
    fork would copy mid-step. A fork server where there is one: a fresh process that imports
    the push and the planner once, from which each worker is forked (a spawned worker imports
    them again, about 0.4 s each, in parallel on the same cores); spawn elsewhere."""
    try:
        context = get_context("forkserver")
    except ValueError:   # no fork server on this platform
        return get_context("spawn")
    context.set_forkserver_preload([__name__, "controller.plan.plan"])
    return context


def push_sharded(topology: Topology, program: Program, *, workers: int,
                 switches: Sequence[str] | None = None, concurrency: int = 64,
                 batch_size: int = 1000, connect_timeout: float = 10.0,
                 plan: PlanMaker | None = None,
                 targets: Mapping[str, Program] | None = None) -> PushReport:
    """Push the topology's plan with `workers` processes (1: in this process, as `push`).

    `cpu_seconds` of the report is the client's CPU time: this process's and the workers'."""
    names = list(switches) if switches else [s.name for s in topology.switches]
    make_plan = plan or _build_plan
    if workers <= 1:
        cpu = time.process_time()
        planned = make_plan(topology)
        report = push(topology, planned, program, concurrency=concurrency, switches=names,
                      batch_size=batch_size, connect_timeout=connect_timeout, targets=targets)
        report.cpu_seconds = time.process_time() - cpu
        return report
    started = time.monotonic()
    cpu = time.process_time()
    shares = [names[i::workers] for i in range(workers) if names[i::workers]]
    with ProcessPoolExecutor(len(shares), mp_context=_context()) as pool:
        # The P4Info travels as bytes (its protobuf class does not pickle by name).
        p4info = program.p4info.SerializeToString()
        sent = {target: (p.p4info.SerializeToString(), p.device_config)
                for target, p in (targets or {}).items()}
        futures = [pool.submit(_push_share, topology, p4info, program.device_config, share,
                               concurrency, batch_size, connect_timeout, make_plan, sent)
                   for share in shares]
        results = [future.result() for future in futures]
    reports = [report for share, _ in results for report in share]
    order = {name: i for i, name in enumerate(names)}
    reports.sort(key=lambda r: order[r.name])
    worker_cpu = sum(seconds for _, seconds in results)
    return PushReport(reports, time.monotonic() - started,
                      time.process_time() - cpu + worker_cpu)
