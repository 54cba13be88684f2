"""What the emulation tests share: a scenario written as YAML text (the tiny fabric by default,
the transport timers every test uses), and one mode's run of it on the real programs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from controller.devices.session import Program
from emulation.command import NIC_PROGRAM
from emulation.metrics import RunResult
from emulation.run import run_mode
from emulation.scenario import Scenario, loads

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"
RING = "{kind: ring_allreduce, bytes: 16384}"


def scenario(workload: str = RING, *failures: str, name: str = "test",
             topology: Path = TINY, seed: int = 1, rto_us: int = 100,
             lines: Sequence[str] = ()) -> Scenario:
    """A scenario of `workload` with `failures` (YAML flow mappings), 20 ms long; `lines`: more
    top-level keys."""
    text = [f"name: {name}", f"topology: {topology}", f"seed: {seed}", "duration_us: 20000",
            f"transport: {{rto_us: {rto_us}, reorder_us: 30}}", f"workload: {workload}",
            *lines]
    if failures:
        text += ["failures:", *(f"  - {f}" for f in failures)]
    return loads("\n".join(text) + "\n", f"{name}.yaml")


def run(s: Scenario, mode: str, program: Program) -> RunResult:
    return run_mode(s, mode, program, str(NIC_PROGRAM))
