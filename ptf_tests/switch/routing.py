"""route_v6: /48 uSID routes, host routes (/128, /64), the block's /32 drop, longest prefix."""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    BLOCK_PREFIX,
    DROP_NO_ROUTE,
    FABRIC_PORTS,
    HOST_PORTS,
    NIC_B,
    NIC_B_NET,
    ROLE_NIC,
    ROLE_T0,
    ROLE_T1,
    SwitchTest,
    carrier,
    plain_ipv6_packet,
    routed,
    srv6_packet,
    usid,
    usid_prefix,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
T1 = usid(ROLE_T1, 1, 0x01)
T0 = usid(ROLE_T0, 1, 0x02)


@group("routing")
class UsidRouteTest(SwitchTest):
    """Transit (no local SID): block:next::/48 → port and MACs, destination unchanged."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        t1 = (FABRIC_PORTS[1], "00:00:00:00:01:01")
        t0 = (FABRIC_PORTS[2], "00:00:00:00:01:02")
        for next_usid, (port, mac) in ((T1, t1), (T0, t0)):
            self.add_usid_route(next_usid, port, smac="00:00:00:00:00:e0", dmac=mac)
        cases = (("t1/roce+inner", carrier(T1, T0, usid(ROLE_NIC, 1, 1)), True, t1),
                 ("t1/udp", carrier(T1), False, t1),
                 ("t0/roce+inner", carrier(T0, usid(ROLE_NIC, 1, 1)), True, t0))
        for name, dst, inner, (port, mac) in cases:
            with self.case(name):
                packet = srv6_packet(dst, inner=inner, roce=inner)
                self.expect(IN_PORT, packet, routed(packet, "00:00:00:00:00:e0", mac), port)


@group("routing")
class HostRouteTest(SwitchTest):
    """A NIC's /128 wins over its /64; both rewrite the MACs and decrement the hop limit."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_host_route(NIC_B, HOST_PORTS[1], dmac="00:00:00:00:0b:01")
        self.add_host_route(NIC_B_NET, HOST_PORTS[0], dmac="00:00:00:00:0b:64")
        for name, dst, port, mac in (("/128", NIC_B, HOST_PORTS[1], "00:00:00:00:0b:01"),
                                     ("/64", "2001:db8:b::99", HOST_PORTS[0],
                                      "00:00:00:00:0b:64")):
            for roce in (True, False):
                with self.case(f"{name}/{'roce' if roce else 'udp'}"):
                    packet = plain_ipv6_packet(dst, roce=roce)
                    self.expect(IN_PORT, packet, routed(packet, dmac=mac), port)


@group("routing")
@group("drop")
class NoRouteTest(SwitchTest):
    """The block's /32 drop entry and route_v6's default drop: DROP_NO_ROUTE; a /48 beats the
    /32; deleting the /48 falls back to the drop."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_block_drop(BLOCK_PREFIX)
        with self.case("block /32 drop"):
            self.expect_drop(IN_PORT, srv6_packet(carrier(T1, T0)), DROP_NO_ROUTE)
        with self.case("no entry: default drop"):
            self.expect_drop(IN_PORT, plain_ipv6_packet("2001:db8:ee::1"), DROP_NO_ROUTE)
        self.add_usid_route(T1, FABRIC_PORTS[1])
        with self.case("/48 beats /32"):
            packet = srv6_packet(carrier(T1, T0))
            self.expect(IN_PORT, packet, routed(packet), FABRIC_PORTS[1])
        self.delete_table_entry("route_v6", {"dst_addr": usid_prefix(T1)})
        with self.case("/48 deleted: /32 drop again"):
            self.expect_drop(IN_PORT, srv6_packet(carrier(T1, T0)), DROP_NO_ROUTE)


@group("routing")
class RouteModifyTest(SwitchTest):
    """MODIFY of a /48 route moves its traffic to the new port and MACs."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_usid_route(T1, FABRIC_PORTS[1])
        packet = srv6_packet(carrier(T1, T0))
        self.expect(IN_PORT, packet, routed(packet), FABRIC_PORTS[1])
        self.modify_table_entry("route_v6", {"dst_addr": usid_prefix(T1)}, "forward",
                                port=FABRIC_PORTS[2], smac="00:00:00:00:00:e1",
                                dmac="00:00:00:00:01:09")
        self.expect(IN_PORT, packet, routed(packet, "00:00:00:00:00:e1", "00:00:00:00:01:09"),
                    FABRIC_PORTS[2])
