"""Forwarding through ipv4_lpm: insert, read back, modify, delete, default action, drops."""

from __future__ import annotations

import ptf.testutils as testutils
from ptf.testutils import group
from runtime_base import NEXT_HOP_MAC, RuntimeBasicsTest, routed, tcp_packet

from ptf_tests.base import autocleanup


@group("forwarding")
class RouteForwardTest(RuntimeBasicsTest):
    """A route sends matching packets out of its port, rewritten; nothing else comes out."""

    @autocleanup
    def runTest(self) -> None:
        cases = ((1, 2, "10.0.1.0/24", "10.0.1.1"), (3, 0, "10.0.2.0/24", "10.0.2.200"),
                 (7, 5, "10.0.3.0/24", "10.0.3.9"))
        for in_port, out_port, prefix, dst in cases:
            self.add_route(prefix, out_port)
            packet = tcp_packet(dst)
            self.send_packet(in_port, packet)
            testutils.verify_packet(self, routed(packet), out_port)
            testutils.verify_no_other_packets(self)


@group("forwarding")
class LongestPrefixTest(RuntimeBasicsTest):
    """The longest matching prefix wins."""

    @autocleanup
    def runTest(self) -> None:
        self.add_route("10.1.0.0/16", 2)
        self.add_route("10.1.2.0/24", 3)
        self.add_route("10.1.2.3/32", 4)
        for dst, port in (("10.1.9.9", 2), ("10.1.2.9", 3), ("10.1.2.3", 4)):
            packet = tcp_packet(dst)
            self.send_packet(1, packet)
            testutils.verify_packet(self, routed(packet), port)
            testutils.verify_no_other_packets(self)


@group("forwarding")
class TableReadTest(RuntimeBasicsTest):
    """Entries read back equal the entries written; an empty table reads back empty."""

    @autocleanup
    def runTest(self) -> None:
        self.assertEqual(self.read_table_entries("ipv4_lpm"), [])
        written = [self.add_route("10.2.0.0/16", 2), self.add_route("10.3.3.0/24", 3, "00:11:22:33:44:55"),
                   self.add_acl("drop", priority=20, ingress_port=4)]
        read = self.read_table_entries()
        self.assertEqual(len(read), len(written), f"read back {read}")
        for entry in written:
            self.assertIn(entry, read)
        self.assertEqual(self.read_table_entries("acl"), [written[2]])


@group("forwarding")
class ModifyDeleteTest(RuntimeBasicsTest):
    """MODIFY changes the action in place; DELETE makes the packet miss (and be dropped)."""

    @autocleanup
    def runTest(self) -> None:
        packet = tcp_packet("10.4.0.1")
        self.add_route("10.4.0.0/24", 2)
        self.send_packet(1, packet)
        testutils.verify_packet(self, routed(packet), 2)
        testutils.verify_no_other_packets(self)

        entry = self.modify_table_entry("ipv4_lpm", {"dst_addr": "10.4.0.0/24"}, "route",
                                        port=6, dmac="00:00:00:00:cc:03")
        self.assertEqual(self.read_table_entries("ipv4_lpm"), [entry])
        self.send_packet(1, packet)
        testutils.verify_packet(self, routed(packet, "00:00:00:00:cc:03"), 6)
        testutils.verify_no_other_packets(self)

        self.delete_table_entry("ipv4_lpm", {"dst_addr": "10.4.0.0/24"})
        self.assertEqual(self.read_table_entries("ipv4_lpm"), [])
        self.send_packet(1, packet)
        testutils.verify_no_other_packets(self)


@group("forwarding")
class DefaultActionTest(RuntimeBasicsTest):
    """Changing ipv4_lpm's default action from drop to route sends misses out; reads show it."""

    @autocleanup
    def runTest(self) -> None:
        original = self.read_default_entry("ipv4_lpm")
        self.assertEqual(original.action_call.name, "IngressImpl.drop")
        packet = tcp_packet("172.16.0.1")
        self.send_packet(1, packet)
        testutils.verify_no_other_packets(self)

        self.set_default_action("ipv4_lpm", "route", port=7, dmac=NEXT_HOP_MAC)
        default = self.read_default_entry("ipv4_lpm")
        self.assertEqual(default.action_call.name, "IngressImpl.route")
        self.assertEqual(default.action_call.params, {"port": 7, "dmac": 0x00000000BB02})
        self.send_packet(1, packet)
        testutils.verify_packet(self, routed(packet), 7)
        testutils.verify_no_other_packets(self)


@group("forwarding")
@group("drop")
class DropTest(RuntimeBasicsTest):
    """No route, TTL 1, an explicit drop route, non-IPv4 and an ACL drop: nothing comes out."""

    @autocleanup
    def runTest(self) -> None:
        self.send_packet(1, tcp_packet("10.9.9.9"))              # no route: default drop
        testutils.verify_no_other_packets(self)

        self.add_route("10.5.0.0/16", 2)
        self.send_packet(1, tcp_packet("10.5.0.1", ttl=1))       # TTL expires
        testutils.verify_no_other_packets(self)

        self.insert_table_entry("ipv4_lpm", {"dst_addr": "10.6.0.0/16"}, "drop")
        self.send_packet(1, tcp_packet("10.6.0.1"))
        testutils.verify_no_other_packets(self)

        arp = testutils.simple_arp_packet(eth_src="00:00:00:00:aa:01")
        self.send_packet(1, arp)                                 # not IPv4: not routed
        testutils.verify_no_other_packets(self)

        self.add_acl("drop", ingress_port=3)
        self.send_packet(3, tcp_packet("10.5.0.1"))              # routed, then the ACL drops
        testutils.verify_no_other_packets(self)
        packet = tcp_packet("10.5.0.1")
        self.send_packet(4, packet)                              # another port still forwards
        testutils.verify_packet(self, routed(packet), 2)
        testutils.verify_no_other_packets(self)
