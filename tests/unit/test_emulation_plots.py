"""The report's plots (emulation/plots.py) and what they show (emulation/plot_data.py): the
shared time span, EV fractions, the completion-time CDF with the undelivered counted, the
planes' capacity; and PNGs of a hand-built run with failures and a lost connection, whose
legends name them."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from emulation import plot_data, plots
from emulation.metrics import ConnectionFate, MessageRecord, RunResult, Series
from emulation.scenario import CableOverride, Links, load

ROOT = Path(__file__).resolve().parents[2]
TINY_RING = ROOT / "tests" / "scenarios" / "tiny-ring.yaml"
CUT = "link_down p0-t0-0:2 at 120 µs"
MENDED = "link_up p0-t0-0:2 at 300 µs"


def message(mid: int, posted: float | None, arrived: float | None, intact: bool = True,
            flow: str = "main") -> MessageRecord:
    return MessageRecord(mid, "nic1", "nic0", 1000, flow, posted, arrived, intact)


def run_with_trouble(mode: str = "mrc", evs: int = 160) -> RunResult:
    """Ten bins of 50 µs, a cut cable and its mending, one connection given up at 260 µs,
    two of five messages not delivered (one never arrived, one arrived corrupt)."""
    bins = 10
    series = Series(50)
    series.goodput_bytes = {"nic0": [6000 * (k % 4) for k in range(bins)],
                            "nic2": [3000] * bins}
    series.plane_up_bytes = {0: [50_000] * bins, 1: [20_000 * (k % 3) for k in range(bins)]}
    series.plane_down_bytes = {0: [45_000] * bins, 1: [10_000] * bins}
    series.plane_bytes = {p: [u + d for u, d in zip(series.plane_up_bytes[p],
                                                    series.plane_down_bytes[p], strict=True)]
                          for p in (0, 1)}
    series.retransmitted = [0, 0, 3, 9, 4, 0, 0, 1, 0, 0]
    series.trimmed = [0, 1, 2, 0, 0, 0, 0, 0, 0, 0]
    series.drops = {"cut cable": [0, 0, 7, 2, 0, 0, 0, 0, 0, 0],
                    "egress queue full": [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]}
    series.dropped = [a + b for a, b in zip(*series.drops.values(), strict=True)]
    bad = [0, 0, 0, 8, 8, 8, 4, 4, 4, 4]
    series.ev_states = {"GOOD": [evs - b for b in bad], "SKIP": [0] * bins,
                        "ASSUMED_BAD": bad, "DENIED": [0] * bins}
    series.ev_time_ns = {"SKIP": [0, 0, 40_000, 9_000, 0, 0, 0, 0, 0, 0],
                         "ASSUMED_BAD": [b * 50_000 for b in bad]}
    messages = [message(0, 0.0, 40.0), message(1, 0.0, 95.0), message(2, 10.0, 310.0),
                message(3, 10.0, None), message(4, 20.0, 200.0, intact=False)]
    connections = [ConnectionFate("nic1", "nic0", 256, "gave_up", 260.0, 7, (3,), "retries"),
                   ConnectionFate("nic2", "nic0", 257, "done"),
                   ConnectionFate("nic3", "nic0", 258, "open")]
    return RunResult(mode, 480.0, False, messages, series, {},
                     [(120.0, CUT), (300.0, MENDED)], [], connections)


def test_the_time_span_is_the_workloads_plus_a_margin_and_shared() -> None:
    early = RunResult("ecmp", 400.0, True, [message(0, 30.0, 400.0)], Series(50), {}, [])
    late = RunResult("mrc", 1800.0, False, [message(0, 35.0, None)], Series(50), {}, [])
    lo, hi = plot_data.time_span([early, late], 50)
    margin = (1800.0 - 30.0) * plot_data.MARGIN
    assert (lo, hi) == pytest.approx((30.0 - margin, 1800.0 + margin))
    # a short workload: the margin is a bin at least
    assert plot_data.time_span([early], 50) == (30.0 - 50, 400.0 + 50)
    # nothing posted: from 0
    assert plot_data.time_span([RunResult("x", 90.0, False, [], Series(50), {}, [])], 50)[0] < 0


def test_ev_fractions_normalise_by_each_modes_evs() -> None:
    mrc, ecmp = run_with_trouble("mrc", 160), run_with_trouble("ecmp", 8)
    ecmp.series.ev_states = {"GOOD": [8, 6, 8], "SKIP": [0, 2, 0], "ASSUMED_BAD": [0, 0, 0]}
    assert plot_data.ev_total(mrc.series) == 160 and plot_data.ev_total(ecmp.series) == 8
    assert plot_data.ev_fractions(ecmp.series)["SKIP"] == [0.0, 0.25, 0.0]
    assert plot_data.ev_fractions(mrc.series)["ASSUMED_BAD"][3] == 8 / 160
    # time-averaged: EV-ns over (EVs x the bin); the last bin only up to the run's end
    timed = plot_data.ev_time_fractions(mrc.series, mrc.end_us)
    assert timed["SKIP"][2] == 40_000 / (160 * 50_000)
    assert timed["ASSUMED_BAD"][3] == 8 / 160
    assert timed["ASSUMED_BAD"][9] == 4 * 50_000 / (160 * 30_000)   # 450..480 µs
    assert plot_data.ev_fractions(Series(50)) == {}


def test_the_cdf_counts_the_undelivered_as_never_completing() -> None:
    run = run_with_trouble()
    times, total = run.cdf("main")   # what the CDF plot draws
    assert times == [40.0, 95.0, 300.0] and total == 5   # one missing, one corrupt
    run.messages.append(message(5, 0.0, 60.0, flow="victim"))
    assert run.cdf("victim") == ([60.0], 1)
    assert plot_data.flows([run]) == ["main", "victim"]


def test_a_repeated_failure_is_one_legend_entry() -> None:
    events = [(340.0, "flap p0-t0-0:2 down (3 of 3)"), (100.0, "flap p0-t0-0:2 down (1 of 3)"),
              (220.0, "flap p0-t0-0:2 down (2 of 3)"), (150.0, "loss p1-t0-0:2 5% at 150 µs")]
    assert plot_data.failure_groups(events) == [
        ("flap p0-t0-0:2 down", "flap p0-t0-0:2 down x3 (100-340 µs)", [100.0, 220.0, 340.0]),
        ("loss p1-t0-0:2 5% at 150 µs", "loss p1-t0-0:2 5% at 150 µs", [150.0])]
    runs = [run_with_trouble("mrc"), run_with_trouble("ecmp")]
    runs[0].failures = [(20.0, "early"), (120.0, CUT)]
    runs[1].failures = [(120.0, CUT), (9000.0, "after the span")]
    assert plot_data.failures_in(runs, (0.0, 500.0)) == [(20.0, "early"), (120.0, CUT)]


def test_plane_capacity_adds_the_planes_uplinks_with_cable_overrides() -> None:
    scenario = load(TINY_RING)
    rate = scenario.links.rate_gbps
    assert plot_data.plane_capacity_gbps(scenario) == {0: 4 * rate, 1: 4 * rate}
    # one cable of plane 0 faster (named by its T0 end), one of plane 1 slower (its T1 end)
    custom = dataclasses.replace(
        scenario, links=Links(rate_gbps=10.0),
        cables=(CableOverride(link=("p0-t0-0", 2), rate_gbps=25.0),
                CableOverride(link=("p1-t1-1", 1), rate_gbps=1.0),
                CableOverride(link=("p0-t0-1", 3), rate_gbps=None)))
    assert plot_data.plane_capacity_gbps(custom) == {0: 55.0, 1: 31.0}


def test_the_plots_name_failures_and_lost_connections(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = load(TINY_RING)
    runs = [run_with_trouble("mrc"), run_with_trouble("ecmp", 8)]
    runs[1].failures = [(120.0, CUT)]   # the same failure seen by both: one legend entry
    legends: dict[str, list[str]] = {}
    limits: dict[str, set[tuple[float, float]]] = {}
    save = plots._Figures.save

    def keep(self: Any, fig: Any, name: str) -> None:
        legends[name] = [t.get_text() for ax in fig.axes if ax.get_legend()
                         for t in ax.get_legend().get_texts()]
        limits[name] = {ax.get_xlim() for ax in fig.axes}
        save(self, fig, name)

    monkeypatch.setattr(plots._Figures, "save", keep)
    plots.write(scenario, runs, tmp_path)

    for name in plots.PLOTS:
        png = tmp_path / f"{name}.png"
        assert png.stat().st_size > 10_000, name
        import matplotlib.image

        pixels = matplotlib.image.imread(png)
        assert pixels.shape[0] > 300 and pixels.shape[1] > 500
        assert pixels.std() > 0.05, f"{name}.png is blank"
    span = plot_data.time_span(runs, scenario.bin_us)
    for name in ("goodput", "plane_load", "ev_states", "losses"):
        assert limits[name] == {span}, name   # every panel: the same span
        joined = " ".join(legends[name]).replace("\n", " ")
        assert CUT in joined and MENDED in joined, name
        assert joined.count(CUT) == 1, name
    goodput = " ".join(legends["goodput"]).replace("\n", " ")
    assert "connection lost: nic1→nic0 (retries)" in goodput
    assert "1 connection still open at the end" in goodput
    assert "run stopped (not finished)" in goodput
    assert "dropped: cut cable" in legends["losses"]
    assert "a plane's capacity (40 Gb/s)" in legends["plane_load"]
    assert {"mrc (160 EVs)", "ecmp (8 EVs)"} <= set(legends["ev_states"])
    assert "mrc: 2 of 5 not delivered" in legends["mct_cdf"]


def test_a_cdf_of_nothing_delivered_still_says_so(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run = run_with_trouble()
    run.messages = [message(0, 0.0, None), message(1, 0.0, None)]
    got: list[str] = []
    save = plots._Figures.save

    def keep(self: Any, fig: Any, name: str) -> None:
        if name == "mct_cdf":
            got.extend(t.get_text() for t in fig.axes[0].get_legend().get_texts())
        save(self, fig, name)

    monkeypatch.setattr(plots._Figures, "save", keep)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots._Figures(load(TINY_RING), [run], tmp_path, plt).mct_cdf()
    assert got == ["mrc: 2 of 2 not delivered"]
    assert (tmp_path / "mct_cdf.png").stat().st_size > 5_000
    assert math.isfinite(plot_data.time_span([run], 50)[1])
