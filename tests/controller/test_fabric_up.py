"""The acceptance test of `mrc-ctl fabric up`: the topology as in-process softswitches, the plan
pushed over P4Runtime, then one packet per (source NIC, destination NIC, plane, T1) — built from
the plan's path templates as a NIC builds it (H.Encaps.Red already applied: outer IPv6 to the
carrier, the NIC's own IPv6 packet inside) — must reach exactly its destination NIC's port on
that plane, through that T1, with the inner packet unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller import traffic
from controller.devices.session import Program
from controller.fabric_up import RunningFabric, fabric_up
from controller.plan.plan import build_plan
from controller.topology.generate import generate
from controller.topology.model import Topology

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
TINY = ROOT / "topologies" / "tiny.yaml"


def load_tiny() -> Topology:
    if not TINY.is_file():
        pytest.skip("topologies/tiny.yaml is not written yet")
    from controller.topology import yaml_io

    return yaml_io.load(TINY)


@pytest.fixture(scope="module", params=["tiny.yaml", "generated"])
def running(request: pytest.FixtureRequest) -> Iterator[tuple[RunningFabric, Topology]]:
    topology = load_tiny() if request.param == "tiny.yaml" else generate(2, 4, 4)
    plan = build_plan(topology)
    up = fabric_up(topology, plan, Program.compile(PROGRAM), ephemeral_ports=True)
    try:
        assert up.report is not None and up.report.ok, up.report and up.report.summary()
        yield up, topology
    finally:
        up.close()


def test_every_nic_reaches_every_nic_on_every_plane_and_t1(
        running: tuple[RunningFabric, Topology]) -> None:
    up, topology = running
    plan = build_plan(up.topology)
    deliveries = list(traffic.sweep(up, plan))
    for d in deliveries:
        assert d.delivered, f"lost: {d.describe()}"
        assert d.path == traffic.expected_path(up, d), d.describe()
    n = len(topology.nics)
    pairs = {(d.src, d.dst, d.plane) for d in deliveries}
    assert len(pairs) == n * (n - 1) * topology.planes
    for plane in range(topology.planes):  # a full Clos: every T1 carries traffic
        crossed = {d.t1 for d in deliveries if d.plane == plane and d.t1 is not None}
        assert crossed == traffic.t1_names(up, plane)
    for host in up.fabric.hosts:  # nothing strayed anywhere else
        assert host.receive(timeout=0.0) is None, host.name
