"""Counters read over P4Runtime: the route table's direct counter and the per-port counter."""

from __future__ import annotations

import ptf.testutils as testutils
from ptf.testutils import group
from runtime_base import RuntimeBasicsTest, routed, tcp_packet

from ptf_tests.base import autocleanup


@group("counters")
class DirectCounterTest(RuntimeBasicsTest):
    """A route's direct counter counts the packets (and bytes) that hit it, and only those."""

    @autocleanup
    def runTest(self) -> None:
        hit = self.add_route("10.11.0.0/16", 2)
        other = self.add_route("10.12.0.0/16", 3)
        packet = tcp_packet("10.11.0.1")
        for _ in range(3):
            self.send_packet(1, packet)
            testutils.verify_packet(self, routed(packet), 2)
        testutils.verify_no_other_packets(self)
        data = self.wait_for_counter(lambda: self.read_direct_counter(hit), 3)
        self.assertEqual((data.packet_count, data.byte_count), (3, 3 * len(packet)))
        untouched = self.read_direct_counter(other)
        self.assertEqual((untouched.packet_count, untouched.byte_count), (0, 0))


@group("counters")
class PortCounterTest(RuntimeBasicsTest):
    """ingress_port_counter[port] counts every packet received on that port, dropped or not."""

    @autocleanup
    def runTest(self) -> None:
        before = self.read_counter("ingress_port_counter", 4)
        packet = tcp_packet("10.99.0.1")  # no route: dropped, but still counted
        for _ in range(2):
            self.send_packet(4, packet)
        testutils.verify_no_other_packets(self)
        after = self.wait_for_counter(lambda: self.read_counter("ingress_port_counter", 4),
                                      before.packet_count + 2)
        self.assertEqual(after.packet_count - before.packet_count, 2)
        self.assertEqual(after.byte_count - before.byte_count, 2 * len(packet))
        self.assertEqual(self.read_counter("ingress_port_counter", 5).packet_count, 0)
