"""The report of a scenario run in one or more modes: `report.json` (every number, in virtual
time only, so the same scenario and seed give the same bytes), PNG plots and `report.md`, one
page that embeds them under the summary table."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from emulation.metrics import RunResult
from emulation.scenario import Scenario

PLOTS = ("goodput", "mct_cdf", "plane_load", "ev_states", "losses")
Lines = list[tuple[object, list[int]]]   # (label, a value per bin)


def scenario_json(scenario: Scenario) -> dict[str, object]:
    topo = scenario.topology
    w = scenario.workload
    return {
        "name": scenario.name, "description": scenario.description,
        "topology": {"name": topo.name, "planes": topo.planes, "switches": len(topo.switches),
                     "nics": len(topo.nics)},
        "links": {"rate_gbps": scenario.links.rate_gbps, "delay_ns": scenario.links.delay_ns},
        "mtu": scenario.mtu, "seed": scenario.seed, "duration_us": scenario.duration_us,
        "bin_us": scenario.bin_us,
        "workload": {"kind": w.kind, "bytes": w.bytes, "nics": list(w.nics),
                     "iterations": w.iterations, "senders": list(w.senders),
                     "receiver": w.receiver, "victim": list(w.victim) if w.victim else None,
                     "victim_bytes": w.victim_bytes},
        "failures": [f.describe() for f in scenario.failures],
        "profile": {"ev_count": scenario.profile.ev_count, "backups": scenario.profile.backups,
                    "ev_min_active": scenario.profile.ev_min_active},
    }


def report_json(scenario: Scenario, runs: Sequence[RunResult]) -> str:
    data = {"scenario": scenario_json(scenario),
            "modes": {run.mode: run.to_json() for run in runs}}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def write(scenario: Scenario, runs: Sequence[RunResult], out: Path) -> Path:
    """Write report.json, the plots and report.md into `out`; the path of report.md."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(report_json(scenario, runs), encoding="utf-8")
    _plots(scenario, runs, out)
    md = out / "report.md"
    md.write_text(markdown(scenario, runs), encoding="utf-8")
    return md


def cell(value: object, unit: str = "") -> str:
    """A number as the report's tables show it ("—" for none)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:,.1f}{unit}"
    return f"{value:,}{unit}" if isinstance(value, int) else str(value)


def summary_table(runs: Sequence[RunResult]) -> str:
    rows = ["| mode | messages done | bytes lost | MCT p50 (µs) | MCT p99 (µs) | finish (µs) "
            "| victim MCT p50 (µs) | retransmitted | peak retx (pkt/s) | trims | drops "
            "| to steady goodput (µs) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        s = run.summary()
        steady = ", ".join(cell(t["us"]) for t in s["time_to_steady_us"]) or "—"  # type: ignore[union-attr, index]
        rows.append(
            f"| {run.mode} | {s['completed']}/{s['messages']} | {cell(s['bytes_lost'])} "
            f"| {cell(s['mct_p50_us'])} | {cell(s['mct_p99_us'])} | "
            f"{cell(s['end_us']) if s['finished'] else 'not done'} | "
            f"{cell(s['victim_mct_p50_us'])} | {cell(s['retransmitted'])} | "
            f"{cell(s['peak_retx_per_s'])} | {cell(s['trimmed'])} | {cell(s['dropped'])} | "
            f"{steady} |")
    return "\n".join(rows)


def markdown(scenario: Scenario, runs: Sequence[RunResult]) -> str:
    topo = scenario.topology
    w = scenario.workload
    lines = [
        f"# {scenario.name}", "",
        scenario.description or "", "",
        f"Fabric `{topo.name}`: {len(topo.switches)} switches, {len(topo.nics)} NICs, "
        f"{topo.planes} planes; every cable {scenario.links.rate_gbps:g} Gb/s, "
        f"{scenario.links.delay_ns} ns. Workload: {w.kind}, {w.bytes:,} bytes"
        f"{f' x {w.iterations}' if w.iterations > 1 else ''}. Seed {scenario.seed}. "
        "All times are virtual (the real P4 programs on softswitch, in discrete-event time).",
        "",
        "Failures: " + ("; ".join(f.describe() for f in scenario.failures) or "none") + ".", "",
        summary_table(runs), "",
        "MCT: message completion time, from posting a write to its last byte in the "
        "receiver's memory. Bytes lost: bytes of messages not delivered intact by the end. "
        "To steady goodput: from each failure until the fabric-wide goodput is back to 90 % of "
        "what it was before (emulation/metrics.py); — when it was not before the workload "
        "ended (a collective's last steps, waiting on stragglers, carry less).", "",
    ]
    titles = {"goodput": "Goodput per receiving NIC (failures marked)",
              "mct_cdf": "Message completion time CDF",
              "plane_load": "Load per plane (T0-T1 cables)",
              "ev_states": "EV states over time",
              "losses": "Trims, retransmissions and drops"}
    for name in PLOTS:
        lines += [f"## {titles[name]}", "", f"![{name}]({name}.png)", ""]
    return "\n".join(lines)


def _plots(scenario: Scenario, runs: Sequence[RunResult], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def grid(title: str):  # type: ignore[no-untyped-def]
        fig, axes = plt.subplots(len(runs), 1, figsize=(8, 2.2 * len(runs) + 0.6),
                                 sharex=True, squeeze=False)
        fig.suptitle(title)
        return fig, [a[0] for a in axes]

    def times(n: int, bin_us: int) -> list[float]:
        return [k * bin_us for k in range(n)]

    def marks(ax, run: RunResult) -> None:  # type: ignore[no-untyped-def]
        for at, _ in run.failures:
            ax.axvline(at, color="red", linestyle="--", linewidth=0.8)

    def save(fig, name: str) -> None:  # type: ignore[no-untyped-def]
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=90)
        plt.close(fig)

    gbps = 8 / (scenario.bin_us * 1e3)   # bytes per bin -> Gb/s

    def lines_per_mode(name: str, title: str, lines: Callable[[RunResult], Lines],
                       scale: float = 1.0) -> None:
        """One panel per mode, a line per (label, rows) of `lines(run)`, failures marked."""
        fig, axes = grid(title)
        for ax, run in zip(axes, runs, strict=True):
            shown = lines(run)
            for label, rows in shown:
                ax.plot(times(len(rows), run.series.bin_us), [v * scale for v in rows],
                        label=label, linewidth=0.9)
            marks(ax, run)
            ax.set_ylabel(run.mode)
            if 0 < len(shown) <= 8:
                ax.legend(fontsize=6, loc="upper right")
        axes[-1].set_xlabel("virtual time (µs)")
        save(fig, name)

    lines_per_mode("goodput", "Goodput per receiving NIC (Gb/s)",
                   lambda run: sorted(run.series.goodput_bytes.items()), gbps)
    lines_per_mode("plane_load", "Load per plane on T0-T1 cables (Gb/s)",
                   lambda run: [(f"plane {p}", rows)
                                for p, rows in sorted(run.series.plane_bytes.items())], gbps)
    lines_per_mode("ev_states", "EVs per state (all NICs' connections)",
                   lambda run: sorted(run.series.ev_states.items()))
    lines_per_mode("losses", "Packets per bin",
                   lambda run: [("retransmitted", run.series.retransmitted),
                                ("trimmed", run.series.trimmed),
                                ("dropped", run.series.dropped)])

    fig, ax = plt.subplots(figsize=(6, 4))
    for run in runs:
        values = run.completion_times()
        if values:
            ax.step(values, [(k + 1) / len(values) for k in range(len(values))], where="post",
                    label=run.mode)
    ax.set_xlabel("message completion time (µs)")
    ax.set_ylabel("fraction of messages")
    ax.legend()
    save(fig, "mct_cdf")
