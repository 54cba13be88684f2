"""Plan + check time and peak memory for a generated fabric (default 8 planes of radix 512:
131,072 NICs, 6,144 switches), then the size and build time of its NIC plan in the compact form
the controller keeps (templates per T0 row and EV profiles, not per-NIC entries). Runs in a fresh
subprocess so its peak RSS is its own.

    python -m bench.controller_plan [--planes 8] [--radix 512] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass


@dataclass
class PlanCheckResult:
    name: str
    nics: int
    switches: int
    entries: int  # entries planned (every switch's, generated once by the checker)
    templates: int
    paths: int  # paths the check covers
    plan_seconds: float  # topology generation + build_plan
    check_seconds: float
    peak_mib: float  # the parent's peak RSS plus each worker's (an upper bound)
    ok: bool
    nic_plan_seconds: float = 0.0  # every NIC's plan, compact (controller.plan.nic_plan)
    nic_row_templates: int = 0  # path_template entries kept, shared by the NICs of a T0
    nic_profile_paths: int = 0  # ev_path entries kept (128 EVs + 4 backups per plane)
    nic_entries_each: int = 0  # what one NIC holds once pushed, before its connections

    @property
    def seconds(self) -> float:
        return self.plan_seconds + self.check_seconds


def bench_plan_check(planes: int = 8, radix: int = 512,
                     workers: int | None = None) -> PlanCheckResult:
    """Generate, plan and check the fabric in a subprocess; its numbers."""
    cmd = [sys.executable, "-m", "bench.controller_plan", "--planes", str(planes),
           "--radix", str(radix), "--json"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=root).stdout
    return PlanCheckResult(**json.loads(out.strip().splitlines()[-1]))


def _measure(planes: int, radix: int, workers: int | None) -> PlanCheckResult:
    from controller.plan.checker import check
    from controller.plan.nic_plan import EvProfile, NicPlanner, compact_size
    from controller.plan.plan import build_plan
    from controller.topology.generate import generate

    start = time.perf_counter()
    topo = generate(planes, radix)
    plan = build_plan(topo)
    planned = time.perf_counter()
    result = check(topo, plan, mode="per-hop", workers=workers)
    checked = time.perf_counter()
    nic = compact_size(NicPlanner(plan), EvProfile())
    nic_seconds = time.perf_counter() - checked
    n_workers = min(workers or os.cpu_count() or 1, planes)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    peak_kib = own + (children * n_workers if n_workers > 1 else 0)
    return PlanCheckResult(
        name=f"plan_check_{planes}x{radix}", nics=len(topo.nics), switches=len(topo.switches),
        entries=result.entries, templates=result.templates, paths=result.paths,
        plan_seconds=round(planned - start, 2), check_seconds=round(checked - planned, 2),
        peak_mib=round(peak_kib / 1024, 1), ok=result.ok,
        nic_plan_seconds=round(nic_seconds, 2), nic_row_templates=nic.row_templates,
        nic_profile_paths=nic.profile_paths, nic_entries_each=nic.expanded_per_nic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--planes", type=int, default=8)
    parser.add_argument("--radix", type=int, default=512)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="one JSON line (for bench.run)")
    args = parser.parse_args()
    r = _measure(args.planes, args.radix, args.workers)
    if args.json:
        print(json.dumps(r.__dict__))
        return
    print(f"{r.name}: {r.nics:,} NICs, {r.switches:,} switches, {r.entries:,} entries, "
          f"{r.templates:,} templates, {r.paths:,} paths; plan {r.plan_seconds:.1f} s, "
          f"check {r.check_seconds:.1f} s, peak {r.peak_mib:,.0f} MiB, "
          f"{'OK' if r.ok else 'FAILED'}; NIC plan {r.nic_plan_seconds:.1f} s: "
          f"{r.nic_row_templates:,} row templates + {r.nic_profile_paths} profile paths kept, "
          f"{r.nic_entries_each:,} entries per NIC once pushed")


if __name__ == "__main__":
    main()
