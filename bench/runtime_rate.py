"""A running `softswitch run` server measured from outside, as one measures simple_switch_grpc:

- P4Runtime write rate: LPM route entries per second, INSERT in batches of 1,000, from a Python
  client (our p4rt client) in another process;
- packet rate through the nanomsg (`--packet-in`) ports: packets sent by a PTF-style peer,
  forwarded and received back, lossless (each packet is awaited in a window);
- the same over veth pairs (`-i 1@veth...`, raw AF_PACKET sockets on the far ends), as BMv2
  is usually measured; needs root, skipped with the reason otherwise.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
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


@dataclass
class Skipped:
    """A benchmark that cannot run here, and why."""

    name: str
    reason: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SwitchProcess:
    """A `softswitch run` subprocess started by `switch_process`, ready to serve."""

    grpc_addr: str
    ipc: str          # the nanomsg address ("" with interfaces)
    p4info: Path
    ir: Path
    process: subprocess.Popen[str]


@contextlib.contextmanager
def switch_process(workdir: Path, interfaces: Mapping[int, str] | None = None,
                   program: Path = PROGRAM, options: Sequence[str] = (),
                   ) -> Iterator[SwitchProcess]:
    """`softswitch run --no-p4 [options]` with nanomsg ports, or with `-i PORT@IFACE` for each
    of `interfaces`, once it is ready; `program` is compiled (not loaded) for the caller to
    push. Terminated on exit (a caller may have ended it already)."""
    p4info, ir = workdir / "prog.p4info.txtpb", workdir / "prog.json"
    softswitch = [sys.executable, "-m", "softswitch.cli"]
    subprocess.run([*softswitch, "compile", str(program), "--p4info", str(p4info), "--ir", str(ir)],
                   check=True)
    grpc_addr = f"127.0.0.1:{_free_port()}"
    if interfaces is None:
        ipc = f"ipc://{workdir}/packets.ipc"
        ports = ["--packet-in", ipc]
    else:
        ipc = ""
        ports = [arg for port, name in sorted(interfaces.items()) for arg in ("-i", f"{port}@{name}")]
    proc = subprocess.Popen(
        [*softswitch, "run", "--no-p4", *ports, *options, "--",
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
        yield SwitchProcess(grpc_addr, ipc, p4info, ir, proc)
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def running_switch(workdir: Path, interfaces: Mapping[int, str] | None = None,
                   program: Path = PROGRAM) -> Iterator[tuple[str, str, Path, Path]]:
    """`switch_process`'s (grpc address, ipc address, P4Info path, IR path)."""
    with switch_process(workdir, interfaces, program) as switch:
        yield switch.grpc_addr, switch.ipc, switch.p4info, switch.ir


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


FORWARDED_DMAC = 0x0A0000000001   # the route's next hop: how forwarded frames are recognised


def _route_one(grpc_addr: str, p4info: Path, ir: Path, sw_action: Callable[[], None]) -> None:
    """Load the program and route 2001:db8::1/128 out of port 2, then run `sw_action`."""
    with SwitchConnection(grpc_addr, device_id=0) as sw:
        sw.set_pipeline(p4info, ir.read_bytes())
        dst = int(ipaddress.IPv6Address("2001:db8::1"))
        sw.insert([TableEntry(sw.schema, "route_v6").match(dst_addr=(dst, 128))
                   .action("set_nexthop", port=2, dmac=FORWARDED_DMAC, smac=0x0B0000000001)])
        sw_action()


def _test_frame() -> bytes:
    """A 118-byte IPv6 frame to 2001:db8::1 (next header UDP, hop limit 64), zero payload."""
    eth = bytes.fromhex("000000000002" "000000000001" "86dd")
    ipv6 = ((6 << 28).to_bytes(4, "big") + (64).to_bytes(2, "big") + bytes([17, 64])
            + int(ipaddress.IPv6Address("2001:db8::9")).to_bytes(16, "big")
            + int(ipaddress.IPv6Address("2001:db8::1")).to_bytes(16, "big"))
    return eth + ipv6 + bytes(64)


def _windowed(send: Callable[[], None], receive_one: Callable[[], None], seconds: float,
              window: int) -> tuple[int, float]:
    """Send `window` packets, wait for all of them, repeat for `seconds`: (count, elapsed)."""
    received = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(window):
            send()
        for _ in range(window):
            receive_one()
        received += window
    return received, time.perf_counter() - start


def bench_nanomsg_packets(grpc_addr: str, ipc: str, p4info: Path, ir: Path,
                          seconds: float, window: int = 32) -> RateResult:
    frame = packet_in(1, _test_frame())
    result: list[tuple[int, float]] = []

    def run() -> None:
        with pynng.Pair0(dial=ipc, recv_timeout=2000) as peer:
            def receive_one() -> None:
                while decode(peer.recv()).type != MsgType.PACKET_OUT:
                    pass
            result.append(_windowed(lambda: peer.send(frame), receive_one, seconds, window))

    _route_one(grpc_addr, p4info, ir, run)
    return RateResult("nanomsg_packets_lossless", *result[0], "packets/s")


# -- veth ----------------------------------------------------------------------------------------

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
VETH_TIMEOUT = 2.0   # a packet not back by then is lost: the benchmark fails, as nanomsg's does


class VethError(RuntimeError):
    """An `ip` command failed (no permission for veths here, a name taken...)."""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise VethError(f"ip {' '.join(args)}: {done.stderr.strip()}")


@contextlib.contextmanager
def veth_pairs(count: int) -> Iterator[list[tuple[str, str]]]:
    """`count` veth pairs (switch end, host end) with names unique to this process, up and
    quiet (no IPv6, so no router solicitations); always deleted afterwards."""
    tag = f"{os.getpid() % 0xFFFF:04x}"
    pairs: list[tuple[str, str]] = []
    try:
        for i in range(count):
            pair = (f"bs{tag}v{i}", f"bh{tag}v{i}")   # at most 15 characters
            _ip("link", "add", pair[0], "type", "veth", "peer", "name", pair[1])
            pairs.append(pair)
            for name in pair:
                with contextlib.suppress(OSError):
                    Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1\n")
                _ip("link", "set", "dev", name, "up")
        yield pairs
    finally:
        for switch_end, _ in pairs:   # deleting one end deletes its peer
            with contextlib.suppress(VethError):
                _ip("link", "del", switch_end)


def _raw_socket(interface: str, *, receive: bool) -> socket.socket:
    """A raw socket on `interface`; protocol 0 when not `receive`, so it queues nothing."""
    protocol = ETH_P_ALL if receive else 0
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(protocol))
    sock.bind((interface, protocol))
    return sock


def veth_skip_reason() -> str | None:
    """Why the veth benchmark cannot run here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (it creates veth interfaces and raw sockets)"
    if shutil.which("ip") is None:
        return "needs the 'ip' command (iproute2)"
    return None


def bench_veth_packets(seconds: float, window: int = 32) -> RateResult | Skipped:
    """Packets/s through `softswitch run -i 1@A -i 2@B`: raw frames sent on A's peer,
    forwarded by the ipv6_lpm route, received on B's peer; lossless, in windows."""
    name = "veth_packets_lossless"
    reason = veth_skip_reason()
    if reason is not None:
        return Skipped(name, reason)
    try:
        with veth_pairs(2) as pairs:
            return _veth_packets(name, pairs, seconds, window)
    except VethError as exc:
        return Skipped(name, f"cannot set up veth interfaces: {exc}")


def _veth_packets(name: str, pairs: list[tuple[str, str]], seconds: float,
                  window: int) -> RateResult:
    (a_switch, a_host), (b_switch, b_host) = pairs
    frame = _test_frame()
    dmac = FORWARDED_DMAC.to_bytes(6, "big")
    result: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory(prefix="softswitch-bench-") as tmp, \
            running_switch(Path(tmp), {1: a_switch, 2: b_switch}) as (grpc_addr, _, p4info, ir), \
            _raw_socket(a_host, receive=False) as tx, \
            _raw_socket(b_host, receive=True) as rx:

        def receive_one() -> None:
            while True:   # skip anything but our forwarded frames (the kernel's own traffic)
                if not select.select([rx], [], [], VETH_TIMEOUT)[0]:
                    raise RuntimeError(f"veth benchmark: a packet was lost (none received "
                                       f"on {b_host} within {VETH_TIMEOUT} s)")
                data, address = rx.recvfrom(65536)
                if address[2] != PACKET_OUTGOING and data[:6] == dmac:
                    return

        def run() -> None:
            for _ in range(window):   # warm-up: the route works before the clock starts
                tx.send(frame)
                receive_one()
            result.append(_windowed(lambda: tx.send(frame), receive_one, seconds, window))

        _route_one(grpc_addr, p4info, ir, run)
    return RateResult(name, *result[0], "packets/s")


def run_all(seconds: float, entries: int = 20_000) -> list[RateResult | Skipped]:
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
    with tempfile.TemporaryDirectory(prefix="softswitch-bench-") as tmp, \
            running_switch(Path(tmp)) as (grpc_addr, ipc, p4info, ir):
        results: list[RateResult | Skipped] = [
            bench_write_rate(grpc_addr, p4info, ir, entries),
            bench_nanomsg_packets(grpc_addr, ipc, p4info, ir, seconds),
        ]
    results.append(bench_veth_packets(seconds))
    return results
