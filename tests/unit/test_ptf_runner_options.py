"""The PTF runner's --switch-args and --include: command lines for softswitch and BMv2."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # ptf_tests/ is a folder of the repository, not a package
    sys.path.insert(0, str(ROOT))

from ptf_tests import runner  # noqa: E402
from ptf_tests.runner import (  # noqa: E402
    Plan,
    RunnerError,
    make_plan,
    parse_switch_args,
    queue_rate_commands,
    switch_command,
)
from softswitch.runtime.run import RunOptions, parse_run_args  # noqa: E402

PROGRAM = ROOT / "ptf_tests" / "runtime" / "p4" / "runtime_basics.p4"
TEST_DIR = ROOT / "ptf_tests" / "runtime"


def plan_for(*extra: str, target: str = "softswitch") -> Plan:
    plan = make_plan(["--program", str(PROGRAM), "--test-dir", str(TEST_DIR),
                      "--target", target, *extra])
    plan.grpc_port = 50001
    return plan


def test_switch_args_are_sorted_into_generic_target_and_rates() -> None:
    args = parse_switch_args("--priority-queues 8 --queue-rate 2:100 -L debug "
                             "--queue-rate=50 --enable-swap -- --drop-port 510")
    assert args.generic == ["-L", "debug"]
    assert args.target == ["--priority-queues", "8", "--enable-swap", "--drop-port", "510"]
    assert args.queue_rates == [(2, 100), (None, 50)]
    assert parse_switch_args("--priority-queues=4").target == ["--priority-queues=4"]
    empty = parse_switch_args("")
    assert (empty.generic, empty.target, empty.queue_rates) == ([], [], [])


@pytest.mark.parametrize(("text", "message"), [
    ("--cpu-port 64", "--cpu-port is set by the runner"),
    ("-- --grpc-server-addr=x:1", "--grpc-server-addr is set by the runner"),
    ("--thrift-port 9090", "--thrift-port is set by the runner"),
    ("--queue-rate", "needs \\[PORT:\\]PPS"),
    ("--queue-rate 0", "--queue-rate"),
    ("--queue-rate 600:10", "9 bits"),
    ("'--log-level", "quotation"),
])
def test_bad_switch_args(text: str, message: str) -> None:
    with pytest.raises(RunnerError, match=message):
        parse_switch_args(text)


def test_softswitch_command_takes_the_switch_args() -> None:
    plan = plan_for("--switch-args", "--priority-queues 8 --queue-rate 2:100 "
                    "--queue-rate 1000 --dump-packet-data 64")
    cmd = switch_command(plan, "ipc:///tmp/x/pkt.ipc", {})
    dashes = cmd.index("--")
    assert cmd[dashes:] == ["--", "--grpc-server-addr", "127.0.0.1:50001", "--cpu-port", "255",
                            "--priority-queues", "8"]
    # softswitch run itself accepts the whole line, with the rates in the order given
    opts = parse_run_args(cmd[cmd.index("run") + 1:])
    assert isinstance(opts, RunOptions)
    assert opts.queue_rates == [(2, 100), (None, 1000)]
    assert (opts.priority_queues, opts.dump_packet_data, opts.cpu_port) == (8, 64, 255)
    assert opts.warnings == []


def test_bmv2_command_moves_target_options_and_leaves_rates_to_the_cli(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "_bin", lambda name: f"/opt/bmv2/bin/{name}")
    plan = plan_for("--switch-args", "--priority-queues 8 --queue-rate 3:200", target="bmv2")
    cmd = switch_command(plan, "ipc:///tmp/x/pkt.ipc", {})
    assert cmd[0] == "/opt/bmv2/bin/simple_switch_grpc"
    assert cmd[cmd.index("--thrift-port") + 1] == str(plan.thrift_port) and plan.thrift_port
    assert "--queue-rate" not in cmd and "3:200" not in cmd
    assert cmd[cmd.index("--"):][-2:] == ["--priority-queues", "8"]  # a target option in BMv2
    assert queue_rate_commands([(None, 1000), (3, 200)]) == (
        "set_queue_rate 1000\nset_queue_rate 200 3\n")


@pytest.fixture
def listening_port() -> Iterator[int]:
    """A TCP port that accepts connections, standing in for BMv2's Thrift server."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])


FAKE_CLI = """#!{python}
import sys
from pathlib import Path
Path({log!r}).write_text(" ".join(sys.argv[1:]) + "\\n" + sys.stdin.read())
print({reply!r})
"""


def fake_cli(tmp_path: Path, reply: str) -> Path:
    path = tmp_path / "simple_switch_CLI"
    path.write_text(FAKE_CLI.format(python=sys.executable, log=str(tmp_path / "cli.log"),
                                    reply=reply))
    path.chmod(0o755)
    return path


def test_bmv2_queue_rates_are_set_through_simple_switch_cli(
        tmp_path: Path, listening_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = fake_cli(tmp_path, "RuntimeCmd: ")
    monkeypatch.setattr(runner, "_bin", lambda name: str(cli))
    plan = plan_for("--switch-args", "--queue-rate 1000 --queue-rate 3:200", target="bmv2")
    plan.thrift_port = listening_port
    plan.config = tmp_path / "prog.json"
    runner.apply_queue_rates(plan)
    args, *commands = (tmp_path / "cli.log").read_text().splitlines()
    assert args == f"--thrift-port {listening_port} --json {plan.config}"
    assert commands == ["set_queue_rate 1000", "set_queue_rate 200 3"]


def test_bmv2_cli_errors_are_reported(tmp_path: Path, listening_port: int,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cli = fake_cli(tmp_path, "Error: Invalid port")
    monkeypatch.setattr(runner, "_bin", lambda name: str(cli))
    plan = plan_for("--switch-args", "--queue-rate 3:200", target="bmv2")
    plan.thrift_port = listening_port
    with pytest.raises(RunnerError, match="set_queue_rate failed"):
        runner.apply_queue_rates(plan)


def test_no_cli_without_rates_or_for_softswitch(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(name: str) -> str:
        raise AssertionError(f"{name} should not run")

    monkeypatch.setattr(runner, "_bin", forbidden)
    runner.apply_queue_rates(plan_for("--switch-args", "--priority-queues 8", target="bmv2"))
    runner.apply_queue_rates(plan_for("--switch-args", "--queue-rate 3:200"))


INCLUDED_PROGRAM = """#include <core.p4>
#include <v1model.p4>
#include "shared_headers.p4"
struct M {}
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { p.extract(h.eth); transition accept; }
}
control V(inout H h, inout M m) { apply {} }
control I(inout H h, inout M m, inout standard_metadata_t s) { apply { s.egress_spec = 1; } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply {} }
control C(inout H h, inout M m) { apply {} }
control D(packet_out p, in H h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
SHARED_HEADERS = """header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct H { eth_t eth; }
"""


def test_include_folders_reach_the_compilers(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "inc").mkdir()
    program = tmp_path / "src" / "prog.p4"
    program.write_text(INCLUDED_PROGRAM)
    (tmp_path / "inc" / "shared_headers.p4").write_text(SHARED_HEADERS)
    argv = ["--program", str(program), "--test-dir", str(tmp_path), "--out-dir",
            str(tmp_path / "out"), "--include", str(tmp_path / "inc")]
    plan = make_plan(argv)
    assert plan.include_dirs == [(tmp_path / "inc").resolve()]
    plan.out_dir.mkdir()
    runner.compile_program(plan)  # a real softswitch compile: fails without the -I
    assert plan.p4info.is_file() and plan.config.is_file()

    seen: list[list[str]] = []
    monkeypatch.setattr(runner, "_run_checked", lambda cmd, what: seen.append(list(cmd)))
    monkeypatch.setattr(runner, "_bin", lambda name: name)
    bmv2 = make_plan([*argv, "--target", "bmv2"])
    runner.compile_program(bmv2)
    (p4c,) = seen
    assert p4c[0] == "p4c" and p4c[p4c.index("-I") + 1] == str((tmp_path / "inc").resolve())

    with pytest.raises(RunnerError, match="no such folder"):
        make_plan([*argv[:-1], str(tmp_path / "missing")])
