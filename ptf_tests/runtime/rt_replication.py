"""The packet replication engine over P4Runtime: multicast groups and clone sessions."""

from __future__ import annotations

import ptf.testutils as testutils
from ptf.testutils import group
from runtime_base import RuntimeBasicsTest, routed, tcp_packet

from ptf_tests.base import autocleanup


@group("replication")
class MulticastTest(RuntimeBasicsTest):
    """set_mcast_grp copies the packet to every port of the group, once each."""

    @autocleanup
    def runTest(self) -> None:
        group_entry = self.insert_multicast_group(10, [1, 2, 5])
        self.add_mcast_route("224.1.0.0/16", 10)
        packet = tcp_packet("224.1.2.3")
        self.send_packet(0, packet)
        testutils.verify_packets(self, packet, [1, 2, 5])
        testutils.verify_no_other_packets(self)

        # Replace the group's ports: the next packet follows the new membership.
        group_entry.replicas = []
        group_entry.add(3).add(6)
        self.modify(group_entry)
        self.send_packet(0, packet)
        testutils.verify_packets(self, packet, [3, 6])
        testutils.verify_no_other_packets(self)


@group("replication")
class CloneSessionTest(RuntimeBasicsTest):
    """The ACL's mirror clones the packet as received to the session's port; the original is
    routed as usual."""

    @autocleanup
    def runTest(self) -> None:
        self.insert_clone_session(5, [6])
        self.add_route("10.10.0.0/16", 2)
        self.add_acl("mirror", ingress_port=1, session_id=5)
        packet = tcp_packet("10.10.0.1")
        self.send_packet(1, packet)
        testutils.verify_packet(self, routed(packet), 2)
        testutils.verify_packet(self, packet, 6)
        testutils.verify_no_other_packets(self)

        self.send_packet(3, packet)  # not mirrored from another port
        testutils.verify_packet(self, routed(packet), 2)
        testutils.verify_no_other_packets(self)
