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
- `scale`: a permutation of 32 KiB per NIC in mode mrc on two generated 2-plane Clos fabrics,
  radix 4 with 4 NICs (8 switches) and radix 8 with 16 NICs (16 switches): the rate and the
  setup on each, and from them (an extrapolation, not a measurement: setup and CPU per hop
  fitted as linear in devices) the bytes a 600 s run carries on larger fabrics and the largest
  fabric whose setup fits half of it.
- `sweep`: `mrc-ctl sweep` of a small scenario (8 KiB ring all-reduce, cable cut) in mode mrc
  with 2 seeds (2 runs, 2 reports: 2 seeds x 2 modes does not fit the benchmark's minute),
  --jobs 1 against --jobs 2: wall seconds each, and the report.json bytes compared.

    python -m bench.emulation          # these only (about 45 s on a 2-core machine)

For scale: htsim, the packet-level simulator used for datacenter transport studies, is
published as processing millions of events per second; this emulation executes the real P4
programs (parser, tables, deparser) for every packet on every hop, in Python, behind real
P4Runtime sessions, and is orders of magnitude slower per packet: it trades speed for running
the very programs the devices run.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import resource
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulation import scenario as scenario_io

ROOT = Path(__file__).resolve().parents[1]
RATE_SCENARIO = ROOT / "scenarios" / "ring-link-cut.yaml"
MODE = "mrc"
BUDGET_S = 600.0         # the "10-minute run" of the extrapolation
SCALE_WORKLOAD = """\
duration_us: 20000
transport: {rto_us: 100, reorder_us: 30}
workload: {kind: permutation, bytes: 32768}
"""
SCALE_FABRICS = (("clos_4_nics", 4, 4), ("clos_16_nics", 8, 16))   # (name, radix, NICs), 2 planes


def scale_scenario(name: str, radix: int, nics: int) -> scenario_io.Scenario:
    return scenario_io.loads(
        f"name: {name.replace('_', '-')}\n"
        f"description: a permutation of 32 KiB per NIC on a generated 2-plane radix-{radix} "
        f"Clos\ntopology: {{generate: {{planes: 2, radix: {radix}, nics: {nics}}}}}\n"
        + SCALE_WORKLOAD, f"bench:{name}")


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
            "switch_compile_cpu_s": round(self.compile_cpu, 3),
            "wire_hops_per_cpu_s": round(self.hops_per_cpu_s, 1),
            "wire_hops_per_cpu_s_with_setup": round(self.hops_per_cpu_s_with_setup, 1),
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
    result = run_mode(chosen, mode_name, program, str(NIC_PROGRAM), phase=phased(phases))
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


def _component(filename: str) -> str | None:
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
        named = _component(func[0])
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


# -- how far 600 s goes (extrapolated) -----------------------------------------------------

def clos_switches(nics: int, planes: int = 2) -> tuple[int, int]:
    """(switches, radix) of the generated two-tier Clos of `nics` NICs with the fewest
    switches (radix R holds R²/2 NICs; R/2 T1s and ceil(N / (R/2)) T0s per plane)."""
    best: tuple[int, int] | None = None
    for half in range(1, 257):          # radix = 2 * half, up to 512
        if half * half * 2 < nics:
            continue
        count = planes * (half + -(-nics // half))
        if best is None or count < best[0]:
            best = (count, 2 * half)
    if best is None:
        raise ValueError(f"{nics} NICs do not fit a radix-512 two-tier Clos")
    return best


def _line(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float]:
    """(intercept, slope) through two points; the slope no less than 0."""
    slope = max(0.0, (y1 - y0) / (x1 - x0)) if x1 != x0 else 0.0
    return y1 - slope * x1, slope


@dataclass(frozen=True)
class CostModel:
    """Fitted to two measured runs of the same workload per NIC on two fabric sizes: setup CPU
    seconds = setup0 + setup1 x devices, CPU seconds per wire hop = hop0 + hop1 x devices
    (each instant of the run visits every device); hops per byte of the workload as measured."""

    setup0: float
    setup1: float
    hop0: float
    hop1: float
    hops_per_byte: float
    flat_rate: float          # the larger fabric's measured wire hops per CPU-second

    @classmethod
    def fit(cls, small: Rate, big: Rate) -> CostModel:
        ds, db = small.switches + small.nics, big.switches + big.nics
        setup0, setup1 = _line(ds, small.phases.setup_cpu, db, big.phases.setup_cpu)
        hop0, hop1 = _line(ds, 1 / small.hops_per_cpu_s, db, 1 / big.hops_per_cpu_s)
        return cls(setup0, setup1, hop0, hop1, big.hops_per_byte, big.hops_per_cpu_s)

    def setup_s(self, devices: int) -> float:
        return self.setup0 + self.setup1 * devices

    def rate(self, devices: int) -> float:
        return 1 / (self.hop0 + self.hop1 * devices)

    def fabric(self, nics: int, budget_s: float) -> dict[str, object]:
        switches, radix = clos_switches(nics)
        devices = nics + switches
        setup = self.setup_s(devices)
        left = max(0.0, budget_s - setup)
        return {"nics": nics, "switches": switches, "radix": radix, "setup_s": round(setup, 1),
                "hops_per_cpu_s_fitted": round(self.rate(devices), 1),
                "bytes_fitted_rate": int(left * self.rate(devices) / self.hops_per_byte),
                "bytes_flat_rate": int(left * self.flat_rate / self.hops_per_byte)}

    def largest(self, setup_budget_s: float) -> int:
        """The most NICs whose fitted setup fits `setup_budget_s`."""
        lo, hi = 1, 131_072
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.setup_s(mid + clos_switches(mid)[0]) <= setup_budget_s:
                lo = mid
            else:
                hi = mid - 1
        return lo


def extrapolate(small: Rate, big: Rate) -> dict[str, object]:
    model = CostModel.fit(small, big)
    half = BUDGET_S / 2
    largest = model.largest(half)
    return {
        "note": "an extrapolation from the measured numbers named here, not a measurement: "
                "setup CPU and CPU per wire hop fitted as linear in devices (NICs + switches) "
                "through the two measured fabrics (same workload per NIC); 'flat' keeps the "
                "larger fabric's measured rate at every size (an upper bound: each virtual "
                "instant steps every device, and each time bin samples every EV of every "
                "connection); memory and a P4Runtime server's threads per device not measured",
        "measured": {
            run.name: {"fabric": f"{run.switches} switches, {run.nics} NICs",
                       "wire_hops": run.hops, "workload_bytes": run.workload_bytes,
                       "wire_hops_per_cpu_s": round(run.hops_per_cpu_s, 1),
                       "wire_hops_per_byte": round(run.hops_per_byte, 6),
                       "setup_cpu_s": round(run.phases.setup_cpu, 3)}
            for run in (small, big)},
        "model": {"setup_cpu_s": f"{model.setup0:.3f} + {model.setup1:.4f} x devices",
                  "cpu_s_per_hop": f"{model.hop0:.3e} + {model.hop1:.3e} x devices",
                  "wire_hops_per_byte": round(model.hops_per_byte, 6)},
        "budget_s": BUDGET_S,
        "fabrics": [model.fabric(n, BUDGET_S) for n in (big.nics, 64, 256, 1024)],
        "largest_fabric": {**model.fabric(largest, BUDGET_S), "setup_budget_s": half,
                           "rule": "the most NICs whose setup fits half the budget; the bytes "
                                   "the other half carries at the fitted and the flat rate"},
    }


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


# -- all of it -----------------------------------------------------------------------------

@dataclass
class Results:
    rate: Rate
    profile: Profile
    small: Rate
    scale: Rate
    extrapolation: dict[str, object]
    sweep: SweepSpeed | None
    seconds: float
    permutations: list[Rate] = field(default_factory=list)
    permutation_us: int = PERMUTATION_US


def run_all(with_sweep: bool = True, permutation_us: int = PERMUTATION_US,
            sizes: tuple[tuple[int, int], ...] = PERMUTATIONS) -> Results:
    started = time.perf_counter()
    program, compile_cpu = compile_switch()
    chosen = scenario_io.load(RATE_SCENARIO)
    rate = timed_run("ring_link_cut_mrc", chosen, MODE, program, compile_cpu)
    profile = profile_run(chosen, MODE, program)
    small, scale = (timed_run(name, scale_scenario(name, radix, nics), MODE, program)
                    for name, radix, nics in SCALE_FABRICS)
    extra = extrapolate(small, scale)
    speed = sweep_speed(program) if with_sweep else None
    permutations = permutation_runs(program, permutation_us, sizes)
    return Results(rate, profile, small, scale, extra, speed, time.perf_counter() - started,
                   permutations, permutation_us)


Row = tuple[str, int, float, float, str]


def rows_and_records(r: Results) -> tuple[list[Row], dict[str, dict[str, object]]]:
    """bench/run.py's rows (name, count, seconds, rate, unit) and the JSON records by file."""
    rate, small, scale, extra = r.rate, r.small, r.scale, r.extrapolation
    big: dict[str, Any] = extra["largest_fabric"]  # type: ignore[assignment]
    here: dict[str, Any] = extra["fabrics"][0]  # type: ignore[index]
    mib = 2 ** 20
    rows: list[Row] = [
        ("emulation.ring_link_cut_mrc", rate.hops, rate.phases.run_cpu, rate.hops_per_cpu_s,
         f"wire hops/CPU-s (+setup {rate.phases.setup_cpu:.1f} s: "
         f"{rate.hops_per_cpu_s_with_setup:.0f}); {r.profile.text()}"),
        ("emulation.clos_16_nics", scale.hops, scale.phases.run_cpu, scale.hops_per_cpu_s,
         f"wire hops/CPU-s (4 NICs: {small.hops_per_cpu_s:.0f}), "
         f"{scale.hops_per_byte * 1024:.1f} hops/KiB, setup {scale.phases.setup_cpu:.1f} s; "
         f"600 s extrapolated: {here['bytes_fitted_rate'] / mib:.0f} MiB here; setup-bound at "
         f"{big['nics']} NICs + {big['switches']} switches (300 s), "
         f"{big['bytes_fitted_rate'] / mib:.1f}-{big['bytes_flat_rate'] / mib:.0f} MiB in the "
         "other 300 s"),
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
        "emulation_clos_16_nics": {
            "benchmark": "emulation.clos_16_nics", **scale.to_json(),
            "smaller_fabric": small.to_json(),
            "extrapolation_600s": extra, "htsim_note": HTSIM_NOTE,
        },
    }
    for p in r.permutations:
        record = permutation_record(p, r.permutation_us)
        rows.append((f"emulation.{p.name}", p.hops, p.phases.run_cpu, p.hops_per_cpu_s,
                     f"wire hops/CPU-s ({p.handoffs} host hand-offs apart; "
                     f"{'done' if p.finished else 'PARTIAL'} at {p.virtual_us:.0f} µs virtual, "
                     f"{p.completed} messages); setup {p.phases.setup_cpu:.1f} s CPU, "
                     f"{record['setup_peak_rss_growth_kib_per_device']} KiB peak RSS per device"))
        records[f"emulation_{p.name}"] = record
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
    args = parser.parse_args()
    sizes = tuple(p for p in PERMUTATIONS if p[0] in args.permutations)
    results = run_all(with_sweep=not args.no_sweep, permutation_us=args.permutation_us,
                      sizes=sizes)
    rows, _ = rows_and_records(results)
    for name, count, seconds, rate, unit in rows:
        print(f"{name:<36} {count:>9} {seconds:>8.2f} {rate:>10.1f}  {unit}")
    extra: dict[str, Any] = results.extrapolation
    print(f"extrapolation ({extra['note']}):")
    for key in ("measured", "model"):
        print(f"  {key}: {extra[key]}")
    for fabric in extra["fabrics"]:
        print(f"  600 s: {fabric}")
    print(f"  largest: {extra['largest_fabric']}")
    print(f"profile: {results.profile.percent}; setup: {results.profile.setup_percent}")
    if results.sweep is not None:
        print(f"sweep: each run's wall seconds {results.sweep.run_walls}")
    print(f"({results.seconds:.1f} s)")


__all__ = ["Results", "rows_and_records", "run_all"]


if __name__ == "__main__":
    main()
