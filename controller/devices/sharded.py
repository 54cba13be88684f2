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
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from controller.devices.push import PushReport, SwitchReport, push, push_async
from controller.devices.session import Program
from controller.topology.model import Topology


def _push_share(topology: Topology, p4info: bytes, device_config: bytes, names: list[str],
                concurrency: int, batch_size: int, connect_timeout: float) -> list[SwitchReport]:
    from finsy.proto import p4i

    from controller.plan.plan import build_plan

    program = Program(p4i.P4Info.FromString(p4info), device_config)
    report = asyncio.run(push_async(topology, build_plan(topology), program,
                                    concurrency=concurrency, switches=names,
                                    batch_size=batch_size, connect_timeout=connect_timeout))
    return report.switches


def push_sharded(topology: Topology, program: Program, *, workers: int,
                 switches: Sequence[str] | None = None, concurrency: int = 64,
                 batch_size: int = 1000, connect_timeout: float = 10.0) -> PushReport:
    """Push the topology's plan with `workers` processes (1: in this process, as `push`)."""
    names = list(switches) if switches else [s.name for s in topology.switches]
    if workers <= 1:
        from controller.plan.plan import build_plan

        return push(topology, build_plan(topology), program, concurrency=concurrency,
                    switches=names, batch_size=batch_size, connect_timeout=connect_timeout)
    started = time.monotonic()
    shares = [names[i::workers] for i in range(workers) if names[i::workers]]
    # spawn, not fork: the caller may run threads (gRPC, a fabric) that fork would copy mid-step.
    with ProcessPoolExecutor(len(shares), mp_context=get_context("spawn")) as pool:
        # The P4Info travels as bytes (its protobuf class does not pickle by name).
        p4info = program.p4info.SerializeToString()
        futures = [pool.submit(_push_share, topology, p4info, program.device_config, share,
                               concurrency, batch_size, connect_timeout) for share in shares]
        reports = [report for future in futures for report in future.result()]
    order = {name: i for i, name in enumerate(names)}
    reports.sort(key=lambda r: order[r.name])
    return PushReport(reports, time.monotonic() - started)
