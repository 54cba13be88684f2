"""The acceptance test of `mrc-ctl fabric up`: the topology as in-process softswitches, the plan
pushed over P4Runtime, then one packet per (source NIC, destination NIC, plane, T1) — built from
the plan's path templates as a NIC builds it (H.Encaps.Red already applied: outer IPv6 to the
carrier, the NIC's own IPv6 packet inside) — must reach exactly its destination NIC's port on
that plane, through that T1, with the inner packet unchanged.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from controller.fabric_up import RunningFabric, fabric_up
from controller.p4rt.session import Program
from controller.plan.plan import build_plan
from controller.topology.generate import generate
from controller.topology.model import Tier, Topology

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


def nic_address(index: int) -> str:
    return f"2001:db8::{index + 1:x}"


def test_every_nic_reaches_every_nic_on_every_plane_and_t1(
        running: tuple[RunningFabric, Topology]) -> None:
    up, topology = running
    plan = build_plan(up.topology)
    capture = up.fabric.capture()
    checked = 0
    for src in topology.nics:
        for dst in topology.nics:
            if src is dst:
                continue
            for plane in range(topology.planes):
                src_t0, dst_t0 = src.attachments[plane][0], dst.attachments[plane][0]
                template = plan.template(plane, src_t0, dst_t0)
                t1s = [name for name, _ in template.t1_choices] or [None]
                if src_t0 != dst_t0:
                    every_t1 = {s.name for s in topology.switches_of(plane, Tier.T1)}
                    assert set(t1s) == every_t1  # a full Clos: every T1 is a choice
                for t1 in t1s:
                    carrier = plan.carrier(src.name, dst.name, plane, t1)
                    inner = (IPv6(src=nic_address(src.index), dst=nic_address(dst.index))
                             / UDP(sport=49152 + checked, dport=4791) / Raw(b"mrc" * 8))
                    frame = (Ether(src="02:4e:00:00:00:01", dst="02:53:00:00:00:01")
                             / IPv6(src=nic_address(src.index),
                                    dst=str(ipaddress.IPv6Address(carrier)), hlim=64)
                             / inner)
                    capture.clear()
                    up.host(src.name, plane).send(bytes(frame))
                    got = up.host(dst.name, plane).receive(timeout=2.0)
                    where = f"{src.name} → {dst.name}, plane {plane}, T1 {t1}"
                    assert got is not None, f"{where}: lost; path {capture.path()}"
                    packet = Ether(got)
                    assert bytes(packet[IPv6].payload) == bytes(inner), where
                    expected = [f"{src.name}.p{plane}", src_t0,
                                *([t1, dst_t0] if t1 is not None else []),
                                f"{dst.name}.p{plane}"]
                    up.fabric.run_until_idle()
                    assert capture.path() == expected, where
                    checked += 1
    capture.detach()
    n = len(topology.nics)
    assert checked >= n * (n - 1) * topology.planes
    for host in up.fabric.hosts:  # nothing strayed anywhere else
        assert host.receive(timeout=0.0) is None, host.name
