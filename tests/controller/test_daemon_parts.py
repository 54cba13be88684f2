"""controller/daemon without devices: the link probe's packet and its counting rule, the health
model surviving a restart (repair/operator.py's health.json), a probe-proven link coming back
through the correlator, and the NIC inventory's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from controller.daemon.inventory import load_nics
from controller.daemon.probes import LinkProber, parse_probe, probe_frame
from controller.plan.plan import FabricPlan
from controller.plan.usid import carrier_usids
from controller.repair.correlate import EvReport, Verdict
from controller.repair.operator import OperatorError, load_health, save_health
from controller.repair.repairer import Repairer
from controller.topology.errors import TopologyError
from controller.topology.yaml_io import load
from p4rt import PacketIn

MEDIUM = Path(__file__).resolve().parents[2] / "topologies" / "medium.yaml"
LINK = (1, "p1-t0-0", "p1-t1-2")


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return FabricPlan(load(MEDIUM))


def test_a_probe_goes_to_the_t1_and_back_to_its_t0_and_names_its_link(plan: FabricPlan) -> None:
    frame = probe_frame(plan, LINK, 7)
    ip = Ether(frame)[IPv6]
    assert ip.hlim == 2   # the T1 decrements to 1: the T0 punts it on arrival
    usids = carrier_usids(int.from_bytes(bytes(ip)[24:40], "big"))
    assert usids[:3] == [plan.usid("p1-t1-2"), plan.usid("p1-t0-0"), 0]
    assert parse_probe(frame) == (LINK, 7)
    assert parse_probe(bytes(Ether() / IPv6(nh=253) / b"something else")) is None
    assert parse_probe(b"\x00" * 20) is None


def test_a_link_is_healthy_after_three_probes_in_a_row_and_a_lost_one_starts_over(
        plan: FabricPlan) -> None:
    prober = LinkProber(plan, interval_s=1.0, successes=3)
    sent: list[tuple[str, int, bytes]] = []

    def send(t0: str, port: int, frame: bytes) -> bool:
        sent.append((t0, port, frame))
        return True

    def back() -> list[PacketIn]:   # the last probe sent comes back
        return [PacketIn(sent[-1][2], {"ingress_port": sent[-1][1], "reason": 6})]

    assert prober.round(0.0, {LINK}, send, []) == set()
    assert sent[-1][:2] == ("p1-t0-0", 6)          # medium: T0 port 4 + j reaches T1 j
    assert prober.round(0.5, {LINK}, send, back()) == set() and len(sent) == 1   # not due
    assert prober.round(1.0, {LINK}, send, []) == set()                          # 1 in a row
    prober.round(2.0, {LINK}, send, [])          # the second was lost: start over
    prober.round(3.0, {LINK}, send, back())
    prober.round(4.0, {LINK}, send, back())
    assert prober.round(4.5, {LINK}, send, back()) == {LINK}
    assert prober.round(5.0, set(), send, []) == set() and len(sent) == 5


def test_the_health_model_is_saved_before_rewrites_and_resumed_by_a_new_repairer(
        plan: FabricPlan, tmp_path: Path) -> None:
    first = Repairer(plan, [], state=tmp_path, window_s=1.0)
    reports = [EvReport(nic, "nic9", 0, 1, "p1-t1-2", "ASSUMED_BAD", 0.0)
               for nic in ("nic0", "nic1", "nic2")]
    first.correlator.add(reports, 0.0)
    first.poll(0.0)
    assert LINK in load_health(tmp_path).links_down   # type: ignore[union-attr]
    second = Repairer(plan, [], state=tmp_path)
    assert LINK in second.verdict.links_down and LINK in second.probe_targets()
    second.proven_healthy({LINK}, 1.0)
    second.poll(1.0)
    assert LINK in second.verdict.links_down          # the hold-down (1 s) still holds it
    second.poll(2.5)
    assert LINK not in second.verdict.links_down
    assert LINK not in load_health(tmp_path).links_down   # type: ignore[union-attr]


def test_a_health_file_round_trips_and_a_broken_one_is_named(tmp_path: Path) -> None:
    save_health(tmp_path, Verdict({LINK}, {"p0-t1-1"}))
    assert load_health(tmp_path) == Verdict({LINK}, {"p0-t1-1"})
    (tmp_path / "health.json").write_text("[1, 2")
    with pytest.raises(OperatorError, match=r"health\.json: not a health file: bad JSON"):
        load_health(tmp_path)
    with pytest.raises(OperatorError, match=r"health\.json: not a health file"):
        Repairer(FabricPlan(load(MEDIUM)), [], state=tmp_path)   # refused, not reset
    assert (tmp_path / "health.json").read_text() == "[1, 2"


@pytest.mark.parametrize(("data", "problem"), [
    (b"{", "bad JSON (Expecting property name"),
    (b"\xff\xfe{}", "not UTF-8 text (byte 0)"),
    (b'{"links": [[1, 2]]}', 'expected {"links": [[PLANE, T0, T1], ...]'),
    (b"[]", 'expected {"links"'),
])
def test_a_bad_deny_list_at_start_is_refused_and_the_health_file_kept(
        plan: FabricPlan, tmp_path: Path, data: bytes, problem: str) -> None:
    save_health(tmp_path, Verdict({LINK}))
    good = (tmp_path / "health.json").read_bytes()
    (tmp_path / "denied.json").write_bytes(data)
    with pytest.raises(OperatorError) as error:
        Repairer(plan, [], state=tmp_path)
    assert str(error.value).startswith(f"{tmp_path / 'denied.json'}: not a deny-list: {problem}")
    assert "\n" not in str(error.value)
    assert (tmp_path / "health.json").read_bytes() == good


def test_a_deny_list_broken_while_running_is_said_once_per_version_and_the_last_kept(
        plan: FabricPlan, tmp_path: Path) -> None:
    denied = tmp_path / "denied.json"
    denied.write_text(json.dumps({"links": [list(LINK)]}))
    repairer = Repairer(plan, [], state=tmp_path)
    said: list[dict[str, object]] = []
    repairer.on_record = said.append

    def bad_lines() -> list[str]:
        return [str(r["message"]) for r in said if r["event"] == "state_file_bad"]

    denied.write_text("{oops")
    for i in range(1000):   # 10 s of a 10 ms loop
        repairer.poll(i * 0.01)
    assert len(bad_lines()) == 1 and "denied.json: not a deny-list: bad JSON" in bad_lines()[0]
    assert LINK in repairer.verdict.links_down   # the last good list still holds
    denied.write_text("{oops, again")
    for i in range(100):
        repairer.poll(10 + i * 0.01)
    assert len(bad_lines()) == 2
    denied.write_text(json.dumps({"switches": ["p1-t1-3"]}))
    repairer.poll(12.0)
    assert "p1-t1-3" in repairer.verdict.switches_down and LINK not in repairer.verdict.links_down
    assert len(bad_lines()) == 2


@pytest.mark.parametrize(("text", "message"), [
    ("[]", "expected a mapping with `nics:`"),
    ("nics: {nicX: {grpc: 'a:1'}}", "nics.nicX: no NIC 'nicX'"),
    ("nics: {nic0: {device_id: 1}}", "nics.nic0: expected {grpc"),
    ("nics: {nic0: {grpc: 'a:1', device_id: x}}", "nics.nic0.device_id: expected an integer"),
    ("nics: {nic0: {grpc: 'a:1', target: tofino}}", "nics.nic0.target: 'tofino' is not one of"),
    ("nics: {nic0: {grpc: 'a:1'}}\nconnections: [[nic0, nic5]]", "connections[0]: expected"),
    ("nics: {nic0: {grpc: 'a:1'}}\nconnections: 5", "2:14: error: connections: expected a list"),
    ("nics: {nic0: {grpc: 'a:1'}}\nconnections:\n  - [nic0, nic0]",
     "3:5: error: connections[0]: a connection from nic0 to itself"),
    ("nics: {nic0: {grpc: 'a:1'}\n", "2:1: error: bad YAML: "),
])
def test_a_bad_nic_inventory_is_named_by_file_and_field(tmp_path: Path, text: str,
                                                        message: str) -> None:
    path = tmp_path / "nics.yaml"
    path.write_text(text)
    with pytest.raises(TopologyError, match=message.replace("[", r"\[").replace("{", r"\{")):
        load_nics(str(path), load(MEDIUM))


@pytest.mark.parametrize("data", [b"\xff\xfe\x00nics: {}\n", bytes(range(256)) * 4])
def test_a_binary_nic_inventory_is_one_error_line(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "nics.yaml"
    path.write_bytes(data)
    with pytest.raises(TopologyError) as error:
        load_nics(str(path), load(MEDIUM))
    assert str(error.value) == f"{path}: error: not UTF-8 text (invalid start byte)"


def test_a_nic_inventory_gives_each_end_its_connections(tmp_path: Path) -> None:
    path = tmp_path / "nics.yaml"
    path.write_text("nics:\n  nic0: {grpc: 'h:1', device_id: 7}\n  nic5: {grpc: 'h:2'}\n"
                    "  nic9: {grpc: 'h:3', target: tofino-pi}\n"
                    "connections: [[nic0, nic5], [nic0, nic9]]\n")
    endpoints, connections, targets = load_nics(str(path), load(MEDIUM))
    assert endpoints["nic0"].device_id == 7 and endpoints["nic5"].device_id == 1
    assert targets == {"nic0": "bmv2", "nic5": "bmv2", "nic9": "tofino-pi"}
    assert [(c.conn, c.peer) for c in connections["nic0"]] == [(0, "nic5"), (1, "nic9")]
    assert [(c.conn, c.peer, c.local_qp) for c in connections["nic9"]] == [(0, "nic0", 0x101)]
