"""uN (End with NEXT-CSID): shift-and-route at every uSID position, on every plane and packet type.

A 6-uSID F3216 path is `path(plane)`; the switch "at position k" receives the carrier with the
first k uSIDs already consumed, so its own uSID is active. Before the last position the argument is
non-zero: shift by 16 and route the next uSID (SRH untouched). At the last position the argument
is exhausted: End on the SRH when segments are left, else USD decapsulation of an inner IPv6
packet, else a DROP_SID_NO_NEXT drop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ptf.testutils import group
from scapy.packet import Packet
from switch_base import (
    DROP_NO_ROUTE,
    DROP_SID_NO_NEXT,
    FABRIC_PORTS,
    HOST_PORTS,
    NIC_B_NET,
    ROLE_NIC,
    ROLE_T0,
    ROLE_T1,
    UDT6,
    SwitchTest,
    carrier,
    decapped,
    routed,
    shifted,
    srh_next,
    srv6_packet,
    usid,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
PLANES = (0, 1, 2, 3)
NEXT_HOP_MACS = ("00:00:00:00:b0:00", "00:00:00:00:b1:00", "00:00:00:00:b2:00",
                 "00:00:00:00:b3:00")


def path(plane: int) -> list[int]:
    """Six uSIDs: T0, T1, T0, T1, T0, NIC — all of one plane."""
    roles = (ROLE_T0, ROLE_T1, ROLE_T0, ROLE_T1, ROLE_T0, ROLE_NIC)
    return [usid(role, plane, 0x10 + index) for index, role in enumerate(roles)]


def out_port(plane: int) -> int:
    return FABRIC_PORTS[1 + plane % 2]


def next_container(plane: int) -> str:
    """The SRH's next carrier: a T1 of the plane, the NIC, its decap function."""
    return carrier(usid(ROLE_T1, plane, 0x99), usid(ROLE_NIC, plane, 0x99), UDT6)


@dataclass(frozen=True)
class PacketType:
    name: str
    roce: bool
    inner: bool
    srh_left: int | None  # None: no SRH; else the segments left of a one-segment SRH


PACKET_TYPES = (
    PacketType("udp", roce=False, inner=False, srh_left=None),
    PacketType("roce", roce=True, inner=False, srh_left=None),
    PacketType("roce+inner", roce=True, inner=True, srh_left=None),
    PacketType("roce+srh(sl1)+inner", roce=True, inner=True, srh_left=1),
    PacketType("udp+srh(sl1)", roce=False, inner=False, srh_left=1),
    PacketType("roce+srh(sl0)+inner", roce=True, inner=True, srh_left=0),
    PacketType("udp+srh(sl0)", roce=False, inner=False, srh_left=0),
)


def build(plane: int, position: int, kind: PacketType) -> Packet:
    segments = None if kind.srh_left is None else [next_container(plane)]
    return srv6_packet(carrier(*path(plane)[position:]), segments=segments,
                       segments_left=kind.srh_left, inner=kind.inner, roce=kind.roce,
                       psn=plane * 16 + position)


Expectation = Callable[[Packet], tuple[Packet, int] | int]


def expectation(plane: int, position: int, kind: PacketType) -> Expectation:
    """What the switch does: (expected packet, port), or a drop reason."""
    mac = NEXT_HOP_MACS[plane]
    if position < len(path(plane)) - 1:
        return lambda p: (routed(shifted(p), dmac=mac), out_port(plane))
    if kind.srh_left:
        return lambda p: (routed(srh_next(p), dmac=mac), out_port(plane))
    if kind.inner:
        return lambda p: (decapped(p, dmac=mac), HOST_PORTS[0])
    return lambda _p: DROP_SID_NO_NEXT


class UnTest(SwitchTest):
    """Installs a plane's uN SIDs at every position and the routes they lead to."""

    def install(self, planes: tuple[int, ...]) -> None:
        self.set_default_roles()
        self.add_block_drop()
        for plane in planes:
            uids = path(plane)
            mac = NEXT_HOP_MACS[plane]
            for position, own in enumerate(uids):
                self.add_usid_un(own)
                if position + 1 < len(uids):
                    self.add_usid_route(uids[position + 1], out_port(plane), dmac=mac)
            self.add_usid_route(usid(ROLE_T1, plane, 0x99), out_port(plane), dmac=mac)
        # After USD decapsulation the inner destination is routed to the NIC.
        self.add_host_route(NIC_B_NET, HOST_PORTS[0], dmac=NEXT_HOP_MACS[planes[0]])

    def run_cases(self, cases: Iterator[tuple[str, int, int, PacketType]]) -> None:
        for name, plane, position, kind in cases:
            with self.case(name):
                packet = build(plane, position, kind)
                outcome = expectation(plane, position, kind)(packet)
                if isinstance(outcome, int):
                    self.expect_drop(IN_PORT, packet, outcome)
                else:
                    expected, port = outcome
                    self.expect(IN_PORT, packet, expected, port)


@group("srv6")
@group("un")
class UnPositionTypeTest(UnTest):
    """Every uSID position (first to last) x every packet type, on plane 1."""

    @autocleanup
    def runTest(self) -> None:
        self.install((1,))
        self.run_cases((f"plane1/pos{position}/{kind.name}", 1, position, kind)
                       for position in range(6) for kind in PACKET_TYPES)


@group("srv6")
@group("un")
class UnPlaneTest(UnTest):
    """Every plane x every position (RoCEv2 with an inner header): plane bits do not mix."""

    @autocleanup
    def runTest(self) -> None:
        # Each plane's routes use their own next-hop MAC: the MAC proves which route was taken.
        self.install(PLANES)
        kind = PACKET_TYPES[2]
        for plane in PLANES:
            for position in range(5):
                with self.case(f"plane{plane}/pos{position}/{kind.name}"):
                    packet = build(plane, position, kind)
                    expected = routed(shifted(packet), dmac=NEXT_HOP_MACS[plane])
                    self.expect(IN_PORT, packet, expected, out_port(plane))


@group("srv6")
@group("un")
class UnOtherPlaneMissTest(UnTest):
    """A uSID of another plane is not local: it is routed by its /48 or dropped by the block."""

    @autocleanup
    def runTest(self) -> None:
        self.install((1,))
        foreign = usid(ROLE_T0, 2, 0x10)        # plane 2's uSID at plane 1's first position
        packet = srv6_packet(carrier(foreign, *path(1)[1:]))
        with self.case("no route: block /32 drop"):
            self.expect_drop(IN_PORT, packet, DROP_NO_ROUTE)
        self.add_usid_route(foreign, FABRIC_PORTS[2])
        with self.case("transit: routed unchanged"):
            self.expect(IN_PORT, packet, routed(packet), FABRIC_PORTS[2])
