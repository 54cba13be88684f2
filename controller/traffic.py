"""Test traffic on a running fabric: the packets a NIC sends along a planned path, and a sweep
over every (source NIC, destination NIC, plane, T1) that reports where each packet went.

A probe is what a NIC puts on the wire after H.Encaps.Red: an outer IPv6 header whose
destination is the path's carrier (from the plan's templates), around the NIC's own IPv6/UDP
(RoCEv2 port) packet.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from controller.fabric_up import RunningFabric, host_name
from controller.plan.plan import FabricPlan
from controller.topology.model import Tier

ROCE_UDP_PORT = 4791


def nic_address(index: int) -> str:
    """The NIC's own (inner) IPv6 address in the demo numbering."""
    return f"2001:db8::{index + 1:x}"


def inner_packet(src_index: int, dst_index: int, sport: int) -> IPv6:
    return (IPv6(src=nic_address(src_index), dst=nic_address(dst_index))
            / UDP(sport=sport, dport=ROCE_UDP_PORT) / Raw(b"mrc" * 8))


def probe_frame(carrier: int, inner: IPv6) -> Ether:
    """The frame a NIC sends: Ethernet, outer IPv6 to `carrier`, the inner packet."""
    return (Ether(src="02:4e:00:00:00:01", dst="02:53:00:00:00:01")
            / IPv6(src=inner[IPv6].src, dst=str(ipaddress.IPv6Address(carrier)), hlim=64)
            / inner)


@dataclass
class Delivery:
    """One probe: where it was sent, the T1 it should cross, and what happened to it."""

    src: str
    dst: str
    plane: int
    t1: str | None
    path: list[str]  # hosts and switches the packet crossed, in order
    delivered: bool  # reached the destination NIC's port with the inner packet unchanged

    def describe(self) -> str:
        via = f" via {self.t1}" if self.t1 else ""
        mark = "ok" if self.delivered else "LOST"
        return f"{self.src} -> {self.dst} plane {self.plane}{via}: {' -> '.join(self.path)}  {mark}"


def sweep(up: RunningFabric, plan: FabricPlan, timeout: float = 2.0) -> Iterator[Delivery]:
    """Send one probe per (source, destination, plane, T1 choice) and report each."""
    topology = up.topology
    capture = up.fabric.capture()
    sport = 49152
    try:
        for src in topology.nics:
            for dst in topology.nics:
                if src is dst:
                    continue
                for plane in range(topology.planes):
                    template = plan.template(plane, src.attachments[plane][0],
                                             dst.attachments[plane][0])
                    for t1 in [name for name, _ in template.t1_choices] or [None]:
                        inner = inner_packet(src.index, dst.index, sport)
                        sport = 49152 + (sport + 1) % 16384
                        frame = probe_frame(plan.carrier(src.name, dst.name, plane, t1), inner)
                        capture.clear()
                        up.host(src.name, plane).send(bytes(frame))
                        got = up.host(dst.name, plane).receive(timeout=timeout)
                        up.fabric.run_until_idle()
                        delivered = (got is not None
                                     and bytes(Ether(got)[IPv6].payload) == bytes(inner))
                        yield Delivery(src.name, dst.name, plane, t1, capture.path(), delivered)
    finally:
        capture.detach()


def expected_path(up: RunningFabric, delivery: Delivery) -> list[str]:
    """The hops a probe must cross: NIC port, source T0, [T1, destination T0], NIC port."""
    topology = up.topology
    src, dst = topology.nic(delivery.src), topology.nic(delivery.dst)
    src_t0 = src.attachments[delivery.plane][0]
    dst_t0 = dst.attachments[delivery.plane][0]
    middle = [delivery.t1, dst_t0] if delivery.t1 is not None else []
    return [host_name(src.name, delivery.plane), src_t0, *middle,
            host_name(dst.name, delivery.plane)]


def t1_names(up: RunningFabric, plane: int) -> set[str]:
    return {s.name for s in up.topology.switches_of(plane, Tier.T1)}
