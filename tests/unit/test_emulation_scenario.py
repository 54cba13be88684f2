"""Scenario YAML (emulation/scenario.py): what a good file gives, and where a bad one fails."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from controller.cli import main
from emulation.scenario import MODES, CableOverride, Failure, ScenarioError, load, loads

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


def test_the_medium_matrix_is_what_its_generator_writes_and_loads(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "generate_medium", ROOT / "scenarios" / "matrix-medium" / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    written = generator.write(tmp_path)
    shipped = sorted((ROOT / "scenarios" / "matrix-medium").glob("*.yaml"))
    assert [p.name for p in shipped] == sorted(p.name for p in written)
    assert {p.stem for p in shipped} == {p.stem for p in (ROOT / "scenarios" / "matrix").glob("*.yaml")}
    for path in shipped:
        assert path.read_text() == (tmp_path / path.name).read_text(), path
        s = load(path)
        assert len(s.topology.nics) == 32, path


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


# -- the extended schema (issue 22) ------------------------------------------------------------

def test_cables_qos_and_loss_direction() -> None:
    s = loads(scenario_text(
        "links: {rate_gbps: 10, queue_packets: 100}",
        "cables:",
        "  - {link: 'p0-t1-0:1', rate_gbps: 2.5, delay_ns: 3000}",
        "  - {link: 'nic3:1', queue_packets: 8}",
        "qos: {trim_threshold: 6, ecn_threshold: 3}",
        "failures:",
        "  - {at_us: 5, kind: loss, link: 'nic1:0', percent: 2, direction: in}",
        "  - {at_us: 6, kind: loss, link: 'p0-t0-0:2', percent: 2}"))
    assert s.cables == (CableOverride(("p0-t1-0", 1), 2.5, 3000, None),
                        CableOverride(("nic3", 1), None, None, 8))
    assert (s.topology.qos.trim_threshold, s.topology.qos.ecn_threshold) == (6, 3)
    assert s.topology.qos.trim_bytes == 160 and s.topology.nics   # the rest as the file says
    assert [(f.link, f.direction) for f in s.failures] == [(("nic1", 0), "in"),
                                                           (("p0-t0-0", 2), "both")]
    assert s.failures[0].describe() == "loss nic1:0 2% in at 5 µs"
    assert s.warnings == ()


def test_blackhole_and_ev_loss() -> None:
    s = loads(scenario_text(
        "profile: {ev_count: 8, backups: 2}",
        "failures:",
        "  - {at_us: 10, kind: blackhole, switch: p0-t1-0, until_us: 90}",
        "  - {at_us: 20, kind: blackhole, link: 'nic2:1'}",
        "  - {at_us: 30, kind: blackhole, link: 'p1-t1-1:0', until_us: 40}",
        "  - {at_us: 0, kind: ev_loss, nic: nic0, ev: 11, percent: 20, until_us: 500}"))
    assert s.failures[0] == Failure(0, "ev_loss", nic="nic0", ev=11, percent=20.0, until_us=500)
    assert s.failures[1] == Failure(10, "blackhole", switch="p0-t1-0", until_us=90)
    assert s.failures[2].link == ("nic2", 1) and s.failures[2].until_us == 0
    assert [f.describe() for f in s.failures] == [
        "ev_loss nic0 EV 11 20% at 0 µs", "blackhole p0-t1-0 at 10 µs until 90 µs",
        "blackhole nic2:1 at 20 µs", "blackhole p1-t1-1:0 at 30 µs until 40 µs"]


def test_workload_lists_flows_start_and_names() -> None:
    s = loads(scenario_text(workload="\n".join([
        "", "  - {kind: ring_allreduce, bytes: 4096}",
        "  - {kind: flow, src: nic0, dst: nic2, bytes: 100, path: [1, 0], start_us: 70}",
        "  - {kind: all_to_all, bytes: 10, nics: [nic1, nic3], name: bg, iterations: 2}",
        "  - {kind: incast, bytes: 10, senders: [nic0], receiver: nic2, victim: [nic1, nic3]}",
    ])))
    assert s.workload is s.workloads[0] and s.workload.kind == "ring_allreduce"
    assert [w.label for w in s.workloads] == ["main", "flow1", "bg", "incast3"]
    flow = s.workloads[1]
    assert (flow.src, flow.dst, flow.path, flow.start_us) == ("nic0", "nic2", (1, 0), 70)
    assert s.workloads[2].iterations == 2 and s.workloads[0].start_us == 0
    one = loads(scenario_text(workload="{kind: flow, src: nic3, dst: nic0, bytes: 5, name: main}"))
    assert [(w.kind, w.label, w.path) for w in one.workloads] == [("flow", "main", None)]


# line 3 is `workload:`; a list item's mapping starts at column 5, its keys after that
W = "\n  - {kind: ring_allreduce, bytes: 4096}\n  - "


@pytest.mark.parametrize(("extra", "workload", "where"), [
    ("cables:\n  - {link: 'p0-t0-0:0', rate_gbps: 1}", None,
     "s.yaml:5:12: error: cables[0].link: p0-t0-0:0 is not an end of a switch-to-switch cable "
     "or NIC:PLANE of the topology (it is nic0's cable in plane 0: name it nic0:0)"),
    ("cables:\n  - {link: 'nic0:2', rate_gbps: 1}", None,
     "cables[0].link: nic0:2 is not an end of a switch-to-switch cable or NIC:PLANE"),
    ("cables:\n  - {link: 'p0-t0-0:2'}", None,
     "s.yaml:5:5: error: cables[0]: give its rate_gbps, delay_ns or queue_packets"),
    ("cables:\n  - {link: 'p0-t0-0:2', delay_ns: 1}\n  - {link: 'p0-t1-0:0', rate_gbps: 1}",
     None, "s.yaml:6:12: error: cables[1].link: this cable is already given (line 5); each cable "
     "once"),
    ("cables:\n  - {link: 'nic0:0', rate_gbps: 0}", None,
     "s.yaml:5:33: error: cables[0].rate_gbps: 0 is out of range"),
    ("cables:\n  - {link: 'nic0:0', speed: 1}", None, "cables[0].speed: unknown key 'speed'"),
    ("qos: {trim_threshold: -1}", None, "s.yaml:4:23: error: qos.trim_threshold: -1 is out"),
    ("qos: {dscp_control: 64}", None, "qos.dscp_control: 64 is out of range (0..63)"),
    ("qos: {ecn: 3}", None, "qos.ecn: unknown key 'ecn'"),
    ("failures:\n  - {at_us: 1, kind: link_down, link: 'nic0:2'}", None,
     "failures[0].link: nic0:2 is not an end of a switch-to-switch cable or NIC:PLANE of the "
     "topology"),
    ("failures:\n  - {at_us: 1, kind: loss, link: 'p0-t0-0:2', percent: 1, direction: up}",
     None, "s.yaml:5:70: error: failures[0].direction: 'up' is not one of: both, out, in"),
    ("failures:\n  - {at_us: 1, kind: link_down, link: 'p0-t0-0:2', direction: in}", None,
     "failures[0].direction: a link_down has no 'direction'"),
    ("failures:\n  - {at_us: 1, kind: blackhole}", None,
     "s.yaml:5:5: error: failures[0]: a blackhole needs a 'switch' or a 'link' (one of them)"),
    ("failures:\n  - {at_us: 1, kind: blackhole, switch: p0-t1-0, link: 'p0-t0-0:2'}", None,
     "a blackhole needs a 'switch' or a 'link' (one of them)"),
    ("failures:\n  - {at_us: 1, kind: blackhole, switch: nic0}", None,
     "failures[0].switch: no switch 'nic0'"),
    ("failures:\n  - {at_us: 9, kind: blackhole, link: 'nic0:1', until_us: 3}", None,
     "failures[0].until_us: until_us must come after at_us"),
    ("failures:\n  - {at_us: 1, kind: ev_loss, nic: nic0, ev: 20, percent: 20}", None,
     "s.yaml:5:46: error: failures[0].ev: EV 20 is not in the profile: its EVs are 0..19 "
     "(16 + 2 backups x 2 planes)"),
    ("failures:\n  - {at_us: 1, kind: ev_loss, nic: nic0, ev: 19, percent: 20}", None, None),
    ("failures:\n  - {at_us: 1, kind: ev_loss, nic: nic9, ev: 1, percent: 20}", None,
     "failures[0].nic: no NIC 'nic9'"),
    ("failures:\n  - {at_us: 1, kind: ev_loss, nic: nic0, percent: 20}", None,
     "a ev_loss needs 'ev'"),
    ("failures:\n  - {at_us: 1, kind: ev_loss, nic: nic0, ev: 1, percent: 101}", None,
     "failures[0].percent: 101 is out of range"),
    ("failures:\n  - {at_us: 1, kind: ev_loss, nic: nic0, ev: 1, percent: 5, plane: 1}", None,
     "failures[0].plane: a ev_loss has no 'plane'"),
    ("", "[]", "s.yaml:3:11: error: workload: list at least one workload"),
    ("", W + "{kind: flow, src: nic0, bytes: 10}", "s.yaml:5:5: error: workload[1]: a flow "
     "needs 'dst'"),
    ("", W + "{kind: flow, src: nic0, dst: nic0, bytes: 10}",
     "workload[1].dst: a flow goes to another NIC"),
    ("", W + "{kind: flow, src: nic0, dst: nic1, bytes: 10, nics: [nic1]}",
     "workload[1].nics: a flow names src and dst, not nics"),
    ("", W + "{kind: flow, src: nic0, dst: nic1, bytes: 10, path: [2, 0]}",
     "s.yaml:5:58: error: workload[1].path[0]: 2 is out of range (0..1)"),
    ("", W + "{kind: flow, src: nic0, dst: nic1, bytes: 10, path: [0, 2]}",
     "workload[1].path[1]: 2 is out of range (0..1)"),
    ("", W + "{kind: flow, src: nic0, dst: nic1, bytes: 10, path: [0]}",
     "workload[1].path: expected [PLANE, T1_INDEX]"),
    ("", W + "{kind: flow, src: nic0, dst: nic1, bytes: 1, path: [0, 0]}\n"
     "  - {kind: flow, src: nic1, dst: nic0, bytes: 1, path: [0, 1]}",
     "s.yaml:6:5: error: workload[2].path: nic1 and nic0 share one connection: it is already "
     "pinned to another path"),
    ("", W + "{kind: permutation, bytes: 10, src: nic0}",
     "workload[1].src: only a flow has 'src'"),
    ("", W + "{kind: permutation, bytes: 10, start_us: -5}",
     "workload[1].start_us: -5 is out of range"),
    ("", W + "{kind: permutation, bytes: 10, name: main}",
     "workload[1].name: 'main' is the flow of the first workload"),
    ("", W + "{kind: permutation, bytes: 10, name: victim}",
     "workload[1].name: 'victim' is the flow of an incast's victim"),
    ("", W + "{kind: permutation, bytes: 10, name: x}\n  - {kind: flow, src: nic0, dst: nic1, "
     "bytes: 1, name: x}", "workload[2].name: flow 'x' is already the flow of the workload on "
     "line 5"),
    ("", "\n  - {kind: permutation, bytes: 10, name: first}",
     "workload[0].name: the first workload's flow is 'main'"),
    ("", W + "{kind: ring, bytes: 10}", "s.yaml:5:12: error: workload[1].kind: 'ring' is not"),
])
def test_new_keys_errors_name_the_line_and_field(extra: str, workload: str | None,
                                                 where: str | None) -> None:
    test_errors_name_the_line_and_field(extra, workload, where)


def warnings_of(*lines: str, workload: str = "{kind: ring_allreduce, bytes: 4096}") -> list[str]:
    return list(loads(scenario_text("duration_us: 1000", *lines, workload=workload),
                      "s.yaml").warnings)


def test_warnings_trace_the_failures_in_time_order() -> None:
    assert warnings_of("failures:",
                       "  - {at_us: 10, kind: link_down, link: 'p0-t0-0:2'}",
                       "  - {at_us: 50, kind: link_up, link: 'p0-t1-0:0'}") == []
    got = warnings_of(
        "failures:",
        "  - {at_us: 50, kind: link_up, link: 'p0-t1-0:0'}",            # mends the cut at 10
        "  - {at_us: 10, kind: link_down, link: 'p0-t0-0:2'}",
        "  - {at_us: 20, kind: link_down, link: 'p0-t1-0:0'}",           # line 8: cut already
        "  - {at_us: 60, kind: link_up, link: 'p0-t0-0:2'}",             # line 9: up since 50
        "  - {at_us: 1000, kind: switch_reboot, switch: p0-t1-1}",      # line 10: too late
        "  - {at_us: 5, kind: loss, link: 'nic0:0', percent: 0}",        # line 11: nothing
        "  - {at_us: 5, kind: blackhole, switch: p1-t1-0, until_us: 30}",
        "  - {at_us: 30, kind: blackhole, switch: p1-t1-0}",   # the one above ends first: fine
        "  - {at_us: 40, kind: blackhole, link: 'nic0:1', until_us: 90}",
        "  - {at_us: 80, kind: blackhole, link: 'nic0:1'}",               # line 15: already
        "  - {at_us: 1, kind: switch_reboot, switch: p1-t1-1, down_us: 100}",
        "  - {at_us: 50, kind: switch_reboot, switch: p1-t1-1}",         # line 17: off then
        "  - {at_us: 0, kind: nic_port_down, nic: nic1, plane: 1}",
        "  - {at_us: 5, kind: flap, link: 'p1-t0-0:2', count: 2, down_us: 5, up_us: 5}",
        "  - {at_us: 12, kind: flap, link: 'p1-t0-0:2', count: 1}",   # line 19's cut at 15: no-op
        "  - {at_us: 3, kind: ev_loss, nic: nic0, ev: 1, percent: 0, until_us: 4}")
    assert got == [
        "s.yaml:8:5: warning: failures[2]: link_down p0-t1-0:0 at 20 µs does nothing at "
        "20 µs: the cable is down then",
        "s.yaml:9:5: warning: failures[3]: link_up p0-t0-0:2 at 60 µs does nothing at 60 µs: "
        "the cable is up then",
        "s.yaml:10:5: warning: failures[4]: at_us 1000 is not before duration_us 1000: it "
        "never happens",
        "s.yaml:11:5: warning: failures[5]: a loss of 0 % drops nothing",
        "s.yaml:15:5: warning: failures[9]: blackhole nic0:1 at 80 µs does nothing at 80 µs: "
        "the cable is blackholed then",
        "s.yaml:17:5: warning: failures[11]: switch_reboot p1-t1-1 for 200 µs at 50 µs does "
        "nothing at 50 µs: p1-t1-1 is off then",
        "s.yaml:19:5: warning: failures[13]: flap p1-t0-0:2 x2 (5 µs down, 5 µs up) at 5 µs "
        "does nothing at 15 µs: the cable is down then",
        "s.yaml:21:5: warning: failures[15]: a ev_loss of 0 % drops nothing",
    ]
    # a NIC port is traced on its own: down twice is a warning, once per port is not
    assert warnings_of("failures:", "  - {at_us: 1, kind: nic_port_down, nic: nic1}",
                       "  - {at_us: 2, kind: nic_port_down, nic: nic1, plane: 1}",
                       "  - {at_us: 3, kind: nic_port_down, nic: nic1, plane: 0}") == [
        "s.yaml:8:5: warning: failures[2]: nic_port_down nic1 plane 0 at 3 µs does nothing at "
        "3 µs: nic1's port in plane 0 is down then"]


def test_other_warnings() -> None:
    assert warnings_of(workload="\n  - {kind: ring_allreduce, bytes: 4096}\n"
                       "  - {kind: flow, src: nic0, dst: nic1, bytes: 9, start_us: 1000}") == [
        "s.yaml:5:5: warning: workload[1].start_us: 1000 is not before duration_us 1000: "
        "this workload never starts"]
    assert warnings_of("links: {queue_packets: 64}", "cables:",
                       "  - {link: 'nic0:0', rate_gbps: 10, queue_packets: 64}",
                       "  - {link: 'nic1:0', queue_packets: 12}") == [
        "s.yaml:7:5: warning: cables[0]: the same as `links`: nothing changes",
        "s.yaml:5:8: warning: qos.trim_threshold: 16 is not below the queue depth (12 packets):"
        " a full queue drops before it trims"]
    assert warnings_of("qos: {ecn_threshold: 600}") == [
        "s.yaml:5:6: warning: qos.ecn_threshold: 600 is not below the queue depth (512 "
        "packets): a full queue drops before it marks ECN"]


def test_seed_and_output_are_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(scenario_text(), encoding="utf-8")
    for seed in ("-1", str(1 << 32), "x"):
        with pytest.raises(SystemExit) as info:
            main(["emulate", str(path), "--seed", seed])
        assert info.value.code == 2
        assert "argument --seed:" in capsys.readouterr().err
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    for out in ("/proc/x", str(blocker / "out")):
        started = time.perf_counter()
        assert main(["emulate", str(path), "-o", out, "--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: cannot write the report to {out}: ") and "\n" not in err
        assert time.perf_counter() - started < 2   # nothing compiled, nothing run


def test_qos_overrides_a_generated_topology_too() -> None:
    s = loads("name: g\ntopology: {generate: {planes: 2, radix: 4, nics: 4}}\n"
              "qos: {trim_threshold: 5, dscp_control: 40}\n"
              "workload: {kind: permutation, bytes: 100}\n")
    assert (s.topology.qos.trim_threshold, s.topology.qos.dscp_control) == (5, 40)
    assert s.topology.qos.ecn_threshold == 8   # the generator's default, untouched


def test_a_pinned_path_needs_its_t1_cabled_to_both_t0s() -> None:
    missing = ROOT / "tests" / "topologies" / "tiny-missing-cable.yaml"   # no p0-t0-0 - p0-t1-1
    text = (f"name: m\ntopology: {missing}\n"
            "workload: {kind: flow, src: nic2, dst: nic0, bytes: 9, path: [0, PICK]}\n")
    assert loads(text.replace("PICK", "0")).workload.path == (0, 0)
    assert error_of(text.replace("PICK", "1")).endswith(
        "s.yaml:3:66: error: workload.path[1]: no cable joins T1 p0-t1-1 to nic0's T0 p0-t0-0 "
        "in plane 0")


def test_the_controller_s_confirmation_is_set_in_the_scenario() -> None:
    s = loads(scenario_text("controller: {confirm_probes: 5, probe_timeout_us: 90}"), "c.yaml")
    assert (s.controller.confirm_probes, s.controller.probe_timeout_us) == (5, 90)
    assert "controller.confirm_probes: 0 is out of range" in error_of(
        scenario_text("controller: {confirm_probes: 0}"))


def test_the_hosts_probe_pace_is_set_in_the_transport() -> None:
    assert loads(scenario_text(""), "c.yaml").transport.probe_interval_us == 200
    s = loads(scenario_text("transport: {probe_interval_us: 50}"), "c.yaml")
    assert s.transport.probe_interval_us == 50
    assert "transport.probe_interval_us: 0 is out of range" in error_of(
        scenario_text("transport: {probe_interval_us: 0}"))


def test_the_idle_sweep_is_on_by_default_and_0_turns_it_off() -> None:
    assert loads(scenario_text(""), "c.yaml").controller.idle_probe_interval_us == 100
    off = loads(scenario_text("controller: {idle_probe_interval_us: 0}"), "c.yaml")
    assert off.controller.idle_probe_interval_us == 0
    assert "controller.idle_probe_interval_us: -5 is out of range" in error_of(
        scenario_text("controller: {idle_probe_interval_us: -5}"))
    assert "controller.period_us: 0 is out of range" in error_of(
        scenario_text("controller: {period_us: 0, idle_probe_interval_us: 0}"))


# -- NSCC's fabric figures: the base RTT and each NIC's line rate ----------------------------

# One cable's share of an MTU packet's round trip: its delay both ways, the packet and its
# SACK serialized (1024 + 160 + 150 bytes at 10 Gb/s: 1.0672 µs; 500 ns each way).
CABLE_10G = 2 * 0.5 + (1024 + 160 + 150) * 8 / 10e3
EXTRA_5G = (1024 + 160 + 150) * 8 / 5e3 - (1024 + 160 + 150) * 8 / 10e3


@pytest.mark.parametrize(("cables", "rtt"), [
    ((), 4 * CABLE_10G),   # every cable alike: four of them
    # one slow T0-T1 cable: its path is the longest, one cable slower (it was four)
    (("  - {link: 'p0-t0-0:2', rate_gbps: 5}",), 4 * CABLE_10G + EXTRA_5G),
    # named by its T1 end, and a longer delay on a NIC's cable (both ways)
    (("  - {link: 'p1-t1-1:0', rate_gbps: 5}", "  - {link: 'nic2:1', delay_ns: 2500}"),
     4 * CABLE_10G + EXTRA_5G + 2 * 2.0),
    # a slow plane: its path has four slow cables
    (tuple(f"  - {{link: '{c}', rate_gbps: 5}}" for c in
           ("p1-t0-0:2", "p1-t0-0:3", "p1-t0-1:2", "p1-t0-1:3", "nic0:1", "nic1:1", "nic2:1",
            "nic3:1")), 4 * CABLE_10G + 4 * EXTRA_5G),
])
def test_the_base_rtt_is_the_longest_path_s_with_each_cable_s_own_rate_and_delay(
        cables: tuple[str, ...], rtt: float) -> None:
    s = loads(scenario_text("links: {rate_gbps: 10, delay_ns: 500}",
                            *(("cables:", *cables) if cables else ())))
    assert s.longest_path_rtt_us() == pytest.approx(rtt)
    cc = s.transport.nscc(s.longest_path_rtt_us(), s.mtu, 20)
    assert cc is not None and cc.base_rtt_us == pytest.approx(rtt)


def test_a_nic_s_line_rate_is_its_own_cables_only() -> None:
    s = loads(scenario_text("links: {rate_gbps: 10}", "cables:",
                            "  - {link: 'p0-t0-0:2', rate_gbps: 5}",   # a fabric cable: not a NIC's
                            "  - {link: 'nic1:1', rate_gbps: 25}",
                            "  - {link: 'nic3:0', rate_gbps: 40}"))
    assert [s.nic_port_rate_gbps("nic0", p) for p in (0, 1)] == [10, 10]
    assert [s.nic_port_rate_gbps("nic1", p) for p in (0, 1)] == [10, 25]
    assert [s.nic_port_rate_gbps("nic3", p) for p in (0, 1)] == [40, 10]
    assert [s.nic_line_rate_gbps(n, 2) for n in ("nic0", "nic1", "nic3")] == [20, 35, 50]
