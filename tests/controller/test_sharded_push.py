"""controller/devices/sharded.py: worker processes, each pushing its share of the switches, give
the same result as one push: every planned entry written once, and a second push writes nothing."""

from __future__ import annotations

from pathlib import Path

from controller.devices.session import Program
from controller.devices.sharded import push_sharded
from controller.fabric_up import build_fabric
from controller.plan.plan import build_plan
from controller.topology.yaml_io import load

ROOT = Path(__file__).resolve().parents[2]


def test_two_workers_push_the_tiny_fabric_and_a_second_push_writes_nothing() -> None:
    topology = load(ROOT / "topologies" / "tiny.yaml")
    program = Program.compile(ROOT / "p4src" / "switch" / "srv6_switch.p4")
    fabric, running = build_fabric(topology, ephemeral_ports=True)
    try:
        fabric.start()
        first = push_sharded(running, program, workers=2)
        second = push_sharded(running, program, workers=2)
    finally:
        fabric.close()
    plan = build_plan(topology)
    assert first.ok and [r.name for r in first.switches] == plan.switch_names
    for report in first.switches:
        # Every planned entry written once or already right (a default action the program
        # starts with); nothing deleted, nothing failed.
        planned = plan.switch(report.name)
        assert report.inserted + report.modified + report.unchanged == len(planned)
        assert report.inserted > 0 and report.deleted == 0 and not report.errors
        assert report.pipeline_pushed
    assert second.ok and second.written == 0
    assert all(not r.pipeline_pushed for r in second.switches)
