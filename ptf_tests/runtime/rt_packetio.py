"""Packet I/O through the @controller_header headers: PacketOut to a port, PacketIn from the ACL."""

from __future__ import annotations

import ptf.testutils as testutils
from ptf.testutils import group
from runtime_base import RuntimeBasicsTest, routed, tcp_packet

from ptf_tests.base import autocleanup


@group("packetio")
class PacketOutTest(RuntimeBasicsTest):
    """A PacketOut leaves on the port its egress_port metadata names, unchanged, and only there."""

    @autocleanup
    def runTest(self) -> None:
        for port in (0, 3, 7):
            packet = tcp_packet(f"10.7.0.{port + 1}")
            self.send_packet_out(packet, egress_port=port)
            testutils.verify_packet(self, packet, port)
            testutils.verify_no_other_packets(self)
        self.verify_no_packet_in()


@group("packetio")
class PacketInTest(RuntimeBasicsTest):
    """The ACL's send_to_cpu turns a packet into a PacketIn with its ingress port."""

    @autocleanup
    def runTest(self) -> None:
        self.add_acl("send_to_cpu", ingress_port=2)
        for port in (2, 5):
            packet = tcp_packet("10.8.0.1")
            self.send_packet(port, packet)
            if port == 2:
                self.verify_packet_in(packet, ingress_port=2)
            else:
                self.verify_no_packet_in()
            testutils.verify_no_other_packets(self)  # no route: nothing on the data ports


@group("packetio")
class PacketInAfterRouteTest(RuntimeBasicsTest):
    """send_to_cpu after a route punts the routed packet (ACL runs last), not a copy."""

    @autocleanup
    def runTest(self) -> None:
        self.add_route("10.8.1.0/24", 4)
        self.add_acl("send_to_cpu", ether_type=0x0800, dst_mac="00:00:00:00:bb:02")
        packet = tcp_packet("10.8.1.1")
        self.send_packet(6, packet)
        self.verify_packet_in(routed(packet), ingress_port=6)
        testutils.verify_no_other_packets(self)
