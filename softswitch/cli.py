"""The ``softswitch`` command line: one function per subcommand, one parser for all of them.

    softswitch compile PROGRAM.p4 [-I DIR]... [-D NAME[=V]]... [--p4info FILE] [--ir FILE.json]
                       [p4c's -o, --p4runtime-files, --target bmv2|tofino, --arch v1model|tna,
                        bf-p4c's --p4runtime-force-std-externs, -g, ...]
    softswitch stf PROGRAM.p4|IR.json TEST.stf... [-I DIR]... [-D NAME[=V]]... [--log-console]
                   [--arch v1model|tna]
    softswitch run [PROGRAM.p4|IR.json|--no-p4] [simple_switch_grpc options] [-- target options]

Errors in the user's input (P4 source, files) are printed as ``file:line:col: error: ...`` on
stderr (every error the type checker found, one a line) with exit status 1, never as a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from softswitch.errors import ControlPlaneError, P4Error, StfError
from softswitch.file_check import file_problem
from softswitch.ir.checked import CheckedProgram
from softswitch.limits import DEFAULT_LIMITS, Limits, add_limit_options, limits_from_options

# Subcommand handlers get the parsed arguments and return the exit status.
Handler = Callable[[argparse.Namespace], int]


def load_program(path: str, include_dirs: Sequence[str] = (),
                 defines: Sequence[str] = (), arch: str | None = None,
                 limits: Limits = DEFAULT_LIMITS) -> CheckedProgram:
    """A checked program from P4 source or IR JSON (shared by the subcommands); `arch` None:
    the architecture its include file names."""
    from softswitch.compiler import load_program as load
    from softswitch.compiler import parse_defines

    if (why := file_problem(path)) is not None:
        raise P4Error(f"{path}: {why}")
    return load(path, include_dirs, parse_defines(defines), arch, limits)


def _save_ir(checked: CheckedProgram, path: str) -> None:
    from softswitch.ir.serialize import save_ir

    try:
        save_ir(checked, path)
    except OSError as exc:
        raise P4Error(f"cannot write IR file {path}: {exc.strerror}") from exc


# p4c's choices softswitch stands in for (p4c-bm2-ss's bmv2/v1model, bf-p4c's tofino/tna); any
# other value is refused by name.
P4C_CHOICES = {"--target": ("bmv2", "tofino"), "--arch": ("v1model", "tna"),
               "--std": ("p4-16", "p4_16"), "--p4v": ("16",)}
# the architecture of each target (bf-p4c's default for tofino is tna), and the pairs p4c has
TARGET_ARCH = {"bmv2": "v1model", "tofino": "tna"}


def chosen_arch(target: str | None, arch: str | None) -> str | None:
    """The architecture --target/--arch ask for (None: neither; the include decides)."""
    target, arch = (v.lower() if v else None for v in (target, arch))
    if target is not None and arch is not None and TARGET_ARCH[target] != arch:
        raise P4Error(f"--target {target} --arch {arch}: the {target} target has the "
                      f"{TARGET_ARCH[target]} architecture")
    return arch or (TARGET_ARCH[target] if target else None)
P4RUNTIME_FORMATS = {"text": "text", "json": "json", "binary": "binary"}


def _p4info_outputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(path, format) of every P4Info to write: --p4info, p4c's --p4runtime-files (format by
    suffix) and its older --p4runtime-file with --p4runtime-format."""
    from softswitch.p4info.output import p4info_format

    paths = ([args.p4info] if args.p4info else []) + [
        f for files in args.p4runtime_files for f in files.split(",") if f]
    outputs = [(path, p4info_format(path)) for path in paths]  # unknown suffix: refused now
    if args.p4runtime_file:
        outputs.append((args.p4runtime_file, P4RUNTIME_FORMATS[args.p4runtime_format]))
    return outputs


def _ir_output(args: argparse.Namespace) -> str | None:
    """--ir, or p4c's -o: a folder gets <program>.json in it (the p4c driver), a file is
    written as named (p4c-bm2-ss)."""
    if args.ir or not args.output:
        return args.ir
    out = Path(args.output)
    if out.is_dir() or args.output.endswith("/"):
        out.mkdir(parents=True, exist_ok=True)
        return str(out / (Path(args.program).stem + ".json"))
    return args.output


def cmd_compile(args: argparse.Namespace) -> int:
    """Check a program and write the requested outputs (P4Info, IR)."""
    from softswitch.p4info import build_p4info
    from softswitch.p4info.output import p4info_bytes

    for option, allowed in P4C_CHOICES.items():
        value = getattr(args, option.lstrip("-").replace("-", "_"))
        if value is not None and value.lower() not in allowed:
            raise P4Error(f"{option} {value}: softswitch compiles for "
                          f"{' / '.join(allowed)} only")
    p4infos = _p4info_outputs(args)
    ir_path = _ir_output(args)
    arch = chosen_arch(args.target, args.arch)
    checked = load_program(args.program, args.include_dirs, args.defines, arch,
                           limits_from_options(args))
    if checked.arch == "tna" and not args.program.endswith(".json"):
        from softswitch.frontend.tofino_stages import stage_bounds

        for bound in stage_bounds(checked):  # what the checker found fits (a lower bound)
            print(bound.report())
    if p4infos:
        p4info = build_p4info(checked)
        for path, fmt in p4infos:
            try:
                Path(path).write_bytes(p4info_bytes(p4info, fmt))
            except OSError as exc:
                raise P4Error(f"cannot write P4Info file {path}: {exc.strerror}") from exc
    if ir_path:
        _save_ir(checked, ir_path)
    return 0


def cmd_stf(args: argparse.Namespace) -> int:
    """Run STF scripts against a fresh switch each; exit 0 only when every one matches."""
    from softswitch.engine.switch import Switch
    from softswitch.stf.runner import run_stf
    from softswitch.stf.script import read_stf

    checked = load_program(args.program, args.include_dirs, args.defines, args.arch,
                           limits_from_options(args))
    trace = print if args.log_console else None
    failed = 0
    for test in args.tests:
        commands = read_stf(test)
        result = run_stf(Switch(checked, trace=trace, engine=args.engine), commands)
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
    parser.add_argument("program", metavar="PROGRAM.p4",
                        help="the P4_16 program (v1model or TNA) or its IR JSON")
    parser.add_argument("-I", dest="include_dirs", metavar="DIR", action="append", default=[],
                        help="add DIR to the #include search path")
    parser.add_argument("-D", dest="defines", metavar="NAME[=V]", action="append", default=[],
                        help="define a preprocessor macro (value 1 when omitted)")
    add_limit_options(parser)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand; each sets `handler`."""
    parser = argparse.ArgumentParser(
        prog="softswitch",
        description="An embedded P4_16 target that behaves like p4c + BMv2 (v1model) and "
        "like bf-p4c + Tofino (TNA).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    compile_ = sub.add_parser("compile", help="check a program; write its P4Info and IR",
                              description="Check a P4 program and write its P4Info (format "
                              "from the suffix: .txt/.txtpb text, .bin binary, .json JSON) "
                              "and its IR as JSON.")
    _add_source_options(compile_)
    compile_.add_argument("--p4info", metavar="FILE", help="write the P4Info to FILE")
    compile_.add_argument("--ir", metavar="FILE.json", help="write the checked IR to FILE.json")
    p4c = compile_.add_argument_group(
        "p4c's options", "what p4c / p4c-bm2-ss take, so their command lines run unchanged; "
        "the IR JSON stands where p4c writes BMv2's JSON")
    p4c.add_argument("-o", dest="output", metavar="FILE.json|DIR",
                     help="the IR JSON file, or a folder to write PROGRAM.json in")
    p4c.add_argument("--p4runtime-files", metavar="FILE[,FILE...]", action="append", default=[],
                     help="P4Info files, format from each suffix")
    p4c.add_argument("--p4runtime-file", metavar="FILE", help="a P4Info file (older form)")
    p4c.add_argument("--p4runtime-format", choices=sorted(P4RUNTIME_FORMATS), default="binary",
                     help="the format of --p4runtime-file (default binary, as p4c)")
    for option in P4C_CHOICES:
        p4c.add_argument(option, metavar="V", help=f"accepted: {', '.join(P4C_CHOICES[option])}")
    p4c.add_argument("--p4runtime-force-std-externs", action="store_true",
                     help="bf-p4c's: P4Info with the standard P4Runtime externs (what softswitch "
                     "always writes)")
    p4c.add_argument("-g", dest="debug_info", action="store_true",
                     help="bf-p4c's debug information (nothing to add here)")
    compile_.set_defaults(handler=cmd_compile)

    stf = sub.add_parser("stf", help="run p4c STF tests against the program",
                         description="Run p4c STF scripts (add, setdefault, packet, expect, "
                         "multicast and mirroring commands) against the program on softswitch; "
                         "print expected vs got per port on a mismatch.")
    _add_source_options(stf)
    stf.add_argument("tests", metavar="TEST.stf", nargs="+", help="STF script(s)")
    stf.add_argument("--arch", choices=P4C_CHOICES["--arch"], type=str.lower,
                     help="the architecture (default: the one the program includes)")
    stf.add_argument("--engine", choices=("python", "c", "auto"), default=None,
                     help="the Python engine, the program compiled to C, or C when it can "
                     "(default: $SOFTSWITCH_ENGINE, else python)")
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
    except BrokenPipeError:
        # the reader of stdout went away (`softswitch compile ... | head -1`): stop quietly, as
        # cat does; stdout goes to /dev/null so the interpreter's final flush fails no more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
