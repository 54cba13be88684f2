"""The receiver: data decapsulated to the host and SACKed on the plane it came in on (cumulative
PSN + 64-bit bitmap, 24-bit wrap); duplicates SACKed, not delivered; a PSN beyond the bitmap and
a trimmed packet NACKed, with the reflected EV."""

from __future__ import annotations

from nic_base import (
    DSCP_CONTROL,
    DSCP_LASTHOP,
    DSCP_TRIMMED,
    HOST_PORT,
    ME,
    MY_ROW,
    MY_UA,
    PEER,
    PEER_QP,
    PEER_ROW,
    PEER_UA,
    PLANE_PORT,
    NicTest,
    compact_ev,
    locator,
    return_address,
    t1_of,
)
from ptf.testutils import group
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.wire import BTH, RETH, NackReason, nack_fields, psns_acked, sack_fields
from ptf_tests.base import autocleanup


class ReceiverTest(NicTest):
    def deliver(self, psn: int, plane: int = 0, ev: int = 0, host: bool = True, **kw: int,
                ) -> dict:
        """NIC B's packet `psn` arrives: delivered (or not) and SACKed; the SACK's fields."""
        self.send_packet(PLANE_PORT[plane], self.peer_data(psn, plane, ev, **kw))
        got = self.receive_all(2 if host else 1)
        self.assertEqual(HOST_PORT in got, host, f"delivered to the host: {sorted(got)}")
        [sack] = got[PLANE_PORT[plane]]
        fields = sack_fields(sack)
        self.assertIsNotNone(fields, "no SACK")
        assert fields is not None
        return fields


@group("nic")
class DeliverAndSackTest(ReceiverTest):
    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.send_packet(PLANE_PORT[1], self.peer_data(0, plane=1, ev=5, payload=b"hello"))
        got = self.receive_all(2)
        [delivered] = got[HOST_PORT]
        inner = Ether(delivered)
        self.assertEqual((inner[IPv6].src, inner[IPv6].dst, inner[BTH].psn), (PEER, ME, 0))
        self.assertEqual(bytes(inner[RETH].payload), b"hello")
        [sack] = got[PLANE_PORT[1]]
        fields = sack_fields(sack)
        assert fields is not None
        self.assertEqual((fields["dest_qp"], fields["cack_psn"], fields["sack_bitmap"]),
                         (PEER_QP, 0, 0))
        self.assertEqual((fields["entropy"], fields["src"], fields["dst"]),
                         (compact_ev(1, 5), ME, PEER))
        outer = Ether(sack)[IPv6]
        self.assertEqual(outer.tc >> 2, DSCP_CONTROL)
        # Back the way the data came: to its outer source, NIC B behind EV 5's T1.
        self.assertEqual(outer.dst, return_address(1, t1_of(5), PEER_ROW, PEER_UA))
        self.assertEqual(outer.src, locator(1, MY_ROW, MY_UA))


@group("nic")
class SackBitmapTest(ReceiverTest):
    """Holes show in the bitmap; the cumulative point jumps when they are filled; CE → M=1."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        for psn in (0, 1, 2):
            self.deliver(psn)
        self.deliver(4)
        got = self.deliver(63 + 3)   # the last PSN the bitmap holds
        self.assertEqual(got["cack_psn"], 2)
        self.assertEqual(psns_acked(got["cack_psn"], got["sack_offset"], got["sack_bitmap"]),
                         {2, 4, 66})
        got = self.deliver(3, ecn=3)
        self.assertEqual((got["cack_psn"], got["m"]), (4, 1))


@group("nic")
class PsnWrapTest(ReceiverTest):
    @autocleanup
    def runTest(self) -> None:
        self.configure(initial_psn=0xFFFFFE)
        self.deliver(0xFFFFFE)
        got = self.deliver(0x000001)
        self.assertEqual(psns_acked(got["cack_psn"], got["sack_offset"], got["sack_bitmap"]),
                         {0xFFFFFE, 0x000001})
        self.deliver(0xFFFFFF)
        self.assertEqual(self.deliver(0x000000)["cack_psn"], 0x000001)


@group("nic")
class DuplicateTest(ReceiverTest):
    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.deliver(0)
        self.assertEqual(self.deliver(0, host=False)["cack_psn"], 0)
        self.deliver(2)
        self.deliver(2, host=False)
        self.assertEqual(self.wait_count("rx_duplicate", 2), 2)


@group("nic")
class NackTest(NicTest):
    """Trimmed (by DSCP) or beyond the bitmap: a NACK with that reason, nothing delivered."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        cases = (("trimmed", 5, DSCP_TRIMMED, NackReason.TRIMMED),
                 ("trimmed last hop", 6, DSCP_LASTHOP, NackReason.TRIMMED_LASTHOP),
                 ("out of window", 64, None, NackReason.PSN_OOR_WINDOW))
        for name, psn, dscp, reason in cases:
            with self.case(name):
                packet = (self.peer_data(psn, plane=0, ev=2, dscp=dscp) if dscp is not None
                          else self.peer_data(psn, plane=0, ev=2))
                if dscp is not None:
                    packet = packet[:14 + 40 + 40 + 8 + 12 + 4 + 16]   # cut after RETH
                self.send_packet(PLANE_PORT[0], packet)
                [(port, [nack])] = self.receive_all(1).items()
                self.assertEqual(port, PLANE_PORT[0])
                fields = nack_fields(nack)
                assert fields is not None
                self.assertEqual((fields["nack_reason"], fields["nack_psn"], fields["dest_qp"]),
                                 (reason, psn, PEER_QP))
                self.assertEqual(fields["entropy"], compact_ev(0, 2))
        self.assertEqual(self.count("rx_data"), 0)
        self.assertEqual(self.wait_count("nack_sent", 3), 3)
