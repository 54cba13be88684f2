"""The ``softswitch`` command line: one function per subcommand, one parser for all of them.

    softswitch compile PROGRAM.p4 [-I DIR]... [-D NAME[=V]]... [--p4info FILE] [--ir FILE.json]
    softswitch stf PROGRAM.p4|IR.json TEST.stf... [-I DIR]... [-D NAME[=V]]... [--log-console]
    softswitch run [PROGRAM.p4|IR.json|--no-p4] [simple_switch_grpc options] [-- target options]

Errors in the user's input (P4 source, files) are printed as ``file:line:col: error: ...`` on
stderr with exit status 1, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from softswitch.errors import ControlPlaneError, P4Error, StfError
from softswitch.ir.checked import CheckedProgram

# Subcommand handlers get the parsed arguments and return the exit status.
Handler = Callable[[argparse.Namespace], int]


def load_program(path: str, include_dirs: Sequence[str] = (),
                 defines: Sequence[str] = ()) -> CheckedProgram:
    """A checked program from P4 source or IR JSON (shared by the subcommands)."""
    from softswitch.compiler import load_program as load
    from softswitch.compiler import parse_defines

    if not Path(path).is_file():
        raise P4Error(f"{path}: no such file")
    return load(path, include_dirs, parse_defines(defines))


def _save_ir(checked: CheckedProgram, path: str) -> None:
    from softswitch.ir.serialize import save_ir

    try:
        save_ir(checked, path)
    except OSError as exc:
        raise P4Error(f"cannot write IR file {path}: {exc.strerror}") from exc


def cmd_compile(args: argparse.Namespace) -> int:
    """Check a program and write the requested outputs (P4Info, IR)."""
    from softswitch.p4info import build_p4info, write_p4info
    from softswitch.p4info.output import p4info_format

    if args.p4info:
        p4info_format(args.p4info)  # reject an unknown suffix before doing any work
    checked = load_program(args.program, args.include_dirs, args.defines)
    if args.p4info:
        write_p4info(build_p4info(checked), args.p4info)
    if args.ir:
        _save_ir(checked, args.ir)
    return 0


def cmd_stf(args: argparse.Namespace) -> int:
    """Run STF scripts against a fresh switch each; exit 0 only when every one matches."""
    from softswitch.engine.switch import Switch
    from softswitch.stf.runner import run_stf
    from softswitch.stf.script import read_stf

    checked = load_program(args.program, args.include_dirs, args.defines)
    trace = print if args.log_console else None
    failed = 0
    for test in args.tests:
        commands = read_stf(test)
        result = run_stf(Switch(checked, trace=trace), commands)
        status = "PASS" if result.passed else "FAIL"
        print(f"{status} {test}: {result.packets_sent} packets in, "
              f"{result.packets_received} out")
        for problem in result.problems:
            print(problem)
        failed += not result.passed
    return 1 if failed else 0


def cmd_run(args: argparse.Namespace) -> int:
    """Run the program as simple_switch_grpc would, until SIGINT/SIGTERM (runtime/run.py)."""
    from softswitch.runtime.run import main as run_main

    return run_main(args.run_args)


def _add_source_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("program", metavar="PROGRAM.p4", help="the P4_16 v1model program")
    parser.add_argument("-I", dest="include_dirs", metavar="DIR", action="append", default=[],
                        help="add DIR to the #include search path")
    parser.add_argument("-D", dest="defines", metavar="NAME[=V]", action="append", default=[],
                        help="define a preprocessor macro (value 1 when omitted)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand; each sets `handler`."""
    parser = argparse.ArgumentParser(
        prog="softswitch",
        description="An embedded P4_16 v1model target that behaves like p4c + BMv2.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    compile_ = sub.add_parser("compile", help="check a program; write its P4Info and IR",
                              description="Check a P4 program and write its P4Info (format "
                              "from the suffix: .txt/.txtpb text, .bin binary, .json JSON) "
                              "and its IR as JSON.")
    _add_source_options(compile_)
    compile_.add_argument("--p4info", metavar="FILE", help="write the P4Info to FILE")
    compile_.add_argument("--ir", metavar="FILE.json", help="write the checked IR to FILE.json")
    compile_.set_defaults(handler=cmd_compile)

    stf = sub.add_parser("stf", help="run p4c STF tests against the program",
                         description="Run p4c STF scripts (add, setdefault, packet, expect, "
                         "multicast and mirroring commands) against the program on softswitch; "
                         "print expected vs got per port on a mismatch.")
    _add_source_options(stf)
    stf.add_argument("tests", metavar="TEST.stf", nargs="+", help="STF script(s)")
    stf.add_argument("--log-console", action="store_true",
                     help="print a BMv2-style packet trace")
    stf.set_defaults(handler=cmd_stf)

    # run parses its own (BMv2-shaped) command line: hand it every argument, `--` included.
    run = sub.add_parser("run", help="run a program as simple_switch_grpc (P4Runtime, ports)",
                         add_help=False, prefix_chars="\0",
                         description="softswitch run --help lists the options.")
    run.add_argument("run_args", nargs=argparse.REMAINDER)
    run.set_defaults(handler=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except (P4Error, ControlPlaneError, StfError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
