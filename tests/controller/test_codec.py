"""controller/devices/codec.py is an optimisation only: on every entry of real plans (switch and
NIC), and on entries it must refuse, it gives what the general path (p4rt builders) gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.devices.codec import PlanCodec
from controller.devices.reconcile import canonical, to_table_entry
from controller.devices.session import Program
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile, NicConnection, NicPlanner
from controller.plan.plan import build_plan
from controller.topology.yaml_io import load
from p4rt.entities import INSERT, MODIFY, make_update
from p4rt.errors import P4RuntimeClientError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def programs() -> dict[str, Program]:
    return {"switch": Program.compile(ROOT / "p4src/switch/srv6_switch.p4"),
            "nic": Program.compile(ROOT / "p4src/nic/mrc_nic.p4")}


def same(codec: PlanCodec, entry: PlannedEntry) -> None:
    schema = codec.schema
    assert codec.canonical(entry) == canonical(schema, entry), entry.describe()
    for kind in (INSERT, MODIFY):
        assert codec.update(kind, entry) == make_update(kind, to_table_entry(schema, entry)), (
            entry.describe())


def test_every_planned_entry_encodes_as_the_general_path_does(programs) -> None:
    plan = build_plan(load(ROOT / "topologies" / "medium.yaml"))
    switch = PlanCodec(programs["switch"].schema)
    entries = [e for name in plan.switch_names for e in plan.switch(name)]
    for entry in entries:
        same(switch, entry)
    nic = PlanCodec(programs["nic"].schema)
    made = NicPlanner(plan).plan_nic("nic0", [NicConnection(i, f"nic{9 + i}", i, i)
                                              for i in range(3)], EvProfile(), all_rows=True)
    for entry in made.entries:
        same(nic, entry)
    assert len(entries) > 1000 and len(made.entries) > 100


@pytest.mark.parametrize("entry", [
    PlannedEntry.make("route_v6", {"dst_addr": (1 << 128, 64)}, "drop"),          # too wide
    PlannedEntry.make("route_v6", {"dst_addr": (0, 129)}, "drop"),                # prefix
    PlannedEntry.make("route_v6", {"dst_addr": (0, 64)}, "forward", {"port": 1}),  # params
    PlannedEntry.make("route_v6", {"dst_addr": (0, 64)}, "no_such_action"),
    PlannedEntry.make("no_such_table", {"x": 1}, "drop"),
    PlannedEntry.make("port_role", {}, "set_port_role", {"role": 1}),             # exact missing
    PlannedEntry.make("route_v6", {"dst_addr": (0, 64)}, "drop", priority=3),     # priority
])
def test_what_the_fast_path_refuses_fails_as_the_general_path_does(programs, entry) -> None:
    codec = PlanCodec(programs["switch"].schema)

    def error(fn) -> str:
        with pytest.raises(P4RuntimeClientError) as info:
            fn()
        return str(info.value)

    schema = codec.schema
    assert error(lambda: codec.update(INSERT, entry)) == error(
        lambda: make_update(INSERT, to_table_entry(schema, entry)))
