"""Emulated runs on irregular fabrics (tests/topologies/: a T0-T1 cable left out, NICs under
another T0 in plane 1, NICs on crossed ports in plane 1), the real programs in virtual time:
every message arrives intact in mrc, spray and ecmp, no T0 sends a packet up to a T1 with no
cable to the T0 it is for, no packet reaches a NIC it is not for, and no switch drops one for
want of a route. A cable cut on top of the missing one: the repair loop and its link prober
only ever handle cables that exist. (The plan and `mrc-ctl check` on the same topologies:
tests/controller/test_irregular.py.)"""

from __future__ import annotations

from pathlib import Path

import emulated
import pytest

from controller.devices.session import Program
from controller.plan.nic_plan import nic_address
from controller.plan.plan import FabricPlan
from controller.plan.usid import carrier_usids
from controller.topology.model import Tier, Topology
from controller.topology.reach import Reach
from emulation.command import NIC_PROGRAM
from emulation.metrics import RunResult
from emulation.network import Network
from emulation.run import run_mode
from emulation.scenario import Scenario, ScenarioError
from softswitch.fabric import Delivery

ROOT = Path(__file__).resolve().parents[2]
TOPOLOGIES = ROOT / "tests" / "topologies"
MISSING = TOPOLOGIES / "tiny-missing-cable.yaml"
IRREGULAR = [MISSING, TOPOLOGIES / "tiny-moved-nics.yaml",
             TOPOLOGIES / "tiny-crossed-ports.yaml"]
DROP_REASONS = 16      # p4src/include/defines.p4: drop_counter index = port * 16 + reason
DROP_NO_ROUTE = 7
_ETH, _IPV6, _PROTO_IPV6 = 14, 40, 41


def scenario(topology: Path, *failures: str, size: int = 8192) -> Scenario:
    return emulated.scenario(f"{{kind: all_to_all, bytes: {size}}}", *failures,
                             name="irregular", topology=topology)


class Watch:
    """A tap on every wire and, at the end, the switches' drop counters: what went where the
    wiring says it cannot arrive."""

    def __init__(self, topology: Topology) -> None:
        plan = FabricPlan(topology)
        self.reach = Reach(topology)
        self.tier = {s.name: s.tier for s in topology.switches}
        self.names = {plan.usid(s.name): s.name for s in topology.switches}
        self.address = {n.name: nic_address(n) for n in topology.nics}
        self.stray: list[str] = []
        self.drops: dict[tuple[str, int], int] = {}

    def phase(self, what: str, network: Network) -> None:
        if what == "built":
            network.fabric.add_observer(self.on_wire)
            return
        for name in self.tier:
            counter = network.fabric.switch(name).engine.counter("drop_counter")
            for index in range(512 * DROP_REASONS):
                packets, _ = counter.read(index)
                if packets:
                    key = (name, index % DROP_REASONS)
                    self.drops[key] = self.drops.get(key, 0) + packets

    def on_wire(self, d: Delivery) -> None:
        data = d.data
        if len(data) < _ETH + 2 * _IPV6 or data[12:14] != b"\x86\xdd":
            return
        outer = int.from_bytes(data[_ETH + 24:_ETH + 40], "big")
        if self.tier.get(d.sender) == Tier.T0 and self.tier.get(d.receiver or "") == Tier.T1:
            # Up to a T1 with `block:T1:T0...`: the T1 must be cabled to that T0.
            to = self.names.get(carrier_usids(outer)[1])
            if to is not None and self.tier[to] == Tier.T0 and not self.reach.cabled(
                    to, d.receiver or ""):
                self.stray.append(f"{d.sender} -> {d.receiver} for {to}")
        elif d.receiver in self.address and d.sender in self.tier \
                and data[_ETH + 6] == _PROTO_IPV6:
            inner = int.from_bytes(data[_ETH + _IPV6 + 24:_ETH + _IPV6 + 40], "big")
            if inner != self.address[d.receiver]:
                self.stray.append(f"{d.sender} delivered to {d.receiver} a packet for "
                                  f"{inner:#x}")


def run(s: Scenario, mode: str, program: Program) -> tuple[RunResult, Watch]:
    watch = Watch(s.topology)
    return run_mode(s, mode, program, str(NIC_PROGRAM), phase=watch.phase), watch


@pytest.mark.parametrize("mode", ["mrc", "spray", "ecmp"])
@pytest.mark.parametrize("topology", IRREGULAR, ids=lambda p: p.stem)
def test_every_message_arrives_and_nothing_is_sent_where_the_wiring_cannot_carry_it(
        topology: Path, mode: str, switch_program: Program) -> None:
    result, watch = run(scenario(topology), mode, switch_program)
    summary = result.summary()
    assert result.finished, summary
    # delivered: arrived, and its bytes intact
    assert summary["completed"] == summary["messages"] == 12 and summary["bytes_lost"] == 0
    assert watch.stray == []
    assert watch.drops == {}, "a switch dropped packets (switch, reason): no drop is expected"


def test_a_cut_on_an_irregular_fabric_is_repaired_over_cables_that_exist(
        switch_program: Program) -> None:
    # p0-t0-1 - p0-t1-0 cut: with p0-t0-0 - p0-t1-1 missing, plane 0 joins no two T0s.
    # 64 KiB each: the NICs resend what left on the cut at once, so the run must outlast the
    # controller's confirmation of the cut (its verdict about 200 us after the cut).
    cut = "{at_us: 20, kind: link_down, link: 'p0-t0-1:2'}"
    result, watch = run(scenario(MISSING, cut, size=65536), "mrc", switch_program)
    summary = result.summary()
    assert result.finished and summary["bytes_lost"] == 0, summary
    rewrites = [e for e in result.events if e["event"] == "rewrite"]
    assert rewrites and "0:p0-t0-1-p0-t1-0" in rewrites[0]["links_down"]
    cables = {"0:p0-t0-0-p0-t1-0", "0:p0-t0-1-p0-t1-0", "0:p0-t0-1-p0-t1-1"}
    assert all(set(e["links_down"]) <= cables for e in rewrites)   # never p0-t0-0 - p0-t1-1
    assert watch.stray == []
    assert not any(reason == DROP_NO_ROUTE for _, reason in watch.drops)


def test_the_scenario_loader_shows_a_topology_that_cannot_be_served_in_one_line(
        tmp_path: Path) -> None:
    cut = tmp_path / "cut.yaml"
    cut.write_text(MISSING.read_text().replace("  - [p0-t0-1:2, p0-t1-0:1]\n", ""))
    with pytest.raises(ScenarioError) as refused:
        scenario(cut)
    message = str(refused.value)
    assert "\n" not in message and "the topology does not load" in message
    assert "NIC nic2 cannot reach NIC nic0 in plane 0" in message
