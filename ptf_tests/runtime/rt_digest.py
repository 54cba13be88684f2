"""Source MAC learning digests: sent for unknown MACs, acked, silent for known MACs."""

from __future__ import annotations

import ptf.testutils as testutils
from ptf.testutils import group
from runtime_base import RuntimeBasicsTest, tcp_packet

from ptf_tests.base import autocleanup

DIGEST = "mac_learn_digest_t"


@group("digest")
class DigestLearnTest(RuntimeBasicsTest):
    """An unknown source MAC yields one DigestList with (MAC, port); a known MAC yields none."""

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.send_packet(3, tcp_packet(src_mac="00:00:00:00:dd:01"))
        first = self.verify_digest(DIGEST, [{"src_addr": 0xDD01, "ingress_port": 3}])
        testutils.verify_no_other_packets(self)

        self.send_packet(5, tcp_packet(src_mac="00:00:00:00:dd:02"))
        second = self.verify_digest(DIGEST, [{"src_addr": 0xDD02, "ingress_port": 5}])
        self.assertGreater(second.list_id, first.list_id)

        self.add_known_mac("00:00:00:00:dd:03")
        self.send_packet(3, tcp_packet(src_mac="00:00:00:00:dd:03"))
        self.verify_no_digest()
        testutils.verify_no_other_packets(self)


@group("digest")
class DigestDisabledTest(RuntimeBasicsTest):
    """Without a DigestEntry the switch sends no DigestList (as PI)."""

    @autocleanup
    def runTest(self) -> None:
        self.send_packet(1, tcp_packet(src_mac="00:00:00:00:dd:04"))
        self.verify_no_digest()
        testutils.verify_no_other_packets(self)
