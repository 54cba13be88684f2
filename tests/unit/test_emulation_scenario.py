"""Scenario YAML (emulation/scenario.py): what a good file gives, and where a bad one fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulation.scenario import MODES, Failure, ScenarioError, load, loads

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "topologies" / "tiny.yaml")


def scenario_text(*lines: str, workload: str = "{kind: ring_allreduce, bytes: 4096}") -> str:
    return "\n".join(["name: t", f"topology: {TINY}", f"workload: {workload}", *lines]) + "\n"


def error_of(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        loads(text, "s.yaml")
    return str(info.value)


def test_the_shipped_scenarios_load() -> None:
    files = sorted((ROOT / "scenarios").glob("*.yaml"))
    assert files
    for path in files:
        s = load(path)
        assert s.topology.nics and s.workload.bytes > 0, path


def test_defaults_and_fields() -> None:
    s = loads(scenario_text(
        "links: {rate_gbps: 25, delay_ns: 100}", "modes: [mrc, ecmp]", "seed: 9",
        "failures:",
        "  - {at_us: 50, kind: flap, link: 'p0-t1-0:0', count: 3, down_us: 10, up_us: 20}",
        "  - {at_us: 10, kind: switch_reboot, switch: p1-t1-1}",
        "  - {at_us: 5, kind: loss, link: 'p0-t0-1:3', percent: 0.5, until_us: 90}",
        "  - {at_us: 7, kind: nic_port_down, nic: nic2, plane: 1}"))
    assert (s.links.rate_gbps, s.links.delay_ns, s.modes, s.seed) == (25.0, 100, ("mrc", "ecmp"), 9)
    assert s.workload.nics == ("nic0", "nic1", "nic2", "nic3")
    assert [f.kind for f in s.failures] == ["loss", "nic_port_down", "switch_reboot", "flap"]
    assert s.failures[0] == Failure(5, "loss", link=("p0-t0-1", 3), percent=0.5, until_us=90)
    assert s.failures[3].count == 3 and s.failures[2].down_us == 200
    assert loads(scenario_text()).modes == MODES


def test_a_generated_topology() -> None:
    s = loads("name: g\ntopology: {generate: {planes: 2, radix: 4, nics: 6}}\n"
              "workload: {kind: permutation, bytes: 100}\n")
    assert len(s.topology.nics) == 6 and s.topology.planes == 2


@pytest.mark.parametrize(("extra", "workload", "where"), [
    ("links: {rate_gbps: 0}", None, "s.yaml:4:20: error: links.rate_gbps: 0 is out of range"),
    ("modes: [mrc, fast]", None, "s.yaml:4:14: error: modes[1]: 'fast' is not one of"),
    ("modes: [mrc, mrc]", None, "modes: list each mode once"),
    ("", "{kind: ring, bytes: 10}", "workload.kind: 'ring' is not one of"),
    ("", "{kind: permutation, bytes: 10, nics: [nic0, nic9]}",
     "workload.nics[1]: no NIC 'nic9' in topology tiny"),
    ("", "{kind: permutation, bytes: 10, nics: [nic0]}", "needs at least two NICs"),
    ("", "{kind: incast, bytes: 10, senders: [nic1], receiver: nic1}",
     "senders: at least one, and not the receiver"),
    ("", "{kind: incast, bytes: 10, senders: [nic0], receiver: nic2, victim: [nic1, nic3]}",
     None),   # nic3 is under nic2's T0s: fine
    ("", "{kind: incast, bytes: 10, senders: [nic2], receiver: nic0, victim: [nic3, nic2]}",
     "the victim's NICs must be two others"),
    ("", "{kind: incast, bytes: 10, senders: [nic0], receiver: nic2, victim: [nic1, nic0]}",
     "the victim's NICs must be two others"),
    ("", "{kind: permutation, bytes: 10, victim: [nic1, nic0]}", "only an incast has 'victim'"),
    ("failures:\n  - {at_us: 1, kind: link_down, link: 'p0-t0-0:0'}", None,
     "failures[0].link: p0-t0-0:0 is not an end of a switch-to-switch cable"),
    ("failures:\n  - {at_us: 1, kind: link_down}", None, "a link_down needs 'link'"),
    ("failures:\n  - {at_us: 1, kind: link_down, link: 'x:2', count: 2}", None,
     "failures[0].count: a link_down has no 'count'"),
    ("failures:\n  - {at_us: 9, kind: loss, link: 'p0-t0-0:2', percent: 1, until_us: 9}", None,
     "until_us must come after at_us"),
    ("failures:\n  - {at_us: 1, kind: switch_reboot, switch: nope}", None,
     "failures[0].switch: no switch 'nope'"),
    ("profile: {ev_count: 12}", None, "ev_count 12 must be a power of two"),
    ("transport: {window: 2000}", None, "transport.window: at most 1024"),
    ("speed: 3", None, "unknown key 'speed'"),
])
def test_errors_name_the_line_and_field(extra: str, workload: str | None,
                                        where: str | None) -> None:
    text = scenario_text(extra, **({"workload": workload} if workload else {}))
    if where is None:
        loads(text, "s.yaml")
        return
    assert where in error_of(text)


def test_a_missing_topology_file_and_bad_yaml() -> None:
    assert "topology: the topology does not load" in error_of(
        "name: t\ntopology: nowhere.yaml\nworkload: {kind: permutation, bytes: 1}\n")
    assert "s.yaml:2:" in error_of("name: t\n  bad: [\n")
    assert "missing required key 'workload'" in error_of(f"name: t\ntopology: {TINY}\n")
