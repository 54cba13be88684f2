"""The controller's repair loop on the tiny fabric (controller.nic_fabric + controller.repair):
two transfers in flight (nic0 -> nic2 and nic3 -> nic1, under different T0s), the T0-T1 cable
p0-t0-0 <-> p0-t1-0 cut. Both senders' NICs report EVs through it (nic0 going up, nic3 coming
down towards nic1); the controller correlates the two and rewrites the ev_path entries of every
NIC whose EVs crossed it, over P4Runtime, while the transfers go on: they complete intact on
their connections, and every NIC's table, read back from the device, avoids the T1."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli import main
from controller.nic_fabric import NicFabric
from controller.plan.nic_plan import EvProfile
from controller.repair.repairer import Repairer
from controller.topology.yaml_io import load
from p4rt import TableEntry

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [("nic0", "nic2"), ("nic3", "nic1")]
PROFILE = EvProfile(ev_count=16, backups=2, ev_min_active=4)
SIZE = 256 << 10
VA = 0x1000


@pytest.fixture
def fab() -> Iterator[NicFabric]:
    with NicFabric(load(ROOT / "topologies" / "tiny.yaml"), ROOT / "p4src/switch/srv6_switch.p4",
                   ROOT / "p4src/nic/mrc_nic.p4", PAIRS, profile=PROFILE) as fabric:
        yield fabric


def device_paths(fab: NicFabric, nic: str) -> dict[int, tuple[str, int]]:
    """EV -> (action, T1 uSID) as the NIC device holds its ev_path entries (P4Runtime read)."""
    session = fab.nics[nic].session
    out: dict[int, tuple[str, int]] = {}
    for entry in session.read(TableEntry(session.schema, "ev_path")):
        assert isinstance(entry, TableEntry) and entry.action_call is not None
        params = entry.action_call.params
        out[entry.matches["ev"].value] = (entry.action_call.name,
                                          int(params.get("t1_usid", 0)))
    return out


def test_a_cut_link_is_found_from_two_nics_and_every_nic_is_rewritten_around_it(
        fab: NicFabric) -> None:
    # Virtual seconds: events still in flight 5 ms after a rewrite name the old path.
    repairer = Repairer(fab.plan, fab.managed_nics(), window_s=0.01, settle_s=0.005)
    fab.every(20, lambda now_us: repairer.poll(now_us / 1e6))
    data = {src: random.Random(src).randbytes(SIZE) for src, _ in PAIRS}
    for src, _ in PAIRS:
        fab.host(src).sender.write(data[src], VA)
    senders = {src: fab.host(src).sender for src, _ in PAIRS}
    fab.run_for(100)
    fab.fabric.set_link_up("p0-t0-0", 2, False)
    fab.run(limit_us=200_000)
    cut = (0, "p0-t0-0", "p0-t1-0")
    verdict = repairer.verdict
    for _ in range(100):   # digests cross a real gRPC stream: wait (bounded) for the last ones
        if cut in verdict.links_down or "p0-t1-0" in verdict.switches_down:
            break
        time.sleep(0.02)
        verdict = repairer.poll(fab.now / 1e6).verdict

    for src, dst in PAIRS:
        assert bytes(fab.host(dst).receiver.memory[VA:VA + SIZE]) == data[src]
        assert fab.host(src).sender is senders[src] and senders[src].completed() == [0]
    assert cut in verdict.links_down or "p0-t1-0" in verdict.switches_down
    assert {r.nic for log in repairer.history for r in log.reports} >= {"nic0", "nic3"}
    dead = fab.plan.usid("p0-t1-0")
    written = {nic for log in repairer.history for nic in log.written}
    assert written == {"nic0", "nic1", "nic2", "nic3"}     # every NIC had EVs across it
    for nic in fab.nics:
        paths = device_paths(fab, nic)
        assert len(paths) == 20 and all(t1 != dead for _, t1 in paths.values()), nic
        assert {action for action, _ in paths.values()} == {"set_path"}   # a T1 was left


def test_on_the_medium_fabric_exactly_the_cut_link_is_named_and_only_nics_across_it_rewritten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # medium.yaml: 4 planes x (4 T1 + 8 T0), NICs 4i..4i+3 under T0 i; T0 i port 4 + j -> T1 j.
    pairs = [("nic0", "nic9"), ("nic1", "nic17"), ("nic12", "nic2"), ("nic20", "nic3"),
             ("nic28", "nic13")]                       # the last pair never crosses T0 0
    profile = EvProfile(ev_count=32, backups=2, ev_min_active=8)
    with NicFabric(load(ROOT / "topologies" / "medium.yaml"),
                   ROOT / "p4src/switch/srv6_switch.p4", ROOT / "p4src/nic/mrc_nic.p4", pairs,
                   profile=profile) as fab:
        repairer = Repairer(fab.plan, fab.managed_nics(), window_s=0.01, settle_s=0.005,
                            state=tmp_path)
        fab.every(20, lambda now_us: repairer.poll(now_us / 1e6))
        data = {src: random.Random(src).randbytes(512 << 10) for src, _ in pairs}
        for src, _ in pairs:
            fab.host(src).sender.write(data[src], VA)
        fab.run_for(40)
        fab.fabric.set_link_up("p1-t0-0", 6, False)     # p1-t0-0 <-> p1-t1-2
        fab.run(limit_us=500_000)
        cut = (1, "p1-t0-0", "p1-t1-2")
        for _ in range(100):   # the last digests may still be on their gRPC stream
            if cut in repairer.verdict.links_down:
                break
            time.sleep(0.02)
            repairer.poll(fab.now / 1e6)

        for src, dst in pairs:
            assert bytes(fab.host(dst).receiver.memory[VA:VA + len(data[src])]) == data[src]
            assert fab.host(src).sender.completed() == [0]
        verdict = repairer.verdict
        assert verdict.links_down == {cut} and verdict.switches_down == set()
        written = {nic for log in repairer.history for nic in log.written}
        assert written == {nic for pair in pairs[:4] for nic in pair}
        dead = fab.plan.usid("p1-t1-2")
        for nic in written:
            assert all(t1 != dead for _, t1 in device_paths(fab, nic).values()), nic
        assert dead in {t1 for _, t1 in device_paths(fab, "nic28").values()}
        status = repairer.status()
        assert "plane 1: p1-t0-0 <-> p1-t1-2" in status and "switches down: none" in status
    # What the operator sees, from another process's point of view: the files.
    assert main(["status", str(ROOT / "topologies" / "medium.yaml"), "--state", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert "links down: p1-t0-0:p1-t1-2" in shown and "switches down: none" in shown
    assert "nic0 2" in shown and "nic28" not in shown           # EVs moved, per NIC
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert {"event": "link_down", "link": "p1-t0-0:p1-t1-2"} in [
        {k: v for k, v in e.items() if k != "at_s"} for e in events]
    assert {e["nic"] for e in events if e["event"] == "rewrite"} == written


def test_an_operator_deny_moves_every_nic_off_a_link_and_allow_brings_them_back(
        fab: NicFabric, tmp_path: Path) -> None:
    repairer = Repairer(fab.plan, fab.managed_nics(), state=tmp_path)
    topology = str(ROOT / "topologies" / "tiny.yaml")
    dead = fab.plan.usid("p1-t1-1")
    assert main(["deny", topology, "p1-t0-1:p1-t1-1", "--state", str(tmp_path)]) == 0
    repairer.poll(0.0)
    assert all(t1 != dead for nic in ("nic2", "nic3") for _, t1 in device_paths(fab, nic).values())
    # nic0 and nic1 talk to nic2 and nic3, under p1-t0-1: they move too.
    assert all(t1 != dead for nic in ("nic0", "nic1") for _, t1 in device_paths(fab, nic).values())
    (tmp_path / "denied.json").write_text("{half an edit")      # kept: the last good list
    repairer.poll(0.05)
    assert all(t1 != dead for _, t1 in device_paths(fab, "nic0").values())
    (tmp_path / "denied.json").write_text(   # repaired by hand, as it was
        json.dumps({"links": [[1, "p1-t0-1", "p1-t1-1"]], "switches": []}))
    assert main(["allow", topology, "p1-t0-1:p1-t1-1", "--state", str(tmp_path)]) == 0
    repairer.poll(0.1)
    assert all(dead in {t1 for _, t1 in device_paths(fab, nic).values()} for nic in fab.nics)
    data = random.Random(5).randbytes(64 << 10)
    fab.host("nic0").sender.write(data, VA)
    fab.run(limit_us=100_000)
    assert bytes(fab.host("nic2").receiver.memory[VA:VA + len(data)]) == data
