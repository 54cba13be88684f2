"""Port roles: EXTERNAL (and unconfigured) ports drop SR traffic; HOST and FABRIC ports accept it."""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    DROP_EXTERNAL_SR,
    EXTERNAL_PORT,
    FABRIC_PORTS,
    HOST_PORTS,
    NIC_B,
    ROLE_T0,
    ROLE_T1,
    UNCONFIGURED_PORT,
    SwitchTest,
    carrier,
    plain_ipv6_packet,
    routed,
    shifted,
    srv6_packet,
    usid,
)

from ptf_tests.base import autocleanup

OWN = usid(ROLE_T0, 1, 0x01)
NEXT = usid(ROLE_T1, 1, 0x02)
OUT_PORT = FABRIC_PORTS[2]
SR_CASES = (  # (name, packet builder)
    ("local sid", lambda: srv6_packet(carrier(OWN, NEXT))),
    ("transit block dst", lambda: srv6_packet(carrier(NEXT, OWN))),
    ("srh, dst outside block", lambda: srv6_packet(NIC_B, segments=[carrier(NEXT)],
                                                   segments_left=1, inner=False)),
)


class RoleTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_sid_block()
        self.add_block_drop()
        self.add_usid_un(OWN)
        self.add_usid_route(NEXT, OUT_PORT)
        self.add_host_route(NIC_B, OUT_PORT)


@group("roles")
@group("drop")
class ExternalDropsSrTest(RoleTest):
    """SID-block destinations and SRHs from EXTERNAL or unconfigured ports: DROP_EXTERNAL_SR."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for port, port_name in ((EXTERNAL_PORT, "external"), (UNCONFIGURED_PORT, "unconfigured")):
            for name, build in SR_CASES:
                with self.case(f"{port_name}/{name}"):
                    self.expect_drop(port, build(), DROP_EXTERNAL_SR)


@group("roles")
class ExternalPlainIpv6Test(RoleTest):
    """Plain IPv6 outside the block from an EXTERNAL port is routed as usual."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for port in (EXTERNAL_PORT, UNCONFIGURED_PORT):
            with self.case(f"port {port}"):
                packet = plain_ipv6_packet(NIC_B)
                self.expect(port, packet, routed(packet), OUT_PORT)


@group("roles")
class InsideAcceptsSrTest(RoleTest):
    """HOST and FABRIC ports accept SR traffic: a local uN shifts, transit is routed."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for port in (HOST_PORTS[0], FABRIC_PORTS[0]):
            with self.case(f"port {port}/local sid"):
                packet = SR_CASES[0][1]()
                self.expect(port, packet, routed(shifted(packet)), OUT_PORT)
            with self.case(f"port {port}/transit"):
                packet = SR_CASES[1][1]()
                self.expect(port, packet, routed(packet), OUT_PORT)


@group("roles")
class RoleChangeTest(RoleTest):
    """Making the external port a fabric port (MODIFY) lets its SR traffic in."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        packet = SR_CASES[0][1]()
        self.expect_drop(EXTERNAL_PORT, packet, DROP_EXTERNAL_SR)
        self.modify_table_entry("port_role", {"port": EXTERNAL_PORT}, "set_port_role", role=2)
        self.expect(EXTERNAL_PORT, packet, routed(shifted(packet)), OUT_PORT)
