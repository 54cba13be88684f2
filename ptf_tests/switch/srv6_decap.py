"""End.DT6 (uDT6) decapsulation: strip the outer IPv6 and its SRH, route the inner packet."""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    DROP_DECAP,
    DROP_NO_ROUTE,
    FABRIC_PORTS,
    HOST_PORTS,
    NIC_B,
    NIC_B_NET,
    ROLE_T0,
    ROLE_T1,
    UDT6,
    SwitchTest,
    carrier,
    decapped,
    srv6_packet,
    usid,
    usid_prefix,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
OWN = usid(ROLE_T0, 1, 0x01)
DT6_USID = carrier(OWN, UDT6)                 # block:own:fe09:: hits block:own:fe09::/64
DT6_SID = "fc00:0:1::d6"                      # a classic 128-bit End.DT6 SID
NIC_MAC = "00:00:00:00:0b:01"
NIC_B_HOST_PORT = HOST_PORTS[1]
NEXT_CARRIER = carrier(usid(ROLE_T1, 1, 0x40), UDT6)

GOOD_CASES = (  # (name, destination, SRH segments (None: no SRH), inner destination, roce)
    ("usid/no srh/roce", DT6_USID, None, NIC_B, True),
    ("usid/no srh/udp", DT6_USID, None, NIC_B, False),
    ("usid/srh sl0/roce", DT6_USID, [NEXT_CARRIER], NIC_B, True),
    ("sid128/no srh/roce", DT6_SID, None, NIC_B, True),
    ("sid128/srh sl0/udp", DT6_SID, [NEXT_CARRIER, DT6_SID], NIC_B, False),
    ("usid/no srh/host /64", DT6_USID, None, "2001:db8:b::77", True),
)


class DecapTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        self.add_usid_un(OWN)
        self.add_end_dt6(usid_prefix(OWN, UDT6))
        self.add_end_dt6(DT6_SID)
        self.add_host_route(NIC_B, NIC_B_HOST_PORT, dmac=NIC_MAC)       # /128 wins
        self.add_host_route(NIC_B_NET, HOST_PORTS[0], dmac=NIC_MAC)     # the rest of the /64


@group("srv6")
@group("decap")
class EndDt6Test(DecapTest):
    """Segments left 0 (or no SRH) and an inner IPv6 header: the inner packet is routed."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for name, dst, segments, inner_dst, roce in GOOD_CASES:
            with self.case(name):
                packet = srv6_packet(dst, segments=segments, segments_left=0,
                                     inner_dst=inner_dst, roce=roce)
                port = NIC_B_HOST_PORT if inner_dst == NIC_B else HOST_PORTS[0]
                self.expect(IN_PORT, packet, decapped(packet, dmac=NIC_MAC), port)


@group("srv6")
@group("decap")
@group("drop")
class EndDt6DropTest(DecapTest):
    """Segments left ≠ 0 or no inner IPv6: DROP_DECAP; an inner destination without a route:
    DROP_NO_ROUTE."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        cases = (
            ("usid/srh sl1", srv6_packet(DT6_USID, segments=[NEXT_CARRIER], segments_left=1),
             DROP_DECAP),
            ("sid128/srh sl1", srv6_packet(DT6_SID, segments=[NEXT_CARRIER, DT6_SID],
                                           segments_left=1), DROP_DECAP),
            ("usid/no inner", srv6_packet(DT6_USID, inner=False), DROP_DECAP),
            ("sid128/srh sl0/no inner",
             srv6_packet(DT6_SID, segments=[NEXT_CARRIER], segments_left=0, inner=False),
             DROP_DECAP),
            ("inner without route", srv6_packet(DT6_USID, inner_dst="2001:db8:c::1"),
             DROP_NO_ROUTE),
        )
        for name, packet, reason in cases:
            with self.case(name):
                self.expect_drop(IN_PORT, packet, reason)
