"""The report's PNG plots (`write`): goodput, the message completion time CDF, plane load per
direction, EV states, losses. The time plots of a figure share one x-range, the workload's
span (emulation/plot_data.py), and mark the failures within it, each named in the legend;
per-bin values are drawn as steps over their bins, the last bin ending at the run's end."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from emulation import plot_data
from emulation.metrics import RunResult
from emulation.scenario import Scenario

PLOTS = ("goodput", "mct_cdf", "plane_load", "ev_states", "losses")
MODE_COLORS = {"ecmp": "tab:blue", "spray": "tab:orange", "mrc": "tab:green",
               "mrc_no_controller": "tab:purple"}
FAILURE_STYLES = (("red", "--"), ("darkorange", ":"), ("magenta", "-."), ("saddlebrown", "--"),
                  ("black", ":"), ("crimson", "-."))
CAUSE_COLORS = ("tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan",
                "tab:gray")   # no red: the failures' lines are
FAILURE_LABELS = 8      # failures named in a legend; more are drawn and counted in one entry
LOST_LABELS = 3         # lost connections named one by one; more in one entry
DPI = 90
PANEL_HEIGHT = 2.1
WIDTH = 11.0
# The EV-state rows: (state, how it is measured, the series it comes from)
EV_ROWS = (("GOOD", "at each bin's end", "sampled"),
           ("SKIP", "time-averaged over each bin (every ev_state write)", "timed"),
           ("ASSUMED_BAD", "time-averaged over each bin (every ev_state write)", "timed"),
           ("DENIED", "at each bin's end (the controller's deny entries)", "sampled"))


def write(scenario: Scenario, runs: Sequence[RunResult], out: Path) -> None:
    """Write PLOTS as `out`/NAME.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = _Figures(scenario, runs, out, plt)
    figures.goodput()
    figures.mct_cdf()
    figures.plane_load()
    figures.ev_states()
    figures.losses()


def _wrap(text: str, width: int = 34) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def mode_color(mode: str, k: int) -> str:
    return MODE_COLORS.get(mode, f"C{k % 10}")


def mode_width(k: int, modes: int) -> float:
    """Line width of the k-th of `modes` modes on one axes: the first widest, so modes with
    the same values show as nested lines rather than the last one alone."""
    return 1.0 + 0.6 * (modes - 1 - k)


class _Figures:
    def __init__(self, scenario: Scenario, runs: Sequence[RunResult], out: Path,
                 plt: Any) -> None:
        self.scenario = scenario
        self.runs = list(runs)
        self.out = out
        self.plt = plt
        self.bin_us = scenario.bin_us
        self.span = plot_data.time_span(self.runs, self.bin_us)
        self.failures = plot_data.failure_groups(plot_data.failures_in(self.runs, self.span))
        self.gbps = 8 / (self.bin_us * 1e3)   # bytes per bin -> Gb/s

    # -- shared pieces ---------------------------------------------------------------------

    def grid(self, title: str, rows: int, cols: int = 1, *, sharey: bool = False) -> Any:
        fig, axes = self.plt.subplots(rows, cols, figsize=(WIDTH, PANEL_HEIGHT * rows + 0.8),
                                      sharex=True, sharey=sharey, squeeze=False)
        fig.suptitle(title)
        for ax in axes.flat:
            ax.set_xlim(*self.span)
            ax.grid(True, linewidth=0.3, alpha=0.5)
        for ax in axes[-1]:
            ax.set_xlabel("virtual time (µs)")
        return fig, axes

    def mark_failures(self, ax: Any, run: RunResult | None, named: set[int] | None) -> None:
        """The failures `run` saw (None: any run) as vertical lines, each failure in its own
        style throughout the figure; those not in `named` yet are named in this panel's
        legend (and added to it; None: none named here)."""
        seen = {(at, plot_data.failure_key(what)) for at, what in
                plot_data.failures_in(self.runs if run is None else [run], self.span)}
        for g, (key, label, times) in enumerate(self.failures):
            mine = [at for at in times if (at, key) in seen]
            if not mine:
                continue
            color, style = FAILURE_STYLES[g % len(FAILURE_STYLES)]
            name = None
            if named is not None and g not in named and g <= FAILURE_LABELS:
                named.add(g)
                name = (_wrap(label) if g < FAILURE_LABELS
                        else f"and {len(self.failures) - FAILURE_LABELS} more failures")
            for at in mine:
                ax.axvline(at, color=color, linestyle=style, linewidth=1.1, label=name,
                           zorder=4)
                name = None

    @staticmethod
    def mark_end(ax: Any, run: RunResult, color: str = "grey", named: bool = False) -> None:
        """Where a run that did not finish stopped (`named`: the mode in the label)."""
        if not run.finished:
            ax.axvline(run.end_us, color=color, linestyle=(0, (1, 3)), linewidth=1.0,
                       label=f"{run.mode + ': ' if named else ''}run stopped (not finished)")

    def steps(self, ax: Any, run: RunResult, rows: Sequence[float], scale: float = 1.0,
              **style: Any) -> None:
        """Per-bin values as steps over their bins, up to the run's end."""
        if not rows:
            return
        bins = min(len(rows), plot_data.bins_run(run.series, run.end_us))
        xs = plot_data.step_xs(bins, run.series.bin_us, run.end_us)
        ys = [v * scale for v in rows[:bins]]
        ax.step(xs, [*ys, ys[-1]], where="post", **style)

    @staticmethod
    def legend(ax: Any) -> None:
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      borderaxespad=0.0, frameon=False)

    def save(self, fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(self.out / f"{name}.png", dpi=DPI, bbox_inches="tight")
        self.plt.close(fig)

    # -- the figures -----------------------------------------------------------------------

    def goodput(self) -> None:
        fig, axes = self.grid("Goodput (Gb/s): every receiving NIC together, and each alone",
                              len(self.runs), sharey=True)
        named: set[int] = set()
        for row, run in zip(axes, self.runs, strict=True):
            ax = row[0]
            for n, (_nic, rows) in enumerate(sorted(run.series.goodput_bytes.items())):
                self.steps(ax, run, rows, self.gbps, linewidth=0.6, alpha=0.5, color=f"C{n % 10}",
                           label="each receiving NIC" if n == 0 else None)
            self.steps(ax, run, run.series.goodput_total(), self.gbps, linewidth=1.6,
                       color="black", label="all receiving NICs")
            self.mark_failures(ax, run, named)
            self.mark_lost(ax, run)
            self.mark_end(ax, run)
            ax.set_ylabel(f"{run.mode}\nGb/s")
            self.legend(ax)
        axes[0][0].set_ylim(bottom=0)   # shared: after every mode's data is in
        self.save(fig, "goodput")

    def mark_lost(self, ax: Any, run: RunResult) -> None:
        """A cross on the time axis where a connection was given up, and a ring at the end for
        those still open then."""
        lost = plot_data.lost_connections(run)
        for k, (at, what) in enumerate(lost):
            label = (f"connection lost: {what}" if len(lost) <= LOST_LABELS
                     else f"{len(lost)} connections lost" if k == 0 else None)
            ax.plot([at], [0], marker="X", markersize=9, color="red", linestyle="none",
                    clip_on=False, zorder=6, label=label and _wrap(label))
        still = sum(c.fate == "open" for c in run.connections)
        if still:
            ax.plot([run.end_us], [0], marker="o", markersize=8, markerfacecolor="none",
                    color="red", linestyle="none", clip_on=False, zorder=6,
                    label=f"{still} connection{'s' if still > 1 else ''} still open at the end")

    def plane_load(self) -> None:
        fig, axes = self.grid("Load per plane on the T0-T1 cables (Gb/s), each direction",
                              len(self.runs), 2, sharey=True)
        capacity = plot_data.plane_capacity_gbps(self.scenario)
        axes[0][0].set_title("T0 → T1 (up)", fontsize=9)
        axes[0][1].set_title("T1 → T0 (down)", fontsize=9)
        named: set[int] = set()
        for k, (row, run) in enumerate(zip(axes, self.runs, strict=True)):
            for col, (ax, ways) in enumerate(zip(row, (run.series.plane_up_bytes,
                                                       run.series.plane_down_bytes),
                                                 strict=True)):
                top = k == 0 and col == 1   # planes and capacity named here only
                for plane, rows in sorted(ways.items()):
                    self.steps(ax, run, rows, self.gbps, linewidth=0.9, color=f"C{plane % 10}",
                               label=f"plane {plane}" if top else None)
                self.capacity_lines(ax, capacity, top)
                self.mark_failures(ax, run, named if col == 1 else None)
                self.mark_end(ax, run)
                if col == 1:
                    self.legend(ax)
            row[0].set_ylabel(f"{run.mode}\nGb/s")
        axes[0][0].set_ylim(bottom=0)   # shared: after every mode's data is in
        self.save(fig, "plane_load")

    @staticmethod
    def capacity_lines(ax: Any, capacity: dict[int, float], labelled: bool) -> None:
        if len(set(capacity.values())) == 1:
            gbps = next(iter(capacity.values()))
            ax.axhline(gbps, color="black", linestyle=":", linewidth=1.0,
                       label=f"a plane's capacity ({gbps:g} Gb/s)" if labelled else None)
            return
        for plane, gbps in capacity.items():
            ax.axhline(gbps, color=f"C{plane % 10}", linestyle=":", linewidth=1.0,
                       label=f"plane {plane} capacity ({gbps:g} Gb/s)" if labelled else None)

    def ev_states(self) -> None:
        fig, axes = self.grid("EVs per state, as a fraction of each mode's EVs "
                              "(every NIC's connections)", len(EV_ROWS))
        for r, (row, (state, how, source)) in enumerate(zip(axes, EV_ROWS, strict=True)):
            ax = row[0]
            shown: list[float] = []
            for k, run in enumerate(self.runs):
                rows = (plot_data.ev_time_fractions(run.series, run.end_us).get(state)
                        if source == "timed" else None)
                if rows is None:
                    rows = plot_data.ev_fractions(run.series).get(state, [])
                shown += rows[:plot_data.bins_run(run.series, run.end_us)]
                self.steps(ax, run, rows, linewidth=mode_width(k, len(self.runs)),
                           color=mode_color(run.mode, k),
                           label=(f"{run.mode} ({plot_data.ev_total(run.series):,} EVs)"
                                  if r == 0 else None))
                if r == 0:
                    self.mark_end(ax, run, mode_color(run.mode, k), named=True)
            self.mark_failures(ax, None, set() if r == 0 else None)
            ax.set_title(f"{state}: {how}", fontsize=8, loc="left")
            ax.set_ylabel("fraction")
            if state == "GOOD":   # near 1: zoom on the dip, at least 5 % of the axis
                dip = max(0.05, (1.0 - min(shown, default=1.0)) * 1.2)
                ax.set_ylim(max(-0.02, 1.0 - dip), 1.005)
            else:
                ax.set_ylim(0, max(max(shown, default=0.0) * 1.15, 0.01))
                if not any(shown):
                    ax.text(0.99, 0.92, f"no EV in {state} in any mode", transform=ax.transAxes,
                            ha="right", va="top", fontsize=8, color="dimgrey", zorder=5,
                            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8})
            if r == 0:
                self.legend(ax)
        self.save(fig, "ev_states")

    def losses(self) -> None:
        causes = sorted({c for run in self.runs for c in run.series.drops})
        fig, axes = self.grid("Packets per bin: retransmitted, trimmed, dropped (each cause)",
                              len(self.runs), sharey=True)
        named: set[int] = set()
        for row, run in zip(axes, self.runs, strict=True):
            ax = row[0]
            s = run.series
            self.steps(ax, run, s.retransmitted, linewidth=1.1, color="tab:blue",
                       label="retransmitted")
            self.steps(ax, run, s.trimmed, linewidth=1.1, color="tab:orange",
                       label="trimmed (reached a NIC)")
            self.steps(ax, run, s.dropped, linewidth=1.6, color="black", label="dropped (all)")
            for c, cause in enumerate(causes):
                rows = s.drops.get(cause, [])
                if any(rows):
                    self.steps(ax, run, rows, linewidth=0.9, linestyle="--",
                               color=CAUSE_COLORS[c % len(CAUSE_COLORS)],
                               label=f"dropped: {cause}")
            self.mark_failures(ax, run, named)
            self.mark_end(ax, run)
            ax.set_ylabel(f"{run.mode}\npackets")
            self.legend(ax)
        axes[0][0].set_ylim(bottom=0)   # shared: after every mode's data is in
        self.save(fig, "losses")

    def mct_cdf(self) -> None:
        fig, ax = self.plt.subplots(figsize=(8.5, 4.6))
        flows = plot_data.flows(self.runs)
        styles = ("-", "--", ":", "-.")
        every = [t for run in self.runs for f in flows
                 for t in run.cdf(f)[0]]
        right = max(every, default=1.0)
        log = bool(every) and right / max(min(every), 1e-3) > 20
        right = right * (1.6 if log else 1.08)
        for k, run in enumerate(self.runs):
            for f, flow in enumerate(flows):
                times, total = run.cdf(flow)
                if not total:
                    continue
                missing = total - len(times)
                label = run.mode + (f" ({flow})" if flow != "main" else "")
                if missing:
                    label += f": {missing} of {total} not delivered"
                color, style = mode_color(run.mode, k), styles[f % len(styles)]
                ys = [(n + 1) / total for n in range(len(times))]
                if times:
                    width = mode_width(k, len(self.runs))
                    ax.step([times[0], *times], [0.0, *ys], where="post", color=color,
                            linestyle=style, linewidth=width, label=label)
                    if missing:   # never reaches 1: the undelivered are at infinity
                        ax.plot([times[-1], right], [ys[-1], ys[-1]], color=color,
                                linestyle=style, linewidth=width)
                        ax.plot([right], [ys[-1]], marker=">", color=color, clip_on=False)
                else:
                    ax.plot([], [], color=color, linestyle=style, label=label)
        ax.axhline(1.0, color="grey", linewidth=0.5)
        if log:
            ax.set_xscale("log")
        ax.set_xlim(right=right)
        ax.set_ylim(0, 1.03)
        ax.grid(True, linewidth=0.3, alpha=0.5)
        ax.set_xlabel("message completion time (µs)" + (", log scale" if log else ""))
        ax.set_ylabel("fraction of all messages")
        ax.set_title("Message completion time CDF (an undelivered message never completes)",
                     fontsize=10)
        self.legend(ax)
        self.save(fig, "mct_cdf")
