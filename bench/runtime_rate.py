"""A running `softswitch run` server measured from outside, as one measures simple_switch_grpc:

- P4Runtime write rate: LPM route entries per second, INSERT in batches of 1,000, from a Python
  client (our p4rt client) in another process;
- packet rate through the nanomsg (`--packet-in`) ports: packets sent by a PTF-style peer,
  forwarded and received back, lossless (each packet is awaited in a window).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pynng

from p4rt import SwitchConnection, TableEntry
from p4rt.entities import INSERT
from softswitch.runtime.ports.nanomsg import MsgType, decode, packet_in

BENCH = Path(__file__).parent
PROGRAM = BENCH / "p4" / "ipv6_lpm.p4"
BATCH = 1000


@dataclass
class RateResult:
    name: str
    count: int
    seconds: float
    unit: str

    @property
    def rate(self) -> float:
        return self.count / self.seconds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_switch(workdir: Path) -> Iterator[tuple[str, str, Path, Path]]:
    """`softswitch run --no-p4` with nanomsg ports; yields (grpc address, ipc address,
    P4Info path, IR path)."""
    p4info, ir = workdir / "prog.p4info.txtpb", workdir / "prog.json"
    softswitch = [sys.executable, "-m", "softswitch.cli"]
    subprocess.run([*softswitch, "compile", str(PROGRAM), "--p4info", str(p4info), "--ir", str(ir)],
                   check=True)
    grpc_addr = f"127.0.0.1:{_free_port()}"
    ipc = f"ipc://{workdir}/packets.ipc"
    proc = subprocess.Popen(
        [*softswitch, "run", "--no-p4", "--packet-in", ipc, "--",
         "--grpc-server-addr", grpc_addr, "--cpu-port", "255"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "ready" in line:
                break
        else:
            raise RuntimeError("softswitch run exited before it was ready")
        yield grpc_addr, ipc, p4info, ir
    finally:
        proc.terminate()
        proc.wait(10)


def _route_entries(sw: SwitchConnection, count: int) -> list[tuple[int, TableEntry]]:
    base = int(ipaddress.IPv6Address("2001:db8::"))
    return [
        (INSERT, TableEntry(sw.schema, "route_v6")
         .match(dst_addr=(base | (i << 64), 64))
         .action("set_nexthop", port=1 + i % 8, dmac=0x0A0000000000 + i, smac=0x0B0000000000))
        for i in range(count)
    ]


def bench_write_rate(grpc_addr: str, p4info: Path, ir: Path, entries: int) -> RateResult:
    with SwitchConnection(grpc_addr, device_id=0) as sw:
        sw.set_pipeline(p4info, ir.read_bytes())
        updates = _route_entries(sw, entries)
        batches = [updates[i:i + BATCH] for i in range(0, len(updates), BATCH)]
        from p4rt.client import to_update  # build the protobufs outside the timed loop

        prepared = [[to_update(u) for u in batch] for batch in batches]
        start = time.perf_counter()
        for batch in prepared:
            sw.write(batch)
        seconds = time.perf_counter() - start
    return RateResult("p4runtime_write_lpm", entries, seconds, "entries/s")


def bench_nanomsg_packets(grpc_addr: str, ipc: str, p4info: Path, ir: Path,
                          seconds: float, window: int = 32) -> RateResult:
    with SwitchConnection(grpc_addr, device_id=0) as sw:
        sw.set_pipeline(p4info, ir.read_bytes())
        dst = int(ipaddress.IPv6Address("2001:db8::1"))
        sw.insert([TableEntry(sw.schema, "route_v6").match(dst_addr=(dst, 128))
                   .action("set_nexthop", port=2, dmac=0x0A0000000001, smac=0x0B0000000001)])
        eth = bytes.fromhex("000000000002" "000000000001" "86dd")
        ipv6 = ((6 << 28).to_bytes(4, "big") + (64).to_bytes(2, "big") + bytes([17, 64])
                + int(ipaddress.IPv6Address("2001:db8::9")).to_bytes(16, "big")
                + dst.to_bytes(16, "big"))
        frame = packet_in(1, eth + ipv6 + bytes(64))
        with pynng.Pair0(dial=ipc, recv_timeout=2000) as peer:
            received = sent = 0
            start = time.perf_counter()
            deadline = start + seconds
            while time.perf_counter() < deadline:
                for _ in range(window):
                    peer.send(frame)
                sent += window
                while received < sent:
                    msg = decode(peer.recv())
                    if msg.type == MsgType.PACKET_OUT:
                        received += 1
            elapsed = time.perf_counter() - start
    return RateResult("nanomsg_packets_lossless", received, elapsed, "packets/s")


def run_all(seconds: float, entries: int = 20_000) -> list[RateResult]:
    with tempfile.TemporaryDirectory(prefix="softswitch-bench-") as tmp, \
            running_switch(Path(tmp)) as (grpc_addr, ipc, p4info, ir):
        os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
        return [
            bench_write_rate(grpc_addr, p4info, ir, entries),
            bench_nanomsg_packets(grpc_addr, ipc, p4info, ir, seconds),
        ]
