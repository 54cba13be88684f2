"""PacketOut: a controller packet leaves the port its packet_out header names, unchanged (no
lookups, no egress rewrite), whatever the port's role."""

from __future__ import annotations

from ptf.testutils import group, verify_no_other_packets, verify_packet
from switch_base import (
    EXTERNAL_PORT,
    FABRIC_PORTS,
    HOST_PORTS,
    SLOW_PORT,
    SwitchTest,
    carrier,
    plain_ipv6_packet,
    srv6_packet,
)

from ptf_tests.base import autocleanup


@group("packetio")
class PacketOutTest(SwitchTest):
    """To host, fabric and external ports; SR packets with hop limit 1 included."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.set_ecn(SLOW_PORT, 0)
        cases = (("plain ipv6", plain_ipv6_packet(), HOST_PORTS[1]),
                 ("sr, hop limit 1", srv6_packet(carrier(0x1101), hop_limit=1), FABRIC_PORTS[2]),
                 ("sr to external", srv6_packet(carrier(0x1101), segments=[carrier(0x2101)]),
                  EXTERNAL_PORT),
                 ("ect to an ecn port", srv6_packet(carrier(0x1101), ecn=2), SLOW_PORT))
        for name, packet, port in cases:
            with self.case(f"{name} -> port {port}"):
                self.send_packet_out(bytes(packet), egress_port=port)
                verify_packet(self, packet, port)
                verify_no_other_packets(self)
