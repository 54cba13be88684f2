"""Hop limit: decremented once per switch; ≤ 1 on arrival is dropped and counted (DROP_HOP_LIMIT),
and also punted to the CPU when hop_limit_policy says so."""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    DROP_HOP_LIMIT,
    FABRIC_PORTS,
    HOST_PORTS,
    NIC_B,
    ROLE_T0,
    ROLE_T1,
    UDT6,
    SwitchTest,
    carrier,
    decapped,
    plain_ipv6_packet,
    routed,
    shifted,
    srh_next,
    srv6_packet,
    usid,
    usid_prefix,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
OUT_PORT = FABRIC_PORTS[1]
OWN = usid(ROLE_T0, 1, 0x01)
NEXT = usid(ROLE_T1, 1, 0x02)
END_SID = "fc00:0:1::e"


def cases(hop_limit: int) -> list[tuple[str, object, object, int]]:
    """(name, packet, expected transform, out port) for each kind of forwarding."""
    return [
        ("transit", srv6_packet(carrier(NEXT), hop_limit=hop_limit), routed, OUT_PORT),
        ("uN", srv6_packet(carrier(OWN, NEXT), hop_limit=hop_limit),
         lambda p: routed(shifted(p)), OUT_PORT),
        ("End", srv6_packet(END_SID, segments=[carrier(NEXT)], hop_limit=hop_limit),
         lambda p: routed(srh_next(p)), OUT_PORT),
        ("uDT6", srv6_packet(carrier(OWN, UDT6), hop_limit=hop_limit), decapped, HOST_PORTS[0]),
        ("host route", plain_ipv6_packet(NIC_B, hop_limit=hop_limit), routed, HOST_PORTS[0]),
    ]


class HopLimitTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        self.add_usid_un(OWN)
        self.add_end(END_SID)
        self.add_end_dt6(usid_prefix(OWN, UDT6))
        self.add_usid_route(NEXT, OUT_PORT)
        self.add_host_route(NIC_B, HOST_PORTS[0])


@group("hop_limit")
class HopLimitDecrementTest(HopLimitTest):
    """Hop limit 2 and 255 leave with one less, whatever the behaviour."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for hop_limit in (2, 255):
            for name, packet, transform, port in cases(hop_limit):
                with self.case(f"{name}/hl{hop_limit}"):
                    self.expect(IN_PORT, packet, transform(packet), port)  # type: ignore


@group("hop_limit")
@group("drop")
class HopLimitDropTest(HopLimitTest):
    """Hop limit 1 and 0: dropped, counted as DROP_HOP_LIMIT, nothing sent to the CPU."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for hop_limit in (1, 0):
            for name, packet, _transform, _port in cases(hop_limit):
                with self.case(f"{name}/hl{hop_limit}"):
                    self.expect_drop(IN_PORT, packet, DROP_HOP_LIMIT)
                    self.verify_no_packet_in()


@group("hop_limit")
@group("drop")
@group("packetio")
class HopLimitPuntTest(HopLimitTest):
    """With punt_hop_limit the dropped packet also reaches the controller, as it arrived, with
    its ingress port and reason DROP_HOP_LIMIT; with drop_hop_limit again it does not."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        self.set_hop_limit_policy(punt=True)
        for name, packet, _transform, _port in cases(1):
            with self.case(f"punt/{name}"):
                self.expect_drop(IN_PORT, packet, DROP_HOP_LIMIT)
                self.verify_packet_in(packet, ingress_port=IN_PORT, reason=DROP_HOP_LIMIT)
                self.verify_no_packet_in()
        self.set_hop_limit_policy(punt=False)
        with self.case("back to drop"):
            self.expect_drop(IN_PORT, cases(1)[0][1], DROP_HOP_LIMIT)
            self.verify_no_packet_in()
