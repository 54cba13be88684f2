"""What the NIC refuses, each counted: truncated MRC headers, packets that are not MRC, packets
on a port that is not a plane port, and host packets for a peer without a connection."""

from __future__ import annotations

from nic_base import HOST_PORT, PLANE_PORT, NicTest
from ptf.testutils import group, verify_no_other_packets
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.wire import BTH, Opcode
from ptf_tests.base import autocleanup


@group("nic")
class MalformedTest(NicTest):
    @autocleanup
    def runTest(self) -> None:
        self.configure()
        good = self.peer_data(0)
        cases = (("BTH cut short", PLANE_PORT[0], good[:14 + 40 + 40 + 8 + 6]),
                 ("RETH cut short", PLANE_PORT[0], good[:14 + 40 + 40 + 8 + 12 + 4 + 8]),
                 ("not MRC", PLANE_PORT[0], bytes(Ether() / IPv6() / UDP(dport=53))),
                 ("not a plane port", 5, good),
                 ("host: not MRC", HOST_PORT, bytes(Ether() / IPv6(nh=17) / UDP(dport=53))))
        for name, port, packet in cases:
            with self.case(name):
                self.send_packet(port, packet)
                verify_no_other_packets(self)
        self.assertEqual(self.wait_count("rx_malformed", len(cases)), len(cases))


@group("nic")
class NoConnectionTest(NicTest):
    @autocleanup
    def runTest(self) -> None:
        self.configure()
        stranger = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                    / IPv6(src="2001:db8::a", dst="2001:db8::c", nh=17)
                    / UDP(dport=4791) / BTH(opcode=Opcode.WRITE_ONLY, dest_qp=0x33)
                    / bytes(4 + 16))
        self.send_packet(HOST_PORT, bytes(stranger))
        verify_no_other_packets(self)
        self.assertEqual(self.wait_count("tx_no_connection", 1), 1)
