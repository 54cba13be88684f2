"""`softswitch run`: simple_switch_grpc's command line, and a running switch over nanomsg."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pynng
import pytest
from scapy.utils import rdpcap

from softswitch.cli import main as cli_main
from softswitch.runtime.ports.nanomsg import MsgType, decode, encode, packet_in
from softswitch.runtime.run import RunOptions, RunUsageError, parse_run_args

ROOT = Path(__file__).resolve().parents[2]
FWD_P4 = str(ROOT / "tests/p4/const_default_fwd.p4")  # every packet goes out port 2
EXACT_P4 = str(ROOT / "tests/p4/exact_table.p4")


def parse(*argv: str) -> RunOptions:
    result = parse_run_args(list(argv))
    assert isinstance(result, RunOptions)
    return result


# --- the command line ------------------------------------------------------------------------


def test_defaults_follow_simple_switch_grpc() -> None:
    opts = parse(FWD_P4)
    assert opts.program == FWD_P4
    assert (opts.device_id, opts.grpc_address, opts.cpu_port, opts.drop_port) == (
        0, "0.0.0.0:9559", None, 511)
    assert (opts.log_level, opts.priority_queues, opts.packet_in, opts.pcap_dir) == (
        "trace", 1, None, None)
    assert opts.warnings == []


def test_generic_and_target_options(tmp_path: Path) -> None:
    opts = parse("--no-p4", "-i", "1@veth1", "--interface", "2@veth3", "--device-id", "3",
                 "--log-file", str(tmp_path / "log"), "--log-flush", "-L", "info",
                 "--dump-packet-data", "64", "--pcap", str(tmp_path),
                 "--", "--grpc-server-addr", "127.0.0.1:50001", "--cpu-port", "255",
                 "--drop-port", "510", "--priority-queues", "8")
    assert opts.program is None
    assert opts.interfaces == [(1, "veth1"), (2, "veth3")]
    assert (opts.device_id, opts.log_file, opts.log_flush, opts.log_level) == (
        3, str(tmp_path / "log"), True, "info")
    assert (opts.dump_packet_data, opts.pcap_dir) == (64, str(tmp_path))
    assert (opts.grpc_address, opts.cpu_port, opts.drop_port, opts.priority_queues) == (
        "127.0.0.1:50001", 255, 510, 8)
    assert opts.warnings == []


def test_pcap_without_directory_means_current_directory() -> None:
    assert parse(FWD_P4, "--pcap").pcap_dir == "."
    # argparse would take the program as the directory: it is recognised as the program
    opts = parse("--pcap", FWD_P4)
    assert (opts.program, opts.pcap_dir) == (FWD_P4, ".")


def test_packet_in_ignores_interfaces_with_a_warning() -> None:
    opts = parse("--no-p4", "--packet-in", "ipc:///tmp/x.ipc", "-i", "1@veth1")
    assert opts.packet_in == "ipc:///tmp/x.ipc"
    assert opts.interfaces == []
    assert any("-i is ignored" in w for w in opts.warnings)


def test_inapplicable_bmv2_flags_are_accepted_with_warnings() -> None:
    opts = parse("--no-p4", "--thrift-port", "9090", "--nanolog", "ipc:///tmp/n", "--debugger",
                 "--", "--disable-swap", "--max-mc-groups", "10", "--cpu-port", "64")
    assert opts.cpu_port == 64
    assert sorted(opts.warnings) == sorted([
        "--thrift-port does not apply to softswitch; ignored",
        "--nanolog does not apply to softswitch; ignored",
        "--debugger does not apply to softswitch; ignored",
        "--disable-swap does not apply to softswitch; ignored",
        "--max-mc-groups does not apply to softswitch; ignored",
    ])


def test_unknown_target_option_warns_and_the_rest_still_applies() -> None:
    opts = parse("--no-p4", "--", "--frobnicate", "--grpc-server-addr", "127.0.0.1:1")
    assert opts.grpc_address == "127.0.0.1:1"
    assert opts.warnings == ["unknown target option --frobnicate; ignored"]


def test_no_p4_with_a_program_warns_as_bmv2() -> None:
    opts = parse("--no-p4", FWD_P4)
    assert opts.program is None
    assert opts.warnings == ["ignoring input config as '--no-p4' was used"]


def test_log_flush_without_log_file_and_dump_above_info_warn() -> None:
    opts = parse("--no-p4", "--log-flush", "--dump-packet-data", "8", "-L", "warn")
    assert not opts.log_flush and opts.dump_packet_data == 0
    assert len(opts.warnings) == 2


@pytest.mark.parametrize(("argv", "message"), [
    ((), "please specify a program"),
    (("missing.p4",), "no such file"),
    (("y" * 300 + ".p4",), "File name too long"),
    (("--no-p4", "--bogus"), "unrecognized arguments: --bogus"),
    (("--no-p4", "-i", "veth1"), "expected <port-num>@<interface-name>"),
    (("--no-p4", "-i", "1@a", "-i", "1@b"), "port 1 is given twice"),
    (("--no-p4", "-i", "600@a"), "9 bits"),
    (("--no-p4", "--log-console", "--log-file", "x"), "exclusive"),
    (("--no-p4", "-L", "loud"), "invalid value loud for --log-level"),
    (("--no-p4", "--pcap=/nonexistent/dir"), "does not exist"),
    (("--no-p4", "--use-files", "1"), "not supported"),
    (("--no-p4", "--device-id", "-1"), "--device-id"),
    (("--no-p4", "--", "--cpu-port", "0"), "0 is not valid"),
    (("--no-p4", "--", "--cpu-port", "512"), "1..511"),
    (("--no-p4", "--", "--cpu-port", "511"), "is the drop port"),
    (("--no-p4", "-i", "5@a", "--", "--cpu-port", "5"), "also given with -i"),
    (("--no-p4", "--", "--drop-port", "1000"), "9 bits"),
    (("--no-p4", "--", "--priority-queues", "9"), "1..8"),
    (("--no-p4", "--", "--grpc-server-ssl"), "needs --grpc-server-cert"),
    (("--no-p4", "--", "--grpc-server-ssl", "--grpc-server-cert", "c",
      "--grpc-server-key", "k", "--grpc-server-with-client-auth"), "needs --grpc-server-cacert"),
])
def test_bad_command_lines(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(RunUsageError, match=message.replace(".", r"\.")):
        parse_run_args(list(argv))


def test_cpu_port_and_drop_port_move_together() -> None:
    opts = parse("--no-p4", "--", "--cpu-port", "511", "--drop-port", "510")
    assert (opts.cpu_port, opts.drop_port) == (511, 510)


def test_tls_options() -> None:
    opts = parse("--no-p4", "--", "--grpc-server-ssl", "--grpc-server-cert", "c.pem",
                 "--grpc-server-key", "k.pem", "--grpc-server-cacert", "ca.pem",
                 "--grpc-server-with-client-auth")
    assert opts.tls is not None
    assert (opts.tls.cert, opts.tls.key, opts.tls.cacert, opts.tls.client_auth) == (
        "c.pem", "k.pem", "ca.pem", True)


def test_cli_errors_are_one_line_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["run", "--no-p4", "--bogus"]) == 1
    err = capsys.readouterr().err
    assert "softswitch run: error: unrecognized arguments: --bogus" in err
    assert "Traceback" not in err


def test_cli_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--packet-in" in out and "target options (after --)" in out
    assert "--grpc-server-addr" in out
    assert cli_main(["run", "-v"]) == 0
    assert capsys.readouterr().out.startswith("softswitch ")


def test_a_bad_program_is_reported_without_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control C() { apply { x = ; } }\n")
    assert cli_main(["run", str(bad), "--", "--grpc-server-addr", "127.0.0.1:0"]) == 1
    err = capsys.readouterr().err
    assert "bad.p4:1:" in err and "error" in err and "Traceback" not in err
    notir = tmp_path / "bmv2.json"
    notir.write_text('{"header_types": []}')
    assert cli_main(["run", str(notir), "--", "--grpc-server-addr", "127.0.0.1:0"]) == 1
    assert "not a softswitch IR file" in capsys.readouterr().err


def test_run_puts_the_engine_variable_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run's default engine (C where it can be) reaches its Switches through $SOFTSWITCH_ENGINE;
    an in-process caller gets its own setting back afterwards."""
    monkeypatch.delenv("SOFTSWITCH_ENGINE", raising=False)
    bad = tmp_path / "bad.p4"
    bad.write_text("control C() { apply { x = ; } }\n")
    assert cli_main(["run", str(bad), "--", "--grpc-server-addr", "127.0.0.1:0"]) == 1
    assert "SOFTSWITCH_ENGINE" not in os.environ
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "python")
    assert cli_main(["run", str(bad), "--engine", "c", "--",
                     "--grpc-server-addr", "127.0.0.1:0"]) == 1
    assert os.environ["SOFTSWITCH_ENGINE"] == "python"


# --- a running switch ------------------------------------------------------------------------


class Running:
    """A `softswitch run` subprocess; `ready` is its ready line."""

    def __init__(self, *argv: str, netns: str | None = None) -> None:
        prefix = ["ip", "netns", "exec", netns] if netns else []
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "softswitch.cli", "run", *argv], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.lines: list[str] = []
        self._out: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                line = self._out.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            if not line:
                break
            self.lines.append(line)
            if "ready" in line:
                self.ready = line.strip()
                return
        self.proc.kill()
        raise AssertionError(f"no ready line: {self.lines} {self.proc.stderr.read()}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._out.put(line)
        self._out.put("")

    @property
    def grpc_port(self) -> int:
        return int(self.ready.rsplit(":", 1)[1])

    def terminate(self, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        assert self.proc.stderr is not None
        try:
            status = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"signal {sig} did not stop the switch in 10 s; stderr: "
                                 f"{self.proc.stderr.read()}") from None
        err = self.proc.stderr.read()
        while (line := self._out.get(timeout=5)):
            self.lines.append(line)
        return status, "".join(self.lines), err


@pytest.fixture
def ipc(tmp_path: Path) -> str:
    return f"ipc://{tmp_path}/bmv2_packets_1.ipc"


@pytest.fixture
def fwd_switch(ipc: str, tmp_path: Path) -> Iterator[tuple[Running, pynng.Pair0]]:
    switch = Running(FWD_P4, "--packet-in", ipc, "--pcap", str(tmp_path),
                     "--", "--grpc-server-addr", "127.0.0.1:0")
    peer = pynng.Pair0(recv_timeout=5000, send_timeout=5000)
    peer.dial(ipc, block=True)
    yield switch, peer
    peer.close()
    if switch.proc.poll() is None:
        switch.proc.kill()
        switch.proc.wait()


def test_run_forwards_a_packet_over_nanomsg(fwd_switch, tmp_path: Path) -> None:
    switch, peer = fwd_switch
    assert "Server listening on 127.0.0.1:" in switch.ready
    frame = bytes(range(8)) + b"payload"
    peer.send(encode(MsgType.PORT_ADD, 1, 0))
    peer.send(packet_in(1, frame))
    msg = decode(peer.recv())
    assert (msg.type, msg.port, msg.more, msg.payload) == (MsgType.PACKET_OUT, 2, len(frame),
                                                           frame)
    status, _, err = switch.terminate()
    assert status == 0, err
    assert "Traceback" not in err
    assert [bytes(p) for p in rdpcap(str(tmp_path / "port1_in.pcap"))] == [frame]
    assert [bytes(p) for p in rdpcap(str(tmp_path / "port2_out.pcap"))] == [frame]


def test_run_serves_p4runtime_with_the_program(fwd_switch) -> None:
    import grpc
    from finsy.proto import p4r
    from finsy.proto.p4.v1 import p4runtime_pb2_grpc

    switch, _ = fwd_switch
    with grpc.insecure_channel(f"127.0.0.1:{switch.grpc_port}") as channel:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        reply = stub.GetForwardingPipelineConfig(
            p4r.GetForwardingPipelineConfigRequest(device_id=0), timeout=5)
        tables = [t.preamble.name for t in reply.config.p4info.tables]
    assert tables == ["I.t"]
    status, _, err = switch.terminate(signal.SIGINT)
    assert status == 0, err


def test_run_no_p4_drops_until_a_pipeline_is_set(ipc: str) -> None:
    switch = Running("--no-p4", "--packet-in", ipc, "--device-id", "7", "--thrift-port", "9090",
                     "--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "64")
    peer = pynng.Pair0(recv_timeout=300, send_timeout=2000)
    try:
        assert "device 7" in switch.ready
        peer.dial(ipc, block=True)
        peer.send(packet_in(1, b"\x00" * 20))
        with pytest.raises(pynng.Timeout):
            peer.recv()
    finally:
        peer.close()
        status, _, err = switch.terminate()
    assert status == 0
    assert "--thrift-port does not apply to softswitch" in err


def test_run_logs_packets_to_a_file(ipc: str, tmp_path: Path) -> None:
    log = tmp_path / "switch.log"
    switch = Running(EXACT_P4, "--packet-in", ipc, "--log-file", str(log), "--log-flush",
                     "--", "--grpc-server-addr", "127.0.0.1:0")
    peer = pynng.Pair0(recv_timeout=300, send_timeout=2000)
    try:
        peer.dial(ipc, block=True)
        peer.send(packet_in(3, bytes(8)))  # table miss: dropped
        with pytest.raises(pynng.Timeout):
            peer.recv()
    finally:
        peer.close()
        status, _, err = switch.terminate()
    assert status == 0, err
    text = log.read_text()
    assert "[bmv2] [T]" in text
    assert "port 3" in text.lower() or "port: 3" in text.lower()


def test_run_in_process_stops_on_event(ipc: str) -> None:
    from softswitch.runtime.run import main as run_main

    stop = threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(run_main(
        ["--no-p4", "--packet-in", ipc, "--", "--grpc-server-addr", "127.0.0.1:0"], stop)))
    thread.start()
    peer = pynng.Pair0(recv_timeout=5000, send_timeout=2000)
    try:
        deadline = time.monotonic() + 15
        while True:  # the socket is there once the program is loaded
            try:
                peer.dial(ipc, block=True)
                break
            except pynng.ConnectionRefused:
                assert time.monotonic() < deadline and thread.is_alive()
                time.sleep(0.05)
        peer.send(packet_in(1, b"x" * 20))  # no program: dropped, but the socket works
        peer.send(encode(MsgType.INFO_REQ, 1, 0))
        assert decode(peer.recv()).type == MsgType.INFO_REP
    finally:
        peer.close()
        stop.set()
        thread.join(timeout=10)
    assert result == [0]


def test_an_empty_nanomsg_message_is_logged_and_the_next_frame_forwarded(
        ipc: str, tmp_path: Path) -> None:
    log = tmp_path / "switch.log"
    switch = Running(FWD_P4, "--packet-in", ipc, "--log-file", str(log), "--log-flush",
                     "-L", "info", "--", "--grpc-server-addr", "127.0.0.1:0")
    peer = pynng.Pair0(recv_timeout=5000, send_timeout=2000)
    try:
        peer.dial(ipc, block=True)
        peer.send(b"")  # used to end the receive thread for good
        frame = bytes(range(8)) + b"after the empty one"
        peer.send(packet_in(1, frame))
        msg = decode(peer.recv())
        assert (msg.type, msg.port, msg.payload) == (MsgType.PACKET_OUT, 2, frame)
    finally:
        peer.close()
        status, _, err = switch.terminate()
    assert status == 0, err
    assert "Traceback" not in err
    assert "[E]" in log.read_text() and "empty or unreadable" in log.read_text()


def test_a_runtime_thread_that_dies_stops_the_switch_with_an_error(
        ipc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from softswitch.runtime.ports.nanomsg import NanomsgPorts
    from softswitch.runtime.run import EXIT_THREAD_DIED
    from softswitch.runtime.run import main as run_main

    def broken_loop(self, receive) -> None:  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug in the receive loop")

    monkeypatch.setattr(NanomsgPorts, "_loop", broken_loop)
    log = tmp_path / "switch.log"
    stop = threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(run_main(
        ["--no-p4", "--packet-in", ipc, "--log-file", str(log), "-L", "info",
         "--", "--grpc-server-addr", "127.0.0.1:0"], stop)))
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the switch kept running without its port thread"
    assert result == [EXIT_THREAD_DIED]
    text = log.read_text()
    assert "thread 'nanomsg" in text and "a bug in the receive loop" in text
    assert "Traceback" in text  # the whole story is in the log file


VETH_PEER_SCRIPT = """
import socket, sys
frame = bytes.fromhex(sys.argv[1])
send = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
send.bind(("ssb", 0))
recv = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
recv.bind(("ssd", 0))
recv.settimeout(5)
send.send(frame)
while True:
    data = recv.recv(2048)
    if data[12:14] == frame[12:14]:
        break
print(data.hex())
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                    reason="AF_PACKET needs root and iproute2")
def test_run_with_interfaces_in_a_namespace(tmp_path: Path) -> None:
    ns = f"sstest-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    except subprocess.CalledProcessError:
        pytest.skip("cannot create a network namespace here")
    switch = None
    try:
        for a, b in (("ssa", "ssb"), ("ssc", "ssd")):
            subprocess.run(["ip", "-n", ns, "link", "add", a, "type", "veth", "peer", "name", b],
                           check=True)
            for name in (a, b):
                subprocess.run(["ip", "-n", ns, "link", "set", name, "up"], check=True)
        switch = Running(FWD_P4, "-i", "1@ssa", "-i", "2@ssc", "--pcap", str(tmp_path),
                         "--", "--grpc-server-addr", "127.0.0.1:0", netns=ns)
        assert "Adding interface ssa as port 1" in "".join(switch.lines)
        frame = bytes.fromhex("ffffffffffff 020000000001 88b5") + b"through the switch"
        peer = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c",
                               VETH_PEER_SCRIPT, frame.hex()],
                              capture_output=True, text=True, timeout=20)
        assert peer.returncode == 0, peer.stderr
        assert bytes.fromhex(peer.stdout.strip()) == frame  # the program rewrites nothing
        status, _, err = switch.terminate()
        assert status == 0, err
        ins = [bytes(p) for p in rdpcap(str(tmp_path / "ssa_in.pcap"))]
        outs = [bytes(p) for p in rdpcap(str(tmp_path / "ssc_out.pcap"))]
        assert frame in ins and frame in outs
    finally:
        if switch is not None and switch.proc.poll() is None:
            switch.proc.kill()
            switch.proc.wait()
        subprocess.run(["ip", "netns", "del", ns], check=False)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_run_serves_over_tls(tmp_path: Path) -> None:
    import grpc
    from finsy.proto import p4r
    from finsy.proto.p4.v1 import p4runtime_pb2_grpc

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    switch = Running("--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0", "--grpc-server-ssl",
                     "--grpc-server-cert", str(cert), "--grpc-server-key", str(key))
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with grpc.secure_channel(f"localhost:{switch.grpc_port}", credentials) as channel:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
            reply = stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)
        assert reply.p4runtime_api_version
    finally:
        status, _, err = switch.terminate()
    assert status == 0, err


# --- --queue-rate (a softswitch extension: BMv2 uses simple_switch_CLI set_queue_rate) ----------


def test_queue_rate_entries_in_order() -> None:
    opts = parse("--no-p4", "--queue-rate", "1000", "--queue-rate", "3:20",
                 "--queue-rate=7:5")
    assert opts.queue_rates == [(None, 1000), (3, 20), (7, 5)]
    assert parse("--no-p4").queue_rates == []


@pytest.mark.parametrize("value", ["0", "-5", "x", "3:", ":5", "a:5", "3:0", "512:10", "1.5"])
def test_bad_queue_rates(value: str) -> None:
    with pytest.raises(RunUsageError, match="--queue-rate"):
        parse_run_args(["--no-p4", f"--queue-rate={value}"])


def test_queue_rates_reach_the_device_in_order(ipc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from softswitch.runtime.device import Device
    from softswitch.runtime.run import run

    calls: list[tuple[int | None, float | None]] = []
    real = Device.set_queue_rate

    def record(self: Device, port: int | None, pps: float | None) -> None:
        calls.append((port, pps))
        real(self, port, pps)

    monkeypatch.setattr(Device, "set_queue_rate", record)
    stop = threading.Event()
    opts = parse("--no-p4", "--packet-in", ipc, "--queue-rate", "50", "--queue-rate", "2:10",
                 "--", "--grpc-server-addr", "127.0.0.1:0")
    ready: list[str] = []
    thread = threading.Thread(target=run, args=(opts, stop, ready.append))
    thread.start()
    try:
        deadline = time.monotonic() + 15
        while not ready and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready
    finally:
        stop.set()
        thread.join(timeout=10)
    assert calls == [(None, 50), (2, 10)]


def test_run_paces_a_rate_limited_port(ipc: str) -> None:
    # every port fast, then port 2 (where FWD_P4 sends everything) at 20 packets per second
    switch = Running(FWD_P4, "--packet-in", ipc, "--queue-rate", "100000",
                     "--queue-rate", "2:20", "--", "--grpc-server-addr", "127.0.0.1:0")
    peer = pynng.Pair0(recv_timeout=5000, send_timeout=2000)
    try:
        peer.dial(ipc, block=True)
        for i in range(4):
            peer.send(packet_in(1, bytes([i]) * 20))
        arrivals = []
        for _ in range(4):
            msg = decode(peer.recv())
            arrivals.append(time.monotonic())
            assert (msg.type, msg.port) == (MsgType.PACKET_OUT, 2)
    finally:
        peer.close()
        status, _, err = switch.terminate()
    assert status == 0, err
    # three 50 ms gaps after the first departure (a little slack for the clock's granularity)
    assert arrivals[-1] - arrivals[0] >= 0.12
