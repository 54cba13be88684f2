"""A NIC plan that would hold two entries for one key (issue 24, defect 8): the planner refuses
the connections that cause one, and a keeper given such a plan anyway says so once and stops
instead of reconnecting for ever."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from controller.daemon.keeper import DesiredState, DeviceKeeper
from controller.devices.session import Program
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import QP_BASE, NicConnection, NicPlanner
from controller.plan.plan import FabricPlan
from controller.plan.usid import PlanError
from controller.topology.model import Endpoint
from controller.topology.yaml_io import load
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).resolve().parents[2]


def conn(i: int, peer: str, qp: int | None = None) -> NicConnection:
    return NicConnection(i, peer, QP_BASE + i if qp is None else qp, QP_BASE + i)


@pytest.mark.parametrize(("connections", "message"), [
    ([conn(0, "nic0")], "NIC nic0: connection 0 is to nic0 itself"),
    ([conn(0, "nic1"), conn(1, "nic2", QP_BASE)],
     "NIC nic0: its connections to nic1 and nic2 share local QP 0x100"),
    ([conn(0, "nic1"), conn(0, "nic2")],
     "NIC nic0: its connections to nic1 and nic2 share state index 0"),
])
def test_the_planner_refuses_connections_that_share_a_key(connections: list[NicConnection],
                                                           message: str) -> None:
    planner = NicPlanner(FabricPlan(load(ROOT / "topologies" / "tiny.yaml")))
    with pytest.raises(PlanError, match=message):
        planner.plan_nic("nic0", connections)


def test_a_keeper_given_two_entries_for_one_key_refuses_once_and_never_retries(
        server: P4RuntimeServer) -> None:
    program = Program.compile(ROOT / "p4src" / "nic" / "mrc_nic.p4")
    entries = [PlannedEntry.make("ev_path", {"profile": 1, "ev": 0}, "set_path",
                                 {"plane": plane, "t1_usid": 0x1800}) for plane in (0, 1)]
    log: list[dict[str, object]] = []
    with ThreadPoolExecutor(2) as pool:
        keeper = DeviceKeeper("nic0", Endpoint(f"127.0.0.1:{server.port}", 1),
                              lambda: DesiredState(program, entries), pool, log.append,
                              retry_s=0.001, max_retry_s=0.001)
        try:
            deadline = time.monotonic() + 30
            now = 0.0
            while keeper.state != "refused":
                assert time.monotonic() < deadline, (keeper.state, log)
                keeper.tick(now)
                keeper.wait(1.0)
                now += 1.0
            for _ in range(50):   # 50 s later (its clock): not tried again
                now += 1.0
                keeper.tick(now)
                assert keeper.state == "refused" and keeper.wait(0)
        finally:
            keeper.close()
    assert [r["event"] for r in log] == ["device_refused"]
    assert "two entries for one key: ev_path[ev=0x0, profile=0x1]" in str(log[0]["error"])
