"""Controller push rate to softswitch: planned entries written per second over P4Runtime, with
the client's and the servers' CPU time per entry.

- `push_one_switch`: one `softswitch run --no-p4` process (as simple_switch_grpc is run), a T0's
  real plan topped up with extra /64 routes to `entries` (route_v6 holds 4,096, sizes.p4); the
  first push (pipeline + inserts) and the second (read back, diff, nothing to write) are timed
  separately.
- `push_large`: 60,000 routes (bench/p4/ipv6_lpm.p4, a 65,536-route table) to one `softswitch
  run` that already runs the pipeline: what `mrc-ctl push` writes per second to one switch;
  then `reconcile_large`, the same push again (read back, diff, nothing to write). Best of 3.
- `push_sharded_N_workers`: 4 `softswitch run` processes, 15,000 routes each, pushed with
  `push_sharded` (controller/devices/sharded.py) and 1, 2, 4 worker processes. The rate is over
  the whole call, the workers' start-up (a fresh interpreter each) included; `push_phase_rate`
  leaves it out (from the first switch's start to the last one's end). Client and servers
  share this machine's cores.
- `push_fabric`: `topologies/medium.yaml` (48 switches) as an in-process fabric, the whole plan
  pushed concurrently. Servers and controller share this process (and its GIL), so this is the
  rate of the whole system on one core, not of the controller alone.

Client CPU is the push's process time (the workers' too); server CPU is read from /proc (None
elsewhere).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from controller.devices.push import PushReport, push
from controller.devices.session import Program
from controller.devices.sharded import push_sharded
from controller.fabric_up import build_fabric
from controller.plan.entries import PlannedEntry
from controller.plan.plan import build_plan
from controller.topology import yaml_io
from controller.topology.generate import generate
from controller.topology.model import Endpoint, Topology
from p4rt.client import SwitchConnection

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
LPM_PROGRAM = ROOT / "bench" / "p4" / "ipv6_lpm.p4"
MEDIUM = ROOT / "topologies" / "medium.yaml"
LARGE = 60_000            # routes in push_large
SHARDED_SWITCHES = 4
SHARDED_ENTRIES = 15_000  # routes per switch in push_sharded
WORKERS = (1, 2, 4)
RUNS = 3                  # push_large: the best of this many


@dataclass
class PushRate:
    name: str
    count: int  # entries
    seconds: float
    unit: str = "entries/s"
    client_cpu_us: float | None = None  # per entry
    server_cpu_us: float | None = None  # per entry
    extra: dict[str, float] = field(default_factory=dict)  # more numbers for the JSON

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    @property
    def cpu_text(self) -> str:
        parts = []
        if self.client_cpu_us is not None:
            parts.append(f"client {self.client_cpu_us:.1f}")
        if self.server_cpu_us is not None:
            parts.append(f"server {self.server_cpu_us:.1f}")
        return f" (CPU µs/entry: {', '.join(parts)})" if parts else ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class _Server:
    address: str
    pid: int

    def cpu_seconds(self) -> float | None:
        """User + system CPU time of the process so far (Linux /proc), or None."""
        try:
            with open(f"/proc/{self.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _softswitch_process(device_id: int) -> Iterator[_Server]:
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
        yield _Server(address, proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)


def _servers_cpu(servers: Sequence[_Server]) -> float | None:
    times = [server.cpu_seconds() for server in servers]
    return None if None in times else sum(t for t in times if t is not None)


def _per_entry_us(seconds: float | None, count: int) -> float | None:
    return None if seconds is None or not count else seconds * 1e6 / count


def _timed_push(name: str, topology: Topology, plan: dict[str, list[PlannedEntry]],
                program: Program, servers: Sequence[_Server], unit: str = "entries/s",
                *, checked: bool = False) -> tuple[PushRate, PushReport]:
    """Push and measure; `checked`: the count is the entries found unchanged."""
    before = _servers_cpu(servers)
    started = time.perf_counter()
    report = push(topology, plan, program)
    seconds = time.perf_counter() - started
    after = _servers_cpu(servers)
    if not report.ok:
        raise RuntimeError(report.summary())
    count = sum(r.unchanged for r in report.switches) if checked else report.written
    server = None if before is None or after is None else after - before
    return PushRate(name, count, seconds, unit, _per_entry_us(report.cpu_seconds, count),
                    _per_entry_us(server, count)), report


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
    with _softswitch_process(t0.endpoint.device_id if t0.endpoint else 1) as server:
        endpoint = replace(t0.endpoint or Endpoint(server.address), grpc_address=server.address)
        one = replace(topology, switches=[replace(t0, endpoint=endpoint)])
        first, _ = _timed_push("push_one_switch", one, {t0.name: planned}, program, [server],
                               "entries/s, pipeline incl.")
        second, report = _timed_push("reconcile_one_switch", one, {t0.name: planned}, program,
                                     [server], "entries checked/s", checked=True)
    if report.written:
        raise RuntimeError(report.summary())
    return [first, second]


# bench/p4/ipv6_lpm.p4's names in its P4Info (plans name objects as P4Info does)
LPM_TABLE, LPM_FIELD, LPM_ACTION = "Lpm.route_v6", "hdr.ipv6.dst_addr", "Lpm.set_nexthop"


def lpm_routes(count: int, salt: int = 0) -> list[PlannedEntry]:
    """`count` distinct /64 routes of bench/p4/ipv6_lpm.p4, each with its own next hop."""
    base = 0x2001_0DB8 << 96 | salt << 80
    return [PlannedEntry(LPM_TABLE, ((LPM_FIELD, (base | i << 64, 64)),), LPM_ACTION,
                         (("dmac", 0x0A00_0000_0000 + i), ("port", 1 + i % 8),
                          ("smac", 0x0B00_0000_0000)))
            for i in range(count)]


def _check_names(program: Program) -> None:
    schema = program.schema
    table = schema.table(LPM_TABLE)
    if (schema.match_field(table, LPM_FIELD).name != LPM_FIELD
            or schema.table_action(table, LPM_ACTION).preamble.name != LPM_ACTION):
        raise RuntimeError(f"{LPM_PROGRAM}: its P4Info names changed")


def _lpm_topology(servers: Sequence[_Server]) -> Topology:
    """A topology whose first switches are `servers` (device ids 1, 2...)."""
    topology = generate(1, 8, 32)
    switches = [replace(switch, endpoint=Endpoint(server.address, device_id=k + 1))
                for k, (switch, server) in enumerate(zip(topology.switches, servers, strict=False))]
    return replace(topology, switches=switches)


def bench_push_large(program: Program, entries: int = LARGE,
                     runs: int = RUNS) -> list[PushRate]:
    """`entries` routes to one switch that runs the program already (the pipeline is pushed
    first, untimed): the push's entries/s, then the same push again (reconcile); the best of
    `runs` each (this machine's other work only ever slows a run down)."""
    _check_names(program)
    planned = lpm_routes(entries)
    pushes: list[PushRate] = []
    checks: list[PushRate] = []
    with _softswitch_process(1) as server:
        topology = _lpm_topology([server])
        name = topology.switches[0].name
        for _ in range(runs):
            _fresh_pipeline(server, 1, program)   # empty tables, the push's own cookie
            first, _ = _timed_push("push_large", topology, {name: planned}, program, [server])
            second, report = _timed_push("reconcile_large", topology, {name: planned}, program,
                                         [server], "entries checked/s", checked=True)
            if report.written:
                raise RuntimeError(report.summary())
            pushes.append(first)
            checks.append(second)
    return [max(pushes, key=lambda r: r.rate), max(checks, key=lambda r: r.rate)]


def _fresh_pipeline(server: _Server, device_id: int, program: Program) -> None:
    """Push `program` with its cookie (which empties the tables), so that the next push
    keeps the pipeline and writes every entry."""
    with SwitchConnection(server.address, device_id=device_id) as connection:
        connection.set_pipeline(program.p4info, program.device_config, cookie=program.cookie)


class ShardedPlan:
    """SHARDED_ENTRIES routes for each switch of a topology, made when asked for."""

    def __init__(self, topology: Topology) -> None:
        self.index = {switch.name: k for k, switch in enumerate(topology.switches)}

    def switch(self, name: str) -> list[PlannedEntry]:
        return lpm_routes(SHARDED_ENTRIES, salt=self.index[name])


def bench_push_sharded(program: Program, workers: Sequence[int] = WORKERS) -> list[PushRate]:
    """SHARDED_SWITCHES switches of SHARDED_ENTRIES routes each, pushed with each number of
    worker processes; fresh switches (pipeline already there) for every run."""
    _check_names(program)
    rates = []
    for count in workers:
        with ExitStack() as stack:
            servers = [stack.enter_context(_softswitch_process(k + 1))
                       for k in range(SHARDED_SWITCHES)]
            topology = _lpm_topology(servers)
            ready = push(topology, {s.name: [] for s in topology.switches}, program)
            if not ready.ok:
                raise RuntimeError(ready.summary())
            before = _servers_cpu(servers)
            started = time.perf_counter()
            report = push_sharded(topology, program, workers=count, plan=ShardedPlan)
            seconds = time.perf_counter() - started
            after = _servers_cpu(servers)
        if not report.ok:
            raise RuntimeError(report.summary())
        written = report.written
        # from the first switch's start to the last one's end: the workers' start-up left out
        phase = (max(r.started + r.seconds for r in report.switches)
                 - min(r.started for r in report.switches))
        server = None if before is None or after is None else after - before
        rates.append(PushRate(
            f"push_sharded_{count}_workers", written, seconds,
            f"entries/s to {SHARDED_SWITCHES} switches, workers' start-up incl. "
            f"({written / phase:.0f}/s without)",
            _per_entry_us(report.cpu_seconds, written), _per_entry_us(server, written),
            {"workers": count, "switches": SHARDED_SWITCHES,
             "push_phase_seconds": round(phase, 3),
             "push_phase_rate": round(written / phase)}))
    return rates


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
    lpm = Program.compile(LPM_PROGRAM)
    return [*bench_push_one_switch(program, entries), *bench_push_large(lpm),
            *bench_push_sharded(lpm), bench_push_fabric(program)]


def main() -> None:
    for result in run_all():
        print(f"controller.{result.name:<28} {result.count:>9} {result.seconds:>8.2f} "
              f"{result.rate:>10.0f}  {result.unit}{result.cpu_text}")


if __name__ == "__main__":
    main()
