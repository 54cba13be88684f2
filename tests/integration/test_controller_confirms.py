"""The controller confirms before it acts (controller/repair/confirm.py), in emulated runs on the
tiny fabric: congestion raises EV events but its probes answer, so nothing is denied; a cut cable
and a silent T1 are declared, and nothing else; a NIC port down makes no cable suspect."""

from __future__ import annotations

from pathlib import Path

import emulated
from emulated import run

from controller.devices.session import Program
from emulation.metrics import RunResult
from emulation.scenario import Scenario

TINY = Path(__file__).resolve().parents[2] / "topologies" / "tiny.yaml"


def scenario(workload: str, *failures: str, rto_us: int = 100) -> Scenario:
    return emulated.scenario(workload, *failures, name="confirm", rto_us=rto_us,
                             lines=["links: {rate_gbps: 10, delay_ns: 500}"])


def events(result: RunResult, kind: str) -> list[dict[str, object]]:
    return [e for e in result.events if e["event"] == kind]


def declared(result: RunResult) -> set[str]:
    return {str(e.get("link") or e.get("switch")) for e in events(result, "verdict") if e["down"]}


def delivered(result: RunResult) -> None:
    summary = result.summary()
    assert result.finished and summary["bytes_lost"] == 0, summary


def test_a_burst_with_a_short_rto_is_suspected_probed_and_denies_nothing(
        switch_program: Program) -> None:
    # A timeout under one unloaded round trip (10 µs): packets queued behind the burst time
    # out and their EVs are reported. (Since a NIC's connections share its line rate, the
    # burst no longer queues in the NICs' own ports, and at 30 µs nothing times out; since a
    # SKIP EV's turn stays in its plane, the receivers' plane ports queue evenly, and at
    # 12 µs nothing times out either.)
    result = run(scenario("{kind: all_to_all, bytes: 262144}", rto_us=10), "mrc",
                 switch_program)
    delivered(result)
    assert events(result, "suspect"), "the burst raised no suspicion: nothing was tested"
    assert any(e["answered"] for e in events(result, "probe"))
    assert declared(result) == set()
    assert events(result, "rewrite") == []          # no EV moved, none DENIED


def test_a_cut_cable_is_declared_and_nothing_else(switch_program: Program) -> None:
    s = scenario("{kind: ring_allreduce, bytes: 262144}",
                 "{at_us: 100, kind: link_down, link: 'p0-t0-0:2'}")
    mrc, ecmp = run(s, "mrc", switch_program), run(s, "ecmp", switch_program)
    delivered(mrc)
    assert declared(mrc) == {"p0-t0-0:p0-t1-0"}
    (verdict,) = [e for e in events(mrc, "verdict") if e["down"]]
    assert verdict["probes_lost"] >= 3 and verdict["alternatives_answered"]
    for rewrite in events(mrc, "rewrite"):
        assert rewrite["links_down"] == ["0:p0-t0-0-p0-t1-0"] and rewrite["switches_down"] == []
        assert rewrite["denied"] == 0
    assert mrc.summary()["mct_p99_us"] < ecmp.summary()["mct_p99_us"]


def test_a_silent_t1_is_declared_by_its_probes_and_nothing_else(switch_program: Program) -> None:
    result = run(scenario("{kind: ring_allreduce, bytes: 524288}",
                          "{at_us: 50, kind: blackhole, switch: p0-t1-0, until_us: 1050}"),
                 "mrc", switch_program)
    delivered(result)
    assert declared(result) == {"p0-t1-0"}
    (rewrite, *_) = events(result, "rewrite")
    assert rewrite["switches_down"] == ["p0-t1-0"] and rewrite["links_down"] == []


def test_a_nic_port_down_makes_no_cable_suspect(switch_program: Program) -> None:
    result = run(scenario("{kind: ring_allreduce, bytes: 262144}",
                          "{at_us: 20, kind: nic_port_down, nic: nic1, plane: 0, until_us: 1000}"),
                 "mrc", switch_program)
    delivered(result)
    # The NICs keep the losses of their ports going down off their EVs (nic_counter[32]): no EV
    # event reaches the controller at all (tests/controller/test_confirm.py: one that did would
    # be set aside as the NIC's own).
    assert events(result, "ev_event") == [] and events(result, "suspect") == []
    assert declared(result) == set() and events(result, "rewrite") == []


def test_a_cut_no_traffic_crosses_is_found_by_the_idle_sweep_alone(
        switch_program: Program) -> None:
    """nic0 and nic1 share their T0s: their ring never reaches a T1, so no EV event can name
    the cut; the idle sweep's probes do, and confirmation declares it."""
    ring = "{kind: ring_allreduce, bytes: 1048576, nics: [nic0, nic1]}"
    cut = "{at_us: 20, kind: link_down, link: 'p0-t0-1:2'}"
    swept = run(scenario(ring, cut), "mrc", switch_program)
    delivered(swept)
    assert events(swept, "ev_event") == []                  # nothing the NICs could see
    assert declared(swept) == {"p0-t0-1:p0-t1-0"}
    (suspect,) = events(swept, "suspect")
    assert suspect["reporters"] == ["idle-probe"] and int(suspect["at_us"]) <= 200
    blind = emulated.scenario(ring, cut, name="confirm",
                              lines=["links: {rate_gbps: 10, delay_ns: 500}",
                                     "controller: {idle_probe_interval_us: 0}"])
    unswept = run(blind, "mrc", switch_program)
    delivered(unswept)
    assert declared(unswept) == set() and events(unswept, "suspect") == []


def test_the_idle_sweep_leaves_cables_with_traffic_alone(switch_program: Program) -> None:
    """The ring crosses every T0-T1 cable of the tiny fabric all the time: the sweep sends no
    probe, so mrc's run is mrc_no_controller's to the packet."""
    s = scenario("{kind: ring_allreduce, bytes: 524288}")
    mrc, alone = run(s, "mrc", switch_program), run(s, "mrc_no_controller", switch_program)
    delivered(mrc)
    assert mrc.summary()["wire_hops"] == alone.summary()["wire_hops"]
    assert [m.arrived_us for m in mrc.messages] == [m.arrived_us for m in alone.messages]
