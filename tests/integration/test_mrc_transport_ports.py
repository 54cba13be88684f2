"""mrc_transport's Hosts in real time over real ports: two NIC programs (p4src/nic/mrc_nic.p4) in
two `softswitch run` processes, configured over P4Runtime (table entries and clone sessions,
tests/integration/nic_config.py), their plane ports bridged by a `Wire` (A's 2 and 3 to B's 2
and 3), a Host on each NIC's host port (1), driven by a `Runner` on the monotonic clock.

The same scenarios run over nanomsg (`--packet-in`, no root) and over veth pairs (`-i`, root);
an in-process `Fabric` with two NIC switches, and the driver's handling of bad input, are tested
without subprocesses. Every wait is bounded; nothing sleeps for correctness.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pynng
import pytest
from nic_config import configure, count
from nic_pair import HOST_PORT, PLANE_PORT, A, B, Side, resealed
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.config import ConnectionConfig
from mrc_transport.host import Host
from mrc_transport.ports import FabricPort, FramePort, NanomsgDevice, PortClosed
from mrc_transport.runner import Filter, Runner, Wire
from mrc_transport.sender import OP_EV_REPORT
from mrc_transport.wire import (
    BTH,
    HOST_MAC,
    NIC_MAC,
    SETH,
    WRITE_OPCODES,
    Opcode,
    compact_ev,
    data_packet,
)
from p4rt import SwitchConnection
from softswitch.runtime.ports.nanomsg import MsgType, decode, encode, packet_out

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "nic" / "mrc_nic.p4"
KIB = 1024
VA = 0x1000
MEMORY = VA + 128 * KIB
K = 3                         # answered probes that bring an EV back (NIC and host)
# A Python NIC takes milliseconds a packet and a window of 64 queues up in front of it: an RTO
# of a second keeps timeouts for packets that were lost, and the planes (separate wire threads)
# reorder by milliseconds, not the default allowance's 150 µs.
RTO_US = 1_000_000
REORDER_US = 100_000
WAIT = 30.0                   # s: the bound of every transfer
READY_TIMEOUT = 30.0          # s: a cold `softswitch run` imports grpc and scapy
BTH_AT = 14 + 40 + 40 + 8     # plane frames: outer Ethernet, outer and inner IPv6, UDP


# -- the NIC processes ---------------------------------------------------------------------------


class SwitchProcess:
    """A `softswitch run --no-p4` subprocess (simple_switch_grpc's command line); its output
    goes to a file, read for the ready line."""

    def __init__(self, out: Path, *ports: str) -> None:
        self.out = out
        log = out.with_suffix(".log")
        with out.open("wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "softswitch.cli", "run", "--no-p4", "--device-id", "0",
                 "-L", "info", "--log-file", str(log), *ports,
                 "--priority-queues", "8",   # the NIC's feedback leaves in queue 7
                 "--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255"],
                cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        self.grpc_address = ""

    def wait_ready(self) -> str:
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            for line in self.out.read_text(errors="replace").splitlines():
                if "ready: Server listening on" in line:
                    self.grpc_address = "127.0.0.1:" + line.rsplit(":", 1)[1]
                    return self.grpc_address
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"softswitch run not ready:\n{self.out.read_text()}")
            time.sleep(0.05)   # polling for readiness, bounded by the deadline

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """P4Info and IR JSON, as `softswitch compile` writes them for simple_switch_grpc users."""
    out = tmp_path_factory.mktemp("mrc_nic")
    p4info, ir = out / "mrc_nic.p4info.txtpb", out / "mrc_nic.json"
    subprocess.run([sys.executable, "-m", "softswitch.cli", "compile", str(PROGRAM),
                    "--p4info", str(p4info), "--ir", str(ir)], cwd=ROOT, check=True,
                   capture_output=True, timeout=120)
    return p4info, ir


@dataclass
class Bench:
    """Two NIC processes and how to reach their ports: `open_ports(i)` gives NIC i's ports
    1..3 (a fresh set each test)."""

    switches: tuple[SwitchProcess, SwitchProcess]
    open_ports: Callable[[int], dict[int, FramePort]]


def start_pair(folder: Path, ports_of: Callable[[int], list[str]]) -> tuple[SwitchProcess, ...]:
    switches = tuple(SwitchProcess(folder / f"nic{i}.out", *ports_of(i)) for i in (0, 1))
    try:
        for switch in switches:   # both started first: they boot in parallel
            switch.wait_ready()
    except BaseException:
        for switch in switches:
            switch.stop()
        raise
    return switches


@contextlib.contextmanager
def nanomsg_bench(folder: Path) -> Iterator[Bench]:
    addresses = [f"ipc://{folder}/nic{i}.ipc" for i in (0, 1)]
    switches = start_pair(folder, lambda i: ["--packet-in", addresses[i]])
    devices: list[NanomsgDevice] = []
    try:
        # One dial per process for the whole module: a PAIR socket has one peer at a time.
        devices += [NanomsgDevice(address) for address in addresses]
        yield Bench(switches, lambda i: {n: devices[i].port(n) for n in (1, 2, 3)})
    finally:
        for device in devices:
            device.close()
        for switch in switches:
            switch.stop()


def veth_skip_reason() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "veth pairs and AF_PACKET need root"
    if shutil.which("ip") is None:
        return "needs the ip command (iproute2)"
    return None


@contextlib.contextmanager
def veth_bench(folder: Path) -> Iterator[Bench]:
    from mrc_transport.ports import RawSocketPort

    if str(ROOT) not in sys.path:   # ptf_tests/ is a folder of the repository, not a package
        sys.path.insert(0, str(ROOT))
    from ptf_tests.runner import veth_pairs

    # NIC i's port n is the switch side of pair 10 * i + n; the test holds the other side.
    with veth_pairs([10 * i + n for i in (0, 1) for n in (1, 2, 3)]) as pairs:
        switches = start_pair(folder, lambda i: [
            arg for n in (1, 2, 3) for arg in ("-i", f"{n}@{pairs[10 * i + n].switch_side}")])
        try:
            yield Bench(switches, lambda i: {n: RawSocketPort(pairs[10 * i + n].ptf_side)
                                             for n in (1, 2, 3)})
        finally:
            for switch in switches:
                switch.stop()


@pytest.fixture(scope="module", params=["nanomsg", "veth"])
def bench(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    if request.param == "veth" and (reason := veth_skip_reason()) is not None:
        pytest.skip(reason)
    make = nanomsg_bench if request.param == "nanomsg" else veth_bench
    with make(tmp_path_factory.mktemp(request.param, numbered=True)) as made:
        yield made


# -- one connection over the bench ---------------------------------------------------------------


def host_config(me: Side, peer: Side) -> ConnectionConfig:
    return ConnectionConfig(local_addr=me.address, peer_addr=peer.address, local_qp=me.qp,
                            peer_qp=peer.qp, rto_us=RTO_US, reorder_us=REORDER_US,
                            probe_successes=K)


class Link:
    """Fresh NIC state (the pipeline pushed again, then the baseline configuration), the plane
    ports wired through `wire.filter`, and a Host on each host port under one Runner."""

    def __init__(self, bench: Bench, compiled: tuple[Path, Path]) -> None:
        self.conns: dict[Side, SwitchConnection] = {}
        self.ports: list[FramePort] = []
        self.wire: Wire | None = None
        try:
            with ThreadPoolExecutor(2) as pool:   # the two NICs load the program in parallel
                connections = list(pool.map(
                    lambda args: self._push(*args, compiled),
                    [(bench.switches[0], A, B), (bench.switches[1], B, A)]))
            self.conns = dict(zip((A, B), connections))
            ports = {A: bench.open_ports(0), B: bench.open_ports(1)}
            self.ports = [port for side in ports.values() for port in side.values()]
            self.wire = Wire([(ports[A][PLANE_PORT[plane]], ports[B][PLANE_PORT[plane]])
                              for plane in PLANE_PORT])
            self.hosts = {A: Host(host_config(A, B), MEMORY), B: Host(host_config(B, A), MEMORY)}
            self.runner = Runner(*((self.hosts[side], ports[side][HOST_PORT]) for side in (A, B)))
        except BaseException:
            self.close()
            raise
        self.completions: dict[Side, list[tuple[int, int, int, int | None]]] = {A: [], B: []}
        self.completed: dict[Side, list[int]] = {A: [], B: []}

    @staticmethod
    def _push(switch: SwitchProcess, me: Side, peer: Side,
              compiled: tuple[Path, Path]) -> SwitchConnection:
        conn = SwitchConnection(switch.grpc_address, device_id=0, election_id=(0, 1))
        conn.connect()
        conn.set_pipeline(*compiled)
        configure(conn, me, peer, probe_successes=K)
        return conn

    def set_filter(self, wire_filter: Filter | None) -> None:
        assert self.wire is not None
        self.wire.filter = wire_filter

    def _collect(self) -> None:
        for side, host in self.hosts.items():
            self.completions[side] += host.receiver.completions()
            self.completed[side] += host.sender.completed()

    def run_until(self, done: Callable[[], bool], timeout: float = WAIT) -> None:
        def check() -> bool:
            self._collect()
            return done()
        self.runner.run_until(check, timeout)

    def idle(self) -> bool:
        return all(host.sender.done for host in self.hosts.values())

    def memory(self, side: Side, va: int, size: int) -> bytes:
        return bytes(self.hosts[side].receiver.memory[va:va + size])

    def close(self) -> None:
        if self.wire is not None:
            self.wire.close()
        for port in self.ports:
            port.close()
        for conn in self.conns.values():
            conn.close()


@pytest.fixture
def link(bench: Bench, compiled: tuple[Path, Path]) -> Iterator[Link]:
    made = Link(bench, compiled)
    yield made
    made.close()


def payload(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def is_data(frame: bytes) -> bool:
    return len(frame) > BTH_AT and frame[BTH_AT] in WRITE_OPCODES


def psn_of(frame: bytes) -> int:
    return int.from_bytes(frame[BTH_AT + 9:BTH_AT + 12])


def sent_by(side: Side, frame: bytes) -> bool:
    """The inner source address (after the outer Ethernet and IPv6 headers) is `side`'s."""
    return frame[14 + 40 + 8:14 + 40 + 24] == ipaddress.IPv6Address(side.address).packed


# -- the scenarios, over each kind of port -----------------------------------------------------


def test_a_64_kib_write_arrives_intact_and_completes(link: Link) -> None:
    data = payload(64 * KIB)
    msn = link.hosts[A].sender.write(data, VA)
    # Both ends: B's NIC hands the data up and sends the SACK at once, and the SACK may reach A
    # before B's host has read the last packets from its port.
    link.run_until(lambda: link.idle() and bool(link.completions[B]))
    assert link.memory(B, VA, len(data)) == data
    assert link.completed[A] == [msn]
    assert link.completions[B] == [(msn, VA, len(data), None)]
    # Each PSN sent once as new and placed once by B's NIC; resends are allowed (the two planes
    # reorder, which the SACK-hole rule takes for loss) but never counted as new data.
    assert link.hosts[A].sender.counters["sent"] == 64
    assert count(link.conns[B], "rx_data") == 64
    assert link.hosts[B].unexpected == 0 and link.runner.endpoints[1].rejected == 0


def test_writes_with_immediate_complete_at_the_receiver_in_msn_order(link: Link) -> None:
    # The first transmission of A's message 0's first packet is lost: messages 1 and 2 arrive
    # whole before it does, and must not complete before it. (B writes too, from its own PSN 0.)
    dropped: list[int] = []

    def drop_psn_0_once(frame: bytes) -> bytes | None:
        if not dropped and is_data(frame) and psn_of(frame) == 0 and sent_by(A, frame):
            dropped.append(0)
            return None
        return frame

    link.set_filter(drop_psn_0_once)
    sizes, imms = (3000, 1, 2048), (0xA0, 0xA1, 0xA2)
    vas = (VA, VA + 8 * KIB, VA + 16 * KIB)
    datas = [payload(size, seed) for seed, size in enumerate(sizes)]
    sender = link.hosts[A].sender
    msns = [sender.write(d, va, imm) for d, va, imm in zip(datas, vas, imms)]
    back = payload(5000, 9)
    back_msn = link.hosts[B].sender.write(back, VA + 32 * KIB, immediate=0xB0)
    link.run_until(lambda: link.idle() and len(link.completions[B]) == 3
                   and len(link.completions[A]) == 1)
    assert dropped == [0]
    assert link.completions[B] == list(zip(msns, vas, sizes, imms))
    assert [link.memory(B, va, len(d)) for d, va in zip(datas, vas)] == datas
    assert link.completed[A] == msns
    assert link.completions[A] == [(back_msn, VA + 32 * KIB, len(back), 0xB0)]
    assert link.memory(A, VA + 32 * KIB, len(back)) == back
    assert sender.counters["retransmitted"] >= 1


def test_a_lossy_wire_still_delivers_every_byte(link: Link) -> None:
    # Seeded loss of data and feedback, both ways: holes, lost SACKs, lost tails (timeouts).
    # The processes interleave the two kinds differently from run to run, so the 5 % draw
    # alone may miss one kind: the 5th frame of each kind is lost whatever the draw.
    rng = random.Random(11)
    lost = {"data": 0, "feedback": 0}
    seen = {"data": 0, "feedback": 0}

    def lossy(frame: bytes) -> bytes | None:
        kind = "data" if is_data(frame) else "feedback"
        seen[kind] += 1
        if rng.random() >= 0.05 and seen[kind] != 5:
            return frame
        lost[kind] += 1
        return None

    link.set_filter(lossy)
    datas = {A: payload(64 * KIB, 3), B: payload(32 * KIB, 4)}
    msns = {side: link.hosts[side].sender.write(data, VA) for side, data in datas.items()}
    link.run_until(lambda: link.idle() and all(link.completions.values()))
    assert lost["data"] > 0 and lost["feedback"] > 0
    for side, peer in ((A, B), (B, A)):
        assert link.memory(peer, VA, len(datas[side])) == datas[side]
        assert link.completions[peer] == [(msns[side], VA, len(datas[side]), None)]
        assert link.completed[side] == [msns[side]]
    assert count(link.conns[B], "rx_data") == 64 and count(link.conns[A], "rx_data") == 32
    resent = sum(link.hosts[side].sender.counters["retransmitted"] for side in (A, B))
    assert resent >= lost["data"]


# -- the in-process fabric -------------------------------------------------------------------------


@pytest.mark.parametrize("threaded", [True, False], ids=["threads", "stepped"])
def test_a_write_completes_over_a_fabric_of_two_nic_switches(
        compiled: tuple[Path, Path], threaded: bool) -> None:
    from softswitch.fabric import Fabric

    fabric = Fabric()
    try:
        for name, me, peer in (("nicA", A, B), ("nicB", B, A)):
            node = fabric.add_switch(name, program=compiled[1], device_id=0,
                                     grpc_address="127.0.0.1:0", priority_queues=8)
            assert node.grpc_address is not None
            with SwitchConnection(node.grpc_address, device_id=0) as conn:
                configure(conn, me, peer, probe_successes=K)
        for port in PLANE_PORT.values():
            fabric.link("nicA", port, "nicB", port)
        hosts = {A: Host(host_config(A, B), MEMORY), B: Host(host_config(B, A), MEMORY)}
        runner = Runner((hosts[A], FabricPort(fabric.add_host("hA", "nicA", HOST_PORT))),
                        (hosts[B], FabricPort(fabric.add_host("hB", "nicB", HOST_PORT))))
        data = payload(16 * KIB, 5)
        got: list[tuple[int, int, int, int | None]] = []

        def arrived() -> bool:
            got.extend(hosts[B].receiver.completions())
            return bool(got) and hosts[A].sender.done

        if threaded:
            fabric.start()
            with runner:
                with runner.lock:   # the runner's thread touches the hosts too
                    msn = hosts[A].sender.write(data, VA, immediate=0x5A)
                runner.wait_until(arrived, WAIT)
        else:
            msn = hosts[A].sender.write(data, VA, immediate=0x5A)
            runner.run_until(arrived, WAIT)
        assert got == [(msn, VA, len(data), 0x5A)]
        assert bytes(hosts[B].receiver.memory[VA:VA + len(data)]) == data
        assert hosts[A].sender.completed() == [msn]
        if not threaded:   # one thread moves everything in order: nothing to resend
            assert hosts[A].sender.counters["retransmitted"] == 0
    finally:
        fabric.close()


# -- the driver and the ports on their own ----------------------------------------------------------


class QueuePort:
    """A FramePort of two queues: what the test puts in `inbound` arrives, what is sent is in
    `sent`."""

    def __init__(self) -> None:
        self.inbound: queue.Queue[bytes] = queue.Queue()
        self.sent: list[bytes] = []
        self.fail_sends = False

    def send(self, frame: bytes) -> None:
        if self.fail_sends:
            raise PortClosed("refused")
        self.sent.append(frame)

    def recv(self, timeout: float) -> bytes | None:
        try:
            return self.inbound.get(timeout=timeout) if timeout > 0 else self.inbound.get_nowait()
        except queue.Empty:
            return None

    def close(self) -> None:
        pass


def from_b(opcode: int, tail: bytes) -> bytes:
    """A frame from B's side to A's host with `tail` after BTH (explicit MACs: without them
    scapy resolves the IPv6 address, half a second each)."""
    return bytes(Ether(src=NIC_MAC, dst=HOST_MAC) / IPv6(src=B.address, dst=A.address, nh=17) / UDP(sport=0, dport=4791)
                 / BTH(opcode=opcode, dest_qp=A.qp) / tail)


def test_frames_the_host_cannot_read_are_counted_and_the_runner_goes_on() -> None:
    port = QueuePort()
    host = Host(host_config(A, B), MEMORY)
    runner = Runner((host, port), clock=lambda: 0)
    bad = [b"", b"\x00" * 5, b"\xff" * 13,       # shorter than an Ethernet header
           from_b(OP_EV_REPORT, b"\x01")]         # a report echo cut inside its PETH
    unknown = bytes(Ether(src=NIC_MAC, dst=HOST_MAC) / IPv6() / UDP(dport=53))
    write = bytes(data_packet(src=B.address, dst=A.address, dest_qp=A.qp, psn=0,
                              opcode=Opcode.WRITE_ONLY_IMM, msn=0, va=VA, r_key=7,
                              dma_length=4, payload=b"data", immediate=7))
    for frame in [*bad, unknown, write]:
        port.inbound.put(frame)
    runner.run_until(lambda: port.inbound.empty(), 5)
    endpoint = runner.endpoints[0]
    assert endpoint.received == 6
    # The Host counts every bad frame itself (nothing raised for the runner to catch): the
    # short ones and the DNS frame as unexpected, the cut echo as ignored feedback.
    assert endpoint.rejected == 0
    assert host.unexpected == 4 and host.sender.counters["ignored"] == 1
    assert host.receiver.completions() == [(0, VA, 4, 7)]
    assert bytes(host.receiver.memory[VA:VA + 4]) == b"data"


def test_the_injected_clock_drives_the_timers_and_send_failures_are_counted() -> None:
    port = QueuePort()
    host = Host(host_config(A, B), MEMORY)
    now = [0]
    runner = Runner((host, port), clock=lambda: now[0])
    host.sender.write(b"x" * 100, VA)
    runner.step()
    assert len(port.sent) == 1 and host.sender.counters["sent"] == 1
    now[0] = RTO_US - 1
    runner.step()
    assert len(port.sent) == 1                     # a microsecond short of the RTO
    now[0] = RTO_US
    port.fail_sends = True
    runner.step()
    counters = host.sender.counters
    assert counters["timeout"] == 1 and counters["reports"] == 1
    assert runner.endpoints[0].send_failed == 2    # the loss report and the resend
    assert runner.endpoints[0].sent == 1


def test_run_until_is_bounded() -> None:
    runner = Runner((Host(host_config(A, B), MEMORY), QueuePort()))
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        runner.run_until(lambda: False, 0.2)
    assert time.monotonic() - started < 2


def test_a_transport_error_ends_the_runner_thread_and_reaches_the_waiter() -> None:
    from mrc_transport.sender import RetryLimitExceeded

    now = [0]
    # rto_max_us 10: no backoff (each look at the clock moves it one RTO on)
    host = Host(ConnectionConfig(A.address, B.address, A.qp, B.qp, rto_us=10, rto_max_us=10,
                                 max_retries=1), MEMORY)
    runner = Runner((host, QueuePort()), clock=lambda: now[0])

    def later() -> bool:
        now[0] += 10   # every look moves time on: each packet times out
        return False

    host.sender.write(b"x", VA)
    runner.start()
    with pytest.raises(RetryLimitExceeded):
        runner.wait_until(later, 5)
    with pytest.raises(RetryLimitExceeded):
        runner.stop()


class FakeSwitch:
    """The switch side of a nanomsg port socket (it listens, as softswitch run does)."""

    def __init__(self, address: str) -> None:
        self.socket = pynng.Pair0(recv_timeout=5000, send_timeout=2000)
        self.socket.listen(address)

    def next_message(self) -> Any:
        return decode(self.socket.recv())


def test_a_nanomsg_device_frames_as_softswitch_and_demultiplexes_by_port(
        tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/dev.ipc"
    switch = FakeSwitch(address)
    try:
        with NanomsgDevice(address) as device:
            one, two = device.port(1), device.port(2)
            added = [switch.next_message() for _ in range(2)]
            assert [(m.type, m.port) for m in added] == [(MsgType.PORT_ADD, 1),
                                                         (MsgType.PORT_ADD, 2)]
            with pytest.raises(ValueError, match="open already"):
                device.port(1)
            two.send(b"to the switch")
            msg = switch.next_message()
            assert (msg.type, msg.port, msg.more, msg.payload) == (
                MsgType.PACKET_IN, 2, 13, b"to the switch")
            for message in (b"\x01\x02", encode(MsgType.PACKET_OUT, 1, 99, b"short"),
                            encode(MsgType.PORT_ADD, 1, 0), packet_out(7, b"nobody's"),
                            packet_out(2, b"for two"), packet_out(1, b"for one")):
                switch.socket.send(message)
            assert one.recv(5) == b"for one"       # after the bad ones: they were skipped
            assert two.recv(5) == b"for two"
            assert one.recv(0) is None and two.recv(0) is None
            assert device.bad_messages == 3 and device.unclaimed == 1
            one.close()
            assert (switch.next_message().type, one.number) == (MsgType.PORT_REMOVE, 1)
        with pytest.raises(PortClosed):
            two.send(b"after close")
    finally:
        switch.socket.close()


# -- soak: hostile and faulty wire ---------------------------------------------------------------

SOAK_SEED = int(os.environ.get("SOAK_SEED", "24"))
SETH_AT = BTH_AT + 12


class HostileWire:
    """A wire filter that, seeded, corrupts frames (a bit flipped past the outer header: the
    NIC's checksum must catch it), replaces feedback with forgeries that pass the checksum (a
    cumulative PSN far past anything sent, an ALWAYS_SKIP for an EV no connection has, an EV
    report posing as a probe) and drops some outright; each kind counted."""

    def __init__(self, seed: int, rate: float) -> None:
        self.rng = random.Random(seed)
        self.rate = rate
        self.done: dict[str, int] = dict.fromkeys(
            ("corrupt_data", "corrupt_feedback", "ghost", "foreign_ev", "report", "dropped"), 0)

    def __call__(self, frame: bytes) -> bytes | None:
        rng = self.rng
        if rng.random() >= self.rate or len(frame) <= SETH_AT:
            return frame
        kind = rng.choice(("corrupt", "corrupt", "forge", "forge", "drop"))
        if kind == "drop":
            self.done["dropped"] += 1
            return None
        if kind == "corrupt":
            at = rng.randrange(14 + 40, len(frame))   # inner header, MRC headers or payload
            self.done["corrupt_data" if is_data(frame) else "corrupt_feedback"] += 1
            return frame[:at] + bytes([frame[at] ^ (1 << rng.randrange(8))]) + frame[at + 1:]
        if frame[BTH_AT] != Opcode.SACK:
            return frame
        how = rng.choice(("ghost", "foreign_ev", "report"))
        self.done[how] += 1
        pkt = Ether(frame)
        seth = pkt[SETH]
        if how == "ghost":   # a cumulative PSN far ahead of the sender
            seth.cack_psn = (seth.cack_psn + rng.randrange(64, 1 << 22)) % (1 << 24)
        elif how == "foreign_ev":   # ALWAYS_SKIP for EV 200 + (the connections have 12)
            ev = 200 + rng.randrange(56)
            seth.m, seth.probe_response, seth.entropy = 2, 0, compact_ev(ev % 2, ev)
        else:   # the host's own EV report (0xDF), as if from the fabric
            pkt[BTH].opcode = OP_EV_REPORT
        forged = bytes(pkt)
        return resealed(forged)   # a forger who knows the format seals it


SOAK_ROUNDS = int(os.environ.get("SOAK_ROUNDS", "4"))


@pytest.mark.slow
def test_soak_every_byte_arrives_through_corrupt_and_forged_frames(link: Link) -> None:
    """Two NICs and their transports under a hostile wire (HostileWire, 15 % of frames, seeded
    by SOAK_SEED) both ways while checked transfers run, SOAK_ROUNDS rounds of writes over the
    same memory: every byte arrives, every write completes once at both ends, in order, and each
    NIC counted what it refused."""
    hostile = HostileWire(SOAK_SEED, 0.15)
    link.set_filter(hostile)
    sizes = {A: (64 * KIB, 16 * KIB, 40 * KIB), B: (48 * KIB, 8 * KIB)}
    writes: dict[Side, list[tuple[int, int, bytes]]] = {A: [], B: []}
    for round_ in range(SOAK_ROUNDS):
        this_round: dict[Side, list[tuple[int, int, bytes]]] = {A: [], B: []}
        for side, lengths in sizes.items():
            va = VA
            for i, size in enumerate(lengths):
                data = payload(size, SOAK_SEED * 1000 + round_ * 10 + i + (5 if side is B else 0))
                this_round[side].append((link.hosts[side].sender.write(data, va), va, data))
                va += size
            writes[side] += this_round[side]
        link.run_until(lambda: link.idle() and all(
            len(link.completions[peer]) == len(writes[side]) for side, peer in ((A, B), (B, A))),
            timeout=240)
        for side, peer in ((A, B), (B, A)):
            for _, va, data in this_round[side]:
                assert link.memory(peer, va, len(data)) == data, (round_, side.name, va)
    print(f"SOAK_SEED={SOAK_SEED} SOAK_ROUNDS={SOAK_ROUNDS}: {hostile.done}")
    assert hostile.done["corrupt_data"] and hostile.done["ghost"] and hostile.done["foreign_ev"]
    assert hostile.done["report"]
    for side, peer in ((A, B), (B, A)):
        sender = link.hosts[side].sender
        assert link.completed[side] == [msn for msn, _, _ in writes[side]]
        assert link.completions[peer] == [(msn, va, len(data), None)
                                          for msn, va, data in writes[side]]
        assert sender.counters["sent"] == sum(
            -(-len(data) // sender.config.mtu) for _, _, data in writes[side])
        conn = link.conns[side]
        assert count(conn, "rx_corrupt") > 0 and count(conn, "rx_forged") > 0
