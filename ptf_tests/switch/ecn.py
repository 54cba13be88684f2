"""ECN: ECT packets that meet a queue deeper than the port's threshold leave with CE — on ports
with an ecn_config entry that are not host-facing; never on others; non-ECT packets never.

Uses the slow port (see trimming.py): packet i of a burst meets enq_qdepth <= i packets (the
threshold is THRESHOLD packets of the burst's size in the architecture's unit, `queue_depth`).
"""

from __future__ import annotations

from ptf.testutils import group, verify_no_other_packets
from scapy.packet import Packet
from switch_base import (
    CE,
    DSCP_NO_TRIM,
    ECT0,
    ECT1,
    FABRIC_PORTS,
    HOST,
    ROLE_NIC,
    ROLE_T0,
    ROLE_T1,
    SLOW_PORT,
    SwitchTest,
    carrier,
    ce_marked,
    routed,
    shifted,
    srv6_packet,
    usid,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
OWN = usid(ROLE_T0, 1, 0x01)
NEXT = usid(ROLE_T1, 1, 0x02)
THRESHOLD = 2
BURST = 12


class EcnTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        self.add_usid_un(OWN)
        self.add_usid_route(NEXT, SLOW_PORT)

    def ecn_count(self) -> int:
        return self.read_counter("ecn_counter", SLOW_PORT).packet_count

    def set_slow_port_ecn(self) -> None:
        """Mark above THRESHOLD queued packets of the burst's size."""
        self.set_ecn(SLOW_PORT, self.queue_depth(THRESHOLD, routed(shifted(burst_packets(0)[0]))))

    def burst(self, ecn: int) -> int:
        """Send a burst to the slow port; every packet comes out in order, unmarked or CE
        (packets 0..THRESHOLD always unmarked). Returns how many were marked."""
        packets = burst_packets(ecn)
        for packet in packets:
            self.send(IN_PORT, packet)
        received = self.collect(SLOW_PORT, BURST)
        verify_no_other_packets(self)
        self.assertEqual(len(received), BURST, f"{len(received)} of {BURST} packets came out")
        marked = 0
        for index, (packet, data) in enumerate(zip(packets, received, strict=True)):
            plain = bytes(routed(shifted(packet)))
            if data == plain:
                continue
            self.assertNotEqual(ecn, 0, f"packet {index} is not ECN-capable but was changed")
            self.assertGreater(index, THRESHOLD, f"packet {index} was marked below threshold")
            self.assertEqual(data, bytes(ce_marked(routed(shifted(packet)))),
                             f"packet {index} is neither forwarded as is nor CE-marked")
            marked += 1
        return marked


def burst_packets(ecn: int) -> list[Packet]:
    return [srv6_packet(carrier(OWN, NEXT, usid(ROLE_NIC, 1, 1)), psn=i, ecn=ecn,
                        dscp=DSCP_NO_TRIM, payload_len=800) for i in range(BURST)]


@group("ecn")
class EcnMarkTest(EcnTest):
    """ECT(0) and ECT(1) over the threshold: CE, counted in ecn_counter; Not-ECT and CE packets
    pass unchanged and uncounted."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        self.set_slow_port_ecn()
        for name, ecn, marks in (("ect0", ECT0, True), ("ect1", ECT1, True),
                                 ("not-ect", 0, False), ("ce", CE, False)):
            with self.case(name):
                before = self.ecn_count()
                marked = self.burst(ecn)
                if marks:
                    self.assertGreater(marked, 0, "no packet was marked on the congested port")
                else:
                    self.assertEqual(marked, 0)
                self.assertEqual(self.ecn_count() - before, marked)


@group("ecn")
class EcnDisabledTest(EcnTest):
    """No ecn_config entry, or a host-facing egress port: never marked, even congested."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        with self.case("no ecn_config entry"):
            self.assertEqual(self.burst(ECT0), 0)
        self.set_slow_port_ecn()
        self.modify_table_entry("egress_port_role", {"port": SLOW_PORT}, "set_egress_port_role",
                                role=HOST)
        with self.case("host-facing port with an entry"):
            before = self.ecn_count()
            self.assertEqual(self.burst(ECT0), 0)
            self.assertEqual(self.ecn_count(), before)
