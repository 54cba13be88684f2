"""Controller push rate to softswitch: planned entries written per second over P4Runtime.

- `push_one_switch`: one `softswitch run --no-p4` process (as simple_switch_grpc is run), a T0's
  real plan topped up with extra /64 routes to `entries` (route_v6 holds 4,096, sizes.p4); the first push (pipeline + inserts)
  and the second (read back, diff, nothing to write) are timed separately.
- `push_fabric`: `topologies/medium.yaml` (48 switches) as an in-process fabric, the whole plan
  pushed concurrently. Servers and controller share this process (and its GIL), so this is the
  rate of the whole system on one core, not of the controller alone.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from controller.devices.push import push
from controller.devices.session import Program
from controller.fabric_up import build_fabric
from controller.plan.entries import PlannedEntry
from controller.plan.plan import build_plan
from controller.topology import yaml_io
from controller.topology.generate import generate
from controller.topology.model import Endpoint

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
MEDIUM = ROOT / "topologies" / "medium.yaml"


@dataclass
class PushRate:
    name: str
    count: int  # entries
    seconds: float
    unit: str = "entries/s"

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _softswitch_process(device_id: int) -> Iterator[str]:
    address = f"127.0.0.1:{_free_port()}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "softswitch.cli", "run", "--no-p4", "--device-id", str(device_id),
         "--priority-queues", "8", "--", "--grpc-server-addr", address, "--cpu-port", "255"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "ready" in line:
                break
        else:
            raise RuntimeError("softswitch run exited before it was ready")
        yield address
    finally:
        proc.terminate()
        proc.wait(10)


def bench_push_one_switch(program: Program, entries: int = 4_000) -> list[PushRate]:
    topology = generate(1, 8, 32)
    plan = build_plan(topology)
    t0 = topology.switches[0]
    planned = list(plan.switch(t0.name))
    block = plan.block
    extra = entries - len(planned)
    # /64 routes under a made-up uSID (plane 13 does not exist here, so no clash).
    planned += [PlannedEntry.make("route_v6", {"dst_addr": (block | 0xE000 << 80 | i << 64, 64)},
                                  "forward", {"port": 4 + i % 4, "smac": 1, "dmac": 2})
                for i in range(max(0, extra))]
    with _softswitch_process(t0.endpoint.device_id if t0.endpoint else 1) as address:
        endpoint = replace(t0.endpoint or Endpoint(address), grpc_address=address)
        one = replace(topology, switches=[replace(t0, endpoint=endpoint)])
        started = time.perf_counter()
        first = push(one, {t0.name: planned}, program)
        first_seconds = time.perf_counter() - started
        started = time.perf_counter()
        second = push(one, {t0.name: planned}, program)
        second_seconds = time.perf_counter() - started
    if not (first.ok and second.ok) or second.written:
        raise RuntimeError(first.summary() + "\n" + second.summary())
    return [PushRate("push_one_switch", first.written, first_seconds),
            PushRate("reconcile_one_switch", second.switch(t0.name).unchanged, second_seconds,
                     "entries checked/s")]


def bench_push_fabric(program: Program) -> PushRate:
    topology = yaml_io.load(MEDIUM)
    plan = build_plan(topology)
    fabric, running = build_fabric(topology, ephemeral_ports=True)
    try:
        started = time.perf_counter()
        report = push(running, plan, program)
        seconds = time.perf_counter() - started
    finally:
        fabric.close()
    if not report.ok:
        raise RuntimeError(report.summary())
    # Dominated by 48 pipeline pushes (each switch builds its engine from the IR JSON).
    return PushRate(f"push_fabric_{len(topology.switches)}_switches", report.written, seconds,
                    "entries/s, pipelines incl.")


def run_all(entries: int = 4_000) -> list[PushRate]:
    program = Program.compile(PROGRAM)
    return [*bench_push_one_switch(program, entries), bench_push_fabric(program)]


if __name__ == "__main__":
    for result in run_all():
        print(f"controller.{result.name:<28} {result.count:>9} {result.seconds:>8.2f} "
              f"{result.rate:>10.0f}  {result.unit}")
