"""What the report's plots show, computed apart from drawing them (emulation/plots.py): the time
span every time plot of a figure shares, EV counts as fractions of a mode's EVs, the message
flows, the planes' capacity, the failures to mark (the completion-time CDF, with undelivered
messages counted, is `RunResult.cdf`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from controller.topology.model import Tier
from emulation.metrics import RunResult, Series
from emulation.scenario import Scenario

MARGIN = 0.04   # of the span, on each side (one bin at least)


def time_span(runs: Sequence[RunResult], bin_us: int) -> tuple[float, float]:
    """The x-range (µs) of a figure's time plots: from the first posting to the last arrival
    (or the end of a run that did not finish: `end_us` is either) over every mode, plus a
    margin on each side."""
    posted = [m.posted_us for run in runs for m in run.messages if m.posted_us is not None]
    start = min(posted, default=0.0)
    end = max((run.end_us for run in runs), default=0.0)
    end = max(end, start + bin_us)
    margin = max(bin_us, (end - start) * MARGIN)
    return start - margin, end + margin


def bins_run(series: Series, end_us: float) -> int:
    """How many of the series' bins the run reached (the last one maybe in part)."""
    return max(1, math.ceil(end_us / series.bin_us))


def step_xs(bins: int, bin_us: int, end_us: float) -> list[float]:
    """Bin edges for a step plot of `bins` bins (values at bin starts, `where="post"`), the
    last edge at the run's end."""
    return [k * bin_us for k in range(bins)] + [min(bins * bin_us, max(end_us, 0.0))]


def ev_total(series: Series) -> int:
    """The mode's EVs in use (all NICs, all connections): what the bin-end states add up to."""
    rows = list(series.ev_states.values())
    bins = max((len(r) for r in rows), default=0)
    return max((sum(r[k] for r in rows if k < len(r)) for k in range(bins)), default=0)


def ev_fractions(series: Series) -> dict[str, list[float]]:
    """Each state's EVs at each bin's end as a fraction of the mode's EVs."""
    total = ev_total(series)
    if total == 0:
        return {}
    return {state: [n / total for n in rows] for state, rows in series.ev_states.items()}


def ev_time_fractions(series: Series, end_us: float) -> dict[str, list[float]]:
    """The time-averaged fraction of the mode's EVs in each state of `series.ev_time_ns`, per
    bin: EV-ns in the state over (EVs x the bin's length; the last bin's up to the run's
    end)."""
    total = ev_total(series)
    if total == 0:
        return {}
    bin_ns = series.bin_us * 1000
    end_ns = round(end_us * 1000)
    out: dict[str, list[float]] = {}
    for state, rows in series.ev_time_ns.items():
        fractions = []
        for k, ev_ns in enumerate(rows):
            width = min(bin_ns, end_ns - k * bin_ns)
            fractions.append(ev_ns / (total * width) if width > 0 else 0.0)
        out[state] = fractions
    return out


def flows(runs: Sequence[RunResult]) -> list[str]:
    """The message flows of the runs: "main" first, then the others by name."""
    names = {m.flow for run in runs for m in run.messages}
    return sorted(names, key=lambda f: (f != "main", f))


def plane_capacity_gbps(scenario: Scenario) -> dict[int, float]:
    """Per plane, the line rates of its T0 -> T1 cables added up (Gb/s; T1 -> T0 the same:
    a cable's rate is both ways): `links.rate_gbps`, or a cable's own from `cables`."""
    topology = scenario.topology
    tiers = {s.name: (s.tier, s.plane) for s in topology.switches}
    capacity: dict[int, float] = {}
    for link in topology.iter_links():
        a, b = tiers.get(link.a), tiers.get(link.b)
        if a is None or b is None or {a[0], b[0]} != {Tier.T0, Tier.T1}:
            continue
        rate, _ = scenario.cable_rate_delay((link.a, link.a_port), (link.b, link.b_port))
        capacity[a[1]] = capacity.get(a[1], 0.0) + rate
    return dict(sorted(capacity.items()))


def failures_in(runs: Sequence[RunResult], span: tuple[float, float]) -> list[tuple[float, str]]:
    """Every distinct failure event of the runs within `span`, in time order."""
    seen = {(at, what) for run in runs for at, what in run.failures if span[0] <= at <= span[1]}
    return sorted(seen)


_NTH = re.compile(r"\s*\(\d+ of \d+\)$")   # "... (k of N)": one event of a repeated failure


def failure_key(what: str) -> str:
    """The failure an event belongs to: its description without "(k of N)"."""
    return _NTH.sub("", what)


def failure_groups(events: Sequence[tuple[float, str]]) -> list[tuple[str, str, list[float]]]:
    """One legend entry per failure: (key, label, times), a repeated failure's events (a
    flap's cuts) together, in the order of their first event."""
    groups: dict[str, list[tuple[float, str]]] = {}
    for at, what in sorted(events):
        groups.setdefault(failure_key(what), []).append((at, what))
    out = []
    for key, mine in groups.items():
        times = [at for at, _ in mine]
        label = (mine[0][1] if len(mine) == 1
                 else f"{key} x{len(mine)} ({times[0]:g}-{times[-1]:g} µs)")
        out.append((key, label, times))
    return out


def lost_connections(run: RunResult) -> list[tuple[float, str]]:
    """(when, what) for each connection the run's transports gave up on."""
    return [(c.at_us, f"{c.src}→{c.dst}" + (f" ({c.reason})" if c.reason else ""))
            for c in run.connections if c.fate == "gave_up" and c.at_us is not None]
