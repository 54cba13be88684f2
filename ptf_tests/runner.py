"""Run a PTF suite against a freshly started switch: softswitch (default) or BMv2.

    python -m ptf_tests.runner --suite NAME | --program P.p4|IR.json --test-dir DIR
        [--target softswitch|bmv2] [--arch v1model|tna]
        [--veth] [--ports N] [--out-dir DIR] [--push-once] [--pcap] [--include DIR]...
        [--switch-args "ARGS"] [TESTS...] [--ptf-args ARG...]

`--arch tna` runs the suite's TNA program (ptf_tests/suites.py), on softswitch only: BMv2 has
no TNA. Steps: compile the program (P4Info + device config into the output folder), start the switch
with simple_switch_grpc's command line (`--no-p4`; packets over nanomsg, or veth pairs with
`--veth`), wait until its gRPC port answers, run `ptf` with the test parameters the base class
reads (grpcaddr, p4info, config, device_id, cpu_port), stop the switch, print where the logs are
and exit with ptf's status. Everything a run writes goes to `--out-dir`
(default `out/ptf/<suite>-<target>[-tna][-veth]/`): the compiled program, `switch.log` (the switch's own
log), `switch.out` (its stdout/stderr), `ptf.log` and `ptf.pcap`.

`--switch-args` adds simple_switch_grpc options to the switch's command line, the same text for
both targets: target options (`--priority-queues`...) are moved after its `--`, and
`--queue-rate [PORT:]PPS` entries are given to softswitch run, or for BMv2 applied after start
with `simple_switch_CLI --thrift-port P` `set_queue_rate PPS [PORT]` commands.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ptf_tests.suites import ARCHS, SUITES

ROOT = Path(__file__).resolve().parent.parent
CPU_PORT = 255
DEVICE_ID = 0
READY_TIMEOUT = 30.0  # seconds; a cold start imports grpc, scapy and the frontend
STOP_TIMEOUT = 5.0

# simple_switch_grpc's target options (they go after its `--`): name → takes a value.
TARGET_OPTIONS = {"--priority-queues": True, "--drop-port": True, "--dp-grpc-server-addr": True,
                  "--load-modules": True, "--max-mc-groups": True, "--max-l1-entries": True,
                  "--max-l2-entries": True, "--enable-swap": False, "--disable-swap": False,
                  "--egress-spec-init-to-drop": False, "--grpc-server-ssl": False,
                  "--grpc-server-cacert": True, "--grpc-server-cert": True,
                  "--grpc-server-key": True, "--grpc-server-with-client-auth": False}
# Options the runner sets itself; the tests depend on them, so --switch-args may not change them.
RUNNER_OPTIONS = ("--grpc-server-addr", "--cpu-port", "--device-id", "--packet-in", "--no-p4",
                  "-i", "--interface", "--log-file", "--log-console", "--thrift-port", "--pcap")


class RunnerError(Exception):
    """The environment cannot be set up (missing tool, compile failure, switch not starting)."""


@dataclass
class SwitchArgs:
    """`--switch-args`, sorted: generic options, target options (after `--`), queue rates."""

    generic: list[str] = field(default_factory=list)
    target: list[str] = field(default_factory=list)
    queue_rates: list[tuple[int | None, int]] = field(default_factory=list)  # (port|None, pps)


def parse_switch_args(text: str) -> SwitchArgs:
    """Sort a shell-quoted option string (see the module docstring); RunnerError when bad."""
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise RunnerError(f"--switch-args: {exc}") from None
    out = SwitchArgs()
    after_dashes = False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            after_dashes = True
            continue
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in RUNNER_OPTIONS:
            raise RunnerError(f"--switch-args: {name} is set by the runner")
        if name == "--queue-rate":
            if not eq:
                if i >= len(tokens):
                    raise RunnerError("--switch-args: --queue-rate needs [PORT:]PPS")
                inline, i = tokens[i], i + 1
            out.queue_rates.append(_queue_rate(inline))
            continue
        into = out.target if after_dashes or name in TARGET_OPTIONS else out.generic
        into.append(token)
        if TARGET_OPTIONS.get(name) and not eq and i < len(tokens):
            into.append(tokens[i])
            i += 1
    return out


def _queue_rate(text: str) -> tuple[int | None, int]:
    from softswitch.runtime.run import parse_queue_rate  # the same syntax as softswitch run's

    try:
        return parse_queue_rate(text)
    except argparse.ArgumentTypeError as exc:
        raise RunnerError(f"--switch-args: --queue-rate {exc}") from None


@dataclass
class Plan:
    """Everything one run needs, resolved from the command line."""

    program: Path
    test_dir: Path
    target: str
    out_dir: Path
    ports: list[int]
    veth: bool
    push_once: bool
    switch_pcap: bool
    ptf_args: list[str]
    tests: list[str]
    include_dirs: list[Path] = field(default_factory=list)
    switch_args: SwitchArgs = field(default_factory=SwitchArgs)
    arch: str = "v1model"
    grpc_port: int = 0
    thrift_port: int = 0  # bmv2 only; 0 = pick a free one
    p4info: Path = field(default=Path())
    config: Path = field(default=Path())

    @property
    def grpc_addr(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"


# ---------------------------------------------------------------------------------------------
# Compiling


def _bin(name: str) -> str:
    """A console script of this virtualenv when present, else whatever PATH has."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        raise RunnerError(f"'{name}' is not installed (looked in {local.parent} and PATH)")
    return found


def _run_checked(cmd: Sequence[str], what: str) -> None:
    print("+", shlex.join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RunnerError(f"{what} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")


def compile_program(plan: Plan) -> None:
    """Write the P4Info and the device config into the output folder; set `plan.p4info/config`."""
    stem = plan.program.stem
    includes = [arg for folder in plan.include_dirs for arg in ("-I", str(folder))]
    plan.p4info = plan.out_dir / f"{stem}.p4info.txtpb"
    if plan.target == "bmv2":
        if plan.program.suffix == ".json":
            raise RunnerError("the bmv2 target needs P4 source: BMv2 cannot load softswitch IR JSON")
        plan.config = plan.out_dir / f"{stem}.json"
        _run_checked([_bin("p4c"), "--target", "bmv2", "--arch", "v1model", *includes,
                      "-o", str(plan.out_dir), "--p4runtime-files", str(plan.p4info),
                      str(plan.program)], "p4c")
        return
    softswitch = [sys.executable, "-m", "softswitch.cli"]
    if plan.program.suffix == ".json":
        plan.config = plan.out_dir / plan.program.name
        if plan.config.resolve() != plan.program.resolve():
            shutil.copyfile(plan.program, plan.config)
        _run_checked([*softswitch, "compile", str(plan.program), "--p4info", str(plan.p4info)],
                     "softswitch compile")
        return
    plan.config = plan.out_dir / f"{stem}.json"
    # without --arch softswitch takes the architecture from the include, as before
    arch = ["--arch", plan.arch] if plan.arch != "v1model" else []
    _run_checked([*softswitch, "compile", str(plan.program), *includes, *arch,
                  "--p4info", str(plan.p4info), "--ir", str(plan.config)], "softswitch compile")


# ---------------------------------------------------------------------------------------------
# Ports: nanomsg (no root) or veth pairs (root)


def free_tcp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class VethPair:
    switch_side: str
    ptf_side: str


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RunnerError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")


def _quiet_interface(name: str) -> None:
    """No IPv6 autoconfiguration: router solicitations and MLD reports would reach the tests."""
    path = Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6")
    with contextlib.suppress(OSError):
        path.write_text("1\n")


@contextlib.contextmanager
def veth_pairs(ports: Sequence[int]) -> Iterator[dict[int, VethPair]]:
    """Create one veth pair per port (names unique to this process); delete them afterwards."""
    if os.geteuid() != 0:
        raise RunnerError("--veth needs root (it creates veth interfaces); use nanomsg without it")
    if shutil.which("ip") is None:
        raise RunnerError("--veth needs the 'ip' command (iproute2)")
    tag = f"{os.getpid() % 0xFFFF:04x}"
    pairs: dict[int, VethPair] = {}
    try:
        for port in ports:
            pair = VethPair(f"s{tag}p{port}", f"t{tag}p{port}")  # <= 15 characters
            _ip("link", "add", pair.switch_side, "type", "veth", "peer", "name", pair.ptf_side)
            pairs[port] = pair
            for name in (pair.switch_side, pair.ptf_side):
                _quiet_interface(name)
                _ip("link", "set", "dev", name, "mtu", "9000")
                _ip("link", "set", "dev", name, "up")
        yield pairs
    finally:
        for pair in pairs.values():
            # Deleting one end removes its peer too.
            with contextlib.suppress(RunnerError):
                _ip("link", "del", pair.switch_side)


# ---------------------------------------------------------------------------------------------
# The switch


def switch_command(plan: Plan, packet_addr: str | None,
                   veths: dict[int, VethPair]) -> list[str]:
    """simple_switch_grpc's command line, for either target."""
    extra = plan.switch_args
    if plan.target == "bmv2":
        if not plan.thrift_port:
            plan.thrift_port = free_tcp_port()
        cmd = [_bin("simple_switch_grpc"), "--thrift-port", str(plan.thrift_port), "--log-flush"]
    else:
        cmd = [sys.executable, "-m", "softswitch.cli", "run"]
        for port, pps in extra.queue_rates:  # BMv2: set after start, by apply_queue_rates
            cmd += ["--queue-rate", f"{pps}" if port is None else f"{port}:{pps}"]
    cmd += ["--no-p4", "--device-id", str(DEVICE_ID),
            "--log-file", str(plan.out_dir / "switch.log")]
    if packet_addr is not None:
        cmd += ["--packet-in", packet_addr]
    if plan.switch_pcap:
        (plan.out_dir / "pcap").mkdir(exist_ok=True)
        cmd += ["--pcap", str(plan.out_dir / "pcap")]
    for port, pair in sorted(veths.items()):
        cmd += ["-i", f"{port}@{pair.switch_side}"]
    cmd += extra.generic
    cmd += ["--", "--grpc-server-addr", plan.grpc_addr, "--cpu-port", str(CPU_PORT)]
    return cmd + extra.target


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@contextlib.contextmanager
def running_switch(plan: Plan, cmd: Sequence[str]) -> Iterator[subprocess.Popen[bytes]]:
    """Start the switch, wait until its gRPC port accepts connections, stop it afterwards."""
    out_path = plan.out_dir / "switch.out"
    print("+", shlex.join(cmd), flush=True)
    with out_path.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while not _port_open(plan.grpc_port):
            if proc.poll() is not None:
                raise RunnerError(f"the switch exited with status {proc.returncode} before it "
                                  f"was ready; its output ({out_path}):\n{_tail(out_path)}")
            if time.monotonic() > deadline:
                raise RunnerError(f"the switch did not open {plan.grpc_addr} within "
                                  f"{READY_TIMEOUT:.0f} s; its output ({out_path}):\n"
                                  f"{_tail(out_path)}")
            time.sleep(0.05)
        yield proc
    finally:
        stop_process(proc)


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it does not exit in time (the process only, by its id)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def queue_rate_commands(rates: Sequence[tuple[int | None, int]]) -> str:
    """simple_switch_CLI input setting the rates in order (no port: every port)."""
    return "".join(f"set_queue_rate {pps}\n" if port is None else f"set_queue_rate {pps} {port}\n"
                   for port, pps in rates)


def queue_rate_cli_command(plan: Plan) -> list[str]:
    # --json: the CLI need not fetch a config from a switch that may not have one yet
    return [_bin("simple_switch_CLI"), "--thrift-port", str(plan.thrift_port),
            "--json", str(plan.config)]


def apply_queue_rates(plan: Plan) -> None:
    """BMv2: queue rates are run-time state, set through the Thrift CLI once the switch is up
    (a pipeline pushed later over P4Runtime keeps them)."""
    rates = plan.switch_args.queue_rates
    if plan.target != "bmv2" or not rates:
        return
    deadline = time.monotonic() + READY_TIMEOUT
    while not _port_open(plan.thrift_port):
        if time.monotonic() > deadline:
            raise RunnerError(f"BMv2's Thrift port {plan.thrift_port} did not open")
        time.sleep(0.05)
    cmd = queue_rate_cli_command(plan)
    commands = queue_rate_commands(rates)
    print("+", shlex.join(cmd), "<<", commands.replace("\n", "; ").rstrip("; "), flush=True)
    done = subprocess.run(cmd, input=commands, capture_output=True, text=True, check=False)
    output = done.stdout + done.stderr
    # the CLI reports bad input on its output and still exits 0
    if done.returncode != 0 or any(word in output for word in ("Error", "Traceback",
                                                               "Exception")):
        raise RunnerError(f"simple_switch_CLI set_queue_rate failed (exit {done.returncode}):"
                          f"\n{output}")


# ---------------------------------------------------------------------------------------------
# The pipeline, pushed once for the whole run (--push-once)


def push_pipeline(plan: Plan) -> None:
    """SetForwardingPipelineConfig(VERIFY_AND_COMMIT) from this process, before ptf starts."""
    from p4rt import P4RuntimeClientError, SwitchConnection

    try:
        with SwitchConnection(plan.grpc_addr, DEVICE_ID, election_id=(0, 1)) as conn:
            conn.set_pipeline(plan.p4info, plan.config)
    except P4RuntimeClientError as error:
        raise RunnerError(f"pushing the pipeline failed: {error}") from None


# ---------------------------------------------------------------------------------------------
# ptf


def test_params(plan: Plan) -> str:
    """ptf's --test-params: Python assignments separated by ';' (strings quoted)."""
    params: dict[str, object] = {
        "grpcaddr": plan.grpc_addr, "p4info": str(plan.p4info), "config": str(plan.config),
        "device_id": DEVICE_ID, "cpu_port": CPU_PORT, "target": plan.target, "arch": plan.arch,
        "pipeline_pushed": plan.push_once,
    }
    return ";".join(f"{key}={value!r}" for key, value in params.items())


def ptf_command(plan: Plan, packet_addr: str | None, veths: dict[int, VethPair]) -> list[str]:
    cmd = [sys.executable, _bin("ptf"), "--test-dir", str(plan.test_dir), "--pypath", str(ROOT),
           "--test-params", test_params(plan), "--log-file", str(plan.out_dir / "ptf.log")]
    if packet_addr is not None:
        ports = ",".join(str(port) for port in plan.ports)
        cmd += ["--platform", "nn", "--device-socket", f"{DEVICE_ID}-{{{ports}}}@{packet_addr}"]
    else:
        cmd += ["--platform", "eth"]
        for port, pair in sorted(veths.items()):
            cmd += ["--interface", f"{DEVICE_ID}-{port}@{pair.ptf_side}"]
    if os.geteuid() != 0:
        cmd.append("--allow-user")
    return cmd + plan.ptf_args + plan.tests


def run(plan: Plan) -> int:
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("switch.log", "switch.log.txt", "switch.out", "ptf.log", "ptf.pcap"):
        (plan.out_dir / stale).unlink(missing_ok=True)
    shutil.rmtree(plan.out_dir / "pcap", ignore_errors=True)
    compile_program(plan)
    plan.grpc_port = free_tcp_port()
    # A short private folder: AF_UNIX paths are limited to ~100 bytes.
    with tempfile.TemporaryDirectory(prefix="ptf-") as tmp, contextlib.ExitStack() as stack:
        veths: dict[int, VethPair] = {}
        packet_addr: str | None = f"ipc://{tmp}/pkt.ipc"
        if plan.veth:
            veths = stack.enter_context(veth_pairs(plan.ports))
            packet_addr = None
        stack.enter_context(running_switch(plan, switch_command(plan, packet_addr, veths)))
        apply_queue_rates(plan)
        if plan.push_once:
            push_pipeline(plan)
        cmd = ptf_command(plan, packet_addr, veths)
        print("+", shlex.join(cmd), flush=True)
        status = subprocess.run(cmd, cwd=plan.out_dir, check=False).returncode
    _print_logs(plan)
    return status


def _print_logs(plan: Plan) -> None:
    print(f"logs in {plan.out_dir}:")
    for name in ("switch.log", "switch.log.txt", "switch.out", "ptf.log", "ptf.pcap", "pcap"):
        path = plan.out_dir / name
        if path.exists():
            print(f"  {path}")


# ---------------------------------------------------------------------------------------------
# Command line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ptf_tests.runner",
        description="Compile a P4 program, start softswitch (or BMv2) with simple_switch_grpc's "
        "flags and run a PTF suite against it.")
    parser.add_argument("--suite", choices=sorted(SUITES),
                        help="a suite of this repository (ptf_tests/suites.py): sets --program, "
                        "--test-dir and --switch-args")
    parser.add_argument("--program", type=Path,
                        help="P4_16 source (of --arch), or softswitch IR JSON (softswitch target)")
    parser.add_argument("--test-dir", type=Path, help="folder of PTF test modules")
    parser.add_argument("--target", choices=("softswitch", "bmv2"), default="softswitch",
                        help="bmv2 needs p4c and simple_switch_grpc on PATH")
    parser.add_argument("--arch", choices=ARCHS, default="v1model",
                        help="the program's architecture: with --suite, which of the suite's "
                        "programs runs; tna needs the softswitch target")
    parser.add_argument("--veth", action="store_true",
                        help="use veth pairs and ptf's eth platform (root) instead of nanomsg")
    parser.add_argument("--ports", type=int, default=8, help="data ports 0..N-1 (default 8)")
    parser.add_argument("--out-dir", type=Path,
                        help="where compiled files and logs go (default out/ptf/<suite>-<target>[-veth])")
    parser.add_argument("--push-once", action="store_true",
                        help="push the pipeline once here instead of in every test's setUp")
    parser.add_argument("--pcap", action="store_true", dest="switch_pcap",
                        help="also let the switch capture every port into <out-dir>/pcap/")
    parser.add_argument("--include", "-I", dest="include_dirs", action="append", default=[],
                        type=Path, metavar="DIR",
                        help="#include folder for the program (softswitch compile / p4c -I); "
                        "repeatable")
    parser.add_argument("--switch-args", default="", metavar='"ARGS"',
                        help="extra simple_switch_grpc options, e.g. \"--priority-queues 8 "
                        "--queue-rate 2:100\"; a single option without a value needs the = "
                        "form: --switch-args=--enable-swap")
    parser.add_argument("--ptf-args", nargs=argparse.REMAINDER, default=[],
                        help="extra ptf arguments (everything after this flag)")
    parser.add_argument("tests", nargs="*", help="ptf test names or groups (default: all)")
    return parser


def make_plan(argv: Sequence[str] | None = None) -> Plan:
    args = build_parser().parse_args(argv)
    if args.arch == "tna" and args.target == "bmv2":
        raise RunnerError("--arch tna needs --target softswitch: BMv2 runs v1model programs "
                          "only (a TNA program needs Tofino, or its model, through bf-p4c)")
    if args.suite is not None:
        suite = SUITES[args.suite]
        if args.program is None:
            args.program = suite.program_for(args.arch)
            if args.program is None:
                raise RunnerError(f"suite '{args.suite}' has no {args.arch} program "
                                  "(ptf_tests/suites.py)")
        args.test_dir = args.test_dir or suite.test_dir
        args.switch_args = " ".join(filter(None, (suite.switch_args, args.switch_args)))
    if args.program is None or args.test_dir is None:
        raise RunnerError("give --suite NAME, or --program and --test-dir")
    if not args.program.is_file():
        raise RunnerError(f"{args.program}: no such file")
    if not args.test_dir.is_dir():
        raise RunnerError(f"{args.test_dir}: no such folder")
    if args.ports < 1 or args.ports > 64:
        raise RunnerError("--ports must be between 1 and 64")
    for folder in args.include_dirs:
        if not folder.is_dir():
            raise RunnerError(f"--include {folder}: no such folder")
    suffix = ("-tna" if args.arch == "tna" else "") + ("-veth" if args.veth else "")
    out_dir = args.out_dir or (ROOT / "out" / "ptf" /
                               f"{args.test_dir.resolve().name}-{args.target}{suffix}")
    return Plan(program=args.program.resolve(), test_dir=args.test_dir.resolve(),
                target=args.target, out_dir=out_dir.resolve(), ports=list(range(args.ports)),
                veth=args.veth, push_once=args.push_once,
                switch_pcap=args.switch_pcap, ptf_args=list(args.ptf_args),
                tests=list(args.tests),
                include_dirs=[folder.resolve() for folder in args.include_dirs],
                switch_args=parse_switch_args(args.switch_args), arch=args.arch)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(make_plan(argv))
    except RunnerError as exc:
        print(f"ptf runner: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
