"""What one run measures: per message, per time bin, totals; and the summary numbers the
report's table shows (all in virtual time, so the same run gives the same numbers anywhere).

Summary rules:
- completion time of a message: from its posting to the moment its last byte was placed in
  the receiver's memory;
- bytes lost: the bytes of messages that did not arrive intact by the end of the run;
- time to steady goodput after a failure: the reference is the mean fabric-wide goodput of the
  bins before the failure (all bins while the workload runs, when fewer than two come first);
  goodput is steady again from the first bin after the failure whose mean over it and the next
  two bins is at least 90 % of the reference (None: not before the workload ended);
- peak retransmission rate: the most retransmitted packets in one bin, per second.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

STEADY_FRACTION = 0.9
STEADY_BINS = 3


@dataclass
class MessageRecord:
    id: int
    src: str
    dst: str
    size: int
    flow: str
    posted_us: float | None = None
    arrived_us: float | None = None
    intact: bool = False

    @property
    def completion_us(self) -> float | None:
        if self.posted_us is None or self.arrived_us is None:
            return None
        return self.arrived_us - self.posted_us


@dataclass
class Series:
    """Per bin of `bin_us`: what crossed or happened in it."""

    bin_us: int
    goodput_bytes: dict[str, list[int]] = field(default_factory=dict)    # per receiving NIC
    plane_bytes: dict[int, list[int]] = field(default_factory=dict)      # on T0-T1 cables
    retransmitted: list[int] = field(default_factory=list)
    trimmed: list[int] = field(default_factory=list)                     # arrived at a NIC
    dropped: list[int] = field(default_factory=list)                     # every cause
    ev_states: dict[str, list[int]] = field(default_factory=dict)        # EVs per state

    def grow(self, bins: int) -> None:
        for rows in (*self.goodput_bytes.values(), *self.plane_bytes.values(),
                     self.retransmitted, self.trimmed, self.dropped, *self.ev_states.values()):
            if len(rows) < bins:
                rows.extend([0] * (bins - len(rows)))

    def add(self, rows: list[int], at_us: float, amount: int) -> None:
        """Count `amount` in the bin of `at_us`."""
        rows[self._bin(rows, at_us)] += amount

    def set(self, rows: list[int], at_us: float, level: int) -> None:
        """A level (not a count) for the bin of `at_us`."""
        rows[self._bin(rows, at_us)] = level

    def _bin(self, rows: list[int], at_us: float) -> int:
        k = int(at_us // self.bin_us)
        if k >= len(rows):
            rows.extend([0] * (k + 1 - len(rows)))
        return k

    def goodput_total(self) -> list[int]:
        bins = max((len(r) for r in self.goodput_bytes.values()), default=0)
        return [sum(r[k] if k < len(r) else 0 for r in self.goodput_bytes.values())
                for k in range(bins)]


@dataclass
class RunResult:
    """One mode's run of a scenario."""

    mode: str
    end_us: float
    finished: bool
    messages: list[MessageRecord]
    series: Series
    totals: dict[str, int]
    failures: list[tuple[float, str]]          # (at µs, description) of what happened
    events: list[dict[str, object]] = field(default_factory=list)   # controller and EV events

    def completion_times(self, flow: str | None = "main") -> list[float]:
        return sorted(t for m in self.messages if (flow is None or m.flow == flow)
                      and (t := m.completion_us) is not None)

    def summary(self) -> dict[str, object]:
        times = self.completion_times()
        victim = self.completion_times("victim")
        lost = sum(m.size for m in self.messages if not m.intact)
        retx = self.series.retransmitted
        return {
            "messages": len(self.messages),
            "completed": sum(m.intact for m in self.messages),
            "bytes": sum(m.size for m in self.messages),
            "bytes_lost": lost,
            "finished": self.finished,
            "end_us": round(self.end_us, 3),
            "mct_p50_us": _round(percentile(times, 50)),
            "mct_p99_us": _round(percentile(times, 99)),
            "mct_max_us": _round(times[-1] if times else None),
            "victim_mct_p50_us": _round(percentile(victim, 50)),
            "victim_mct_max_us": _round(victim[-1] if victim else None),
            "peak_retx_per_s": round(max(retx, default=0) * 1e6 / self.series.bin_us),
            "time_to_steady_us": [
                {"failure": what, "at_us": at, "us": _round(time_to_steady(self, at))}
                for at, what in _by_time(self.failures)],
            **self.totals,
        }

    def to_json(self) -> dict[str, object]:
        series = asdict(self.series)
        series["plane_bytes"] = {str(k): v for k, v in self.series.plane_bytes.items()}
        return {"summary": self.summary(), "series": series,
                "messages": [{**asdict(m), "completion_us": _round(m.completion_us)}
                             for m in self.messages],
                "failures": [{"at_us": at, "what": what} for at, what in self.failures],
                "events": self.events}


def _by_time(failures: Sequence[tuple[float, str]]) -> list[tuple[float, str]]:
    """Failures at one instant as one (their descriptions joined), in time order."""
    grouped: dict[float, list[str]] = {}
    for at, what in failures:
        grouped.setdefault(at, []).append(what)
    return [(at, "; ".join(whats)) for at, whats in sorted(grouped.items())]


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile of sorted `values` (None when empty)."""
    if not values:
        return None
    rank = max(1, -(-len(values) * p // 100))
    return values[int(rank) - 1]


def time_to_steady(run: RunResult, failure_us: float) -> float | None:
    """See the module docstring."""
    total = run.series.goodput_total()
    bin_us = run.series.bin_us
    end = min(len(total), int(run.end_us // bin_us) + 1)
    first = int(failure_us // bin_us)
    before = total[:first]
    reference = (statistics.fmean(before) if len(before) >= 2
                 else statistics.fmean(total[:end]) if end else 0.0)
    if reference <= 0:
        return None
    for k in range(first + 1, end - STEADY_BINS + 1):
        if statistics.fmean(total[k:k + STEADY_BINS]) >= STEADY_FRACTION * reference:
            return k * bin_us - failure_us
    return None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
