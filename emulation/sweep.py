"""`mrc-ctl sweep SCENARIO.yaml [...] [--mode M ...] [--seeds 1,2,3] [--jobs N] [-o DIR]`: every
scenario x seed x mode, the runs in parallel on every core, each (scenario, seed) reported as
`mrc-ctl emulate` reports it, and one combined table.

    mrc-ctl sweep scenarios/ring-link-cut.yaml scenarios/ring-clean.yaml --seeds 1,2,3 -o out/sweep

Writes, under DIR (default out/sweep):

- `<scenario>/<seed>/report.json`, `report.md` and the PNGs: `emulation.report.write` for that
  scenario and seed with its modes' runs, in the order the modes are given — the same bytes
  as `mrc-ctl emulate SCENARIO --seed SEED [--mode ...] -o DIR/<scenario>/<seed>`;
- `sweep.json`: per scenario, seed and mode the run's summary (RunResult.summary_json(): an
  infinite completion time is "not done"), or its error; virtual time only, so a sweep gives
  the same bytes on any machine with any --jobs;
- `sweep.md`: one table row per run (an infinite completion time shows "∞ (not done)").

Every scenario file is read and checked before any run starts (errors: FILE:LINE:COL: error:
...). Runs go to worker processes started with the 'spawn' context — a run starts P4Runtime
servers and their threads, so no worker is forked from a process that may hold them. Each
worker receives the compiled switch program (its P4Info and IR bytes: about 0.2 ms to ship
and rebuild, against about 0.4 s to compile it again) and gets the NIC program's path, which
each run's fabric compiles (as `run_mode` takes it). A run is a pure function of the scenario,
the seed and the mode (virtual time), so which worker runs it, and when, changes nothing.
With --jobs 1 the runs go one by one in this process.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import dataclasses
import json
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from emulation.command import add_engine_argument, engine_for_this_run
from emulation.report import cell
from emulation.scenario import MODES, Scenario, ScenarioError

SWEEP_JSON = "sweep.json"
SWEEP_MD = "sweep.md"
DEFAULT_OUTPUT = Path("out") / "sweep"
CONTEXT = "spawn"
PR_SET_PDEATHSIG = 1   # linux/prctl.h


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not on Linux
        return max(1, os.cpu_count() or 1)


# -- what a sweep is -------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One run of a sweep: `scenario` is the scenario with the run's seed."""

    index: int
    scenario: Scenario
    mode: str

    @property
    def seed(self) -> int:
        return self.scenario.seed

    def label(self) -> str:
        return f"{self.scenario.name} seed {self.seed} {self.mode}"


@dataclass
class Outcome:
    """A finished run: its result (None when it failed, with `error` the traceback), what it
    cost in the process that ran it (CPU seconds of that whole process, wall seconds), when it
    started (time.time(), comparable across processes) and in which process."""

    run: Run
    result: Any = None            # emulation.metrics.RunResult
    error: str = ""
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    started: float = 0.0
    pid: int = 0

    def summary(self) -> dict[str, object] | None:
        return None if self.result is None else self.result.summary()


@dataclass
class SweepResult:
    """Every run's outcome in sweep order (scenario, seed, mode as given), the report
    directories written, and the wall seconds the sweep took."""

    out: Path
    outcomes: list[Outcome]
    reports: dict[tuple[str, int], Path] = field(default_factory=dict)
    report_errors: dict[tuple[str, int], str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    jobs: int = 1

    @property
    def ok(self) -> bool:
        return not self.report_errors and all(not o.error for o in self.outcomes)


def load_scenarios(paths: Sequence[str | Path]) -> tuple[list[Scenario], list[str]]:
    """Read and check every scenario file: (the scenarios, every error as FILE:LINE:COL: error:
    ...). Two scenarios may not share a name: their reports would share a folder."""
    from emulation import scenario as scenario_io

    scenarios: list[Scenario] = []
    errors: list[str] = []
    names: dict[str, str] = {}
    for path in paths:
        try:
            loaded = scenario_io.load(path)
        except ScenarioError as error:
            errors.append(str(error))
            continue
        if loaded.name in names:
            errors.append(f"{path}: error: name: '{loaded.name}' is also the name of "
                          f"{names[loaded.name]} (each scenario's reports go to DIR/<name>/)")
            continue
        names[loaded.name] = str(path)
        scenarios.append(loaded)
    return scenarios, errors


def plan_runs(scenarios: Sequence[Scenario], modes: Sequence[str] | None = None,
              seeds: Sequence[int] | None = None) -> list[Run]:
    """Scenario x seed x mode, in that order; `modes` None: each scenario's own; `seeds` None:
    each scenario's own seed."""
    if modes is not None:
        unknown = [m for m in modes if m not in MODES]
        if unknown or not modes or len(set(modes)) != len(modes):
            raise ValueError(f"modes: list each of {', '.join(MODES)} at most once, "
                             f"at least one (got {', '.join(modes) or 'none'})")
    if seeds is not None and (not seeds or len(set(seeds)) != len(seeds)):
        raise ValueError("seeds: list each seed once, at least one")
    runs: list[Run] = []
    for chosen in scenarios:
        for seed in (seeds if seeds is not None else (chosen.seed,)):
            seeded = dataclasses.replace(chosen, seed=seed)
            for name in (modes if modes is not None else chosen.modes):
                runs.append(Run(len(runs), seeded, name))
    return runs


# -- one run, in whichever process -----------------------------------------------------------

_PROGRAM: Any = None   # the worker's compiled switch program (controller.devices.session.Program)


def _program_parts(program: Any) -> tuple[bytes, bytes, str]:
    """A Program as bytes (its P4Info protobuf class does not pickle)."""
    return program.p4info.SerializeToString(), program.device_config, program.source


def _die_with(parent: int) -> None:
    """End this worker when the sweep that started it ends, however it ends (Linux's
    PR_SET_PDEATHSIG): a sweep killed by SIGTERM or SIGKILL left its workers running every run
    it had queued, minutes of CPU each, with nobody to read their results."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:   # it ended before the call
        os._exit(1)


def _init_worker(parent: int, p4info: bytes, device_config: bytes, source: str) -> None:
    global _PROGRAM
    _die_with(parent)
    from finsy.proto import p4i

    from controller.devices.session import Program

    _PROGRAM = Program(p4i.P4Info.FromString(p4info), device_config, source)
    import emulation.run  # noqa: F401  (imported once per worker, not in the first run's time)


def _execute(run: Run, program: Any) -> Outcome:
    from emulation.command import NIC_PROGRAM
    from emulation.run import run_mode

    started = time.time()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        result = run_mode(run.scenario, run.mode, program, str(NIC_PROGRAM))
        error = ""
    except Exception:
        result, error = None, traceback.format_exc()
    return Outcome(run, result, error, time.process_time() - cpu, time.perf_counter() - wall,
                   started, os.getpid())


def _worker_run(run: Run) -> Outcome:
    return _execute(run, _PROGRAM)


def _write_report(scenario: Scenario, results: Sequence[Any], out: Path) -> Path:
    from emulation import report

    return report.write(scenario, results, out)


def report_dir(out: Path, scenario: Scenario) -> Path:
    """Where a scenario's report for its seed goes."""
    return out / scenario.name / str(scenario.seed)


# -- the sweep -------------------------------------------------------------------------------

Progress = Callable[[Outcome, int, int], None]   # (the run just done, runs done, runs in all)


def run_sweep(runs: Sequence[Run], out: Path, jobs: int | None = None,
              progress: Progress | None = None, program: Any = None) -> SweepResult:
    """Run `runs` on `jobs` processes (default: every core; 1: one by one in this process),
    write each (scenario, seed)'s report once its modes are done, then sweep.json and
    sweep.md. `program`: the compiled switch program (compiled here when None)."""
    from controller.devices.session import Program
    from emulation.command import SWITCH_PROGRAM

    started = time.perf_counter()
    jobs = max(1, min(jobs or default_jobs(), len(runs) or 1))
    if program is None:
        program = Program.compile(SWITCH_PROGRAM)
    groups: dict[tuple[str, int], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.scenario.name, run.seed), []).append(run)
    outcomes: dict[int, Outcome] = {}
    sweep = SweepResult(out, [], jobs=jobs)

    def finished(outcome: Outcome) -> tuple[str, int] | None:
        """Record a run; the (scenario, seed) whose runs are now all done, if any."""
        outcomes[outcome.run.index] = outcome
        if progress is not None:
            progress(outcome, len(outcomes), len(runs))
        key = (outcome.run.scenario.name, outcome.run.seed)
        group = groups[key]
        if all(r.index in outcomes for r in group):
            return key
        return None

    def report_args(key: tuple[str, int]) -> tuple[Scenario, list[Any], Path] | None:
        group = groups[key]
        failed = [outcomes[r.index] for r in group if outcomes[r.index].error]
        if failed:
            sweep.report_errors[key] = "not written: " + ", ".join(
                o.run.mode for o in failed) + " failed"
            return None
        scenario = group[0].scenario
        return scenario, [outcomes[r.index].result for r in group], report_dir(out, scenario)

    if jobs == 1:
        for run in runs:
            key = finished(_execute(run, program))
            if key is not None and (args := report_args(key)) is not None:
                try:
                    sweep.reports[key] = _write_report(*args).parent
                except Exception:
                    sweep.report_errors[key] = traceback.format_exc()
    else:
        _run_pool(runs, jobs, program, sweep, finished, report_args)
    sweep.outcomes = [outcomes[run.index] for run in runs]
    write_summary(sweep)
    sweep.wall_seconds = time.perf_counter() - started
    return sweep


def _run_pool(runs: Sequence[Run], jobs: int, program: Any, sweep: SweepResult,
              finished: Callable[[Outcome], tuple[str, int] | None],
              report_args: Callable[[tuple[str, int]], tuple[Scenario, list[Any], Path] | None],
              ) -> None:
    context = multiprocessing.get_context(CONTEXT)
    with cf.ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker,
                                initargs=(os.getpid(), *_program_parts(program))) as pool:
        pending: dict[cf.Future[Any], tuple[str, Any]] = {
            pool.submit(_worker_run, run): ("run", run) for run in runs}
        try:
            while pending:
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    what, item = pending.pop(future)
                    if what == "report":
                        try:
                            sweep.reports[item] = future.result().parent
                        except Exception as error:
                            sweep.report_errors[item] = f"{type(error).__name__}: {error}"
                        continue
                    try:
                        outcome = future.result()
                    except Exception as error:   # the worker died (BrokenProcessPool...)
                        outcome = Outcome(item, error=f"{type(error).__name__}: {error}")
                    key = finished(outcome)
                    if key is not None and (args := report_args(key)) is not None:
                        try:
                            pending[pool.submit(_write_report, *args)] = ("report", key)
                        except Exception as error:   # the pool is broken
                            sweep.report_errors[key] = f"{type(error).__name__}: {error}"
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


# -- the combined summary --------------------------------------------------------------------

def sweep_json(sweep: SweepResult) -> str:
    """Per scenario (in the order given), seed and mode: the summary, or the error. Virtual
    time only: the same runs give the same bytes."""
    scenarios: dict[str, dict[str, object]] = {}
    for o in sweep.outcomes:
        s = o.run.scenario
        entry = scenarios.setdefault(s.name, {"source": s.source, "seeds": {}})
        seeds: dict[str, dict[str, object]] = entry["seeds"]  # type: ignore[assignment]
        key = (s.name, s.seed)
        per_seed = seeds.setdefault(str(s.seed), {
            "report": f"{s.name}/{s.seed}/report.json" if key in sweep.reports else None,
            **({"report_error": sweep.report_errors[key]} if key in sweep.report_errors
               else {}),
            "modes": {}})
        modes: dict[str, object] = per_seed["modes"]  # type: ignore[assignment]
        modes[o.run.mode] = (o.result.summary_json() if o.result is not None
                             else {"error": o.error})
    data = {"runs": len(sweep.outcomes), "failed": sum(bool(o.error) for o in sweep.outcomes),
            "scenarios": scenarios}
    return json.dumps(data, indent=1, allow_nan=False) + "\n"


def sweep_markdown(sweep: SweepResult) -> str:
    rows = ["| scenario | seed | mode | messages done | bytes lost | MCT p50 (µs) | MCT p99 (µs) "
            "| finish (µs) | connections lost | drops | report |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for o in sweep.outcomes:
        s = o.run.scenario
        key = (s.name, s.seed)
        link = f"[report]({s.name}/{s.seed}/report.md)" if key in sweep.reports else "—"
        summary = o.summary()
        if summary is None:
            first = (o.error.strip().splitlines() or ["failed"])[-1].replace("|", "\\|")
            rows.append(f"| {s.name} | {s.seed} | {o.run.mode} | error: {first} | | | | | | | "
                        f"{link} |")
            continue
        lost = (f"{summary['connections_lost']}/{summary['connections']}"
                if summary["connections"] else "—")
        done = summary["finished"] and not summary.get("undelivered")
        rows.append(
            f"| {s.name} | {s.seed} | {o.run.mode} | {summary['completed']}/"
            f"{summary['messages']} | {cell(summary['bytes_lost'])} | "
            f"{cell(summary['mct_p50_us'])} | {cell(summary['mct_p99_us'])} | "
            f"{cell(summary['end_us']) if done else 'not done'} | {lost} | "
            f"{cell(summary.get('dropped'))} | {link} |")
    runs = len(sweep.outcomes)
    failed = sum(bool(o.error) for o in sweep.outcomes)
    return "\n".join([
        "# Sweep", "",
        f"{runs} runs{f', {failed} failed' if failed else ''}. All times virtual (the real P4 "
        "programs on softswitch, in discrete-event time); each scenario and seed has its own "
        "report (plots and every number) in `<scenario>/<seed>/`.", "",
        *rows, ""])


def write_summary(sweep: SweepResult) -> tuple[Path, Path]:
    sweep.out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = sweep.out / SWEEP_JSON, sweep.out / SWEEP_MD
    json_path.write_text(sweep_json(sweep), encoding="utf-8")
    md_path.write_text(sweep_markdown(sweep), encoding="utf-8")
    return json_path, md_path


# -- the command line ------------------------------------------------------------------------

def parse_seeds(text: str) -> tuple[int, ...]:
    """`1,2,3` or `1-3` (or a mix: `1,4-6`)."""
    import argparse

    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part[1:]:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                seeds.extend(range(lo, hi + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{text}': expected seeds as 1,2,3 or 1-3") from None
    if any(not 0 <= s < 1 << 32 for s in seeds) or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"'{text}': seeds are 0..2^32-1, each once")
    return tuple(seeds)


def add_sweep_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help="run scenarios x modes x seeds in parallel on the real P4 "
                       "programs in virtual time; a report per scenario and seed, sweep.json "
                       "and sweep.md")
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO",
                   help="scenario YAML files (schema: scenarios/README.md)")
    p.add_argument("--mode", action="append", choices=MODES, default=None,
                   help="run only this mode (repeat for several; default: each scenario's)")
    p.add_argument("--seeds", type=parse_seeds, default=None,
                   help="seeds to run each scenario with: 1,2,3 or 1-3 (default: its own)")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help=f"worker processes (default: the cores, here {default_jobs()}; "
                        "1: one by one in this process)")
    p.add_argument("-o", "--output", default=str(DEFAULT_OUTPUT),
                   help=f"output directory (default {DEFAULT_OUTPUT})")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    add_engine_argument(p)
    p.add_argument("--invariants", action="store_true",
                   help="check the invariants mrc must hold (emulation/invariants.py): print "
                        "the matrix table and every breach, write DIR/invariants.md, exit 1 "
                        "on any breach")
    p.set_defaults(func=cmd_sweep)


def progress_line(outcome: Outcome, done: int, total: int) -> str:
    head = f"[{done}/{total}] {outcome.run.label()}"
    cost = f"{outcome.cpu_seconds:.1f} s CPU, {outcome.wall_seconds:.1f} s wall"
    s = outcome.summary()
    if s is None:
        last = (outcome.error.strip().splitlines() or ["failed"])[-1]
        return f"{head}: FAILED: {last}" + (f" ({cost})" if outcome.wall_seconds else "")
    state = f"done at {s['end_us']:,} µs" if s["finished"] else "NOT finished"
    return (f"{head}: {s['completed']}/{s['messages']} messages, {s['bytes_lost']:,} bytes "
            f"lost, MCT p99 {cell(s['mct_p99_us'], ' µs')}, {state}; "
            f"{s['wire_hops']:,} wire hops (+{s['host_handoffs']:,} host hand-offs), {cost}")


def cmd_sweep(args: Any, err: TextIO | None = None) -> int:
    err = err or sys.stderr
    with engine_for_this_run(getattr(args, "engine", None), getattr(args, "fabric", None), err):
        return _sweep(args, err)


def _sweep(args: Any, err: TextIO) -> int:
    scenarios, errors = load_scenarios(args.scenarios)
    if args.jobs is not None and args.jobs < 1:
        errors.append(f"--jobs: {args.jobs}: at least 1")
    if errors:
        for error in errors:
            print(error, file=err)
        return 2
    for loaded in scenarios:   # valid, but not all will happen as written
        for warning in loaded.warnings:
            print(warning, file=err)
    runs = plan_runs(scenarios, args.mode, args.seeds)
    jobs = max(1, min(args.jobs or default_jobs(), len(runs)))
    if not args.quiet:
        print(f"sweep: {len(runs)} runs ({len(scenarios)} scenario(s)) on {jobs} "
              f"process{'es' if jobs > 1 else ''}", file=err, flush=True)

    def progress(outcome: Outcome, done: int, total: int) -> None:
        if not args.quiet or outcome.error:
            print(progress_line(outcome, done, total), file=err, flush=True)

    out = Path(args.output)
    sweep = run_sweep(runs, out, jobs, progress)
    for (name, seed), problem in sorted(sweep.report_errors.items()):
        print(f"{name} seed {seed}: report {problem}", file=err)
    for o in sweep.outcomes:
        if o.error:
            print(f"{o.run.label()}:\n{o.error}", file=err)
    print(f"sweep: {out / SWEEP_MD} and {out / SWEEP_JSON}; reports in {out}/<scenario>/<seed>/ "
          f"({sweep.wall_seconds:.1f} s)")
    if getattr(args, "invariants", False):
        from emulation import matrix

        text, breaches = matrix.report(sweep.outcomes, out)
        print(text)
        print(f"invariants: {len(breaches)} breach(es); {out / matrix.INVARIANTS_MD}")
        if breaches:
            return 1
    return 0 if sweep.ok else 1
