"""Repair time on the medium fabric (topologies/medium.yaml: 4 planes x (4 T1 + 8 T0), 48
switches): five 512 KiB transfers, the cable p1-t0-0 <-> p1-t1-2 cut 40 µs in; the repair loop
(controller/repair) polls every 20 µs of virtual time.

Reported: the controller's own time from the poll that took the first EV event to the one that
wrote the last NIC table (wall seconds spent inside those polls: digests read, correlation,
rewrites computed, MODIFYs written over P4Runtime, their answers awaited), the entries written,
the NICs rewritten, and whether every transfer completed intact.

Also reported: the virtual time from a failure to the controller's verdict with confirmation
(controller/repair/confirm.py: suspects probed, N lost in a row while an alternative answers),
on scenarios/ring-link-cut.yaml in mode `mrc` (the cable cut at 100 µs), and what was declared;
and the same on scenarios/sampled-cut.yaml, a cut no traffic crosses, which only the idle sweep
can find (controller/daemon/idle_probes.py).

    python -m bench.mrc_repair
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

from controller.nic_fabric import NicFabric
from controller.plan.nic_plan import EvProfile
from controller.repair.repairer import Repairer
from controller.topology.yaml_io import load

ROOT = Path(__file__).resolve().parents[1]
PAIRS = [("nic0", "nic9"), ("nic1", "nic17"), ("nic12", "nic2"), ("nic20", "nic3"),
         ("nic28", "nic13")]
CUT = ("p1-t0-0", 6)   # p1-t0-0 <-> p1-t1-2
SIZE = 512 << 10
VA = 0x1000


@dataclass(frozen=True)
class RepairTime:
    controller_ms: float
    entries: int
    nics: int
    polls: int
    intact: bool
    verdict_us: float | None = None      # failure -> verdict (virtual µs), confirmation included
    declared: tuple[str, ...] = ()        # what that verdict named
    idle_verdict_us: float | None = None  # the same for a cut no traffic crosses (idle sweep)
    idle_declared: tuple[str, ...] = ()


def run() -> RepairTime:
    with NicFabric(load(ROOT / "topologies" / "medium.yaml"),
                   ROOT / "p4src/switch/srv6_switch.p4", ROOT / "p4src/nic/mrc_nic.p4", PAIRS,
                   profile=EvProfile(ev_count=32, backups=2, ev_min_active=8)) as fab:
        repairer = Repairer(fab.plan, fab.managed_nics(), window_s=0.01, settle_s=0.005)
        spent: list[tuple[float, int, int]] = []   # (seconds in the poll, reports, written)

        def poll(now_us: int) -> None:
            started = time.perf_counter()
            log = repairer.poll(now_us / 1e6)
            spent.append((time.perf_counter() - started, len(log.reports),
                          sum(log.written.values())))

        fab.every(20, poll)
        data = {src: random.Random(src).randbytes(SIZE) for src, _ in PAIRS}
        for src, _ in PAIRS:
            fab.host(src).sender.write(data[src], VA)
        fab.run_for(40)
        fab.fabric.set_link_up(*CUT, False)
        fab.run(limit_us=500_000)
        intact = all(bytes(fab.host(dst).receiver.memory[VA:VA + SIZE]) == data[src]
                     for src, dst in PAIRS)
    first = next((i for i, (_, reports, _) in enumerate(spent) if reports), None)
    last = max((i for i, (_, _, written) in enumerate(spent) if written), default=None)
    if first is None or last is None:
        return RepairTime(0.0, 0, 0, 0, intact)
    window = spent[first:last + 1]
    nics = {nic for log in repairer.history for nic in log.written}
    return RepairTime(round(sum(s for s, _, _ in window) * 1000, 2),
                      sum(w for _, _, w in window), len(nics), len(window), intact)


def time_to_verdict(name: str = "ring-link-cut") -> tuple[float | None, tuple[str, ...]]:
    """(virtual µs from the cut to the verdict, the elements declared down) on
    scenarios/NAME.yaml in mode mrc."""
    from controller.devices.session import Program
    from emulation.command import NIC_PROGRAM, SWITCH_PROGRAM
    from emulation.run import run_mode
    from emulation.scenario import load as load_scenario

    scenario = load_scenario(ROOT / "scenarios" / f"{name}.yaml")
    result = run_mode(scenario, "mrc", Program.compile(SWITCH_PROGRAM), str(NIC_PROGRAM))
    down = [e for e in result.events if e["event"] == "verdict" and e["down"]]
    if not down or not scenario.failures:
        return None, ()
    at_us = float(down[0]["at_us"])  # type: ignore[arg-type]
    return (round(at_us - scenario.failures[0].at_us, 1),
            tuple(str(e.get("link") or e.get("switch")) for e in down))


def run_with_verdict() -> RepairTime:
    import dataclasses

    verdict_us, declared = time_to_verdict()
    idle_us, idle_declared = time_to_verdict("sampled-cut")
    return dataclasses.replace(run(), verdict_us=verdict_us, declared=declared,
                               idle_verdict_us=idle_us, idle_declared=idle_declared)


def main() -> None:
    r = run_with_verdict()
    print(f"cut -> verdict (confirmed by probes) on tiny: {r.verdict_us} µs virtual, "
          f"declared {', '.join(r.declared) or 'nothing'}")
    print(f"idle cut -> verdict (idle sweep, then probes) on 8 planes: {r.idle_verdict_us} µs "
          f"virtual, declared {', '.join(r.idle_declared) or 'nothing'}")
    print(f"repair on medium: {r.controller_ms} ms of controller time over {r.polls} polls, "
          f"{r.entries} entries written to {r.nics} NICs, "
          f"{'transfers intact' if r.intact else 'DATA LOST'}")


if __name__ == "__main__":
    main()
