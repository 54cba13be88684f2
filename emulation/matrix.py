"""The scenario matrix's verdict (`mrc-ctl sweep ... --invariants`, `make eval`): per scenario
and seed, every mode's bytes lost, connections lost, p99 and time to steady goodput, and the
breaches of the invariants `mrc` must hold (emulation/invariants.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from emulation.invariants import Breach, check, show, steady_times
from emulation.scenario import MODES, Scenario

INVARIANTS_MD = "invariants.md"


def groups(outcomes: Sequence[Any]) -> list[tuple[Scenario, dict[str, Any]]]:
    """Per (scenario, seed), in sweep order: the scenario and its modes' outcomes."""
    out: dict[tuple[str, int], tuple[Scenario, dict[str, Any]]] = {}
    for o in outcomes:
        key = (o.run.scenario.name, o.run.seed)
        out.setdefault(key, (o.run.scenario, {}))[1][o.run.mode] = o
    return list(out.values())


def breaches(outcomes: Sequence[Any]) -> list[Breach]:
    """Every breach, scenario by scenario; a run that failed is a breach of its own."""
    found: list[Breach] = []
    for scenario, runs in groups(outcomes):
        failed = [m for m, o in runs.items() if o.result is None]
        for mode in failed:
            found.append(Breach(scenario.name, scenario.seed, "run",
                                f"{mode} failed: {_last_line(runs[mode].error)}"))
        found += check(scenario, {m: o.result for m, o in runs.items() if o.result is not None})
    return found


def cell(result: Any) -> str:
    """bytes lost / connections lost / p99 (µs) / time to steady goodput (µs, the worst after
    any failure; "never": not steady and not done; "—": no failure)."""
    if result is None:
        return "error"
    s = result.summary()
    p99 = s["mct_p99_us"]
    steady = steady_times(result)
    worst = max(steady.values()) if steady else None
    return " / ".join([
        f"{s['bytes_lost']:,}", str(s["connections_lost"]),
        "—" if p99 is None else show(float(p99)),
        "—" if worst is None else "never" if worst == math.inf else f"{worst:,.0f}"])


def table(outcomes: Sequence[Any], found: Sequence[Breach]) -> str:
    """One row per scenario and seed, one column per mode, and the invariants breached."""
    grouped = groups(outcomes)
    modes = [m for m in MODES if any(m in runs for _, runs in grouped)]
    rows = ["| scenario | seed | " + " | ".join(modes) + " | mrc breaches |",
            "|---|---|" + "---|" * len(modes) + "---|"]
    for scenario, runs in grouped:
        letters = sorted({b.invariant for b in found
                          if (b.scenario, b.seed) == (scenario.name, scenario.seed)})
        cells = [cell(runs[m].result) if m in runs else "" for m in modes]
        rows.append(f"| {scenario.name} | {scenario.seed} | " + " | ".join(cells)
                    + f" | {', '.join(letters) or 'none'} |")
    return "\n".join(rows)


def markdown(outcomes: Sequence[Any], found: Sequence[Breach]) -> str:
    listed = [f"- {b}" for b in found] or ["none"]
    return "\n".join([
        "# The scenario matrix", "",
        "Each cell: bytes lost / connections lost / MCT p99 (µs; ∞: not done) / time to "
        "steady goodput after the failures (µs, the worst; never: not steady, not done; —: no "
        "failure). Virtual time. Invariants (emulation/invariants.py): (a) nothing lost, "
        "(b) p99 <= ecmp's and spray's, (c) no hardware failure: nothing denied and p99 within "
        "5 % of mrc_no_controller's, (d) one path or EV congested or lossy: p99 20 % below "
        "spray's, (e) only failed elements named, hard ones named, time to steady <= "
        "mrc_no_controller's.", "",
        table(outcomes, found), "",
        f"## Breaches ({len(found)})", "", *listed, ""])


def report(outcomes: Sequence[Any], out: Path) -> tuple[str, list[Breach]]:
    """Check every scenario, write DIR/invariants.md; (its text, the breaches)."""
    found = breaches(outcomes)
    text = markdown(outcomes, found)
    out.mkdir(parents=True, exist_ok=True)
    (out / INVARIANTS_MD).write_text(text, encoding="utf-8")
    return text, found


def _last_line(error: str) -> str:
    return (error.strip().splitlines() or ["failed"])[-1]
