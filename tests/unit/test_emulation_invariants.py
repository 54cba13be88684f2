"""The invariants mrc must hold on the scenario matrix (emulation/invariants.py), on hand-built
runs: each one breached names the scenario, seed and numbers, and holds otherwise; the matrix
table and `mrc-ctl sweep --invariants`'s exit status (emulation/matrix.py); and every
scenario of scenarios/matrix/ loads."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from emulation import invariants, matrix, sweep
from emulation.invariants import Breach, check
from emulation.metrics import ConnectionFate, MessageRecord, RunResult, Series
from emulation.scenario import MODES, Scenario, load, loads

ROOT = Path(__file__).resolve().parents[2]
MATRIX = sorted((ROOT / "scenarios" / "matrix").glob("*.yaml"))
CUT = "p0-t0-0:2"                  # p0-t0-0 <-> p0-t1-0
CUT_NAME = "0:p0-t0-0-p0-t1-0"     # as the controller names it


def scenario(*failures: str, extra: str = "", workload: str = "") -> Scenario:
    text = ("name: hand\n"
            "topology: topologies/tiny.yaml\n"
            "seed: 3\n"
            "duration_us: 4000\n"
            "transport: {rto_us: 100, reorder_us: 30}\n"
            f"{extra}"
            "workload:\n"
            "  - {kind: ring_allreduce, bytes: 4096}\n"
            f"{workload}")
    if failures:
        text += "failures:\n" + "".join(f"  - {f}\n" for f in failures)
    return loads(text, base=ROOT)


def run(mode: str, p99: float | None = 100.0, *, end_us: float = 1000.0,
        events: list[dict[str, object]] | None = None, lost_connection: bool = False,
        goodput: list[int] | None = None, failures: list[tuple[float, str]] | None = None,
        ) -> RunResult:
    """A run whose single main message took `p99` µs (None: never arrived)."""
    arrived = None if p99 is None else 10.0 + p99
    message = MessageRecord(0, "nic0", "nic1", 1000, "main", 10.0, arrived, arrived is not None)
    series = Series(50)
    if goodput is not None:
        series.goodput_bytes["nic1"] = list(goodput)
    fate = "gave_up" if lost_connection else "open" if arrived is None else "done"
    fates = [ConnectionFate("nic0", "nic1", 1, fate)]
    return RunResult(mode, end_us, arrived is not None, [message], series, {}, failures or [],
                     events or [], connections=fates)


def all_modes(mrc: RunResult | None = None, **p99s: float | None) -> dict[str, RunResult]:
    """Every mode at 100 µs unless told; `mrc` a run of its own."""
    runs = {m: run(m, p99s.get(m, 100.0)) for m in MODES}
    if mrc is not None:
        runs["mrc"] = mrc
    return runs


def letters(breaches: list[Breach]) -> list[str]:
    return sorted(b.invariant for b in breaches)


def rewrite(at_us: float, links: list[str] = (), switches: list[str] = ()  # type: ignore[assignment]
            ) -> dict[str, object]:
    return {"at_us": at_us, "event": "rewrite", "entries": {"nic0": 4},
            "links_down": list(links), "switches_down": list(switches)}


# -- (a) and (b) ------------------------------------------------------------------------------

def test_a_nothing_lost_holds_and_a_lost_byte_or_connection_breaches() -> None:
    s = scenario()
    assert check(s, all_modes()) == []
    lost = check(s, all_modes(run("mrc", None), ecmp=None, spray=None, mrc_no_controller=None))
    assert letters(lost) == ["a"]
    assert (lost[0].scenario, lost[0].seed) == ("hand", 3)
    assert "mrc lost 1,000 bytes and 1 of 1 connections" in lost[0].detail
    dead = check(s, all_modes(run("mrc", lost_connection=True)))
    assert letters(dead) == ["a"] and "0 bytes and 1 of 1 connections" in dead[0].detail
    assert check(s, {"ecmp": run("ecmp")}) == [Breach("hand", 3, "a", "no mrc run")]


def test_b_p99_above_ecmp_or_spray_breaches_and_undelivered_is_infinite() -> None:
    s = scenario(f"{{at_us: 50, kind: link_down, link: '{CUT}'}}")
    slow = all_modes(run("mrc", 150.0), ecmp=120.0, spray=200.0, mrc_no_controller=150.0)
    found = [b for b in check(s, slow) if b.invariant == "b"]
    assert [b.detail for b in found] == ["mrc p99 150.0 µs > ecmp's 120.0 µs"]
    found = [b for b in check(s, all_modes(run("mrc", 150.0), ecmp=200.0, spray=149.0,
                                           mrc_no_controller=150.0)) if b.invariant == "b"]
    assert [b.detail for b in found] == ["mrc p99 150.0 µs > spray's 149.0 µs"]
    # ecmp not done (∞): any finished mrc is below it; equal p99s hold
    assert not [b for b in check(s, all_modes(ecmp=None)) if b.invariant == "b"]
    assert invariants.p99(run("ecmp", None)) == math.inf


# -- (c) ---------------------------------------------------------------------------------------

def test_c_no_hardware_failure_no_denial_and_p99_within_5_percent() -> None:
    s = scenario()
    assert not invariants.hardware_failure(s)
    denied = run("mrc", events=[rewrite(60.0, links=[CUT_NAME])])
    found = check(s, all_modes(denied))
    assert letters(found) == ["c", "e"]   # denied, and named a cable that never failed
    assert f"first at 60.0 µs: links_down ['{CUT_NAME}']" in found[0].detail
    verdict = run("mrc", events=[{"at_us": 80, "event": "verdict", "switches_down": ["p0-t1-0"]}])
    assert letters(check(s, all_modes(verdict))) == ["c", "e"]
    counted = run("mrc", events=[{"at_us": 80, "event": "verdict", "denied": 3}])
    assert letters(check(s, all_modes(counted))) == ["c"]
    # evidence and a rewrite that names nothing down are no denial
    calm = run("mrc", events=[{"at_us": 40, "event": "suspect", "links_down": [CUT_NAME]},
                              rewrite(70.0), {"at_us": 30, "event": "ev_event", "nic": "nic0"}])
    assert check(s, all_modes(calm)) == []
    assert letters(check(s, all_modes(run("mrc", 106.0), ecmp=200.0, spray=200.0,
                                      mrc_no_controller=100.0))) == ["c"]
    assert check(s, all_modes(run("mrc", 104.0), ecmp=200.0, spray=200.0,
                              mrc_no_controller=100.0)) == []
    # a slower cable is a capacity difference, not a failure
    assert not invariants.hardware_failure(
        scenario(extra=f"cables:\n  - {{link: '{CUT}', rate_gbps: 5}}\n"))


def test_c_does_not_apply_to_a_scenario_with_a_failure() -> None:
    s = scenario(f"{{at_us: 50, kind: link_down, link: '{CUT}'}}")
    assert invariants.hardware_failure(s)
    named = run("mrc", 104.0, end_us=200.0, events=[rewrite(60.0, links=[CUT_NAME])])
    assert check(s, all_modes(named, mrc_no_controller=50.0, ecmp=200.0, spray=200.0)) == []


# -- (d) ---------------------------------------------------------------------------------------

def test_d_one_lossy_ev_or_path_mrc_beats_spray_by_20_percent() -> None:
    s = scenario("{at_us: 0, kind: ev_loss, nic: nic0, ev: 3, percent: 20}")
    assert invariants.one_path_or_ev(s)
    close = check(s, all_modes(run("mrc", 85.0), spray=100.0, mrc_no_controller=85.0))
    assert letters(close) == ["d"]
    assert close[0].detail == ("one path or EV congested or lossy, mrc p99 85.0 µs not 20 % "
                               "below spray's 100.0 µs")
    assert check(s, all_modes(run("mrc", 80.0), spray=100.0)) == []
    assert check(s, all_modes(run("mrc", 500.0), spray=None, ecmp=None)) == []   # spray not done


def test_d_classification() -> None:
    one_cable = scenario(f"{{at_us: 0, kind: loss, link: '{CUT}', percent: 10, direction: out}}",
                         "{at_us: 900, kind: loss, link: 'p0-t1-0:0', percent: 5}")  # same cable
    assert invariants.one_path_or_ev(one_cable)
    spread = scenario(f"{{at_us: 0, kind: loss, link: '{CUT}', percent: 1}}",
                      "{at_us: 0, kind: loss, link: 'p1-t0-1:3', percent: 1}")
    assert not invariants.one_path_or_ev(spread)
    pinned = scenario(workload="  - {kind: flow, src: nic0, dst: nic2, bytes: 4096, "
                               "path: [0, 0]}\n")
    assert invariants.one_path_or_ev(pinned) and not invariants.hardware_failure(pinned)
    assert not invariants.one_path_or_ev(scenario(f"{{at_us: 50, kind: link_down, "
                                                  f"link: '{CUT}'}}"))


# -- (e) ---------------------------------------------------------------------------------------

def test_e_the_controller_names_exactly_the_failed_cable() -> None:
    s = scenario(f"{{at_us: 50, kind: link_down, link: '{CUT}'}}")
    assert invariants.failed_elements(s.failures[0], s.topology) == {CUT_NAME}
    assert invariants.act_us(s) == 2 * 100 + 2 * 20 + 3 * 50
    right = run("mrc", end_us=2000.0, events=[rewrite(200.0, links=[CUT_NAME])])
    assert check(s, all_modes(right)) == []
    also = run("mrc", end_us=2000.0, events=[rewrite(200.0, links=[CUT_NAME,
                                                                   "0:p0-t0-1-p0-t1-0"])])
    found = check(s, all_modes(also))
    assert letters(found) == ["e"]
    assert found[0].detail.startswith("the controller named 0:p0-t0-1-p0-t1-0 down, which did "
                                      f"not fail (failed: {CUT_NAME})")
    silent = check(s, all_modes(run("mrc", end_us=2000.0)))
    assert letters(silent) == ["e"] and f"never named {CUT_NAME}" in silent[0].detail
    # the run ended before the controller could act (50 + 390 µs): naming nothing holds
    assert check(s, all_modes(run("mrc", end_us=400.0))) == []


def test_e_a_switch_may_be_named_with_its_cables_a_nic_port_never() -> None:
    s = scenario("{at_us: 50, kind: switch_reboot, switch: p0-t1-0, down_us: 1000}")
    assert invariants.failed_elements(s.failures[0], s.topology) == {
        "p0-t1-0", CUT_NAME, "0:p0-t0-1-p0-t1-0"}
    both = run("mrc", end_us=3000.0, events=[rewrite(100.0, [CUT_NAME], ["p0-t1-0"])])
    assert check(s, all_modes(both)) == []
    cables_only = check(s, all_modes(run("mrc", end_us=3000.0,
                                         events=[rewrite(100.0, [CUT_NAME])])))
    assert letters(cables_only) == ["e"] and "never named p0-t1-0" in cables_only[0].detail
    short = scenario("{at_us: 50, kind: switch_reboot, switch: p0-t1-0, down_us: 100}")
    assert check(short, all_modes(run("mrc", end_us=3000.0))) == []   # over before any verdict
    # a blackhole, then a reboot of the same T1: one outage of 650 µs, said once
    hole = scenario("{at_us: 50, kind: blackhole, switch: p0-t1-0, until_us: 400}",
                    "{at_us: 400, kind: switch_reboot, switch: p0-t1-0, down_us: 300}")
    assert invariants.outage_us(hole.failures[1], hole) == (50.0, 650.0)
    unnamed = check(hole, all_modes(run("mrc", end_us=3000.0)))
    assert [b.detail for b in unnamed] == [
        "blackhole p0-t1-0 at 50 µs until 400 µs: the controller never named p0-t1-0 (down "
        "650 µs from 50 µs, mrc ran to 3,000 µs; it may take 390 µs)"]
    # a flap is its cuts: a storm of short ones need not be named (it may be), a long one must
    storm = scenario(f"{{at_us: 50, kind: flap, link: '{CUT}', count: 6, down_us: 80, "
                     "up_us: 40}")
    assert invariants.outage_us(storm.failures[0], storm) == (50.0, 80.0)
    assert check(storm, all_modes(run("mrc", end_us=3000.0))) == []
    assert check(storm, all_modes(run("mrc", end_us=3000.0,
                                      events=[rewrite(300.0, [CUT_NAME])]))) == []
    long_cuts = scenario(f"{{at_us: 50, kind: flap, link: '{CUT}', count: 2, down_us: 500, "
                         "up_us: 40}")
    assert letters(check(long_cuts, all_modes(run("mrc", end_us=3000.0)))) == ["e"]
    port = scenario("{at_us: 50, kind: nic_port_down, nic: nic1, plane: 0, until_us: 400}")
    assert check(port, all_modes(run("mrc", end_us=3000.0))) == []
    blamed = check(port, all_modes(run("mrc", end_us=3000.0,
                                       events=[rewrite(100.0, [CUT_NAME])])))
    assert letters(blamed) == ["e"] and "(failed: none it may name)" in blamed[0].detail
    ev = scenario("{at_us: 0, kind: ev_loss, nic: nic0, ev: 3, percent: 20}")
    assert invariants.failed_elements(ev.failures[0], ev.topology) == set()


def test_e_time_to_steady_no_worse_than_without_the_controller() -> None:
    s = scenario(f"{{at_us: 100, kind: link_down, link: '{CUT}'}}")
    cut = [(100.0, f"link_down {CUT} at 100 µs")]
    # 2 bins of 10 before; back to 10 from bin 4 (100 µs after) or bin 6 (200 µs after)
    quick = [10, 10, 0, 0, 10, 10, 10, 10, 10, 10, 10]
    slow = [10, 10, 0, 0, 0, 0, 10, 10, 10, 10, 10]
    never = [10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    def steady(mode: str, goodput: list[int], p99: float | None = 100.0) -> RunResult:
        return run(mode, p99, end_us=540.0, goodput=goodput, failures=cut,
                   events=[rewrite(300.0, [CUT_NAME])] if mode == "mrc" else [])

    assert invariants.steady_times(steady("mrc", quick)) == {100.0: 100.0}
    ok = all_modes(steady("mrc", quick))
    ok["mrc_no_controller"] = steady("mrc_no_controller", slow)
    assert check(s, ok) == []
    worse = all_modes(steady("mrc", slow))
    worse["mrc_no_controller"] = steady("mrc_no_controller", quick)
    found = check(s, worse)
    assert [b.detail for b in found] == [
        "failure at 100 µs: mrc steady after 200.0 µs, mrc_no_controller after 100.0 µs"]
    # never steady and not done: infinite; never steady but done: the rest of the run
    assert invariants.steady_times(steady("mrc", never, None)) == {100.0: math.inf}
    # ... until the end of its last bin (540 µs: the bin 500-550)
    assert invariants.steady_times(steady("mrc", never)) == {100.0: 450.0}


def test_e_both_runs_are_held_to_one_bar() -> None:
    """A failure in the second bin: each run's own reference is its mean goodput, which a
    slower run has lower. The same recovery, then more bins at low goodput: on its own bar
    it steadies sooner; held to the higher bar both steady together, and no breach."""
    s = scenario(f"{{at_us: 50, kind: link_down, link: '{CUT}'}}")
    cut = [(50.0, f"link_down {CUT} at 50 µs")]
    fast = [12, 0, 0, 4, 12, 12, 12, 12]   # mean 8: back to 90 % of it from bin 3
    slow = fast + [1] * 6                   # mean 5: from bin 2 (4 of its 3-bin mean)

    def ran(mode: str, goodput: list[int]) -> RunResult:
        return run(mode, 100.0, end_us=len(goodput) * 50.0 - 10, goodput=goodput,
                   failures=cut, events=[rewrite(150.0, [CUT_NAME])] if mode == "mrc" else [])

    mrc, nc = ran("mrc", fast), ran("mrc_no_controller", slow)
    assert invariants.steady_times(mrc) == {50.0: 100.0}
    assert invariants.steady_times(nc) == {50.0: 50.0}       # its own, lower bar
    assert invariants.steady_times(nc, mrc) == {50.0: 100.0}
    runs = all_modes(mrc)
    runs["mrc_no_controller"] = nc
    assert check(s, runs) == []


# -- the table, the command, the files -------------------------------------------------------

def outcomes(s: Scenario, runs: dict[str, RunResult]) -> list[sweep.Outcome]:
    planned = sweep.plan_runs([s], modes=tuple(runs))
    return [sweep.Outcome(r, runs[r.mode]) for r in planned]


def test_the_table_and_the_breaches(tmp_path: Path) -> None:
    s = scenario()
    done = outcomes(s, all_modes(run("mrc", None), ecmp=190.0))
    text, found = matrix.report(done, tmp_path)
    assert letters(found) == ["a", "b", "b", "c"]   # lost; ∞ above ecmp, spray and 1.05 x nc
    assert ("| hand | 3 | 0 / 0 / 190.0 / — | 0 / 0 / 100.0 / — | 1,000 / 1 / ∞ / — | "
            "0 / 0 / 100.0 / — | a, b, c |") in text
    assert "- hand seed 3: (a) mrc lost 1,000 bytes and 1 of 1 connections" in text
    assert "- hand seed 3: (b) mrc p99 ∞ µs > ecmp's 190.0 µs" in text
    assert (tmp_path / matrix.INVARIANTS_MD).read_text() == text


def test_sweep_invariants_exits_1_on_a_breach(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "hand.yaml"
    path.write_text(f"name: hand\ntopology: {ROOT / 'topologies' / 'tiny.yaml'}\n"
                    "workload: {kind: ring_allreduce, bytes: 4096}\n")
    results = {"good": all_modes(), "bad": all_modes(run("mrc", 200.0))}

    for case, expected in (("good", 0), ("bad", 1)):
        def fake(runs: list[sweep.Run], out: Path, *_a: object, **_k: object
                 ) -> sweep.SweepResult:
            return sweep.SweepResult(out, [sweep.Outcome(r, results[case][r.mode])  # noqa: B023
                                           for r in runs])
        monkeypatch.setattr(sweep, "run_sweep", fake)
        p = argparse.ArgumentParser()
        sweep.add_sweep_parser(p.add_subparsers(dest="command", required=True))
        args = p.parse_args(["sweep", str(path), "--invariants", "--quiet",
                             "-o", str(tmp_path / case)])
        assert args.func(args) == expected
        printed = capsys.readouterr().out
        assert f"invariants: {expected and 3} breach(es)" in printed   # b (x2) and c
    assert "hand seed 1: (b) mrc p99 200.0 µs > ecmp's 100.0 µs" in printed
    assert "| hand | 1 | 0 / 0 / 100.0 / — | 0 / 0 / 100.0 / — | 0 / 0 / 200.0 / — |" in printed


def test_every_matrix_scenario_loads_and_runs_every_mode() -> None:
    assert len(MATRIX) >= 15
    names = set()
    for path in MATRIX:
        s = load(path)
        assert s.warnings == (), path
        assert s.modes == MODES, path
        assert s.name == path.stem, path   # the report folder is the file's name
        names.add(s.name)
    assert len(names) == len(MATRIX)
