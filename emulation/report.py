"""The report of a scenario run in one or more modes: `report.json` (every number, in virtual
time only, so the same scenario and seed give the same bytes), PNG plots and `report.md`, one
page that embeds them under the summary table."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from emulation import plots
from emulation.metrics import RunResult
from emulation.plots import PLOTS
from emulation.scenario import Scenario, Workload


def scenario_json(scenario: Scenario) -> dict[str, object]:
    topo = scenario.topology
    w = scenario.workload
    return {
        "name": scenario.name, "description": scenario.description,
        "topology": {"name": topo.name, "planes": topo.planes, "switches": len(topo.switches),
                     "nics": len(topo.nics)},
        "links": {"rate_gbps": scenario.links.rate_gbps, "delay_ns": scenario.links.delay_ns,
                  "queue_packets": scenario.links.queue_packets},
        "cables": [{"link": f"{c.link[0]}:{c.link[1]}", "rate_gbps": c.rate_gbps,
                    "delay_ns": c.delay_ns, "queue_packets": c.queue_packets}
                   for c in scenario.cables],
        "qos": {"trim_threshold": topo.qos.trim_threshold,
                "ecn_threshold": topo.qos.ecn_threshold},
        "mtu": scenario.mtu, "seed": scenario.seed, "duration_us": scenario.duration_us,
        "bin_us": scenario.bin_us,
        "workload": workload_json(w),
        "workloads": [workload_json(x) for x in scenario.workloads],
        "failures": [f.describe() for f in scenario.failures],
        "warnings": list(scenario.warnings),
        "profile": {"ev_count": scenario.profile.ev_count, "backups": scenario.profile.backups,
                    "ev_min_active": scenario.profile.ev_min_active},
    }


def workload_json(w: Workload) -> dict[str, object]:
    return {"kind": w.kind, "flow": w.label, "bytes": w.bytes, "nics": list(w.nics),
            "iterations": w.iterations, "start_us": w.start_us, "senders": list(w.senders),
            "receiver": w.receiver, "victim": list(w.victim) if w.victim else None,
            "victim_bytes": w.victim_bytes, "src": w.src, "dst": w.dst,
            "path": list(w.path) if w.path else None}


def report_json(scenario: Scenario, runs: Sequence[RunResult]) -> str:
    """Strict JSON: an infinite completion time is written "not done" (emulation/metrics.py),
    and a value JSON cannot carry stops here rather than be written as `Infinity`."""
    data = {"scenario": scenario_json(scenario),
            "modes": {run.mode: run.to_json() for run in runs}}
    return json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"


def write(scenario: Scenario, runs: Sequence[RunResult], out: Path) -> Path:
    """Write report.json, the plots and report.md into `out`; the path of report.md."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(report_json(scenario, runs), encoding="utf-8")
    plots.write(scenario, runs, out)
    md = out / "report.md"
    md.write_text(markdown(scenario, runs), encoding="utf-8")
    return md


INFINITE = "∞ (not done)"


def cell(value: object, unit: str = "") -> str:
    """A number as the report's tables show it ("—" for none, INFINITE for an infinite time:
    messages not delivered, emulation/metrics.py)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if value == math.inf:
        return INFINITE
    if isinstance(value, float):
        return f"{value:,.1f}{unit}"
    return f"{value:,}{unit}" if isinstance(value, int) else str(value)


def summary_table(runs: Sequence[RunResult]) -> str:
    rows = ["| mode | messages done | bytes lost | MCT p50 (µs) | MCT p99 (µs) | finish (µs) "
            "| victim MCT p50 (µs) | connections lost | retransmitted | peak retx (pkt/s) "
            "| trims | drops | to steady goodput (µs) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        s = run.summary()
        steady = ", ".join(cell(t["us"]) for t in s["time_to_steady_us"]) or "—"  # type: ignore[union-attr, index]
        lost = (f"{s['connections_lost']}/{s['connections']}" if run.connections else "—")
        rows.append(
            f"| {run.mode} | {s['completed']}/{s['messages']} | {cell(s['bytes_lost'])} "
            f"| {cell(s['mct_p50_us'])} | {cell(s['mct_p99_us'])} | "
            f"{cell(s['end_us']) if s['finished'] and not s['undelivered'] else 'not done'} | "
            f"{cell(s['victim_mct_p50_us'])} | {lost} | {cell(s.get('retransmitted'))} | "
            f"{cell(s['peak_retx_per_s'])} | {cell(s.get('trimmed'))} | "
            f"{cell(s.get('dropped'))} | {steady} |")
    return "\n".join(rows)


def connections_section(runs: Sequence[RunResult]) -> list[str]:
    """Every connection that did not finish, per mode (report.md's "Connections")."""
    lines = ["## Connections", ""]
    unfinished = [(run.mode, c) for run in runs for c in run.connections if c.fate != "done"]
    if not unfinished:
        return [*lines, "Every connection delivered everything it carried, in every mode.", ""]
    lines += ["| mode | connection | fate | at (µs) | retries | EVs out of service "
              "| undelivered messages | reason |", "|---|---|---|---|---|---|---|---|"]
    for mode, c in unfinished:
        fate = "gave up" if c.fate == "gave_up" else "still open at the end"
        evs = ", ".join(map(str, c.evs)) or "none"
        missing = ", ".join(map(str, c.undelivered)) or "none"
        lines.append(f"| {mode} | {c.src} -> {c.dst} (QP {c.qp:#x}) | {fate} | {cell(c.at_us)} "
                     f"| {c.retries} | {evs} | {missing} | {c.reason.replace('|', '/')} |")
    return [*lines, ""]


def drops_section(runs: Sequence[RunResult]) -> list[str]:
    """The drops of each mode by cause (only causes that dropped something; report.json has
    every cause and where)."""
    lines = ["## Drops by cause", ""]
    for run in runs:
        causes = [f"{cause} {n:,}" for cause, n in run.drops.items() if n]
        lines.append(f"- {run.mode}: " + ("; ".join(causes) if causes else "none"))
    return [*lines, ""]


def _workload_text(w: Workload) -> str:
    """One workload as the report's header names it."""
    where = f" {w.src} -> {w.dst}" if w.kind == "flow" else ""
    pinned = f" pinned to plane {w.path[0]}, T1 {w.path[1]}" if w.path else ""
    start = f" from {w.start_us:,} µs" if w.start_us else ""
    repeat = f" x {w.iterations}" if w.iterations > 1 else ""
    return f"{w.label}: {w.kind}{where}, {w.bytes:,} bytes{repeat}{pinned}{start}"


def markdown(scenario: Scenario, runs: Sequence[RunResult]) -> str:
    topo = scenario.topology
    cables = f" ({len(scenario.cables)} overridden)" if scenario.cables else ""
    lines = [
        f"# {scenario.name}", "",
        scenario.description or "", "",
        f"Fabric `{topo.name}`: {len(topo.switches)} switches, {len(topo.nics)} NICs, "
        f"{topo.planes} planes; every cable {scenario.links.rate_gbps:g} Gb/s, "
        f"{scenario.links.delay_ns} ns{cables}. Workload: "
        f"{'; '.join(_workload_text(w) for w in scenario.workloads)}. Seed {scenario.seed}. "
        "All times are virtual (the real P4 programs on softswitch, in discrete-event time).",
        "",
        "Failures: " + ("; ".join(f.describe() for f in scenario.failures) or "none") + ".", "",
        *(["**Warnings** (the scenario will not do all it says):", "",
           *(f"- {w}" for w in scenario.warnings), ""] if scenario.warnings else []),
        summary_table(runs), "",
        "MCT: message completion time, from posting a write to its last byte in the "
        "receiver's memory; a message not delivered intact took for ever, and percentiles "
        f"count it: \"{INFINITE}\" when more than 1 % of the messages (p99), or half of them "
        "(p50), were not delivered. Bytes lost: bytes of messages not delivered intact by the "
        "end. Connections lost: connections (one direction each) whose transport gave up, or "
        "that still owed messages at the end (below). Drops: every packet destroyed anywhere, "
        "in the programs or outside them (by cause below). "
        "To steady goodput: from each failure until the fabric-wide goodput is back to 90 % of "
        "what it was before (emulation/metrics.py); — when it was not before the workload "
        "ended (a collective's last steps, waiting on stragglers, carry less).", "",
        *connections_section(runs),
        *drops_section(runs),
    ]
    titles = {"goodput": "Goodput, all receiving NICs and each (failures and lost "
                         "connections marked)",
              "mct_cdf": "Message completion time CDF (over every message: one not "
                         "delivered keeps its mode below 1)",
              "plane_load": "Load per plane and direction (T0→T1 up, T1→T0 down) against "
                            "the plane's capacity",
              "ev_states": "EVs per state, as a fraction of each mode's EVs (SKIP and "
                           "ASSUMED_BAD: time spent in them, from every state change)",
              "losses": "Trims, retransmissions and drops by cause"}
    for name in PLOTS:
        lines += [f"## {titles[name]}", "", f"![{name}]({name}.png)", ""]
    return "\n".join(lines)

