"""The invariants `mrc` must hold on the scenario matrix (issue 23, item 6): pure functions of
one scenario (at one seed) and its modes' RunResults, each breach named with its numbers.

    (a) lost:    0 bytes and 0 connections lost.
    (b) p99:     p99 <= ecmp's and <= spray's (an undelivered message: infinite).
    (c) calm:    with no hardware failure, the controller denies nothing and p99 is within 5 %
                 of mrc_no_controller's.
    (d) steer:   where one path or one EV is congested or lossy, p99 <= 0.8 x spray's.
    (e) blame:   the controller names no element that did not fail (every scenario);
        name:    under a hard failure of a cable or switch it names that element;
        steady:  under a hard failure, time to steady goodput <= mrc_no_controller's.

How a scenario is classified (from its failures, cables and workloads, nothing else):
- hardware failure: any scheduled failure, whatever its kind: a cut, flap, reboot,
  blackhole, NIC port down, and also random loss on a cable or an EV (a lossy optic or
  lane is broken hardware). Not a failure: a cable or a whole plane slower (`cables`: a
  capacity difference), QoS thresholds, and the congestion the workloads make (bursts,
  incast, a pinned background `flow`);
- hard failure (e): link_down, flap, switch_reboot, blackhole, nic_port_down;
- one path or one EV congested or lossy (d): an `ev_loss`; `loss` failures that all name
  one cable; a `flow` workload pinned to a `path` (it loads that one path);
- the failed elements, as the controller names them (RunResult.events' "links_down",
  "plane:t0-t1", and "switches_down", a switch's name): a T0-T1 cable's failure (cut,
  flap, loss, blackhole) is that cable; a switch's is the switch and its cables (they are
  unusable while it is down: naming one blames no healthy element); a NIC's cable, a NIC
  port and an EV are no fabric element: the controller must name nothing for them (a NIC
  port down is the NIC's own matter);
- must be named: a hard failure of a cable or switch whose outage (hard failures of that
  element back to back: a blackhole, then a reboot) lasts at least `act_us` (two RTOs, two
  controller rounds and the probes that confirm it), while mrc's workload still runs then;
  a shorter one may end before any controller could act. A flap is its cuts, each an
  outage of its own: between them the cable is up, carries data and answers probes (the
  sources leave flappy links in service: the NICs map them out when they drop and re-admit
  them once probes succeed), so a storm of 80 µs cuts need not be named, but may be;
- what the controller did, from RunResult.events: a "rewrite" or "verdict" entry's
  non-empty "links_down" / "switches_down" (the verdict the NICs were rewritten to),
  a "link_down" / "switch_down" entry, or a positive "denied" / "deny" count: a denial.
  "suspect" entries are evidence, not verdicts: never a denial;
- time to steady goodput (metrics.time_to_steady) per failure both runs saw (paired by
  time), both runs held to one bar: the higher of their two references (each run's own
  reference, its mean goodput when the failure comes early, would reward the slower run
  with a lower bar). None is infinite (never steady) unless the run delivered everything,
  when it is the time from the failure to the end of the run's last bin (the workload
  ended first; the measure's resolution is a bin).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from controller.topology.model import Tier, Topology
from emulation.metrics import RunResult, steady_reference, time_to_steady
from emulation.scenario import Failure, Scenario

P99_SLACK = 1.05          # (c): within 5 % of mrc_no_controller's p99
BEAT_SPRAY = 0.8          # (d): at least 20 % below spray's p99
HARD = ("link_down", "flap", "switch_reboot", "blackhole", "nic_port_down")
NAMING = ("rewrite", "verdict")   # entries carrying the verdict acted on
EVIDENCE = ("suspect",)           # entries that only carry evidence


@dataclass(frozen=True)
class Breach:
    scenario: str
    seed: int
    invariant: str     # "a", "b", "c", "d", "e"
    detail: str        # what was measured

    def __str__(self) -> str:
        return f"{self.scenario} seed {self.seed}: ({self.invariant}) {self.detail}"


# -- the classification ----------------------------------------------------------------------

def hardware_failure(scenario: Scenario) -> bool:
    """Any scheduled failure (loss included); `cables`, `qos` and workloads are not."""
    return bool(scenario.failures)


def hard_failures(scenario: Scenario) -> list[Failure]:
    return [f for f in scenario.failures if f.kind in HARD]


def one_path_or_ev(scenario: Scenario) -> bool:
    """One EV lossy, one cable lossy, or one path loaded by a pinned flow."""
    if any(f.kind == "ev_loss" for f in scenario.failures):
        return True
    lossy = {cable_key(scenario.topology, f.link) for f in scenario.failures
             if f.kind == "loss" and f.link is not None}
    if len(lossy) == 1:
        return True
    return any(w.kind == "flow" and w.path is not None for w in scenario.workloads)


def link_name(plane: int, t0: str, t1: str) -> str:
    """A T0-T1 cable as the controller names it (emulation/run.py's "links_down")."""
    return f"{plane}:{t0}-{t1}"


def fabric_cables(topology: Topology) -> dict[tuple[str, int], str]:
    """Both ends (SWITCH, PORT) of every T0-T1 cable -> its name."""
    names = {s.name: s for s in topology.switches}
    out: dict[tuple[str, int], str] = {}
    for link in topology.iter_links():
        a, b = names.get(link.a), names.get(link.b)
        if a is None or b is None:
            continue
        t0, t1 = (a, b) if a.tier == Tier.T0 else (b, a)
        out[(link.a, link.a_port)] = out[(link.b, link.b_port)] = link_name(t0.plane, t0.name,
                                                                           t1.name)
    return out


def cable_key(topology: Topology, end: tuple[str, int]) -> str:
    """A cable, the same from either end (a NIC's cable: NIC:PLANE)."""
    return fabric_cables(topology).get(end) or f"{end[0]}:{end[1]}"


def switch_cables(topology: Topology, switch: str) -> set[str]:
    return {name for (sw, _), name in fabric_cables(topology).items() if sw == switch}


def failed_elements(failure: Failure, topology: Topology) -> set[str]:
    """What the controller may name for this failure (see the module docstring)."""
    if failure.kind in ("ev_loss", "nic_port_down"):
        return set()
    if failure.link is not None:
        name = fabric_cables(topology).get(failure.link)
        return {name} if name else set()   # a NIC's cable: not the controller's to name
    if failure.switch:
        return {failure.switch} | switch_cables(topology, failure.switch)
    return set()


def must_name(failure: Failure, topology: Topology) -> str | None:
    """The element a hard failure's verdict must name (None: a NIC's matter, or no hard
    failure): the cable, or the switch."""
    if failure.kind not in HARD or failure.kind == "nic_port_down":
        return None
    if failure.link is not None:
        return fabric_cables(topology).get(failure.link)
    return failure.switch or None


def down_span_us(failure: Failure, scenario: Scenario) -> float:
    """How long the element stays failed (to the end of the run: `duration_us`)."""
    end = scenario.duration_us
    if failure.kind == "switch_reboot":
        return failure.down_us
    if failure.kind == "flap":
        return failure.down_us   # each cut (module docstring)
    if failure.kind == "link_down":
        mended = [f.at_us for f in scenario.failures if f.kind == "link_up"
                  and f.at_us > failure.at_us and failure.link is not None and f.link is not None
                  and cable_key(scenario.topology, f.link)
                  == cable_key(scenario.topology, failure.link)]
        return min(mended, default=end) - failure.at_us
    return (failure.until_us or end) - failure.at_us


def outage_us(failure: Failure, scenario: Scenario) -> tuple[float, float]:
    """(start, length) of the element's outage that `failure` is part of: hard failures of
    one element back to back (a blackhole, then a reboot of the same T1) are one outage."""
    element = must_name(failure, scenario.topology)
    spans = sorted((float(f.at_us), f.at_us + down_span_us(f, scenario))
                   for f in hard_failures(scenario)
                   if f is failure or (element is not None
                                       and must_name(f, scenario.topology) == element))
    merged: list[list[float]] = []
    for at, until in spans:
        if merged and at <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], until)
        else:
            merged.append([at, until])
    start, end = next((a, b) for a, b in merged if a <= failure.at_us <= b)
    return start, end - start


def act_us(scenario: Scenario) -> float:
    """The time a controller needs to act on a failure: the NICs' loss detection (two RTOs),
    two controller rounds, and the probes that confirm the element down."""
    c = scenario.controller
    return (2 * scenario.transport.rto_us + 2 * c.period_us
            + c.probe_successes * c.probe_interval_us)


# -- what the controller did -----------------------------------------------------------------

def named_elements(events: Iterable[Mapping[str, object]]) -> set[str]:
    """Every cable and switch a verdict declared down during the run."""
    named: set[str] = set()
    for e in events:
        kind = e.get("event")
        if kind in EVIDENCE:
            continue
        if kind == "link_down" and isinstance(e.get("link"), str):
            named.add(str(e["link"]))
        if kind == "switch_down" and isinstance(e.get("switch"), str):
            named.add(str(e["switch"]))
        if kind in NAMING:
            for key in ("links_down", "switches_down"):
                value = e.get(key)
                if isinstance(value, list | tuple | set):
                    named.update(str(v) for v in value)
    return named


def denials(events: Iterable[Mapping[str, object]]) -> list[Mapping[str, object]]:
    """The entries in which the controller denied something (named an element down, or
    counted denied EVs)."""
    out = []
    for e in events:
        if e.get("event") in EVIDENCE:
            continue
        count = next((e[k] for k in ("denied", "deny") if k in e), 0)
        counted = (len(count) if isinstance(count, list | tuple | set | dict)
                   else count if isinstance(count, int | float) else 0)
        if counted or named_elements([e]):
            out.append(e)
    return out


# -- the numbers -----------------------------------------------------------------------------

def p99(result: RunResult) -> float:
    value = result.summary()["mct_p99_us"]
    return math.inf if value is None else float(value)  # type: ignore[arg-type]


def steady_times(result: RunResult, other: RunResult | None = None) -> dict[float, float]:
    """Per failure instant, the time to steady goodput (module docstring: None's meaning).
    With `other`: both runs held to one bar, the higher of their two references."""
    summary = result.summary()
    delivered = result.finished and not summary["undelivered"]
    bin_us = result.series.bin_us
    out: dict[float, float] = {}
    for entry in summary["time_to_steady_us"]:  # type: ignore[attr-defined]
        at = float(entry["at_us"])
        reference = steady_reference(result, at)
        if other is not None:
            reference = max(reference, steady_reference(other, at))
        us = time_to_steady(result, at, reference)
        # the workload ended first: until the end of its last bin (the measure's resolution)
        out[at] = (float(us) if us is not None
                   else max(0.0, math.ceil(result.end_us / bin_us) * bin_us - at) if delivered
                   else math.inf)
    return out


def show(value: float) -> str:
    return "∞" if value == math.inf else f"{value:,.1f}"


# -- the checks ------------------------------------------------------------------------------

def check(scenario: Scenario, results: Sequence[RunResult] | Mapping[str, RunResult]
          ) -> list[Breach]:
    """Every breach of (a)-(e) by `mrc` in this scenario's runs (its seed: scenario.seed).
    A mode that did not run is not compared; no `mrc` run at all is a breach."""
    runs = dict(results) if isinstance(results, Mapping) else {r.mode: r for r in results}
    out: list[Breach] = []

    def breach(invariant: str, detail: str) -> None:
        out.append(Breach(scenario.name, scenario.seed, invariant, detail))

    mrc = runs.get("mrc")
    if mrc is None:
        breach("a", "no mrc run")
        return out
    summary = mrc.summary()
    mine = p99(mrc)
    # (a)
    if summary["bytes_lost"] or summary["connections_lost"]:
        breach("a", f"mrc lost {summary['bytes_lost']:,} bytes and "
                    f"{summary['connections_lost']} of {summary['connections']} connections")
    # (b)
    for other in ("ecmp", "spray"):
        if other in runs and not mine <= p99(runs[other]):
            breach("b", f"mrc p99 {show(mine)} µs > {other}'s {show(p99(runs[other]))} µs")
    # (c)
    if not hardware_failure(scenario):
        denied = denials(mrc.events)
        if denied:
            first = denied[0]
            breach("c", f"no hardware failure, the controller denied {len(denied)} time(s), "
                        f"first at {first.get('at_us')} µs: "
                        f"{_naming(first)}")
        nc = runs.get("mrc_no_controller")
        if nc is not None and not mine <= P99_SLACK * p99(nc):
            breach("c", f"no hardware failure, mrc p99 {show(mine)} µs > 1.05 x "
                        f"mrc_no_controller's {show(p99(nc))} µs")
    # (d)
    if one_path_or_ev(scenario) and "spray" in runs:
        theirs = p99(runs["spray"])
        beaten = mine < math.inf if theirs == math.inf else mine <= BEAT_SPRAY * theirs
        if not beaten:
            breach("d", f"one path or EV congested or lossy, mrc p99 {show(mine)} µs not 20 % "
                        f"below spray's {show(theirs)} µs")
    # (e)
    out += [Breach(scenario.name, scenario.seed, "e", d) for d in blame(scenario, runs)]
    return out


def blame(scenario: Scenario, runs: Mapping[str, RunResult]) -> list[str]:
    """(e): what the controller named against what failed; time to steady vs no controller."""
    mrc = runs["mrc"]
    topology = scenario.topology
    allowed: set[str] = set()
    for f in scenario.failures:
        allowed |= failed_elements(f, topology)
    named = named_elements(mrc.events)
    out = []
    healthy = sorted(named - allowed)
    if healthy:
        out.append(f"the controller named {', '.join(healthy)} down, which did not fail "
                   f"(failed: {', '.join(sorted(allowed)) or 'none it may name'})")
    grace = act_us(scenario)
    missed: set[str] = set()
    for f in hard_failures(scenario):
        element = must_name(f, topology)
        start, span = outage_us(f, scenario)
        if element is None or element in named or span < grace or mrc.end_us < start + grace:
            continue
        if element in missed:
            continue   # one outage, several failures: said once
        missed.add(element)
        out.append(f"{f.describe()}: the controller never named {element} "
                   f"(down {span:,.0f} µs from {start:,.0f} µs, mrc ran to "
                   f"{mrc.end_us:,.0f} µs; it may take {grace:,.0f} µs)")
    nc = runs.get("mrc_no_controller")
    if hard_failures(scenario) and nc is not None:
        ours, theirs = steady_times(mrc, nc), steady_times(nc, mrc)
        for at in sorted(ours.keys() & theirs.keys()):
            if not ours[at] <= theirs[at]:
                out.append(f"failure at {at:g} µs: mrc steady after {show(ours[at])} µs, "
                           f"mrc_no_controller after {show(theirs[at])} µs")
    return out


def _naming(event: Mapping[str, object]) -> str:
    parts = [f"{k} {v}" for k in ("links_down", "switches_down", "denied", "deny")
             if (v := event.get(k))]
    if event.get("event") in ("link_down", "switch_down"):
        parts.append(f"{event['event']} {event.get('link') or event.get('switch')}")
    return "; ".join(parts) or str(dict(event))
