"""A scenario's failures, done to the emulated network at their virtual times.

What is down (cables, switches) is kept here as the ground truth: `ecmp`'s routing protocol
reconverges on it (`ecmp_convergence_us` after each change); the controller never sees it,
only the NICs' EV events and its own probes.
"""

from __future__ import annotations

import random

from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import plane_port
from controller.repair.correlate import FabricLink, Verdict
from controller.topology.model import Tier, Topology
from emulation.events import Agenda
from emulation.network import Network
from emulation.scenario import Failure, Scenario

Cable = tuple[str, int]   # one end of a cable: (switch, port)


class Failures:
    def __init__(self, scenario: Scenario, network: Network, agenda: Agenda, *,
                 reconverge: bool) -> None:
        """`reconverge`: route pinned (ecmp) connections around what is down."""
        self.scenario = scenario
        self.net = network
        self.agenda = agenda
        self.reconverge = reconverge
        self.down_links: set[FabricLink] = set()
        self.down_switches: set[str] = set()
        self.dropped_power = 0   # what switches held when they lost power
        self.rewrites = 0        # ecmp path rewrites
        self._rng = random.Random(scenario.seed)
        self._cables = cables(scenario.topology)

    def schedule(self) -> None:
        for f in self.scenario.failures:
            self._schedule(f)

    def _schedule(self, f: Failure) -> None:
        at = self.agenda.at
        if f.kind in ("link_down", "link_up"):
            up = f.kind == "link_up"
            at(f.at_us, lambda: self.set_link(_cable(f), up), f.describe())
        elif f.kind == "flap":
            t = f.at_us
            for k in range(f.count):
                at(t, lambda: self.set_link(_cable(f), False),
                   f"flap {_name(_cable(f))} down ({k + 1} of {f.count})")
                at(t + f.down_us, lambda: self.set_link(_cable(f), True))
                t += f.down_us + f.up_us
        elif f.kind == "switch_reboot":
            at(f.at_us, lambda: self.power(f.switch, False), f.describe())
            at(f.at_us + f.down_us, lambda: self.power(f.switch, True))
        elif f.kind == "loss":
            at(f.at_us, lambda: self.set_loss(_cable(f), f.percent / 100), f.describe())
            if f.until_us:
                at(f.until_us, lambda: self.set_loss(_cable(f), 0.0))
        elif f.kind == "nic_port_down":
            at(f.at_us, lambda: self.nic_port(f.nic, f.plane, False), f.describe())
            if f.until_us:
                at(f.until_us, lambda: self.nic_port(f.nic, f.plane, True))
        if self.reconverge:   # the routing protocol notices the change, and its end, later
            conv = self.scenario.ecmp_convergence_us
            at(f.at_us + conv, self._reconverge)
            end = {"switch_reboot": f.at_us + f.down_us,
                   "flap": f.at_us + f.count * (f.down_us + f.up_us),
                   "nic_port_down": f.until_us}.get(f.kind, 0)
            if end:
                at(end + conv, self._reconverge)

    # -- doing them ------------------------------------------------------------------------

    def set_link(self, end: Cable, up: bool) -> None:
        self.net.fabric.set_link_up(end[0], end[1], up)
        cable = self._cables[end]
        (self.down_links.discard if up else self.down_links.add)(cable)

    def power(self, switch: str, on: bool) -> None:
        """A switch loses power (tables gone), or boots blank and is pushed its plan again,
        as a fabric's management plane does whatever the NICs run."""
        fabric = self.net.fabric
        if on:
            fabric.power_on(switch)
            self.net.set_rates(switch)
            self.net.push_switches([switch])
            self.net.rebooted(switch)
            self.down_switches.discard(switch)
        else:
            device = fabric.switch(switch).device
            self.dropped_power += len(device.queues)   # stepped: nothing waits at its input
            fabric.power_off(switch)
            self.down_switches.add(switch)

    def set_loss(self, end: Cable, fraction: float) -> None:
        self.net.fabric.set_link_loss(end[0], end[1], fraction, self._rng)

    def nic_port(self, nic: str, plane: int, up: bool) -> None:
        self.net.fabric.set_link_up(nic, plane_port(plane), up)
        # What the NIC's firmware does on a PHY change: the data plane's port bitmap.
        down = 0
        for p in range(self.scenario.topology.planes):
            if not self.net.fabric.link_is_up(nic, plane_port(p)):
                down |= 1 << p
        entry = PlannedEntry.default("local_port_state", "set_port_state", {"down_planes": down})
        self.net.write_nic(nic, [entry])

    def _reconverge(self) -> None:
        verdict = Verdict(set(self.down_links), set(self.down_switches))
        for (nic, conn), old in sorted(self.net.pinned.items()):
            new = self.net.ecmp.pick(nic, self.net.nics[nic].connections[conn], verdict)
            if new != old:
                self.net.write_nic(nic, [new.entry()])
                self.net.pinned[(nic, conn)] = new
                self.rewrites += 1


def cables(topology: Topology) -> dict[Cable, FabricLink]:
    """Both ends of every T0-T1 cable -> (plane, T0, T1)."""
    names = {s.name: s for s in topology.switches}
    out: dict[Cable, FabricLink] = {}
    for link in topology.iter_links():
        a, b = names.get(link.a), names.get(link.b)
        if a is None or b is None:
            continue
        t0, t1 = (a, b) if a.tier == Tier.T0 else (b, a)
        out[(link.a, link.a_port)] = out[(link.b, link.b_port)] = (t0.plane, t0.name, t1.name)
    return out


def _cable(f: Failure) -> Cable:
    assert f.link is not None   # the scenario reader requires it for these kinds
    return f.link


def _name(end: Cable) -> str:
    return f"{end[0]}:{end[1]}"
