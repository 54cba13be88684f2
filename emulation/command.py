"""`mrc-ctl emulate SCENARIO.yaml [--mode MODE ...] [-o DIR] [--seed N]`: run a scenario in each
of its modes (or those given) on the real P4 programs in virtual time, and write the report.

    mrc-ctl emulate scenarios/ring-link-cut.yaml -o out/ring-link-cut
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from emulation.scenario import MODES
from softswitch.engine.switch import ENGINES
from softswitch.environment import variables_set

ROOT = Path(__file__).resolve().parents[1]
SWITCH_PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
NIC_PROGRAM = ROOT / "p4src" / "nic" / "mrc_nic.p4"
MAX_SEED = (1 << 32) - 1   # the scenario's seed range


class ProgressBar:
    """One line on stderr per mode: messages arrived, virtual time reached, wire hops per
    wall second; on a terminal it is redrawn in place, elsewhere printed at every tenth."""

    def __init__(self, mode: str, out: TextIO = sys.stderr, width: int = 30) -> None:
        self.mode = mode
        self.out = out
        self.width = width
        self.started: float | None = None   # the first call: the network is up by then
        self.tty = out.isatty()
        self._shown = -1

    def __call__(self, now_us: int, arrived: int, messages: int, hops: int) -> None:
        fraction = arrived / messages if messages else 1.0
        if self.started is None:
            self.started = time.perf_counter()
        elapsed = time.perf_counter() - self.started
        rate = hops / elapsed if elapsed > 0 else 0.0
        filled = int(fraction * self.width)
        line = (f"{self.mode:<18} [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{arrived}/{messages} messages, {now_us:,} µs virtual, "
                f"{rate:,.0f} wire hops/s, {elapsed:.1f} s")
        if self.tty:
            self.out.write("\r" + line)
            self.out.flush()
        elif int(fraction * 10) != self._shown:
            self._shown = int(fraction * 10)
            print(line, file=self.out, flush=True)

    def close(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()


def add_emulate_parser(sub: Any) -> None:
    p = sub.add_parser("emulate", help="run a scenario on the real P4 programs in virtual time "
                       "and write a report (report.json, report.md, PNG plots)")
    p.add_argument("scenario", help="scenario YAML (schema: scenarios/README.md)")
    p.add_argument("--mode", action="append", choices=MODES, default=None,
                   help="run only this mode (repeat for several; default: the scenario's)")
    p.add_argument("-o", "--output", default=None,
                   help="report directory (default out/emulate/<scenario name>)")
    p.add_argument("--seed", type=seed_arg, default=None,
                   help="override the scenario's seed (0..2^32-1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_engine_argument(p)
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless every mrc mode delivered every message intact and, "
                        "when ecmp ran too, mrc's p99 completion time is below ecmp's (an "
                        "undelivered message counts as an infinite time); prints what passed "
                        "and names each undelivered message's connection and its fate")
    p.set_defaults(func=cmd_emulate)


def add_engine_argument(p: Any) -> None:
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="the softswitch engine of every switch and NIC: python (the reference "
                        "semantics), c (the programs compiled to C), auto (c where it can, else "
                        "python with one warning); default $SOFTSWITCH_ENGINE, else auto")
    p.add_argument("--fabric", choices=("python", "native"), default=None,
                   help="the fabric core stepping devices, cables and queues: python, or "
                        "native (in C, when every device runs the C engine; else python with "
                        "one warning naming why); default $SOFTSWITCH_FABRIC, else native "
                        "unless the engine is python")


@contextlib.contextmanager
def engine_for_this_run(engine: str | None, fabric: str | None = None,
                        err: TextIO | None = None) -> Iterator[tuple[str, str]]:
    """`engine` and `fabric` as every Switch's and Fabric's default while the block runs, in
    this process and the workers it starts ($SOFTSWITCH_ENGINE, $SOFTSWITCH_FABRIC: the
    devices are built deep in the fabric and by its P4Runtime servers); the variables are put
    back afterwards. Yields the (engine, fabric) set.

    Unset (no option, no variable), a run gets the fastest path that gives the same reports
    (bench/engine_identity.py proves it per scenario): the programs in C and the native core
    where a C compiler is, else the Python engine and core with one warning line on `err`,
    not one per device."""
    engine = engine or os.environ.get("SOFTSWITCH_ENGINE") or "auto"
    if engine == "auto":
        from softswitch.native.build import compiler_available

        if compiler_available() is None:
            print("mrc-ctl: no C compiler ($CC or cc) works here: every device runs the Python "
                  "engine and the Python fabric core (the same reports, about 20x slower)",
                  file=err or sys.stderr)
            engine = "python"
    fabric = (fabric or os.environ.get("SOFTSWITCH_FABRIC")
              or ("python" if engine == "python" else "native"))
    with variables_set({"SOFTSWITCH_ENGINE": engine, "SOFTSWITCH_FABRIC": fabric}):
        yield engine, fabric


def seed_arg(text: str) -> int:
    """A seed as the scenario takes it (argparse reports the error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{value} is out of range (0..{MAX_SEED})")
    return value


def writable_dir(path: Path) -> str | None:
    """Make `path` (and its parents); why a report cannot be written there, or None."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def cmd_emulate(args: Any) -> int:
    with engine_for_this_run(args.engine, args.fabric):
        return _emulate(args)


def _emulate(args: Any) -> int:
    from controller.devices.session import Program
    from emulation import report, scenario
    from emulation.run import run_mode

    chosen = scenario.load(args.scenario)
    if args.seed is not None:
        chosen = dataclasses.replace(chosen, seed=args.seed)
    for warning in chosen.warnings:
        print(warning, file=sys.stderr)
    modes = tuple(args.mode) if args.mode else chosen.modes
    out = Path(args.output) if args.output else Path("out") / "emulate" / chosen.name
    problem = writable_dir(out)   # before the runs, not after minutes of them
    if problem is not None:
        print(f"error: cannot write the report to {out}: {problem}", file=sys.stderr)
        return 2
    switch_program = Program.compile(SWITCH_PROGRAM)
    runs = []
    for name in modes:
        bar = None if args.quiet else ProgressBar(name)
        started = time.perf_counter()
        result = run_mode(chosen, name, switch_program, str(NIC_PROGRAM), bar)
        if bar is not None:
            bar.close()
        s = result.summary()
        print(f"{name}: {s['completed']}/{s['messages']} messages, {s['bytes_lost']:,} bytes "
              f"lost, MCT p99 {report.cell(s['mct_p99_us'], ' µs')}, "
              f"{result.totals['wire_hops']:,} wire hops "
              f"(+{result.totals['host_handoffs']:,} host hand-offs) in "
              f"{time.perf_counter() - started:.1f} s")
        runs.append(result)
    md = report.write(chosen, runs, out)
    print(report.summary_table(runs))
    print(f"report: {md} (and report.json, *.png beside it)")
    if args.check:
        passed, problems = check(runs)
        for line in passed:
            print(f"check: passed: {line}")
        for problem in problems:
            print(f"check: FAILED: {problem}", file=sys.stderr)
        if problems:
            return 1
    return 0


def check(runs: Sequence[Any]) -> tuple[list[str], list[str]]:
    """`--check`: (what passed, what failed). Every mrc mode (mrc, mrc_no_controller) must
    deliver every message intact — each one that it did not is named with its connection and
    that connection's fate — and, when ecmp ran too, mrc's p99 completion time must be below
    ecmp's, an undelivered message counting as an infinite time (emulation/metrics.py): ecmp
    not done and mrc done passes, mrc not done fails."""
    from emulation.report import cell

    passed: list[str] = []
    problems: list[str] = []
    for run in runs:
        if not run.mode.startswith("mrc"):
            continue
        missing = run.undelivered()
        total = len(run.messages)
        if not missing:
            passed.append(f"{run.mode} delivered every message intact ({total} of {total})")
            continue
        problems.append(f"{run.mode} did not deliver {len(missing)} of {total} messages:\n"
                        + "\n".join(f"  {line}" for line in _undelivered(run, missing)))
    by_mode = {run.mode: run.summary() for run in runs}
    ecmp, mrc = by_mode.get("ecmp"), by_mode.get("mrc")
    if ecmp is not None and mrc is not None:
        mine, theirs = mrc["mct_p99_us"], ecmp["mct_p99_us"]
        said = (f"mrc's p99 completion time {cell(mine, ' µs')} is "
                f"{{}} ecmp's {cell(theirs, ' µs')}")
        if mine is not None and theirs is not None and mine < theirs:
            passed.append(said.format("below"))
        else:
            problems.append(said.format("not below"))
    return passed, problems


def _undelivered(run: Any, missing: Sequence[Any]) -> list[str]:
    """One line per connection that left messages undelivered: which, and its fate."""
    from emulation.report import cell

    fates = {(c.src, c.dst): c for c in run.connections}
    by_pair: dict[tuple[str, str], list[int]] = {}
    for m in missing:
        by_pair.setdefault((m.src, m.dst), []).append(m.id)
    lines = []
    for (src, dst), ids in sorted(by_pair.items()):
        fate = fates.get((src, dst))
        messages = f"message{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}"
        if fate is None:
            lines.append(f"{src} -> {dst}: {messages}")
            continue
        evs = ", ".join(map(str, fate.evs)) or "none"
        if fate.fate == "gave_up":
            how = f"its transport gave up at {cell(fate.at_us)} µs ({fate.reason})"
        elif fate.fate == "open":
            how = f"still open when the run ended at {cell(fate.at_us)} µs ({fate.reason})"
        else:
            how = "done, yet these arrived corrupt"
        lines.append(f"{src} -> {dst} (QP {fate.qp:#x}): {messages}: {how}; EVs out of "
                     f"service: {evs}")
    return lines
