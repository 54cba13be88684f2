"""Packets keep flowing while the control plane works: probe delays through a running
`softswitch run` (nanomsg ports, tests/p4/runtime/big_tables.p4) while it serves

- nothing (idle),
- ONE Write of 100,000 INSERTs into I.hosts,
- ONE Read whose request holds 20,000 copies of the table-entry wildcard (answered with the
  100,000 entries once; the switch's memory growth during it is measured too).

A probe (an Ethernet frame carrying its sequence number) enters port 1 every 2 ms; big_tables
sends every packet out port 2 unchanged, so each probe's delay is send → PACKET_OUT received
back. A probe not back within 5 s is lost. The prober runs in its own process: the benchmark's
own client work (serialising 100,000 updates, parsing 100,000 read entities) holds this
process's GIL and would otherwise show up as switch delay.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path

import grpc
import pynng
from finsy.proto import p4r

from bench.runtime_rate import SwitchProcess, switch_process
from p4rt import SwitchConnection, TableEntry
from p4rt.client import CONTINUE_ON_ERROR, to_update, write_request
from p4rt.entities import INSERT
from p4rt.errors import write_error
from softswitch.runtime.ports.nanomsg import MsgType, decode, packet_in

PROGRAM = Path(__file__).resolve().parents[1] / "tests" / "p4" / "runtime" / "big_tables.p4"
PROBE_INTERVAL = 0.002   # s between probes
LOSS_TIMEOUT = 5.0       # s: a probe not back by then is lost
RPC_TIMEOUT = 600.0      # s: the big Write and Read must finish, however slowly
WARMUP_SEQ = (1 << 64) - 1

# Ethernet dst, src, a local experimental EtherType: the probes' fixed 14 bytes.
_PROBE_HEADER = bytes.fromhex("02000000aa01" "02000000aa02" "88b5")
_PROBE_PAD = bytes(42)   # to a 64-byte frame


def probe_frame(seq: int) -> bytes:
    return _PROBE_HEADER + seq.to_bytes(8, "big") + _PROBE_PAD


def probe_seq(message: bytes) -> int | None:
    """The sequence number of a probe the switch sent back, None for anything else."""
    try:
        msg = decode(message)
    except ValueError:
        return None
    data = msg.payload
    if msg.type != MsgType.PACKET_OUT or len(data) < 22 or data[:14] != _PROBE_HEADER:
        return None
    return int.from_bytes(data[14:22], "big")


def _probe_main(ipc: str, interval: float, started: Event, stop: Event,
                out: Connection) -> None:
    """The probe process: a probe every `interval` s until `stop`, then every probe's send
    time and the times of those back (within LOSS_TIMEOUT) to `out`."""
    sent: list[float] = []
    back: dict[int, float] = {}
    with pynng.Pair0(dial=ipc, recv_timeout=100) as peer:
        peer.send(packet_in(1, probe_frame(WARMUP_SEQ)))   # the path works before the clock runs
        deadline = time.monotonic() + LOSS_TIMEOUT
        while True:
            with contextlib.suppress(pynng.Timeout):
                if probe_seq(peer.recv()) == WARMUP_SEQ:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("probe process: the warm-up probe did not come back")

        def receive() -> None:
            while True:
                try:
                    message = peer.recv()
                except pynng.Timeout:
                    if stop.is_set() and (len(back) >= len(sent) or not sent
                                          or time.perf_counter() > sent[-1] + LOSS_TIMEOUT):
                        return
                    continue
                now = time.perf_counter()
                seq = probe_seq(message)
                if seq is not None and seq < len(sent):
                    back.setdefault(seq, now)

        receiver = threading.Thread(target=receive, name="probe receiver")
        receiver.start()
        started.set()
        next_at = time.perf_counter()
        while not stop.is_set():
            sent.append(time.perf_counter())
            peer.send(packet_in(1, probe_frame(len(sent) - 1)))
            next_at += interval
            pause = next_at - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            else:   # late (descheduled): carry on at the interval, no catch-up burst
                next_at = time.perf_counter()
        receiver.join()
    out.send((sent, back))


@dataclass
class Memory:
    """The switch's resident memory in KiB: just before a phase and its peak during it
    (`peak_reset` False: clear_refs was refused, so the peak is the process's lifetime one)."""

    before_kib: int
    peak_kib: int
    peak_reset: bool

    @property
    def growth_kib(self) -> int | None:
        return self.peak_kib - self.before_kib if self.peak_reset else None

    def __str__(self) -> str:
        if self.growth_kib is None:
            return (f"switch VmHWM {self.peak_kib / 1024:.0f} MiB (lifetime peak: "
                    f"clear_refs not permitted)")
        return f"switch RSS {self.growth_kib / 1024:+.1f} MiB"


@dataclass
class PhaseResult:
    """Probe delays while the switch did `work` for `seconds`."""

    name: str
    work: str
    seconds: float
    sent: int
    lost: int
    delays_ms: list[float] = field(repr=False)   # one per probe back in time
    memory: Memory | None = None                 # the switch's, when measured

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.delays_ms) if self.delays_ms else math.nan

    @property
    def p99_ms(self) -> float:
        if not self.delays_ms:
            return math.nan
        ordered = sorted(self.delays_ms)
        return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]   # nearest rank

    @property
    def max_ms(self) -> float:
        return max(self.delays_ms, default=math.nan)

    @property
    def summary(self) -> str:
        """The benchmark table's unit column (the max delay is the rate column)."""
        text = (f"ms max delay (p50 {self.p50_ms:.1f}, p99 {self.p99_ms:.1f}), "
                f"{self.lost} lost")
        if self.memory is not None:
            text += f", {self.memory}"
        return text

    def __str__(self) -> str:
        return (f"{self.name}: {self.work}: {self.seconds:.2f} s, {self.sent} probes, "
                f"{self.max_ms:.1f} {self.summary}")


class Probes:
    """The probe process's record, cut into phases by the time windows the benchmark marks
    (perf_counter is CLOCK_MONOTONIC, shared by both processes)."""

    def __init__(self) -> None:
        self.windows: list[tuple[str, str, float, float]] = []
        self.sent: list[float] = []
        self.back: dict[int, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str, work: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.windows.append((name, work, start, time.perf_counter()))

    def results(self) -> dict[str, PhaseResult]:
        out: dict[str, PhaseResult] = {}
        for name, work, start, end in self.windows:
            delays: list[float] = []
            lost = sent = 0
            for seq, at in enumerate(self.sent):
                if not start <= at < end:
                    continue
                sent += 1
                delay = self.back.get(seq, math.inf) - at
                if delay > LOSS_TIMEOUT:
                    lost += 1
                else:
                    delays.append(delay * 1000)
            out[name] = PhaseResult(name, work, end - start, sent, lost, delays)
        return out


@contextlib.contextmanager
def probing(ipc: str, interval: float = PROBE_INTERVAL) -> Iterator[Probes]:
    """Probes through the switch at `ipc` for the duration of the block; the record is
    filled in when the block ends."""
    context = multiprocessing.get_context("spawn")   # no fork of a process with gRPC threads
    started, stop = context.Event(), context.Event()
    receive_end, send_end = context.Pipe(duplex=False)
    process = context.Process(target=_probe_main, name="probes", daemon=True,
                              args=(ipc, interval, started, stop, send_end))
    process.start()
    probes = Probes()
    try:
        deadline = time.monotonic() + 60
        while not started.wait(0.1):   # a process that died is not waited for
            if not process.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the probe process did not start "
                                   f"(exit code {process.exitcode})")
        yield probes
    finally:
        stop.set()
        if receive_end.poll(LOSS_TIMEOUT + 30):
            probes.sent, probes.back = receive_end.recv()
        process.join(10)
        if process.is_alive():
            process.kill()
    if process.exitcode != 0:
        raise RuntimeError(f"the probe process failed (exit code {process.exitcode})")


def _status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])   # "VmHWM:   123456 kB"
    raise KeyError(key)


@contextlib.contextmanager
def peak_memory(pid: int) -> Iterator[list[Memory]]:
    """Yields a list that gets process `pid`'s Memory for the block (Linux /proc): the peak
    (VmHWM) is reset to the current RSS first with clear_refs 5, where permitted."""
    measured: list[Memory] = []
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        reset = True
    except OSError:
        reset = False
    before = _status_kib(pid, "VmRSS")   # after the reset: the peak starts from here
    yield measured
    measured.append(Memory(before, _status_kib(pid, "VmHWM"), reset))


def _host_updates(sw: SwitchConnection, count: int) -> list[p4r.Update]:
    assert sw.schema is not None
    return [to_update((INSERT, TableEntry(sw.schema, "I.hosts").match(dst_addr=1 + i)
                       .action("I.tag", value=i % 256)))
            for i in range(count)]


def measure(switch: SwitchProcess, entries: int = 100_000, wildcards: int = 20_000,
            idle: float = 1.0, interval: float = PROBE_INTERVAL) -> list[PhaseResult]:
    """The three phases against a switch started by `switch_process(program=PROGRAM)`."""
    with SwitchConnection(switch.grpc_addr, device_id=0, rpc_timeout=RPC_TIMEOUT) as sw:
        sw.set_pipeline(switch.p4info, switch.ir.read_bytes())
        # Requests built before the clock runs, sent as they are: the Write is ONE request.
        write = write_request(0, sw.election_id, sw.role, _host_updates(sw, entries),
                              CONTINUE_ON_ERROR)
        read = p4r.ReadRequest(device_id=0, entities=[
            p4r.Entity(table_entry=p4r.TableEntry()) for _ in range(wildcards)])
        hosts_id = sw.schema.table("I.hosts").preamble.id   # type: ignore[union-attr]
        stub = sw.open_channel()   # its channel takes 64 MiB messages
        answer: list[p4r.Entity] = []
        with probing(switch.ipc, interval) as probes:
            with probes.phase("idle", "no control-plane work"):
                time.sleep(idle)
            with probes.phase("write", f"one Write of {entries} INSERTs into I.hosts"):
                try:
                    stub.Write(write, timeout=RPC_TIMEOUT)
                except grpc.RpcError as error:
                    raise write_error(error, []) from None
            with peak_memory(switch.process.pid) as memory, probes.phase(
                    "read", f"one Read of {wildcards} table-entry wildcards"):
                for reply in stub.Read(read, timeout=RPC_TIMEOUT):
                    answer.extend(reply.entities)
    keys = {e.table_entry.match[0].exact.value for e in answer
            if e.table_entry.table_id == hosts_id}
    if len(answer) != entries or len(keys) != entries:
        raise RuntimeError(f"the Read answered {len(answer)} entities ({len(keys)} distinct "
                           f"I.hosts entries), expected the {entries} entries once each")
    results = probes.results()
    read_result = results["read"]
    read_result.memory = memory[0]
    read_result.work += f" ({len(answer)} entries back)"
    return list(results.values())


def run_all(entries: int = 100_000, wildcards: int = 20_000, idle: float = 1.0,
            interval: float = PROBE_INTERVAL) -> list[PhaseResult]:
    """Start a switch with big_tables.p4 and measure the phases against it."""
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
    with tempfile.TemporaryDirectory(prefix="softswitch-bench-") as tmp, \
            switch_process(Path(tmp), program=PROGRAM) as switch:
        return measure(switch, entries, wildcards, idle, interval)
