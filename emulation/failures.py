"""A scenario's failures, done to the emulated network at their virtual times.

What is down (cables, switches) is kept here as the ground truth: `ecmp`'s routing protocol
reconverges on it (`ecmp_convergence_us` after each change); the controller never sees it,
only the NICs' EV events and its own probes. Silent failures are not down: a blackholed
switch or cable, a lossy cable and an EV's loss leave every link up, and no routing protocol
notices them.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import plane_port
from controller.repair.correlate import FabricLink, Verdict
from controller.topology.model import Tier, Topology
from emulation.events import Agenda
from emulation.loss_draw import PacketDraw
from emulation.network import Network, fabric_port
from emulation.scenario import Failure, Scenario
from mrc_transport.wire import WRITE_OPCODES, Opcode

Cable = tuple[str, int]   # one end of a cable: (switch, port), or (NIC, plane)
SILENT = ("loss", "blackhole", "ev_loss")   # no routing protocol sees these


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
        self.dropped_ev_loss = 0   # what ev_loss failures took off NICs' plane ports
        self.rewrites = 0        # ecmp path rewrites
        self._draw = PacketDraw(scenario.seed)   # lossy cables: paired across modes
        self._ev_rng = random.Random(scenario.seed * 1_000_003 + 0xE5)   # apart from cables'
        self._ev_loss: dict[str, dict[int, float]] = {}   # NIC -> EV -> share lost
        self._cables = cables(scenario.topology)

    def injected_drops(self) -> dict[str, int]:
        """Packets the emulated failures themselves destroyed, by cause, counts that only
        grow: blackholed switches and cables (the fabric counts them: read them here only)
        and `ev_loss`; cut and lossy cables are the fabric's own counters, read from it."""
        return {"switch_power": self.dropped_power,
                "blackhole": self.net.fabric.blackhole_drops,
                "ev_loss": self.dropped_ev_loss}

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
            at(f.at_us, lambda: self.set_loss(_cable(f), f.percent / 100, f.direction),
               f.describe())
            if f.until_us:
                at(f.until_us, lambda: self.set_loss(_cable(f), 0.0, f.direction))
        elif f.kind == "nic_port_down":
            at(f.at_us, lambda: self.nic_port(f.nic, f.plane, False), f.describe())
            if f.until_us:
                at(f.until_us, lambda: self.nic_port(f.nic, f.plane, True))
        elif f.kind == "blackhole":
            at(f.at_us, lambda: self.blackhole(f, True), f.describe())
            if f.until_us:
                at(f.until_us, lambda: self.blackhole(f, False))
        elif f.kind == "ev_loss":
            at(f.at_us, lambda: self.ev_loss(f.nic, f.ev, f.percent / 100), f.describe())
            if f.until_us:
                at(f.until_us, lambda: self.ev_loss(f.nic, f.ev, 0.0))
        if self.reconverge and f.kind not in SILENT:
            # the routing protocol notices the change, and its end, later
            conv = self.scenario.ecmp_convergence_us
            at(f.at_us + conv, self._reconverge)
            end = {"switch_reboot": f.at_us + f.down_us,
                   "flap": f.at_us + f.count * (f.down_us + f.up_us),
                   "nic_port_down": f.until_us}.get(f.kind, 0)
            if end:
                at(end + conv, self._reconverge)

    # -- doing them ------------------------------------------------------------------------

    def set_link(self, end: Cable, up: bool) -> None:
        if self.scenario.topology.is_nic(end[0]):   # NIC:PLANE: the NIC's port goes down/up
            self.nic_port(end[0], end[1], up)
            return
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

    def set_loss(self, end: Cable, fraction: float, direction: str = "both") -> None:
        """Random loss on a cable: both ways, or what `end` sends ("out") or receives ("in")."""
        node, port = fabric_port(self.scenario.topology, end)
        self.net.fabric.set_link_loss(node, port, fraction, self._draw, direction)

    def blackhole(self, f: Failure, on: bool) -> None:
        """A switch or a cable goes silent (or works again): what reaches it vanishes, and
        nothing is told (its links stay up; the fabric counts the packets)."""
        fabric = self.net.fabric
        if f.link is not None:
            fabric.set_link_blackhole(*fabric_port(self.scenario.topology, f.link), on)
        else:
            fabric.set_blackhole(f.switch, on)

    def ev_loss(self, nic: str, ev: int, fraction: float) -> None:
        """Lose `fraction` (0: none again) of what `nic` sends on EV `ev`, whichever plane
        port it leaves by; drawn in send order from the run's seed."""
        shares = self._ev_loss.setdefault(nic, {})
        if fraction:
            shares[ev] = fraction
        else:
            shares.pop(ev, None)
        drop = self._ev_dropper(shares) if shares else None
        for plane in range(self.scenario.topology.planes):
            self.net.fabric.set_wire_filter(nic, plane_port(plane), drop)

    def _ev_dropper(self, shares: dict[int, float]) -> Callable[[bytes], bool]:
        rng = self._ev_rng

        def drop(frame: bytes) -> bool:
            ev = sent_ev(frame)
            share = None if ev is None else shares.get(ev)
            if share is None or rng.random() >= share:
                return False
            self.dropped_ev_loss += 1
            return True
        return drop

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


_ETH = 14                   # the outer IPv6 header (the NIC's encapsulation) starts here
_INNER = _ETH + 40          # then the inner IPv6 header: the NIC adds no SRH (uSID carrier)
_BTH_AT = _INNER + 40 + 8   # after the inner IPv6 and UDP headers
_SENT_ON_AN_EV = WRITE_OPCODES | {Opcode.PROBE}


def sent_ev(frame: bytes) -> int | None:
    """The EV a NIC's write or probe packet is sent on: the compact EV (plane << 8 | EV) in
    the outer IPv6 flow label (p4src/nic/v1model/host_tx.p4, HostTxEncap); None for the
    NIC's feedback (SACK, NACK: flow label 0, whatever path it takes) and anything else."""
    if (len(frame) <= _BTH_AT or frame[12:14] != b"\x86\xdd" or frame[_ETH + 6] != 41
            or frame[_INNER + 6] != 17 or frame[_BTH_AT] not in _SENT_ON_AN_EV):
        return None
    return frame[_ETH + 3]   # the flow label's low byte


def _cable(f: Failure) -> Cable:
    assert f.link is not None   # the scenario reader requires it for these kinds
    return f.link


def _name(end: Cable) -> str:
    return f"{end[0]}:{end[1]}"
