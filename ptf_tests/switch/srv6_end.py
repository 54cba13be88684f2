"""Classic End and End.X on 128-bit SIDs: SRH processing over every segment count and position."""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    DROP_SID_NO_NEXT,
    FABRIC_PORTS,
    ROLE_NIC,
    ROLE_T1,
    UDT6,
    SwitchTest,
    carrier,
    routed,
    srh_max_segments,
    srh_next,
    srv6_packet,
    usid,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
ROUTE_PORT = FABRIC_PORTS[1]
X_PORT = FABRIC_PORTS[2]
END_SID = "fc00:0:1::e"
END_X_SID = "fc00:0:1::e1"
X_SMAC = "00:00:00:00:0e:01"
X_DMAC = "00:00:00:00:0e:02"


def segment(index: int) -> str:
    """Segment List[index]: a carrier whose first uSID has a route of its own."""
    return carrier(usid(ROLE_T1, 1, 0x30 + index), usid(ROLE_NIC, 1, 0x30), UDT6)


def segment_mac(index: int) -> str:
    return f"00:00:00:00:c0:{index:02x}"


def srh_cases() -> list[tuple[str, int, int]]:
    """(name, segment count, segments left) for every count up to the parser's bound."""
    return [(f"{count}seg/sl{left}", count, left)
            for count in range(1, srh_max_segments() + 1) for left in range(1, count + 1)]


class EndTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        self.add_end(END_SID)
        self.add_end_x(END_X_SID, X_PORT, smac=X_SMAC, dmac=X_DMAC)
        for index in range(srh_max_segments()):
            self.add_usid_route(usid(ROLE_T1, 1, 0x30 + index), ROUTE_PORT,
                                dmac=segment_mac(index))


@group("srv6")
@group("end")
class EndSrhTest(EndTest):
    """End: segments left - 1, destination ← the segment it now points to, hop limit - 1, route."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for name, count, left in srh_cases():
            for inner in (True, False):
                with self.case(f"end/{name}/{'inner' if inner else 'udp'}"):
                    packet = srv6_packet(END_SID, segments=[segment(i) for i in range(count)],
                                         segments_left=left, inner=inner, psn=count * 8 + left)
                    expected = routed(srh_next(packet), dmac=segment_mac(left - 1))
                    self.expect(IN_PORT, packet, expected, ROUTE_PORT)


@group("srv6")
@group("end")
class EndXSrhTest(EndTest):
    """End.X: as End, but out of its own port with its own MACs (no route lookup)."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for name, count, left in srh_cases():
            with self.case(f"end.x/{name}"):
                packet = srv6_packet(END_X_SID, segments=[segment(i) for i in range(count)],
                                     segments_left=left, psn=count * 8 + left)
                expected = routed(srh_next(packet), smac=X_SMAC, dmac=X_DMAC)
                self.expect(IN_PORT, packet, expected, X_PORT)


@group("srv6")
@group("end")
@group("drop")
class EndNothingLeftTest(EndTest):
    """End / End.X with no SRH, or with segments left 0: DROP_SID_NO_NEXT."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for sid in (END_SID, END_X_SID):
            for name, segments in (("no srh", None), ("srh sl0", [segment(0)])):
                for inner in (False, True):
                    with self.case(f"{sid}/{name}/{'inner' if inner else 'udp'}"):
                        packet = srv6_packet(sid, segments=segments, segments_left=0,
                                             inner=inner)
                        self.expect_drop(IN_PORT, packet, DROP_SID_NO_NEXT)
