"""DSCP → priority queue: a high-priority packet overtakes a queue of low-priority ones on a
congested port; without a dscp_priority entry it waits its turn (priority 0)."""

from __future__ import annotations

from ptf.testutils import group, verify_no_other_packets
from switch_base import (
    DSCP_CONTROL,
    DSCP_NO_TRIM,
    FABRIC_PORTS,
    ROLE_NIC,
    ROLE_T0,
    ROLE_T1,
    SLOW_PORT,
    SwitchTest,
    carrier,
    routed,
    shifted,
    srv6_packet,
    usid,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
OWN = usid(ROLE_T0, 1, 0x01)
NEXT = usid(ROLE_T1, 1, 0x02)
QUEUED = 8


@group("qos")
class DscpPriorityTest(SwitchTest):
    """CONTROL → priority 7 comes out before the low-priority packets queued ahead of it;
    without the entry it comes out last, in FIFO order."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_usid_un(OWN)
        self.add_usid_route(NEXT, SLOW_PORT)
        dst = carrier(OWN, NEXT, usid(ROLE_NIC, 1, 1))
        data = [srv6_packet(dst, psn=i, dscp=DSCP_NO_TRIM, payload_len=800)
                for i in range(QUEUED)]
        control = srv6_packet(dst, psn=0xABC, dscp=DSCP_CONTROL, roce=False, payload_len=16)
        for name, prio in (("no entry: priority 0", None), ("control → 7", 7),
                           ("control → 3", 3)):
            with self.case(name):
                entry = None if prio is None else self.set_dscp_priority(DSCP_CONTROL, prio)
                for packet in [*data, control]:
                    self.send(IN_PORT, packet)
                received = self.collect(SLOW_PORT, QUEUED + 1)
                verify_no_other_packets(self)
                expected = [bytes(routed(shifted(p))) for p in [*data, control]]
                self.assertCountEqual(received, expected, "not every packet came out once")
                position = received.index(expected[-1])
                if prio is None:
                    self.assertEqual(position, QUEUED, "without an entry CONTROL overtook")
                else:
                    self.assertLess(position, QUEUED - 1,
                                    f"CONTROL at priority {prio} came out at {position}")
                self.assertEqual([d for d in received if d != expected[-1]], expected[:-1],
                                 "the low-priority packets were reordered")
                if entry is not None:
                    self.delete(entry)
