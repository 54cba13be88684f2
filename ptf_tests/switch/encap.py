"""H.Encaps.Red of plain IPv6 from HOST ports: one carrier, or a carrier plus a one-segment SRH.

The outer header copies the inner's traffic class, flow label and hop limit (encap.p4), and the
hop limit is then decremented once, on the outer; the inner packet is carried unchanged.
"""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    DROP_NO_ROUTE,
    FABRIC_PORTS,
    HOST_PORTS,
    NIC_B,
    NIC_B_NET,
    ROLE_NIC,
    ROLE_T0,
    ROLE_T1,
    UDT6,
    SwitchTest,
    carrier,
    encapsulated,
    plain_ipv6_packet,
    routed,
    shifted,
    usid,
)

from ptf_tests.base import autocleanup

OWN = usid(ROLE_T0, 1, 0x01)
T1 = usid(ROLE_T1, 1, 0x02)
FAR_T0 = usid(ROLE_T0, 1, 0x03)
NIC = usid(ROLE_NIC, 1, 0x04)
ENCAP_SRC = "fcbb:bbbb:101::1"
UPLINK = FABRIC_PORTS[1]
NATIVE_PORT = FABRIC_PORTS[2]          # where the un-encapsulated packet would be routed
CARRIER = carrier(T1, FAR_T0, NIC, UDT6)
VIA_SELF = carrier(OWN, T1, FAR_T0, NIC, UDT6)
NEXT_CARRIER = carrier(usid(ROLE_T1, 1, 0x12), NIC, UDT6)


class EncapTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        self.add_usid_un(OWN)
        self.add_usid_route(T1, UPLINK)
        self.add_host_route(NIC_B_NET, NATIVE_PORT)


@group("encap")
class EncapCarrierTest(EncapTest):
    """Host port, prefix with a policy: outer IPv6 to the carrier (no SRH), routed by its first
    uSID; a carrier that starts with the switch's own uN is also shifted."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        self.add_encap(NIC_B_NET, ENCAP_SRC, CARRIER)
        self.add_encap("2001:db8:b:1::/64", ENCAP_SRC, VIA_SELF)
        cases = (("first uSID routed/roce", NIC_B, CARRIER, True, False),
                 ("first uSID routed/udp", NIC_B, CARRIER, False, False),
                 ("own uN first/roce", "2001:db8:b:1::5", VIA_SELF, True, True))
        for name, dst, dst_carrier, roce, local in cases:
            for in_port in HOST_PORTS:
                with self.case(f"{name}/port {in_port}"):
                    packet = plain_ipv6_packet(dst, roce=roce, dscp=10, ecn=1, hop_limit=33)
                    expected = encapsulated(packet, ENCAP_SRC, dst_carrier)
                    if local:
                        expected = shifted(expected)
                    self.expect(in_port, packet, routed(expected), UPLINK)


@group("encap")
class EncapSrhTest(EncapTest):
    """encap_usid_srh: outer IPv6 + reduced SRH (one segment: the next carrier, left 1)."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        self.add_encap(NIC_B_NET, ENCAP_SRC, CARRIER, NEXT_CARRIER)
        for roce in (True, False):
            with self.case("roce" if roce else "udp"):
                packet = plain_ipv6_packet(NIC_B, roce=roce)
                expected = encapsulated(packet, ENCAP_SRC, CARRIER, NEXT_CARRIER)
                self.expect(HOST_PORTS[0], packet, routed(expected), UPLINK)


@group("encap")
class NoEncapTest(EncapTest):
    """No policy hit, or a FABRIC port: the packet is routed natively, never encapsulated."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        self.add_encap("2001:db8:b::/48", ENCAP_SRC, CARRIER)
        with self.case("fabric port"):
            packet = plain_ipv6_packet(NIC_B)
            self.expect(FABRIC_PORTS[0], packet, routed(packet), NATIVE_PORT)
        with self.case("host port, no policy for the destination"):
            self.add_host_route("2001:db8:c::/64", NATIVE_PORT)
            packet = plain_ipv6_packet("2001:db8:c::1")
            self.expect(HOST_PORTS[0], packet, routed(packet), NATIVE_PORT)
        with self.case("host port, carrier without a route: block drop"):
            self.add_encap("2001:db8:d::/64", ENCAP_SRC, carrier(usid(ROLE_T1, 1, 0x77)))
            self.expect_drop(HOST_PORTS[0], plain_ipv6_packet("2001:db8:d::1"), DROP_NO_ROUTE)
