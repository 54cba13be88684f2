"""`softswitch run`: simple_switch_grpc's command line, on softswitch.

    softswitch run [PROGRAM.p4 | IR.json | --no-p4] [-i PORT@IFACE]... [--packet-in ipc://PATH]
                   [--device-id N] [--pcap [DIR]] [--log-console | --log-file F] [-L LEVEL]
                   [--log-flush] [--dump-packet-data N] [--priority-queues N]
                   [--queue-rate [PORT:]PPS]...
                   [-- --grpc-server-addr ADDR --cpu-port N --drop-port N --priority-queues N
                       --grpc-server-ssl --grpc-server-cacert F --grpc-server-cert F
                       --grpc-server-key F --grpc-server-with-client-auth]

Options before ``--`` are BMv2's generic ones, those after it simple_switch_grpc's target options.
BMv2 options that mean nothing here (``--thrift-port``...) are accepted with a warning; an unknown
target option is ignored with a warning (BMv2 prints "Target parser returned an error" and goes
on); an unknown generic option is an error, as in BMv2. Departures from BMv2, on purpose: a
`.p4` program is compiled on the fly and its P4Info is built, so the P4Runtime server serves it
without a SetForwardingPipelineConfig; with ``--packet-in`` and ``--pcap`` the captures are named
``port<N>_in.pcap`` / ``port<N>_out.pcap`` (BMv2 captures nothing then).

``--queue-rate [PORT:]PPS`` is a softswitch extension: BMv2 sets egress drain rates at run time
with ``simple_switch_CLI`` (``set_queue_rate PPS [PORT]``); here the same settings can be given at
start, applied in order (one without PORT sets every port, as the CLI command without a port).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TextIO

from softswitch.environment import variables_set
from softswitch.errors import ControlPlaneError, P4Error
from softswitch.file_check import file_problem
from softswitch.limits import DEFAULT_LIMITS, Limits, add_limit_options, limits_from_options
from softswitch.runtime.ports import PortError, PortMap

LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "off")
PYTHON_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO,
                 "warn": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 1}
DEFAULT_GRPC_ADDRESS = "0.0.0.0:9559"
DEFAULT_DROP_PORT = 511
MAX_PRIORITY_QUEUES = 8  # standard_metadata.priority is 3 bits
PORT_LIMIT = 1 << 9  # v1model PortId_t

# BMv2 options that do not apply to softswitch: name → takes a value.
IGNORED_GENERIC = {"--thrift-port": True, "--nanolog": True, "--notifications-addr": True,
                   "--debugger": False, "--debugger-addr": True, "--restore-state": True,
                   "--max-port-count": True, "--log-file-max-size": True,
                   "--log-file-max-files": True, "--json-version": False}
IGNORED_TARGET = {"--dp-grpc-server-addr": True, "--max-mc-groups": True,
                  "--max-l1-entries": True, "--max-l2-entries": True, "--load-modules": True,
                  "--disable-swap": False, "--egress-spec-init-to-drop": False,
                  "--enable-swap": False}


class RunUsageError(Exception):
    """A bad `softswitch run` command line; printed without a traceback, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of exiting, so the caller decides what to print."""

    def error(self, message: str) -> NoReturn:
        raise RunUsageError(message)


@dataclass(frozen=True, slots=True)
class TlsOptions:
    cert: str
    key: str
    cacert: str | None
    client_auth: bool


@dataclass(slots=True)
class RunOptions:
    """Everything `softswitch run` was asked to do, checked."""

    program: str | None = None
    include_dirs: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    arch: str | None = None  # None: the program's #include decides
    interfaces: list[tuple[int, str]] = field(default_factory=list)
    packet_in: str | None = None
    device_id: int = 0
    pcap_dir: str | None = None
    log_console: bool = False
    log_file: str | None = None
    log_level: str = "trace"
    log_flush: bool = False
    dump_packet_data: int = 0
    priority_queues: int = 1
    grpc_address: str = DEFAULT_GRPC_ADDRESS
    cpu_port: int | None = None
    drop_port: int = DEFAULT_DROP_PORT
    tls: TlsOptions | None = None
    queue_rates: list[tuple[int | None, int]] = field(default_factory=list)  # (port|None, pps)
    limits: Limits = DEFAULT_LIMITS  # the program's, and any SetForwardingPipelineConfig's
    warnings: list[str] = field(default_factory=list)
    engine: str | None = None  # --engine: python, c or auto (None: $SOFTSWITCH_ENGINE, else auto)


# ---------------------------------------------------------------------------------------------
# Command line


def _interface(text: str) -> tuple[int, str]:
    port, sep, name = text.partition("@")
    if not sep or not name or not port.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}': expected <port-num>@<interface-name>")
    return int(port), name


def _uint(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a non-negative integer")
    return int(text)


def parse_queue_rate(text: str) -> tuple[int | None, int]:
    """`[PORT:]PPS` → (port or None for every port, packets per second)."""
    port_text, sep, rate_text = text.rpartition(":")
    if (sep and not port_text.isdigit()) or not rate_text.isdigit() or int(rate_text) == 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected [PORT:]PPS, PPS a positive "
                                         "integer (packets per second)")
    port = int(port_text) if sep else None
    if port is not None and port >= PORT_LIMIT:
        raise argparse.ArgumentTypeError(f"'{text}': port numbers must fit in 9 bits")
    return port, int(rate_text)


def _add_ignored(parser: argparse.ArgumentParser, options: dict[str, bool]) -> None:
    for name, takes_value in options.items():
        dest = "ignored_" + name.lstrip("-").replace("-", "_")
        if takes_value:
            parser.add_argument(name, dest=dest, metavar="V", help=argparse.SUPPRESS)
        else:
            parser.add_argument(name, dest=dest, action="store_true", help=argparse.SUPPRESS)


def generic_parser() -> argparse.ArgumentParser:
    """BMv2's generic options (before ``--``)."""
    p = _Parser(prog="softswitch run", add_help=False,
                usage="softswitch run [options] [PROGRAM.p4 | IR.json] [-- target options]",
                description="Run a P4 program as simple_switch_grpc does: packet ports, a "
                "P4Runtime server; until SIGINT/SIGTERM.")
    p.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    p.add_argument("program", nargs="?", metavar="PROGRAM",
                   help="a P4_16 v1model program (.p4, compiled now) or `softswitch compile "
                   "--ir` output (.json)")
    p.add_argument("--no-p4", action="store_true",
                   help="start without a program; packets are dropped until a pipeline is set")
    p.add_argument("-i", "--interface", dest="interfaces", action="append", default=[],
                   type=_interface, metavar="PORT@IFACE",
                   help="attach a Linux interface as a port (AF_PACKET; needs root); repeatable")
    p.add_argument("--packet-in", metavar="ADDR",
                   help="carry every port over this nanomsg PAIR socket (ipc://PATH or "
                   "tcp://HOST:PORT), as PTF's nn platform expects; -i is then ignored")
    p.add_argument("--device-id", type=_uint, default=0, metavar="N",
                   help="the P4Runtime device id (default 0)")
    p.add_argument("--pcap", nargs="?", const=".", metavar="DIR",
                   help="write <iface>_in.pcap / <iface>_out.pcap per port in DIR (default .)")
    p.add_argument("--use-files", metavar="SECONDS", help=argparse.SUPPRESS)
    p.add_argument("--log-console", action="store_true", help="log on stdout")
    p.add_argument("--log-file", metavar="FILE", help="log to FILE")
    p.add_argument("-L", "--log-level", default="trace", metavar="LEVEL",
                   help="trace, debug, info, warn, error or off (default trace)")
    p.add_argument("--log-flush", action="store_true", help="flush the log file after each line")
    p.add_argument("--dump-packet-data", type=_uint, default=0, metavar="N",
                   help="log the first N bytes of every packet received and sent (info level)")
    p.add_argument("--priority-queues", type=_uint, metavar="N",
                   help="egress priority queues per port (also accepted after --)")
    p.add_argument("--queue-rate", dest="queue_rates", action="append", default=[],
                   type=parse_queue_rate, metavar="[PORT:]PPS",
                   help="drain rate of PORT's egress queue (every port without PORT), packets "
                   "per second; repeatable, applied in order. BMv2 sets this at run time with "
                   "`simple_switch_CLI` `set_queue_rate PPS [PORT]` (and paces each priority "
                   "queue separately; softswitch shares the rate among a port's queues)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="#include search path for a .p4 program")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=V]",
                   help="preprocessor macro for a .p4 program")
    p.add_argument("--arch", choices=("v1model", "tna"), default=None,
                   help="the program's architecture (default: from its #include); softswitch "
                   "runs TNA programs as Tofino would")
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")
    p.add_argument("--engine", choices=("python", "c", "auto"), default=None,
                   help="run the program on the Python engine, compiled to C, or C when "
                   "it can (default: $SOFTSWITCH_ENGINE, else auto)")
    add_limit_options(p)
    _add_ignored(p, IGNORED_GENERIC)
    return p


def target_parser() -> argparse.ArgumentParser:
    """simple_switch_grpc's target options (after ``--``)."""
    p = _Parser(prog="softswitch run ... --", add_help=False)
    p.add_argument("--grpc-server-addr", default=DEFAULT_GRPC_ADDRESS, metavar="ADDR",
                   help=f"P4Runtime server address (default {DEFAULT_GRPC_ADDRESS})")
    p.add_argument("--cpu-port", type=_uint, metavar="N",
                   help="the CPU port for P4Runtime packet-in/out (1..511; off when absent)")
    p.add_argument("--drop-port", type=_uint, default=DEFAULT_DROP_PORT, metavar="N",
                   help=f"the drop port (default {DEFAULT_DROP_PORT})")
    p.add_argument("--priority-queues", type=_uint, metavar="N",
                   help="egress priority queues per port (default 1)")
    p.add_argument("--grpc-server-ssl", action="store_true", help="serve gRPC over TLS")
    p.add_argument("--grpc-server-cacert", metavar="FILE", help="CA certificate (PEM)")
    p.add_argument("--grpc-server-cert", metavar="FILE", help="server certificate (PEM)")
    p.add_argument("--grpc-server-key", metavar="FILE", help="server private key (PEM)")
    p.add_argument("--grpc-server-with-client-auth", action="store_true",
                   help="require and verify client certificates")
    _add_ignored(p, IGNORED_TARGET)
    return p


def usage() -> str:
    target_help = target_parser().format_help()
    return (generic_parser().format_help() + "\ntarget options (after --):\n"
            + target_help[target_help.index("\n", target_help.index("options:")) + 1:])


def _split_at_dashes(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    args = list(argv)
    if "--" in args:
        at = args.index("--")
        return args[:at], args[at + 1:]
    return args, []


def parse_run_args(argv: Sequence[str]) -> RunOptions | str:
    """The checked options, or the text to print and exit 0 with (help, version)."""
    generic_args, target_args = _split_at_dashes(argv)
    g = generic_parser().parse_args(generic_args)
    if g.help:
        return usage()
    if g.version:
        from softswitch import __version__
        return f"softswitch {__version__}"
    t, unknown = target_parser().parse_known_args(target_args)
    opts = RunOptions(include_dirs=g.include_dirs, defines=g.defines, arch=g.arch,
                      device_id=g.device_id,
                      log_console=g.log_console, log_file=g.log_file, log_level=g.log_level,
                      dump_packet_data=g.dump_packet_data, grpc_address=t.grpc_server_addr,
                      cpu_port=t.cpu_port, drop_port=t.drop_port,
                      queue_rates=list(g.queue_rates), limits=limits_from_options(g),
                      engine=g.engine)
    warn = opts.warnings.append
    for namespace, table in ((g, IGNORED_GENERIC), (t, IGNORED_TARGET)):
        for name in table:
            if getattr(namespace, "ignored_" + name.lstrip("-").replace("-", "_")) not in (
                    None, False):
                warn(f"{name} does not apply to softswitch; ignored")
    for item in unknown:
        if item.startswith("-"):
            warn(f"unknown target option {item}; ignored")

    if g.use_files is not None:
        raise RunUsageError("--use-files is not supported by softswitch")
    _check_program(g, opts)
    _check_ports(g, opts)
    _check_logging(g, opts)
    _check_target(g, t, opts)
    return opts


def _check_program(g: argparse.Namespace, opts: RunOptions) -> None:
    program = g.program
    if g.pcap is not None and not Path(g.pcap).is_dir() and Path(g.pcap).is_file():
        # `--pcap PROGRAM.p4`: argparse took the program as the optional directory
        if program is not None:
            raise RunUsageError(f"directory '{g.pcap}' specified with '--pcap' does not exist")
        program, g.pcap = g.pcap, "."
    if g.no_p4:
        if program is not None:
            opts.warnings.append("ignoring input config as '--no-p4' was used")
        return
    if program is None:
        raise RunUsageError("please specify a program (.p4 or IR .json), or --no-p4")
    if (why := file_problem(program)) is not None:
        raise RunUsageError(f"{program}: {why}")
    opts.program = program


def _check_ports(g: argparse.Namespace, opts: RunOptions) -> None:
    if g.packet_in is not None:
        if g.interfaces:
            opts.warnings.append("-i is ignored with --packet-in: every port is carried by "
                                 "the nanomsg socket")
        opts.packet_in = g.packet_in
    else:
        seen: set[int] = set()
        for port, name in g.interfaces:
            if port in seen:
                raise RunUsageError(f"port {port} is given twice with -i")
            if port >= PORT_LIMIT:
                raise RunUsageError(f"-i {port}@{name}: port numbers must fit in 9 bits")
            seen.add(port)
        opts.interfaces = list(g.interfaces)
    if g.pcap is not None:
        if not Path(g.pcap).is_dir():
            raise RunUsageError(f"directory '{g.pcap}' specified with '--pcap' does not exist")
        opts.pcap_dir = g.pcap


def _check_logging(g: argparse.Namespace, opts: RunOptions) -> None:
    if g.log_console and g.log_file:
        raise RunUsageError("--log-console and --log-file are exclusive")
    if g.log_level not in LOG_LEVELS:
        raise RunUsageError(f"invalid value {g.log_level} for --log-level "
                            f"(one of {', '.join(LOG_LEVELS)})")
    if g.log_flush:
        if g.log_file:
            opts.log_flush = True
        else:
            opts.warnings.append("ignoring --log-flush option because --log-file not specified")
    if opts.dump_packet_data and LOG_LEVELS.index(g.log_level) > LOG_LEVELS.index("info"):
        opts.warnings.append("the log level excludes 'info' messages: --dump-packet-data "
                             "is ignored")
        opts.dump_packet_data = 0


def _check_target(g: argparse.Namespace, t: argparse.Namespace, opts: RunOptions) -> None:
    if t.cpu_port is not None:
        if not 0 < t.cpu_port < PORT_LIMIT:
            raise RunUsageError(f"--cpu-port {t.cpu_port}: must be in 1..{PORT_LIMIT - 1} "
                                "(0 is not valid; v1model ports have 9 bits)")
        if t.cpu_port == t.drop_port:
            raise RunUsageError(f"--cpu-port {t.cpu_port} is the drop port; move the drop "
                                "port with --drop-port")
        if any(port == t.cpu_port for port, _ in opts.interfaces):
            raise RunUsageError(f"--cpu-port {t.cpu_port} is also given with -i")
    if t.drop_port >= PORT_LIMIT:
        raise RunUsageError(f"--drop-port {t.drop_port}: v1model ports have 9 bits")
    queues = t.priority_queues if t.priority_queues is not None else g.priority_queues
    if queues is not None:
        if not 1 <= queues <= MAX_PRIORITY_QUEUES:
            raise RunUsageError(f"--priority-queues {queues}: must be in "
                                f"1..{MAX_PRIORITY_QUEUES}")
        opts.priority_queues = queues
    if t.grpc_server_ssl:
        if not (t.grpc_server_cert and t.grpc_server_key):
            raise RunUsageError("--grpc-server-ssl needs --grpc-server-cert and "
                                "--grpc-server-key")
        if t.grpc_server_with_client_auth and not t.grpc_server_cacert:
            raise RunUsageError("--grpc-server-with-client-auth needs --grpc-server-cacert")
        opts.tls = TlsOptions(t.grpc_server_cert, t.grpc_server_key, t.grpc_server_cacert,
                              t.grpc_server_with_client_auth)
    elif t.grpc_server_with_client_auth or t.grpc_server_cert or t.grpc_server_key:
        opts.warnings.append("TLS options without --grpc-server-ssl are ignored")


# ---------------------------------------------------------------------------------------------
# Logging


class LogSink:
    """BMv2-style log lines (``[time] [bmv2] [L] [thread N] text``) on stdout or in a file."""

    def __init__(self, stream: TextIO, flush: bool, *, owned: bool) -> None:
        self._stream = stream
        self._flush = flush
        self._owned = owned
        self._lock = threading.Lock()

    @classmethod
    def open(cls, opts: RunOptions) -> LogSink | None:
        if opts.log_console:
            return cls(sys.stdout, True, owned=False)
        if opts.log_file:
            try:
                stream = open(opts.log_file, "a", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                raise RunUsageError(f"cannot open log file {opts.log_file}: "
                                    f"{exc.strerror}") from exc
            return cls(stream, opts.log_flush, owned=True)
        return None

    def write(self, level: str, text: str) -> None:
        now = time.time()
        stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
        line = f"[{stamp}] [bmv2] [{level}] [thread {threading.get_native_id()}] {text}\n"
        with self._lock:
            if self._stream.closed:
                return
            self._stream.write(line)
            if self._flush:
                self._stream.flush()

    def trace(self, text: str) -> None:
        self.write("T", text)

    def close(self) -> None:
        with self._lock:
            self._stream.flush()
            if self._owned:
                self._stream.close()


class _SinkHandler(logging.Handler):
    LETTERS = {logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W",
               logging.ERROR: "E", logging.CRITICAL: "C"}

    def __init__(self, sink: LogSink) -> None:
        super().__init__()
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.write(self.LETTERS.get(record.levelno, "I"), self.format(record))


@contextlib.contextmanager
def _logging(opts: RunOptions) -> Iterator[LogSink | None]:
    """Route Python logging of softswitch to the sink at the requested level, for the run."""
    sink = LogSink.open(opts)
    logger = logging.getLogger("softswitch")
    saved = logger.level
    handler = _SinkHandler(sink) if sink is not None else None
    if handler is not None:
        logger.addHandler(handler)
    logger.setLevel(PYTHON_LEVELS[opts.log_level])
    try:
        yield sink
    finally:
        if handler is not None:
            logger.removeHandler(handler)
        logger.setLevel(saved)
        if sink is not None:
            sink.close()


# ---------------------------------------------------------------------------------------------
# Running


def load_pipeline(device: Any, opts: RunOptions) -> Any:
    """The ForwardingPipeline for the program (P4Info built as p4c would, cookie 0)."""
    from softswitch.compiler import load_program, parse_defines
    from softswitch.ir.serialize import IrFormatError, dumps_ir
    from softswitch.p4info import build_p4info

    assert opts.program is not None
    path = opts.program
    if path.endswith(".json"):
        opts.limits.check("source_bytes", f"IR JSON {path}", Path(path).stat().st_size)
        config = Path(path).read_bytes()
        try:
            from softswitch.ir.serialize import loads_ir
            checked = loads_ir(config, opts.limits)
        except IrFormatError as exc:
            raise P4Error(f"{path}: not a softswitch IR file (`softswitch compile --ir` writes "
                          f"one; p4c's BMv2 JSON cannot be run): {exc.message}") from exc
        if opts.arch is not None and checked.arch != opts.arch:
            raise P4Error(f"{path}: the IR is of a {checked.arch} program, not {opts.arch}")
    else:
        checked = load_program(path, opts.include_dirs, parse_defines(opts.defines), opts.arch,
                               opts.limits)
        config = dumps_ir(checked).encode()
    return device.build_pipeline(build_p4info(checked), config, 0, drop_port=device.drop_port,
                                 trace=device.trace, limits=opts.limits)


def _tls_credentials(tls: TlsOptions) -> Any:
    import grpc

    def read(path: str) -> bytes:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise RunUsageError(f"cannot read {path}: {exc.strerror}") from exc
        # gRPC reports a file that is not PEM only as a failure to listen
        if b"-----BEGIN " not in data:
            raise RunUsageError(f"{path}: not a PEM file (no '-----BEGIN' line)")
        return data

    root = read(tls.cacert) if tls.cacert else None
    return grpc.ssl_server_credentials([(read(tls.key), read(tls.cert))],
                                       root_certificates=root,
                                       require_client_auth=tls.client_auth)


def build_ports(opts: RunOptions) -> PortMap:
    """The port backends and pcap taps the options ask for (not started yet)."""
    ports = PortMap()
    try:
        if opts.packet_in is not None:
            from softswitch.runtime.ports.nanomsg import NanomsgPorts
            ports.add(NanomsgPorts(opts.packet_in))
            if opts.pcap_dir is not None:
                from softswitch.runtime.ports.pcap import PcapTap
                pcap_dir = opts.pcap_dir
                ports.set_tap_factory(lambda port: PcapTap(pcap_dir, f"port{port}"))
        for port, name in opts.interfaces:
            from softswitch.runtime.ports.afpacket import AfPacketPort
            print(f"Adding interface {name} as port {port}", flush=True)
            ports.add(AfPacketPort(port, name), [port])
            if opts.pcap_dir is not None:
                from softswitch.runtime.ports.pcap import PcapTap
                ports.add_tap(port, PcapTap(opts.pcap_dir, name))
    except BaseException:
        ports.close()
        raise
    return ports


def _grpc_host(address: str) -> str:
    host, _, _ = address.rpartition(":")
    return host or "0.0.0.0"


STOP_POLL_S = 0.2  # how often the main thread looks for a signal while the switch runs
EXIT_THREAD_DIED = 3  # a runtime thread ended with an unexpected error (the log says which)


class _ThreadWatch:
    """While installed, a thread that ends with an uncaught exception is logged (to the log
    file, through the softswitch logger) and stops the switch with EXIT_THREAD_DIED: every
    port and dataplane loop recovers from the errors it expects, so one that still dies is a
    bug, and a switch that silently stopped forwarding must not look healthy."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.died: list[str] = []
        self._saved = threading.excepthook

    def __enter__(self) -> _ThreadWatch:
        threading.excepthook = self._hook
        return self

    def __exit__(self, *exc: object) -> None:
        threading.excepthook = self._saved

    def _hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        self.died.append(name)
        logging.getLogger(__name__).critical(
            "thread '%s' died: %s: %s; softswitch stops (exit status %d)", name,
            args.exc_type.__name__, args.exc_value,
            EXIT_THREAD_DIED, exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
        self.stop.set()


def run(opts: RunOptions, stop: threading.Event,
        ready: Callable[[str], None] = lambda line: print(line, flush=True)) -> int:
    """Run the switch until `stop` is set; returns the exit status."""
    with _logging(opts) as sink, _ThreadWatch(stop) as watch:
        _serve(opts, stop, sink, ready)
    if watch.died:
        print(f"softswitch run: thread '{watch.died[0]}' died; see the log", file=sys.stderr)
        return EXIT_THREAD_DIED
    return 0


def _serve(opts: RunOptions, stop: threading.Event, sink: LogSink | None,
           ready: Callable[[str], None]) -> None:
    from softswitch.runtime.device import PORT_WAIT, Device

    device = Device(opts.device_id, cpu_port=opts.cpu_port, drop_port=opts.drop_port,
                    priority_queues=opts.priority_queues,
                    trace=(sink.trace if sink is not None
                           and opts.log_level in ("trace", "debug") else None),
                    dump_packet_data=opts.dump_packet_data, limits=opts.limits)
    for port, pps in opts.queue_rates:
        device.set_queue_rate(port, pps)
    if opts.program is not None:
        device.commit(load_pipeline(device, opts))
    credentials = _tls_credentials(opts.tls) if opts.tls is not None else None
    ports = build_ports(opts)
    server = None
    try:
        device.set_output(ports.send)
        device.start()
        ports.start(functools.partial(device.receive, wait=PORT_WAIT))
        from softswitch.runtime.server.server import P4RuntimeServer
        server = P4RuntimeServer(device, opts.grpc_address, credentials=credentials)
        server.start()
        ready(f"softswitch device {opts.device_id} ready: Server listening on "
              f"{_grpc_host(opts.grpc_address)}:{server.port}")
        # In slices: a SIGTERM the kernel hands to another thread only flags the main thread,
        # and a lock wait without a timeout would never look at the flag.
        while not stop.wait(STOP_POLL_S):
            pass
    finally:
        if server is not None:
            server.stop(1.0)
        ports.close()
        device.stop()


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` (only the main thread can install handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = lambda signum, frame: stop.set()  # noqa: E731
    saved = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def main(argv: Sequence[str], stop: threading.Event | None = None) -> int:
    """`softswitch run ARGS`: parse, run until SIGINT/SIGTERM (or `stop`), exit status."""
    try:
        parsed = parse_run_args(argv)
    except RunUsageError as exc:
        print(f"softswitch run: error: {exc}\n(softswitch run --help lists the options)",
              file=sys.stderr)
        return 1
    if isinstance(parsed, str):
        print(parsed)
        return 0
    for warning in parsed.warnings:
        print(f"softswitch run: warning: {warning}", file=sys.stderr)
    stop = stop or threading.Event()
    try:
        with _stop_on_signals(stop), _engine_for_this_run(parsed.engine):
            return run(parsed, stop)
    except (P4Error, ControlPlaneError) as exc:
        print(str(exc), file=sys.stderr)
    except (RunUsageError, PortError) as exc:
        print(f"softswitch run: error: {exc}", file=sys.stderr)
    except OSError as exc:
        print(f"softswitch run: error: {exc}", file=sys.stderr)
    return 1


@contextlib.contextmanager
def _engine_for_this_run(engine: str | None) -> Iterator[None]:
    """Every Switch the run makes (one per SetForwardingPipelineConfig) reads
    $SOFTSWITCH_ENGINE: by default the program compiled to C where it can be, else the Python
    engine with one warning line. The variable is put back afterwards, so a caller running
    `main` in its own process (tests) keeps its own default."""
    with variables_set({"SOFTSWITCH_ENGINE": engine or os.environ.get("SOFTSWITCH_ENGINE")
                        or "auto"}):
        yield


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
