"""What one run measures: per message, per time bin, totals; and the summary numbers the
report's table shows (all in virtual time, so the same run gives the same numbers anywhere).

Summary rules (they tell the whole truth: nothing undelivered is left out):
- completion time of a message: from its posting to the moment its last byte was placed in
  the receiver's memory; a message not delivered intact by the end of the run (never posted,
  never arrived, or arrived corrupt) took for ever: its completion time is infinite
  (`math.inf`);
- percentiles (p50, p99, max) are over every message, the undelivered ones too (nearest rank):
  p99 is infinite when more than 1 % of the messages were not delivered, p50 when more than
  half, max when any. The report's tables show an infinite one as "∞ (not done)"; report.json
  and sweep.json write it as the string "not done" (JSON has no infinity) beside the count
  `undelivered` (`victim_undelivered`); null is "no message of that flow at all";
- the completion-time CDF (`RunResult.cdf`) is over every message too: a run that lost
  messages never reaches 1;
- the table's times are the first workload's flow ("main"); `flows` in the summary has every
  flow's (a second workload's, an incast's victim) by the same rules, and `undelivered`
  counts every flow's messages;
- bytes lost: the bytes of messages that did not arrive intact by the end of the run;
- connections lost: connections (one direction each) that did not deliver everything they
  carried: their transport gave up, or they were still open at the end (`ConnectionFate`);
- drops: every packet destroyed anywhere, by cause (emulation/drops.py), `dropped` their sum;
  duplicates the receiving NIC already had are no loss: counted apart (`duplicates`);
- time to steady goodput after a failure: the reference is the mean fabric-wide goodput of the
  bins before the failure (all bins while the workload runs, when fewer than two come first);
  goodput is steady again from the first bin after the failure whose mean over it and the next
  two bins is at least 90 % of the reference (None: not before the workload ended);
- peak retransmission rate: the most retransmitted packets in one bin, per second.
"""

from __future__ import annotations

import math
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

    @property
    def delivered(self) -> bool:
        """Arrived, and intact."""
        return self.intact and self.arrived_us is not None

    @property
    def mct_us(self) -> float:
        """The completion time by the summary rules: infinite when not delivered."""
        t = self.completion_us
        return t if self.delivered and t is not None else math.inf


@dataclass
class ConnectionFate:
    """What became of one connection (one direction: `src` writes to `dst` on QP `qp`):
    `fate` "done" (every message it carried arrived intact; the last acknowledgements may
    still have been on their way when the run stopped), "gave_up" (its transport ended it at
    `at_us`, after `retries` retransmissions of one packet, `reason` says why), or "open"
    (still unfinished when the run ended at `at_us`). `qp`: the sending NIC's QP. `evs`: the
    EVs its sender's NIC had out of service (ASSUMED_BAD, SKIP or DENIED) for it when it gave
    up or the run ended. `undelivered`: the ids of its messages not delivered intact."""

    src: str
    dst: str
    qp: int
    fate: str
    at_us: float | None = None
    retries: int = 0
    evs: tuple[int, ...] = ()
    reason: str = ""
    undelivered: tuple[int, ...] = ()


@dataclass
class Series:
    """Per bin of `bin_us`: what crossed or happened in it."""

    bin_us: int
    goodput_bytes: dict[str, list[int]] = field(default_factory=dict)    # per receiving NIC
    plane_bytes: dict[int, list[int]] = field(default_factory=dict)      # on T0-T1 cables
    retransmitted: list[int] = field(default_factory=list)
    trimmed: list[int] = field(default_factory=list)                     # arrived at a NIC
    dropped: list[int] = field(default_factory=list)                     # every cause
    drops: dict[str, list[int]] = field(default_factory=dict)            # per cause (labels)
    ev_states: dict[str, list[int]] = field(default_factory=dict)        # EVs per state
    # plane_bytes split by direction: T0 -> T1 (up) and T1 -> T0 (down)
    plane_up_bytes: dict[int, list[int]] = field(default_factory=dict)
    plane_down_bytes: dict[int, list[int]] = field(default_factory=dict)
    # EV-ns in SKIP and ASSUMED_BAD as the NICs' ev_state registers held them: every write
    # integrated (a bin-end sample misses nearly every SKIP, which lasts a few µs)
    ev_time_ns: dict[str, list[int]] = field(default_factory=dict)

    def grow(self, bins: int) -> None:
        """Every row (every list field, and every list in a dict field) `bins` long at least."""
        for value in vars(self).values():
            for rows in (value.values() if isinstance(value, dict) else (value,)):
                if isinstance(rows, list) and len(rows) < bins:
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
    connections: list[ConnectionFate] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=dict)       # every cause (labels), totals
    drop_sites: dict[str, dict[str, int]] = field(default_factory=dict)   # cause -> device -> n

    def completion_times(self, flow: str | None = "main") -> list[float]:
        """Every message's completion time (of `flow`; None: all), sorted: `math.inf` for
        each one not delivered intact, so they sort last and count in every percentile."""
        return sorted(m.mct_us for m in self.messages if flow is None or m.flow == flow)

    def cdf(self, flow: str | None = "main") -> tuple[list[float], int]:
        """The completion-time CDF over every message: (the finite completion times, sorted;
        the number of messages). Point k is at fraction (k + 1) / that number, so a run that
        did not deliver everything never reaches 1."""
        times = self.completion_times(flow)
        return [t for t in times if t != math.inf], len(times)

    def undelivered(self) -> list[MessageRecord]:
        return [m for m in self.messages if not m.delivered]

    def summary(self) -> dict[str, object]:
        """The summary numbers (module docstring); infinite ones as `math.inf`."""
        times = self.completion_times()
        victim = self.completion_times("victim")
        lost = sum(m.size for m in self.messages if not m.delivered)
        retx = self.series.retransmitted
        completed = sum(m.delivered for m in self.messages)
        return {
            "messages": len(self.messages),
            "completed": completed,
            "undelivered": len(self.messages) - completed,
            "bytes": sum(m.size for m in self.messages),
            "bytes_lost": lost,
            "finished": self.finished,
            "end_us": round(self.end_us, 3),
            "mct_p50_us": _round(percentile(times, 50)),
            "mct_p99_us": _round(percentile(times, 99)),
            "mct_max_us": _round(times[-1] if times else None),
            "victim_undelivered": sum(t == math.inf for t in victim),
            "victim_mct_p50_us": _round(percentile(victim, 50)),
            "victim_mct_max_us": _round(victim[-1] if victim else None),
            "peak_retx_per_s": round(max(retx, default=0) * 1e6 / self.series.bin_us),
            "time_to_steady_us": [
                {"failure": what, "at_us": at, "us": _round(time_to_steady(self, at))}
                for at, what in _by_time(self.failures)],
            "flows": {flow: self.flow_summary(flow) for flow in
                      sorted({m.flow for m in self.messages}, key=lambda f: (f != "main", f))},
            "connections": len(self.connections),
            "connections_lost": sum(c.fate != "done" for c in self.connections),
            **self.totals,
            "drops": dict(self.drops),
        }

    def flow_summary(self, flow: str) -> dict[str, object]:
        """One flow's messages by the same rules (the table shows "main"'s)."""
        times = self.completion_times(flow)
        return {"messages": len(times), "undelivered": sum(t == math.inf for t in times),
                "mct_p50_us": _round(percentile(times, 50)),
                "mct_p99_us": _round(percentile(times, 99)),
                "mct_max_us": _round(times[-1] if times else None)}

    def summary_json(self) -> dict[str, object]:
        """`summary()` as JSON may carry it (infinite: "not done")."""
        return json_safe(self.summary())  # type: ignore[return-value]

    def to_json(self) -> dict[str, object]:
        series = asdict(self.series)
        series["plane_bytes"] = {str(k): v for k, v in self.series.plane_bytes.items()}
        return json_safe({  # type: ignore[return-value]
            "summary": self.summary(), "series": series,
            "messages": [{**asdict(m), "completion_us": _round(m.mct_us)}
                         for m in self.messages],
            "failures": [{"at_us": at, "what": what} for at, what in self.failures],
            "events": self.events,
            "connections": [asdict(c) for c in self.connections],
            "drop_sites": self.drop_sites})


NOT_DONE = "not done"   # an infinite time in JSON


def json_safe(value: object) -> object:
    """`value` with every infinite float replaced by NOT_DONE (JSON has no infinity), tuples
    as lists; a NaN is a bug: refused."""
    if isinstance(value, float):
        if value == math.inf:
            return NOT_DONE
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"not a measurement: {value}")
        return value
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


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


def steady_reference(run: RunResult, failure_us: float) -> float:
    """The goodput (bytes per bin) `time_to_steady` holds the run to after this failure."""
    total = run.series.goodput_total()
    end = min(len(total), int(run.end_us // run.series.bin_us) + 1)
    before = total[:int(failure_us // run.series.bin_us)]
    return (statistics.fmean(before) if len(before) >= 2
            else statistics.fmean(total[:end]) if end else 0.0)


def time_to_steady(run: RunResult, failure_us: float,
                   reference: float | None = None) -> float | None:
    """See the module docstring; `reference`: hold the run to this goodput (bytes per bin)
    instead of its own (two runs compared against one bar)."""
    total = run.series.goodput_total()
    bin_us = run.series.bin_us
    end = min(len(total), int(run.end_us // bin_us) + 1)
    first = int(failure_us // bin_us)
    if reference is None:
        reference = steady_reference(run, failure_us)
    if reference <= 0:
        return None
    for k in range(first + 1, end - STEADY_BINS + 1):
        if statistics.fmean(total[k:k + STEADY_BINS]) >= STEADY_FRACTION * reference:
            return k * bin_us - failure_us
    return None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)   # round(inf) is inf
