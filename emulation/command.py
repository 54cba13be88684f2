"""`mrc-ctl emulate SCENARIO.yaml [--mode MODE ...] [-o DIR] [--seed N]`: run a scenario in each
of its modes (or those given) on the real P4 programs in virtual time, and write the report.

    mrc-ctl emulate scenarios/ring-link-cut.yaml -o out/ring-link-cut
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from emulation.scenario import MODES

ROOT = Path(__file__).resolve().parents[1]
SWITCH_PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
NIC_PROGRAM = ROOT / "p4src" / "nic" / "mrc_nic.p4"


class ProgressBar:
    """One line on stderr per mode: messages arrived, virtual time reached, packet hops per
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
                f"{rate:,.0f} packet-hops/s, {elapsed:.1f} s")
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
    p.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless every mrc mode delivered every message intact and, "
                        "when ecmp ran too, mrc's p99 completion time is below ecmp's")
    p.set_defaults(func=cmd_emulate)


def cmd_emulate(args: Any) -> int:
    from controller.devices.session import Program
    from emulation import report, scenario
    from emulation.run import run_mode

    chosen = scenario.load(args.scenario)
    if args.seed is not None:
        chosen = dataclasses.replace(chosen, seed=args.seed)
    modes = tuple(args.mode) if args.mode else chosen.modes
    out = Path(args.output) if args.output else Path("out") / "emulate" / chosen.name
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
              f"lost, MCT p99 {s['mct_p99_us']} µs, {result.totals['packet_hops']:,} packet "
              f"hops in {time.perf_counter() - started:.1f} s")
        runs.append(result)
    md = report.write(chosen, runs, out)
    print(report.summary_table(runs))
    print(f"report: {md} (and report.json, *.png beside it)")
    if args.check:
        problems = check(runs)
        for problem in problems:
            print(f"check: {problem}", file=sys.stderr)
        if problems:
            return 1
        print("check: mrc delivered every message intact"
              + (", with a p99 completion time below ecmp's" if "ecmp" in modes else ""))
    return 0


def check(runs: list[Any]) -> list[str]:
    """What `--check` finds wrong (nothing: an empty list)."""
    by_mode = {run.mode: run.summary() for run in runs}
    problems = []
    for name, s in by_mode.items():
        if name.startswith("mrc") and (s["bytes_lost"] or s["completed"] != s["messages"]):
            problems.append(f"{name}: {s['completed']}/{s['messages']} messages, "
                            f"{s['bytes_lost']} bytes lost")
    ecmp = by_mode.get("ecmp")
    mrc = by_mode.get("mrc")
    if ecmp is not None and mrc is not None and (
            mrc["mct_p99_us"] is None or (ecmp["mct_p99_us"] is not None
                                          and mrc["mct_p99_us"] >= ecmp["mct_p99_us"])):
        problems.append(f"mrc's p99 {mrc['mct_p99_us']} µs is not below ecmp's "
                            f"{ecmp['mct_p99_us']} µs")
    return problems
