"""A stepped virtual-time fabric steps only the devices that have something to do
(softswitch/schedule.py): the work of an instant is proportional to the packets that move,
not to devices x instants."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest
from test_device import FWD_P4, pkt

from softswitch.clock import VirtualClock
from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.fabric import Fabric
from softswitch.ir.checked import CheckedProgram

GBPS = 1_000_000_000
IDLE = 20   # switches that carry nothing


@pytest.fixture(scope="module")
def fwd(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    path = Path(tmp_path_factory.mktemp("p4")) / "fwd.p4"
    path.write_text(FWD_P4)
    return compile_file(path)


def counted(fabric: Fabric, steps: Counter[str]) -> None:
    """Count each switch's Device.step calls (the real step runs)."""
    for node in fabric.switches:
        real = node.device.step

        def step(real: Callable[[], bool] = real, name: str = node.name) -> bool:
            steps[name] += 1
            return real()
        node.device.step = step   # type: ignore[method-assign]


def chain(fwd: CheckedProgram, clock: VirtualClock) -> Fabric:
    """h1 - A -(1 µs)- B -(1 µs)- C - h2, 10 Gb/s, among IDLE linked switches (some of them
    added before A, some between, some after: every position in the scan order)."""
    fabric = Fabric(clock=clock)
    idle = [f"I{k}" for k in range(IDLE)]
    for name in [*idle[:7], "A", *idle[7:14], "B", "C", *idle[14:]]:
        fabric.add_switch(name, fwd)
        fabric.switch(name).engine.table("fwd").add_entry([ExactMatch(2)], "set_port", [2])
        fabric.switch(name).device.set_line_rate(None, 10 * GBPS)
    for a, b in pairwise(idle):
        fabric.link(a, 2, b, 1, delay_ns=1_000)
    fabric.link("A", 2, "B", 1, delay_ns=1_000)
    fabric.link("B", 2, "C", 1, delay_ns=1_000)
    fabric.add_host("h1", "A", 1)
    fabric.add_host("h2", "C", 2)
    return fabric


def run(fabric: Fabric, clock: VirtualClock) -> list[int]:
    """The stepped loop; the instants it visited."""
    instants = [clock.now_ns]
    fabric.run_until_idle()
    while (t := fabric.next_event_ns()) is not None:
        clock.advance_to(t)
        instants.append(t)
        fabric.run_until_idle()
    return instants


def test_idle_switches_are_not_stepped_while_a_packet_crosses(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = chain(fwd, clock)
    fabric.run_until_idle()   # the first look at every device (tables, rates just set)
    steps: Counter[str] = Counter()
    counted(fabric, steps)
    fabric.host("h1").send(pkt(2, payload=bytes(982)))   # 1000 bytes: 800 ns a hop
    instants = run(fabric, clock)
    assert len(fabric.host("h2").received) == 1 and fabric.wire_hops == 2
    # the arrivals at B, C and h2 (each switch sends as it receives: its port is free)
    assert instants == [0, 800 + 1_000, 2 * (800 + 1_000), 3 * 800 + 2 * 1_000]
    # Each of A, B, C is stepped when the packet reaches it (ingress, its egress pass at the
    # departure) plus one look that finds nothing: a handful, whatever the fabric's size.
    assert set(steps) == {"A", "B", "C"}
    assert all(n <= 4 for n in steps.values()), steps


def test_steps_grow_with_packets_not_with_devices_times_instants(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = chain(fwd, clock)
    fabric.run_until_idle()
    steps: Counter[str] = Counter()
    counted(fabric, steps)
    for tag in range(30):
        fabric.host("h1").send(pkt(2, tag=tag, payload=bytes(982)))
    instants = run(fabric, clock)
    assert [d[3] for d in fabric.host("h2").received] == list(range(30))
    devices = len(fabric.switches)
    assert len(instants) > 30
    # A scan would step every device at every instant (> devices x instants); each packet
    # costs an ingress and an egress pass on 3 switches, and each wake-up at most one more
    # look.
    assert sum(steps.values()) <= 4 * 3 * 30 < devices * len(instants)


def test_a_device_reconfigured_or_swapped_is_looked_at_again(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = chain(fwd, clock)
    fabric.switch("A").device.set_line_rate(2, 1 * GBPS)   # 8 µs a packet
    for tag in range(2):
        fabric.host("h1").send(pkt(2, tag=tag, payload=bytes(982)))
    fabric.run_until_idle()
    assert fabric.next_event_ns() == 8_000   # the second waits for the slow port
    fabric.switch("A").device.set_line_rate(2, 10 * GBPS)   # ports keep the time they were
    assert fabric.next_event_ns() == 8_000                  # given (free at 8 µs)
    fabric.power_off("A")   # what A held is gone with it: nothing departs from it
    assert fabric.next_event_ns() == 9_000   # only the first packet, on the wire to B
    run(fabric, clock)
    assert [d[3] for d in fabric.host("h2").received] == [0]
