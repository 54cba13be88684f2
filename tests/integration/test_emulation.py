"""Emulated runs (emulation/): the real P4 programs on the tiny fabric in virtual time, one short
scenario per failure kind, each workload, determinism, and `mrc-ctl emulate` end to end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from emulated import run, scenario

from controller.cli import main
from controller.devices.session import Program
from emulation.metrics import RunResult
from emulation.report import report_json
from emulation.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"
CUT = "p0-t0-0:2"   # p0-t0-0 <-> p0-t1-0


def assert_delivered(result: RunResult) -> dict[str, object]:
    summary = result.summary()
    assert result.finished, summary
    assert summary["bytes_lost"] == 0 and summary["completed"] == summary["messages"], summary
    return summary


@pytest.mark.parametrize("failure", [
    f"{{at_us: 20, kind: link_down, link: '{CUT}'}}",
    f"{{at_us: 20, kind: flap, link: '{CUT}', count: 4, down_us: 15, up_us: 15}}",
    "{at_us: 20, kind: switch_reboot, switch: p0-t1-0, down_us: 60}",
    f"{{at_us: 0, kind: loss, link: '{CUT}', percent: 5}}",
    "{at_us: 20, kind: nic_port_down, nic: nic1, plane: 0, until_us: 150}",
], ids=["link_down", "flap", "switch_reboot", "loss", "nic_port_down"])
def test_mrc_loses_nothing_through_each_failure_kind(failure: str,
                                                     switch_program: Program) -> None:
    result = run(scenario("{kind: ring_allreduce, bytes: 16384}", failure), "mrc",
                 switch_program)
    summary = assert_delivered(result)
    assert summary["dropped"] > 0, "the failure cost no packet: it did not happen"
    assert summary["retransmitted"] > 0
    assert result.failures[0][1].split()[0] in failure   # marked on the plots


def test_a_cut_cable_mrc_beats_ecmp_and_the_controller_rewrites(
        switch_program: Program) -> None:
    # Long enough for the controller's verdict (probes over the cut cable time out at ~180 µs):
    # the NICs alone route around the cut within a round trip or two.
    s = scenario("{kind: ring_allreduce, bytes: 262144}",
                 f"{{at_us: 30, kind: link_down, link: '{CUT}'}}")
    results = {mode: run(s, mode, switch_program)
               for mode in ("ecmp", "mrc", "mrc_no_controller")}
    summaries = {mode: assert_delivered(r) for mode, r in results.items()}
    assert summaries["mrc"]["mct_p99_us"] < summaries["ecmp"]["mct_p99_us"]
    # ecmp is routed around the cut once the routing protocol has converged: a rewrite
    assert summaries["ecmp"]["rewrites"] > 0
    # the controller saw EV events from more than one NIC and took the cable out everywhere
    rewrites = [e for e in results["mrc"].events if e["event"] == "rewrite"]
    assert rewrites and "0:p0-t0-0-p0-t1-0" in rewrites[0]["links_down"]
    assert len(rewrites[0]["entries"]) == 4   # every NIC, not only those that saw it
    assert summaries["mrc_no_controller"]["rewrites"] == 0
    assert summaries["mrc"]["ev_events"] > 0
    # every bin sees each EV of each connection in one state: 4 NICs x 2 connections x
    # (16 EVs + 2 backups x 2 planes); some left GOOD for ASSUMED_BAD or DENIED
    states = results["mrc"].series.ev_states
    bins = len(states["GOOD"])
    assert {sum(rows[k] for rows in states.values()) for k in range(bins)} == {160}
    assert max(states["ASSUMED_BAD"]) + max(states["DENIED"]) > 0


def test_the_same_seed_gives_the_same_report(switch_program: Program) -> None:
    s = scenario("{kind: permutation, bytes: 32768}", f"{{at_us: 0, kind: loss, link: '{CUT}', "
                 "percent: 10}", "{at_us: 30, kind: link_down, link: 'p1-t0-1:3'}")
    first = report_json(s, [run(s, m, switch_program) for m in ("mrc", "ecmp")])
    again = report_json(s, [run(s, m, switch_program) for m in ("mrc", "ecmp")])
    assert first == again
    other = dataclasses.replace(s, seed=2)
    assert report_json(other, [run(other, "mrc", switch_program)]) != report_json(
        s, [run(s, "mrc", switch_program)])


@pytest.mark.parametrize(("workload", "total"), [
    ("{kind: all_to_all, bytes: 8192}", 12 * 8192),
    ("{kind: permutation, bytes: 20000, iterations: 2}", 2 * 4 * 20000),
    ("{kind: incast, bytes: 65536, senders: [nic1, nic2, nic3], receiver: nic0}", 3 * 65536),
], ids=["all_to_all", "permutation", "incast"])
def test_each_workload_moves_its_bytes(workload: str, total: int,
                                       switch_program: Program) -> None:
    result = run(scenario(workload), "spray", switch_program)
    summary = assert_delivered(result)
    assert summary["bytes"] == total
    # every byte crossed the receivers' host ports at least once
    delivered = sum(sum(rows) for rows in result.series.goodput_bytes.values())
    assert total <= delivered <= total * 1.5
    if "incast" in workload:
        assert summary["trimmed"] > 0   # three into one: the receiver's T0 trims


def test_emulate_writes_the_report_and_refuses_bad_files(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"name: cli\ntopology: {TINY}\ntransport: {{rto_us: 100, reorder_us: 30}}\n"
                    "workload: {kind: ring_allreduce, bytes: 8192}\n"
                    f"failures:\n  - {{at_us: 20, kind: link_down, link: '{CUT}'}}\n")
    out = tmp_path / "report"
    assert main(["emulate", str(path), "--mode", "mrc", "--mode", "ecmp", "--quiet",
                 "-o", str(out), "--check"]) == 0
    data = json.loads((out / "report.json").read_text())
    assert set(data["modes"]) == {"mrc", "ecmp"}
    assert data["scenario"]["failures"] == [f"link_down {CUT} at 20 µs"]
    md = (out / "report.md").read_text()
    assert "| mrc | 24/24 | 0 |" in md   # 2(N-1) steps of N messages
    for name in ("goodput", "mct_cdf", "plane_load", "ev_states", "losses"):
        assert (out / f"{name}.png").stat().st_size > 1000 and f"({name}.png)" in md
    printed = capsys.readouterr().out
    assert "check: passed: mrc delivered every message intact (24 of 24)" in printed
    assert "check: passed: mrc's p99 completion time" in printed
    path.write_text(f"name: cli\ntopology: {TINY}\nworkload: {{kind: ring, bytes: 8}}\n")
    assert main(["emulate", str(path), "-o", str(out)]) == 2
    assert f"{path}:3:18: error: workload.kind: 'ring' is not one of" in capsys.readouterr().err


def test_a_mended_cable_is_probed_and_given_back(switch_program: Program) -> None:
    """The controller takes the cut cable out once its probes confirm it (the cut lasts long
    enough for that), probes it over the T0s' PacketOut and PacketIn once it is mended, and
    after the hold-down rewrites the NICs back to it."""
    s = dataclasses.replace(
        scenario("{kind: ring_allreduce, bytes: 1048576}",
                 f"{{at_us: 30, kind: link_down, link: '{CUT}'}}",
                 f"{{at_us: 400, kind: link_up, link: '{CUT}'}}"),
        controller=dataclasses.replace(Scenario.controller, hold_us=100, probe_interval_us=20))
    result = run(s, "mrc", switch_program)
    assert_delivered(result)
    events = [e for e in result.events if e["event"] != "ev_event"]
    taken = next(e for e in events if e["event"] == "rewrite")
    assert "0:p0-t0-0-p0-t1-0" in taken["links_down"]
    healthy = [e for e in events if e["event"] == "probed_healthy"]
    assert healthy and healthy[0]["at_us"] > 400   # not before the cable was mended
    assert "0:p0-t0-0-p0-t1-0" in {link for e in healthy for link in e["links"]}
    back = [e for e in events if e["event"] == "rewrite" and e["at_us"] > healthy[-1]["at_us"]]
    assert back and back[-1]["links_down"] == [] and back[-1]["switches_down"] == []
