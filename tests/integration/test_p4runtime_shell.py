"""An unmodified p4runtime-shell against `softswitch run` (issue item 8, `make shell`).

The shell lives in its own virtualenv (`make shell-venv`: it pins an old protobuf), so it runs as
a subprocess: tests/integration/shell_session.py drives it as a library and reports each step as
a JSON line; this test plays the packet side over the switch's nanomsg socket, as PTF would, and
tells the session to go on. What it shows: the shell pushes a pipeline, inserts, reads back and
deletes table entries, sends a PacketOut and receives a PacketIn, and the dataplane follows.
"""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pynng
import pytest

from p4rt.client import SwitchConnection
from softswitch.runtime.ports import nanomsg

ROOT = Path(__file__).resolve().parents[2]
SHELL_PYTHON = ROOT / ".venv-shell" / "bin" / "python"
SESSION = Path(__file__).with_name("shell_session.py")
PROGRAM = Path(__file__).with_name("p4") / "shell_demo.p4"
CPU_PORT = 255
STEP_TIMEOUT = 30.0  # seconds for one session step (the first includes the pipeline push)
PACKET_TIMEOUT = 3.0  # seconds for an expected packet
QUIET_TIME = 0.5  # seconds of silence that count as "nothing else came out"

FWD_MAC, FWD_PORT = "02:00:00:00:00:0b", 3
CPU_MAC, CPU_IN_PORT = "02:00:00:00:00:0c", 2
IN_PORT, OUT_PORT = 1, 4

pytestmark = pytest.mark.skipif(
    not SHELL_PYTHON.exists(),
    reason=f"p4runtime-shell's virtualenv {SHELL_PYTHON.parent.parent} does not exist "
    "(create it with `make shell-venv`; `make test` does)")


def frame(dst_mac: str, tag: int) -> bytes:
    """An Ethernet frame to `dst_mac` with a payload that tells frames apart."""
    dst = bytes.fromhex(dst_mac.replace(":", ""))
    return dst + bytes.fromhex("02000000aa01") + b"\x88\xb5" + bytes([tag]) * 46


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lines:
    """A subprocess's stdout, line by line with a timeout (a reader thread feeds a queue)."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def next(self, timeout: float) -> str | None:
        """The next line; None at end of output. Raises queue.Empty after `timeout`."""
        line = self._lines.get(timeout=timeout)
        if line is not None:
            self.seen.append(line)
        return line


class Ports:
    """The test's end of the switch's nanomsg PAIR socket (what PTF's nn platform does)."""

    def __init__(self, address: str) -> None:
        self._socket = pynng.Pair0(send_timeout=2000)
        self._socket.dial(address, block=True)

    def send(self, port: int, data: bytes) -> None:
        self._socket.send(nanomsg.packet_in(port, data))

    def receive(self, count: int = 0) -> list[tuple[int, bytes]]:
        """The packets the switch transmits: `count` expected ones (each within PACKET_TIMEOUT),
        then any more until it has been quiet for QUIET_TIME."""
        got: list[tuple[int, bytes]] = []
        while True:
            wait = PACKET_TIMEOUT if len(got) < count else QUIET_TIME
            self._socket.recv_timeout = int(wait * 1000)
            try:
                msg = nanomsg.decode(self._socket.recv())
            except pynng.Timeout:
                return got
            assert msg.type == nanomsg.MsgType.PACKET_OUT, msg
            got.append((msg.port, msg.payload[:msg.more]))

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def compiled(tmp_path: Path) -> tuple[Path, Path]:
    p4info, ir = tmp_path / "demo.p4info.txtpb", tmp_path / "demo.json"
    done = subprocess.run([sys.executable, "-m", "softswitch.cli", "compile", str(PROGRAM),
                           "--p4info", str(p4info), "--ir", str(ir)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return p4info, ir


@pytest.fixture
def switch(tmp_path: Path) -> Iterator[tuple[str, Ports]]:
    """`softswitch run --no-p4` as simple_switch_grpc is started for PTF: (gRPC address, ports)."""
    address = f"127.0.0.1:{free_port()}"
    packet_in = f"ipc://{tmp_path}/p.ipc"
    proc = subprocess.Popen(
        [sys.executable, "-m", "softswitch.cli", "run", "--no-p4", "--packet-in", packet_in,
         "--", "--grpc-server-addr", address, "--cpu-port", str(CPU_PORT)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    out = Lines(proc.stdout)
    ports = None
    try:
        line = ""
        while "ready" not in line:
            next_line = out.next(timeout=STEP_TIMEOUT)
            assert next_line is not None, f"softswitch run ended:\n{''.join(out.seen)}"
            line = next_line
        ports = Ports(packet_in)
        yield address, ports
    finally:
        if ports is not None:
            ports.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Session:
    """shell_session.py under p4runtime-shell's Python: steps in, `go` out."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen([str(SHELL_PYTHON), str(SESSION), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self._out = Lines(self.proc.stdout)

    def step(self, name: str) -> dict[str, Any]:
        line = self._out.next(timeout=STEP_TIMEOUT)
        if line is None:
            self.proc.wait(timeout=10)
            assert self.proc.stderr is not None
            pytest.fail(f"the shell session ended before step '{name}':\n"
                        f"{self.proc.stderr.read()}")
        report = json.loads(line)
        assert report["step"] != "error", report["traceback"]
        assert report["step"] == name, report
        return report

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def read_back(entries: list[dict[str, Any]]) -> set[tuple[str, int, str, tuple[tuple[str, int], ...]]]:
    """Entries reported by the session, with values as integers (so byte padding
    does not matter)."""
    return {(e["table"], int(e["match"]["hdr.ethernet.dst_addr"], 16), e["action"],
             tuple(sorted((name, int(value, 16)) for name, value in e["params"].items())))
            for e in entries}


def mac_int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


def test_p4runtime_shell_session(compiled: tuple[Path, Path],
                                 switch: tuple[str, Ports]) -> None:
    p4info, ir = compiled
    address, ports = switch
    packet_out = frame("02:00:00:00:00:0d", 7)
    session = Session(["--grpc-addr", address, "--p4info", str(p4info), "--config", str(ir),
                       "--fwd-mac", FWD_MAC, "--fwd-port", str(FWD_PORT), "--cpu-mac", CPU_MAC,
                       "--out-port", str(OUT_PORT), "--packet-out", packet_out.hex()])
    try:
        # The pipeline the shell pushed is what the switch serves (seen by our own client).
        assert "DemoIngress.fwd" in session.step("setup")["tables"]
        reader = SwitchConnection(address)  # no stream: the shell stays the only controller
        try:
            config = reader.get_pipeline()
        finally:
            reader.close()
        assert [t.preamble.name for t in config.p4info.tables] == ["DemoIngress.fwd"]
        assert config.p4_device_config == ir.read_bytes()

        session.step("inserted")
        read = session.step("read")
        assert read_back(read["entries"]) == {
            ("DemoIngress.fwd", mac_int(FWD_MAC), "DemoIngress.set_port", (("port", FWD_PORT),)),
            ("DemoIngress.fwd", mac_int(CPU_MAC), "DemoIngress.to_cpu", ()),
        }
        assert all('"DemoIngress.fwd"' in e["text"] for e in read["entries"])  # shell's print
        forwarded = frame(FWD_MAC, 1)
        ports.send(IN_PORT, forwarded)
        assert ports.receive(1) == [(FWD_PORT, forwarded)]
        session.go()

        session.step("packet_out")
        assert ports.receive(1) == [(OUT_PORT, packet_out)]
        punted = frame(CPU_MAC, 2)
        ports.send(CPU_IN_PORT, punted)
        assert ports.receive() == []  # the CPU port is not a nanomsg port
        session.go()

        packet_in = session.step("packet_in")
        assert packet_in["packets"] == [{"payload": punted.hex(),
                                         "metadata": {"ingress_port": CPU_IN_PORT, "pad": 0}}]

        deleted = session.step("deleted")
        assert deleted["entries"] == []
        ports.send(IN_PORT, frame(FWD_MAC, 3))
        ports.send(CPU_IN_PORT, frame(CPU_MAC, 4))
        assert ports.receive() == []  # both now miss: default action drop
        session.go()

        session.step("done")
        assert session.proc.wait(timeout=STEP_TIMEOUT) == 0
    finally:
        session.close()
