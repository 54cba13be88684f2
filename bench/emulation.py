"""What the emulation (emulation/: the real P4 programs on softswitch, in discrete-event virtual
time) costs on this machine, and how far a 10-minute run goes.

- `rate`: scenarios/ring-link-cut.yaml (ring all-reduce of 256 KiB per rank on the tiny fabric,
  a T0-T1 cable cut at 100 µs) in mode mrc: wire hops (every packet put on a cable between
  two devices, NIC-switch or switch-switch, as htsim counts hops: `totals["wire_hops"]`; the
  NIC-host hand-offs are `host_handoffs`, apart) per CPU-second of the run, and the setup apart (Network: the NIC
  program compiled, 12 P4Runtime servers, the plan pushed, the NICs programmed; the switch
  program is compiled once before). CPU time is this process's (time.process_time: every
  thread, the P4Runtime servers' too).
- `profile`: the same run under cProfile (main thread), its time by component: softswitch
  engine/pipeline, device/queues/fabric, mrc_transport, emulation loop, gRPC/controller (the
  P4Runtime client and servers, the repair loop, protobuf), setup. Library and builtin calls
  are charged to the component that called them.
- `permutations`: seeded permutations of 1 MiB per NIC on 16, 64 and 128 NICs (2 planes,
  100 Gb/s, 4 KiB packets): wire hops per CPU-second, setup CPU and peak RSS per device. The
  run's CPU includes its closing read of every device's P4 counters over P4Runtime (a cost
  per device: `collect_cpu_s`); `wire_hops_per_cpu_s_stepping` is the rate without it.
- `largest`: the largest fabric a 10-minute run carries, measured, not extrapolated:
  scenarios/scale-256-cut.yaml (256 NICs, 8 planes, 256 switches, a permutation and a cable
  cut) run as `mrc-ctl emulate --engine c --fabric native` runs it (every mode of the
  scenario, setup and close included), timed in wall and CPU seconds, then the same on 512
  NICs (384 switches) when 256 fit the 600 s (`--largest 256`: the scenario file only).
- `sweep`: `mrc-ctl sweep` of a small scenario (8 KiB ring all-reduce, cable cut) in mode mrc
  with 2 seeds (2 runs, 2 reports: 2 seeds x 2 modes does not fit the benchmark's minute),
  --jobs 1 against --jobs 2: wall seconds each, and the report.json bytes compared.

    python -m bench.emulation          # these only (the 256- and 512-NIC runs most of it;
                                       # `--largest` alone skips them)

Every run uses the C engine and the native fabric core (ENGINE, FABRIC below), recorded in
each JSON record with the host transport the process runs ("compiled" when `make install` built
it: mrc_transport/compiled.py; MRC_TRANSPORT_NATIVE=python measures the Python one).

For scale: htsim, the packet-level simulator used for datacenter transport studies, is
published as processing millions of events per second; this emulation executes the real P4
programs (parser, tables, deparser) for every packet on every hop, in Python, behind real
P4Runtime sessions, and is orders of magnitude slower per packet: it trades speed for running
the very programs the devices run.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import importlib
import pstats
import re
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulation import scenario as scenario_io
from softswitch.environment import variables_set

ROOT = Path(__file__).resolve().parents[1]
RATE_SCENARIO = ROOT / "scenarios" / "ring-link-cut.yaml"
MODE = "mrc"
# Every run here uses the C engine and the native fabric core (`mrc-ctl emulate --engine c
# --fabric native`): the issue-26 targets are theirs. A user's default is the Python engine and
# core ($SOFTSWITCH_ENGINE, $SOFTSWITCH_FABRIC unset), an order of magnitude slower.
ENGINE, FABRIC = "c", "native"
BUDGET_S = 600.0         # the "10-minute run": wall seconds of one `mrc-ctl emulate` of it
# The largest fabric: scenarios/scale-256-cut.yaml (256 NICs, 8 planes, radix 32, a permutation
# and a cable cut), then the same scenario with more NICs on the same switches' radix (R²/2 =
# 512 NICs at most), each run only when the one before fit the budget.
LARGEST_SCENARIO = ROOT / "scenarios" / "scale-256-cut.yaml"
LADDER = (256, 512)
LARGEST_DEFAULT = LADDER   # `make bench`: the ladder (--largest 256: the scenario file only)

# The issue-26 comparison with htsim: a seeded permutation on a 2-plane 2-tier Clos at
# 100 Gb/s with 4 KiB packets, (NICs, radix) per size; `permutation_µs` bounds each run's
# virtual time (a run that does not finish in it is reported as partial, never skipped).
PERMUTATIONS = ((16, 8), (64, 16), (128, 16))
PERMUTATION_BYTES = 1024 * 1024    # per NIC: 256 packets of 4 KiB
PERMUTATION_US = 2000              # virtual µs each run may take (the default)


def permutation_scenario(nics: int, radix: int, duration_us: int) -> scenario_io.Scenario:
    return scenario_io.loads(
        f"name: permutation-{nics}\n"
        f"description: a seeded permutation of {PERMUTATION_BYTES // 1024} KiB per NIC on a "
        f"generated 2-plane radix-{radix} Clos, 100 Gb/s, 4 KiB packets\n"
        f"topology: {{generate: {{planes: 2, radix: {radix}, nics: {nics}}}}}\n"
        f"links: {{rate_gbps: 100}}\nmtu: 4096\nseed: 1\nduration_us: {duration_us}\n"
        "transport: {rto_us: 100, reorder_us: 30}\n"
        f"workload: {{kind: permutation, bytes: {PERMUTATION_BYTES}}}\n",
        f"bench:permutation_{nics}")


SWEEP_SCENARIO = """\
name: sweep-tiny-ring
description: ring all-reduce of 8 KiB per rank, a T0-T1 cable cut at 5 µs
topology: ../topologies/tiny.yaml
duration_us: 5000
transport: {rto_us: 100, reorder_us: 30}
modes: [mrc]
workload: {kind: ring_allreduce, bytes: 8192}
failures:
  - {at_us: 5, kind: link_down, link: "p0-t0-0:2"}
"""
SWEEP_SEEDS = (1, 2)
HTSIM_NOTE = ("htsim is published as processing millions of events per second; this emulation "
              "runs the real P4 programs on every hop in Python behind real P4Runtime sessions, "
              "orders of magnitude slower per packet, in exchange for executing the devices' "
              "own programs (no number of htsim's is compared here)")

COMPONENTS = ("softswitch engine/pipeline", "device/queues/fabric", "mrc_transport",
              "emulation loop", "gRPC/controller", "setup")


# -- timing one run, setup apart -----------------------------------------------------------

@dataclass
class Phases:
    """CPU and wall seconds of one run_mode call, split where its Network is built and closed."""

    setup_cpu: float = 0.0
    setup_wall: float = 0.0
    run_cpu: float = 0.0
    run_wall: float = 0.0
    close_cpu: float = 0.0
    collect_cpu: float = 0.0  # of run_cpu: the closing read of the P4 counters (per device)
    total_cpu: float = 0.0    # start to closed: what one `mrc-ctl emulate` of one mode costs
    total_wall: float = 0.0
    devices: int = 0
    maxrss_kib: dict[str, int] = field(default_factory=dict)   # the process's peak RSS, by mark
    _marks: dict[str, tuple[float, float]] = field(default_factory=dict)

    def mark(self, name: str) -> None:
        self._marks[name] = (time.process_time(), time.perf_counter())
        self.maxrss_kib[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def close(self) -> None:
        m = self._marks
        if "built" not in m or "closing" not in m:
            raise RuntimeError("run_mode did not report its phases (emulation/run.py)")
        self.setup_cpu = m["built"][0] - m["start"][0]
        self.setup_wall = m["built"][1] - m["start"][1]
        self.run_cpu = m["closing"][0] - m["built"][0]
        self.run_wall = m["closing"][1] - m["built"][1]
        self.close_cpu = m["closed"][0] - m["closing"][0]
        if "collecting" in m:
            self.collect_cpu = m["closing"][0] - m["collecting"][0]
        self.total_cpu = m["closed"][0] - m["start"][0]
        self.total_wall = m["closed"][1] - m["start"][1]


def phased(phases: Phases, on: Callable[[str], None] | None = None
           ) -> Callable[[str, Any], None]:
    """run_mode's `phase` hook marking `phases` (and calling `on("built")`, `on("closing")`);
    mark "start" before run_mode and "closed" after it, then `phases.close()`."""
    def phase(name: str, network: Any) -> None:
        if name == "built":
            phases.devices = len(network.fabric.switches)
            phases.mark("built")
        if on is not None:
            on(name)
        if name == "closing":
            phases.mark("closing")
    return phase


@dataclass
class Rate:
    """One timed run: wire hops and host hand-offs, workload bytes, its phases, and the summary's key numbers."""

    name: str
    scenario: str
    mode: str
    switches: int
    nics: int
    hops: int                 # wire hops (NIC-switch and switch-switch cables)
    handoffs: int             # host hand-offs (NIC <-> its host transport), apart
    workload_bytes: int
    completed: str
    finished: bool
    virtual_us: float
    phases: Phases
    compile_cpu: float = 0.0

    @property
    def hops_per_cpu_s(self) -> float:
        return self.hops / self.phases.run_cpu

    @property
    def hops_per_cpu_s_stepping(self) -> float:
        """The run's rate without its closing P4Runtime read (a cost per device)."""
        return self.hops / (self.phases.run_cpu - self.phases.collect_cpu)

    @property
    def hops_per_cpu_s_with_setup(self) -> float:
        return self.hops / (self.phases.setup_cpu + self.phases.run_cpu)

    @property
    def hops_per_byte(self) -> float:
        return self.hops / self.workload_bytes

    def to_json(self) -> dict[str, object]:
        p = self.phases
        return {
            "scenario": self.scenario, "mode": self.mode, "switches": self.switches,
            "nics": self.nics, "wire_hops": self.hops, "host_handoffs": self.handoffs,
            "workload_bytes": self.workload_bytes,
            "completed": self.completed, "finished": self.finished,
            "virtual_us": round(self.virtual_us, 3),
            "run_cpu_s": round(p.run_cpu, 3), "run_wall_s": round(p.run_wall, 3),
            "setup_cpu_s": round(p.setup_cpu, 3), "setup_wall_s": round(p.setup_wall, 3),
            "close_cpu_s": round(p.close_cpu, 3),
            "collect_cpu_s": round(p.collect_cpu, 3),
            "switch_compile_cpu_s": round(self.compile_cpu, 3),
            "wire_hops_per_cpu_s": round(self.hops_per_cpu_s, 1),
            "wire_hops_per_cpu_s_with_setup": round(self.hops_per_cpu_s_with_setup, 1),
            "wire_hops_per_cpu_s_stepping": round(self.hops_per_cpu_s_stepping, 1),
            "wire_hops_per_byte": round(self.hops_per_byte, 6),
        }


def compile_switch() -> tuple[Any, float]:
    from controller.devices.session import Program
    from emulation.command import SWITCH_PROGRAM

    cpu = time.process_time()
    program = Program.compile(SWITCH_PROGRAM)
    return program, time.process_time() - cpu


def timed_run(name: str, chosen: scenario_io.Scenario, mode_name: str, program: Any,
              compile_cpu: float = 0.0) -> Rate:
    from emulation.command import NIC_PROGRAM
    from emulation.run import run_mode

    phases = Phases()
    phases.mark("start")
    result = run_mode(chosen, mode_name, program, str(NIC_PROGRAM), phase=phased(phases),
                      on_collect=lambda: phases.mark("collecting"))
    phases.mark("closed")
    phases.close()
    s = result.summary()
    return Rate(name, chosen.name, mode_name, len(chosen.topology.switches),
                len(chosen.topology.nics), result.totals["wire_hops"],
                result.totals["host_handoffs"], int(s["bytes"]),  # type: ignore[call-overload]
                f"{s['completed']}/{s['messages']}", bool(s["finished"]), result.end_us, phases,
                compile_cpu)


# -- where the time goes -------------------------------------------------------------------

_PATHS = (   # first match wins; everything else is charged to its callers
    ("/softswitch/engine/", "softswitch engine/pipeline"),
    ("<softswitch:", "softswitch engine/pipeline"),       # the generated per-program code
    ("/softswitch/runtime/server/", "gRPC/controller"),
    ("/softswitch/runtime/", "device/queues/fabric"),
    ("/softswitch/fabric.py", "device/queues/fabric"),
    ("/softswitch/clock.py", "device/queues/fabric"),
    ("/softswitch/schedule.py", "device/queues/fabric"),
    ("/softswitch/wire_tally.py", "device/queues/fabric"),
    # the native core's C time (its instants, the programs' passes in them) is its _run's
    ("/softswitch/native/fabric_core.py", "device/queues/fabric"),
    ("/softswitch/native/fabric_device.py", "device/queues/fabric"),
    ("/softswitch/native/", "softswitch engine/pipeline"),
    ("/softswitch/", "compile"),                            # frontend, IR, P4Info
    ("/mrc_transport/", "mrc_transport"),
    ("/emulation/network.py", "gRPC/controller"),           # NIC writes, digest waits
    ("/emulation/", "emulation loop"),
    ("/controller/", "gRPC/controller"),
    ("/p4rt/", "gRPC/controller"),
    ("/finsy/", "gRPC/controller"),
    ("/grpc/", "gRPC/controller"),
    ("/google/protobuf/", "gRPC/controller"),
)


@functools.cache
def _compiled_methods() -> re.Pattern[str]:
    """The methods of the classes in the modules mrc_transport/compiled.py compiles: C to
    cProfile, entries named "<method 'poll' of 'NicHost' objects>" under the file "~"."""
    from mrc_transport import compiled

    names: set[str] = set()
    for module_name in compiled.MODULES:
        module = importlib.import_module(f"mrc_transport.{module_name}")
        names.update(name for name, value in vars(module).items()
                     if isinstance(value, type) and value.__module__ == module.__name__)
    return re.compile(rf"of '({'|'.join(sorted(names))})' objects")


def _component(filename: str, function: str = "") -> str | None:
    if filename == "~" and _compiled_methods().search(function):
        return "mrc_transport"
    for fragment, component in _PATHS:
        if fragment in filename:
            return component
    return None


def breakdown(stats: pstats.Stats) -> dict[str, float]:
    """Seconds of own time per component; a function of no component (stdlib, builtins, other
    libraries) is charged to its callers' components in proportion to the time each call
    path spent in it."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    memo: dict[Any, dict[str, float]] = {}

    def shares(func: Any, visiting: frozenset[Any]) -> dict[str, float]:
        if func in memo:
            return memo[func]
        named = _component(func[0], func[2])
        if named is not None:
            return {named: 1.0}
        callers = table[func][4] if func in table else {}
        weights = {c: v[2] for c, v in callers.items() if c not in visiting}
        total = sum(weights.values())
        out: dict[str, float] = {}
        if total > 0:
            for caller, w in weights.items():
                for comp, share in shares(caller, visiting | {func}).items():
                    out[comp] = out.get(comp, 0.0) + share * w / total
        else:
            out = {"other": 1.0}
        if not visiting:
            memo[func] = out
        return out

    seconds: dict[str, float] = {}
    for func, (_cc, _nc, tt, _ct, _callers) in table.items():
        for comp, share in shares(func, frozenset()).items():
            seconds[comp] = seconds.get(comp, 0.0) + tt * share
    return seconds


@dataclass
class Profile:
    percent: dict[str, float]            # of setup + run, by component (setup as one)
    setup_percent: dict[str, float]      # of setup, by component
    profiled_seconds: float
    top: list[tuple[str, float]]         # the functions of most own time in the run

    def text(self) -> str:
        short = {"softswitch engine/pipeline": "engine", "device/queues/fabric": "device",
                 "mrc_transport": "transport", "emulation loop": "loop",
                 "gRPC/controller": "gRPC", "setup": "setup", "other": "other"}
        return ", ".join(f"{short.get(k, k)} {v:.0f}%" for k, v in self.percent.items()
                         if v >= 0.5)


def profile_run(chosen: scenario_io.Scenario, mode_name: str, program: Any) -> Profile:
    from emulation.command import NIC_PROGRAM
    from emulation.run import run_mode

    setup, run = cProfile.Profile(), cProfile.Profile()

    def switch(phase: str) -> None:
        if phase == "built":
            setup.disable()
            run.enable()
        else:
            run.disable()

    setup.enable()
    try:
        run_mode(chosen, mode_name, program, str(NIC_PROGRAM), phase=phased(Phases(), switch))
    finally:
        setup.disable()
        run.disable()
    run_seconds = breakdown(pstats.Stats(run))
    setup_seconds = breakdown(pstats.Stats(setup))
    setup_total = sum(setup_seconds.values())
    total = setup_total + sum(run_seconds.values())
    percent = {c: 100 * run_seconds.get(c, 0.0) / total for c in COMPONENTS if c != "setup"}
    percent["setup"] = 100 * (setup_total + run_seconds.get("compile", 0.0)) / total
    if run_seconds.get("other"):
        percent["other"] = 100 * run_seconds["other"] / total
    setup_percent = {c: round(100 * v / setup_total, 1) for c, v in
                     sorted(setup_seconds.items(), key=lambda kv: -kv[1])}
    stats = pstats.Stats(run).stats  # type: ignore[attr-defined]
    top = sorted(((f"{Path(f[0]).name}:{f[1]}({re.sub(r' at 0x[0-9a-f]+', '', f[2])})", v[2])
                  for f, v in stats.items()),
                 key=lambda kv: -kv[1])[:12]
    return Profile({k: round(v, 1) for k, v in percent.items()}, setup_percent, total,
                   [(name, round(100 * s / total, 1)) for name, s in top])


# -- sweep speed-up ------------------------------------------------------------------------

@dataclass
class SweepSpeed:
    runs: int
    wall_jobs1: float
    wall_jobs2: float
    identical: bool
    run_walls: dict[str, list[float]]   # each run's own wall seconds, per --jobs
    first_run_after_s: float            # --jobs 2: from the sweep's start to its first run's

    @property
    def speedup(self) -> float:
        return self.wall_jobs1 / self.wall_jobs2


def sweep_speed(program: Any) -> SweepSpeed:
    from emulation import sweep

    chosen = scenario_io.loads(SWEEP_SCENARIO, "bench:sweep", base=ROOT / "scenarios")
    runs = sweep.plan_runs([chosen], seeds=SWEEP_SEEDS)
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        walls, reports, run_walls = [], [], {}
        for jobs in (1, 2):
            out = Path(tmp) / f"jobs{jobs}"
            started, epoch = time.perf_counter(), time.time()
            result = sweep.run_sweep(runs, out, jobs=jobs, program=program)
            walls.append(time.perf_counter() - started)
            first = min(o.started for o in result.outcomes) - epoch
            run_walls[f"jobs_{jobs}"] = [round(o.wall_seconds, 3) for o in result.outcomes]
            if not result.ok:
                raise RuntimeError("sweep failed: " + "; ".join(
                    o.error for o in result.outcomes if o.error))
            reports.append([(out / chosen.name / str(s) / "report.json").read_bytes()
                            for s in SWEEP_SEEDS] + [(out / sweep.SWEEP_JSON).read_bytes()])
    return SweepSpeed(len(runs), walls[0], walls[1], reports[0] == reports[1], run_walls,
                      first)


# -- wire hops per CPU-second on the permutations ------------------------------------------

def permutation_runs(program: Any, duration_us: int = PERMUTATION_US,
                     sizes: tuple[tuple[int, int], ...] = PERMUTATIONS) -> list[Rate]:
    """Each permutation in mode mrc, smallest first (so each raises the process's peak RSS
    over the one before: its growth is that run's)."""
    return [timed_run(f"permutation_{nics}", permutation_scenario(nics, radix, duration_us),
                      MODE, program) for nics, radix in sizes]


MEMORY_NOTE = ("peak RSS (getrusage ru_maxrss, this process) growth from the start of setup to "
               "the network built, per device (NICs + switches: engine, tables, P4Runtime "
               "server); a high-water mark, so a lower bound when an earlier run peaked higher")


def permutation_record(r: Rate, duration_us: int) -> dict[str, object]:
    rss = r.phases.maxrss_kib
    devices = r.switches + r.nics
    return {
        "benchmark": f"emulation.{r.name}", **r.to_json(),
        "partial": not r.finished, "virtual_us_limit": duration_us,
        "note": ("" if r.finished else
                 f"partial: the run did not finish in {duration_us} µs of virtual time; the "
                 f"rate is over the first {r.virtual_us:.0f} µs (raise --permutation-us)"),
        "devices": devices,
        "setup_cpu_s_per_device": round(r.phases.setup_cpu / devices, 4),
        "setup_peak_rss_growth_kib_per_device": round(
            (rss["built"] - rss["start"]) / devices, 1),
        "run_peak_rss_growth_kib": rss["closing"] - rss["built"],
        "memory_note": MEMORY_NOTE,
        "cpu_us_per_wire_hop": round(1e6 / r.hops_per_cpu_s, 1) if r.hops else None,
        "htsim_cpu_us_per_wire_hop": "0.4-0.7 (issue 26's measurement, same permutations)",
    }


# -- the largest fabric a 10-minute run carries (measured) --------------------------------

def ladder_scenario(nics: int) -> scenario_io.Scenario:
    """scenarios/scale-256-cut.yaml with `nics` NICs (the file itself at 256)."""
    text = LARGEST_SCENARIO.read_text()
    if nics != 256:
        text = text.replace("nics: 256}", f"nics: {nics}}}").replace(
            "name: scale-256-cut", f"name: scale-{nics}-cut").replace(
            "on 256 NICs", f"on {nics} NICs")
    return scenario_io.loads(text, str(LARGEST_SCENARIO), base=LARGEST_SCENARIO.parent)


def largest_runs(program: Any, sizes: tuple[int, ...] = LARGEST_DEFAULT,
                 budget_s: float = BUDGET_S) -> list[Rate]:
    """Each size of the ladder in the scenario's modes, smallest first, until one does not
    finish within `budget_s` wall seconds (setup, run and close of every mode, as one
    `mrc-ctl emulate` takes them) or does not deliver everything."""
    runs: list[Rate] = []
    for nics in sizes:
        chosen = ladder_scenario(nics)
        rungs = [timed_run(f"scale_{nics}_cut_{m}", chosen, m, program) for m in chosen.modes]
        runs.extend(rungs)
        if sum(r.phases.total_wall for r in rungs) > budget_s or \
                not all(r.finished for r in rungs):
            break
    return runs


def largest_record(runs: list[Rate], budget_s: float = BUDGET_S) -> dict[str, object]:
    """The ladder's runs by fabric, and the largest whose every mode finished within the
    budget."""
    fabrics: dict[str, dict[str, object]] = {}
    for r in runs:
        devices = r.switches + r.nics
        rss = r.phases.maxrss_kib
        entry = fabrics.setdefault(f"{r.nics}_nics", {
            "scenario": r.scenario, "nics": r.nics, "switches": r.switches, "devices": devices,
            "wall_s": 0.0, "cpu_s": 0.0, "finished": True, "modes": {}})
        entry["wall_s"] = round(float(entry["wall_s"]) + r.phases.total_wall, 1)  # type: ignore[arg-type]
        entry["cpu_s"] = round(float(entry["cpu_s"]) + r.phases.total_cpu, 1)  # type: ignore[arg-type]
        entry["finished"] = bool(entry["finished"]) and r.finished
        entry["within_budget"] = bool(entry["finished"]) and float(entry["wall_s"]) <= budget_s  # type: ignore[arg-type]
        entry["modes"][r.mode] = {  # type: ignore[index]
            **r.to_json(), "total_wall_s": round(r.phases.total_wall, 1),
            "total_cpu_s": round(r.phases.total_cpu, 1),
            "setup_cpu_s_per_device": round(r.phases.setup_cpu / devices, 4),
            "setup_peak_rss_growth_kib_per_device": round(
                (rss["built"] - rss["start"]) / devices, 1),
            "peak_rss_mib": round(rss["closing"] / 1024, 1)}
    fits = [f for f in fabrics.values() if f.get("within_budget")]
    largest = max(fits, key=lambda f: int(f["nics"]), default=None)  # type: ignore[call-overload]
    return {
        "benchmark": "emulation.largest_fabric", "budget_wall_s": budget_s,
        "engine": ENGINE, "fabric": FABRIC, "transport": transport(),
        "largest": None if largest is None else {
            k: largest[k] for k in ("scenario", "nics", "switches", "wall_s", "cpu_s")},
        "fabrics": fabrics,
        "note": "measured, not extrapolated: each fabric run as `mrc-ctl emulate --engine c "
                "--fabric native` runs it (every mode of the scenario, setup and close "
                "included), larger ones only while the one before fit the budget "
                "(python -m bench.emulation --largest 256 512); wall seconds on a shared "
                "2-core machine, CPU seconds this process's (every thread)",
    }


# -- all of it -----------------------------------------------------------------------------

@dataclass
class Results:
    rate: Rate
    profile: Profile
    sweep: SweepSpeed | None
    seconds: float
    permutations: list[Rate] = field(default_factory=list)
    permutation_us: int = PERMUTATION_US
    largest: list[Rate] = field(default_factory=list)


def transport() -> str:
    """The host transport this process runs: compiled (mrc_transport/compiled.py) or python."""
    from mrc_transport import compiled

    return "compiled" if compiled.active() else "python"


@contextlib.contextmanager
def engine(name: str = ENGINE, fabric: str = FABRIC) -> Iterator[None]:
    """Every Switch and Fabric built inside on `name` and `fabric` (as `mrc-ctl emulate
    --engine --fabric` sets them); the environment as it was afterwards (bench/run.py runs
    other benchmarks after these)."""
    with variables_set({"SOFTSWITCH_ENGINE": name, "SOFTSWITCH_FABRIC": fabric}):
        yield


def run_all(with_sweep: bool = True, permutation_us: int = PERMUTATION_US,
            sizes: tuple[tuple[int, int], ...] = PERMUTATIONS,
            largest: tuple[int, ...] = LARGEST_DEFAULT) -> Results:
    started = time.perf_counter()
    with engine():
        program, compile_cpu = compile_switch()
        chosen = scenario_io.load(RATE_SCENARIO)
        rate = timed_run("ring_link_cut_mrc", chosen, MODE, program, compile_cpu)
        profile = profile_run(chosen, MODE, program)
        speed = sweep_speed(program) if with_sweep else None
        permutations = permutation_runs(program, permutation_us, sizes)
        ladder = largest_runs(program, largest)
    return Results(rate, profile, speed, time.perf_counter() - started, permutations,
                   permutation_us, ladder)


Row = tuple[str, int, float, float, str]


def rows_and_records(r: Results) -> tuple[list[Row], dict[str, dict[str, object]]]:
    """bench/run.py's rows (name, count, seconds, rate, unit) and the JSON records by file."""
    rate = r.rate
    rows: list[Row] = [
        ("emulation.ring_link_cut_mrc", rate.hops, rate.phases.run_cpu, rate.hops_per_cpu_s,
         f"wire hops/CPU-s (+setup {rate.phases.setup_cpu:.1f} s: "
         f"{rate.hops_per_cpu_s_with_setup:.0f}); {r.profile.text()}"),
    ]
    records: dict[str, dict[str, object]] = {
        "emulation_ring_link_cut_mrc": {
            "benchmark": "emulation.ring_link_cut_mrc", **rate.to_json(),
            "profile_percent": r.profile.percent,
            "profile_setup_percent": r.profile.setup_percent,
            "profile_top_functions_percent": dict(r.profile.top),
            "profile_seconds": round(r.profile.profiled_seconds, 3),
            "profile_note": "cProfile of the main thread (own time, library and builtin calls "
                            "charged to their callers); the P4Runtime servers' threads are not "
                            "profiled, the main thread's waits on them count as gRPC/controller",
            "htsim_note": HTSIM_NOTE,
        },
    }
    for record in records.values():
        record.update(engine=ENGINE, fabric=FABRIC, transport=transport())
    for p in r.permutations:
        record = permutation_record(p, r.permutation_us)
        rows.append((f"emulation.{p.name}", p.hops, p.phases.run_cpu, p.hops_per_cpu_s,
                     f"wire hops/CPU-s ({p.handoffs} host hand-offs apart; "
                     f"{'done' if p.finished else 'PARTIAL'} at {p.virtual_us:.0f} µs virtual, "
                     f"{p.completed} messages; {p.hops_per_cpu_s_stepping:.0f} without the "
                     f"closing counter read's {p.phases.collect_cpu:.2f} s); "
                     f"setup {p.phases.setup_cpu:.1f} s CPU, "
                     f"{record['setup_peak_rss_growth_kib_per_device']} KiB peak RSS per device"))
        records[f"emulation_{p.name}"] = record | {"engine": ENGINE, "fabric": FABRIC,
                                                   "transport": transport()}
    if r.largest:
        record = largest_record(r.largest)
        records["emulation_largest_fabric"] = record
        top: dict[str, Any] | None = record["largest"]  # type: ignore[assignment]
        fabrics: dict[str, Any] = record["fabrics"]  # type: ignore[assignment]
        tried = ", ".join(f"{f['nics']} NICs + {f['switches']} switches {f['wall_s']:.0f} s "
                          f"wall / {f['cpu_s']:.0f} s CPU"
                          f"{'' if f['within_budget'] else ' (over budget or not done)'}"
                          for f in fabrics.values())
        hops = sum(x.hops for x in r.largest if top and x.nics == top["nics"])
        rows.append(("emulation.largest_fabric", hops, top["wall_s"] if top else 0.0,
                     top["nics"] if top else 0,
                     f"NICs carried by a run within {BUDGET_S:.0f} s wall (measured: {tried})"))
    if r.sweep is not None:
        s = r.sweep
        rows.append(("emulation.sweep_2_jobs", s.runs, s.wall_jobs2, s.speedup,
                     f"x --jobs 1's speed ({s.wall_jobs1:.1f} s vs {s.wall_jobs2:.1f} s wall, "
                     f"{len(SWEEP_SEEDS)} seeds x mode mrc; workers' first run after "
                     f"{s.first_run_after_s:.1f} s; reports "
                     f"{'identical' if s.identical else 'DIFFERENT'})"))
        records["emulation_sweep"] = {
            "benchmark": "emulation.sweep_2_jobs", "runs": s.runs,
            "scenario": "ring all-reduce 8 KiB per rank, tiny fabric, cable cut at 5 µs",
            "seeds": list(SWEEP_SEEDS), "modes": ["mrc"],
            "run_wall_s": s.run_walls,
            "jobs_2_first_run_started_after_s": round(s.first_run_after_s, 3),
            "wall_s_jobs_1": round(s.wall_jobs1, 3), "wall_s_jobs_2": round(s.wall_jobs2, 3),
            "speedup": round(s.speedup, 2), "reports_identical": s.identical,
            "note": "--jobs 1 runs in this process; --jobs 2 spawns two workers, whose start "
                    "(a fresh interpreter importing the emulation, then matplotlib for the "
                    "first report) is paid in the wall time: with runs of a few seconds it "
                    "takes most of the gain; both write every report (plots too); on a shared "
                    "machine the two workers also compete with other load",
        }
    return rows, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-sweep", action="store_true", help="skip the sweep speed-up")
    parser.add_argument("--permutation-us", type=int, default=PERMUTATION_US,
                        help="virtual µs each permutation run may take (default %(default)s)")
    parser.add_argument("--permutations", type=int, nargs="*",
                        default=[n for n, _ in PERMUTATIONS],
                        help="the permutation sizes (NICs) to run: of 16, 64, 128")
    parser.add_argument("--largest", type=int, nargs="*", default=list(LARGEST_DEFAULT),
                        help="the ladder of fabric sizes (NICs, 8 planes, radix 32) for the "
                             f"largest fabric a {BUDGET_S:.0f} s run carries: of "
                             f"{', '.join(map(str, LADDER))} (default %(default)s; none: skip)")
    args = parser.parse_args()
    sizes = tuple(p for p in PERMUTATIONS if p[0] in args.permutations)
    results = run_all(with_sweep=not args.no_sweep, permutation_us=args.permutation_us,
                      sizes=sizes, largest=tuple(n for n in LADDER if n in args.largest))
    rows, _ = rows_and_records(results)
    for name, count, seconds, rate, unit in rows:
        print(f"{name:<36} {count:>9} {seconds:>8.2f} {rate:>10.1f}  {unit}")
    if results.largest:
        print(f"largest: {largest_record(results.largest)}")
    print(f"profile: {results.profile.percent}; setup: {results.profile.setup_percent}")
    if results.sweep is not None:
        print(f"sweep: each run's wall seconds {results.sweep.run_walls}")
    print(f"({results.seconds:.1f} s)")


__all__ = ["Results", "rows_and_records", "run_all"]


if __name__ == "__main__":
    main()
