"""PacketOut: a controller packet leaves the port its packet_out header names, unchanged (no
lookups, no egress rewrite), whatever the port's role or its headers; one naming the CPU port or
port 511 is dropped and counted."""

from __future__ import annotations

from ptf.testutils import group, verify_no_other_packets, verify_packet
from switch_base import (
    BMV2_DROP_PORT,
    CPU_PORT,
    DROP_PACKET_OUT_PORT,
    EXTERNAL_PORT,
    FABRIC_PORTS,
    HOST_PORTS,
    SLOW_PORT,
    SwitchTest,
    carrier,
    plain_ipv6_packet,
    srv6_packet,
    with_ip_version,
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
                 ("ect to an ecn port", srv6_packet(carrier(0x1101), ecn=2), SLOW_PORT),
                 ("ipv6 ethertype, version 4",
                  with_ip_version(srv6_packet(carrier(0x1101)), 4), FABRIC_PORTS[1]))
        for name, packet, port in cases:
            with self.case(f"{name} -> port {port}"):
                self.send_packet_out(bytes(packet), egress_port=port)
                verify_packet(self, packet, port)
                verify_no_other_packets(self)


@group("packetio")
@group("drop")
class PacketOutToNoPortTest(SwitchTest):
    """To the CPU port (BMv2 would hand it back as a PacketIn whose metadata are its first
    bytes) or to port 511 (BMv2's drop port, which drops it uncounted): dropped and counted as
    DROP_PACKET_OUT_PORT on the CPU port, nothing on any port, no PacketIn; a PacketOut to a
    data port still leaves."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        packet = plain_ipv6_packet()
        for port in (CPU_PORT, BMV2_DROP_PORT):
            with self.case(f"-> port {port}"):
                before = self.read_drop_counter(CPU_PORT, DROP_PACKET_OUT_PORT)
                self.send_packet_out(bytes(packet), egress_port=port)
                verify_no_other_packets(self)
                self.verify_no_packet_in()
                after = self.wait_for_drop_count(CPU_PORT, DROP_PACKET_OUT_PORT, before + 1)
                self.assertEqual(after, before + 1)
        with self.case(f"-> port {HOST_PORTS[1]}"):
            self.send_packet_out(bytes(packet), egress_port=HOST_PORTS[1])
            verify_packet(self, packet, HOST_PORTS[1])
            verify_no_other_packets(self)
