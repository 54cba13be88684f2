"""What the NIC refuses, each counted: truncated MRC headers, packets that are not MRC, packets
on a port that is not a plane port, host packets for a peer without a connection, packets with
no path to leave on (no path template or plane port), and probes of a DENIED EV."""

from __future__ import annotations

from nic_base import DSCP_TRIMMED, HOST_PORT, PEER_ROW, PLANE_PORT, NicTest
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


@group("nic")
class NoPathTest(NicTest):
    """Not sent for want of a path, each counted as no path: data and a probe with no path
    template for their plane, a SACK and a NACK with no plane port to leave on (the data is
    still delivered). With the port down as well, a packet counts as port down only."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.delete_table_entry("path_template", {"plane": 1, "dst_row": PEER_ROW})
        with self.case("data with no template"):
            for psn in range(4):   # slots 0..3: planes 0, 1, 0, 1
                self.host_write(psn)
            got = self.receive_all(2)
            self.assertEqual({port: len(packets) for port, packets in got.items()},
                             {PLANE_PORT[0]: 2})
            self.assertEqual(self.wait_count("tx_no_path_drop", 2), 2)
            self.assertEqual(self.count("tx_data"), 2)
        with self.case("probe with no template"):
            self.host_to_own_nic(Opcode.PROBE, 0, 3)   # EV 3: plane 1
            self.assertEqual(self.wait_count("tx_no_path_drop", 3), 3)
            verify_no_other_packets(self)
            self.assertEqual(self.count("tx_probe"), 0)
        self.delete_table_entry("plane_port", {"plane": 0})
        with self.case("SACK with no plane port"):
            self.send_packet(PLANE_PORT[0], self.peer_data(0, plane=0, ev=0))
            self.assertEqual(list(self.receive_all(1)), [HOST_PORT])
            self.assertEqual(self.wait_count("tx_no_path_drop", 4), 4)
            self.assertEqual(self.count("sack_sent"), 0)
        with self.case("NACK with no plane port"):
            self.send_packet(PLANE_PORT[0], self.peer_data(1, plane=0, ev=2, dscp=DSCP_TRIMMED))
            self.assertEqual(self.wait_count("tx_no_path_drop", 5), 5)
            verify_no_other_packets(self)
            self.assertEqual(self.count("nack_sent"), 0)
        with self.case("port down and no template"):
            self.ports_down(1)
            self.host_to_own_nic(Opcode.PROBE, 0, 1)   # EV 1: plane 1
            self.assertEqual(self.wait_count("port_down_drop", 1), 1)
            verify_no_other_packets(self)
            self.assertEqual(self.count("tx_no_path_drop"), 5)
        self.assertEqual(self.count("tx_probe_denied_drop"), 0)


@group("nic")
class ProbeOfDeniedEvTest(NicTest):
    """A probe of a DENIED EV is not sent, and counted as such (not as a DENIED data drop)."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.set_path(4, deny=True)
        self.host_to_own_nic(Opcode.PROBE, 0, 4)
        self.assertEqual(self.wait_count("tx_probe_denied_drop", 1), 1)
        verify_no_other_packets(self)
        self.assertEqual((self.count("tx_probe"), self.count("tx_denied_drop"),
                          self.count("tx_no_path_drop")), (0, 0, 0))
