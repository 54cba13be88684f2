"""Host TX: every packet of a connection on the next slot of its EV set — over both planes and
every T1 — encapsulated (H.Encaps.Red) with the compact EV in the flow label."""

from __future__ import annotations

from nic_base import (
    DSCP_RETX,
    DSCP_TRIMMABLE,
    ECT0,
    EV_COUNT,
    MY_ROW,
    MY_UA,
    PEER,
    PEER_ROW,
    PEER_UA,
    PLANE_PORT,
    PLANES,
    NicTest,
    compact_ev,
    path_to,
    return_address,
    t1_of,
)
from ptf.testutils import group
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.wire import BTH
from ptf_tests.base import autocleanup


@group("nic")
class SprayOverPlanesAndT1sTest(NicTest):
    """Two rotations: EV e on plane e % 2, its T1 in the carrier, the EV in the flow label and
    the UDP source port, DSCP TRIMMABLE with ECT(0); the inner packet as the host sent it."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        for psn in range(2 * EV_COUNT):
            ev = psn % EV_COUNT
            plane = ev % PLANES
            with self.case(f"psn {psn}"):
                port, outer = self.sent_on(psn)
                self.assertEqual(port, PLANE_PORT[plane])
                self.assertEqual(outer.dst, path_to(plane, t1_of(ev), MY_ROW, PEER_ROW, PEER_UA))
                self.assertEqual(outer.src, return_address(plane, t1_of(ev), MY_ROW, MY_UA))
                self.assertEqual((outer.nh, outer.tc >> 2, outer.tc & 3), (41, DSCP_TRIMMABLE,
                                                                           ECT0))
                self.assertEqual(outer.fl, compact_ev(plane, ev))
                inner = outer.payload
                self.assertIsInstance(inner, IPv6)
                self.assertEqual((inner.dst, inner[BTH].psn), (PEER, psn))
                self.assertEqual(inner[UDP].sport, compact_ev(plane, ev))
        self.assertEqual(self.wait_count("tx_data", 2 * EV_COUNT), 2 * EV_COUNT)


@group("nic")
class RotationStartTest(NicTest):
    """A connection whose entry says `rotation` 3 sends its first packet on slot 3, then on
    round: the controller gives each connection a start of its own, so QPs sharing a profile do
    not send on the same T1s in step (mrc-srv6.md §3.3)."""

    @autocleanup
    def runTest(self) -> None:
        self.configure(rotation=3)
        evs = [self.sent_on(psn)[1].fl & 0xFF for psn in range(2 * EV_COUNT)]
        expected = [(3 + k) % EV_COUNT for k in range(2 * EV_COUNT)]
        self.assertEqual(evs, expected)
        self.assertEqual(self.wait_count("tx_data", 2 * EV_COUNT), 2 * EV_COUNT)


@group("nic")
class RetransmissionDscpTest(NicTest):
    """A packet the host marks as a retransmission (BTH RTX) leaves as TRIMMABLE_RETX."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.host_write(0, retransmit=True)
        [(_, [data])] = self.receive_all(1).items()
        self.assertEqual(Ether(data)[IPv6].tc >> 2, DSCP_RETX)


@group("nic")
class DeniedEvTest(NicTest):
    """A DENIED EV (ev_path deny_path) is never used; its slot takes a same-plane backup."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.set_path(3, deny=True)
        evs = [self.sent_on(psn)[1].fl & 0xFF for psn in range(2 * EV_COUNT)]
        # The packet that met EV 3 was chosen again (the cursor moved on: EV 4); when the
        # rotation comes back to slot 3 it holds plane 1's first backup, EV 9.
        self.assertEqual(evs, [0, 1, 2, 4, 5, 6, 7, 0, 1, 2, 9, 4, 5, 6, 7, 0])
