"""Port state (the NIC port-state bitmap in SACKs and NACKs, as the MRC paper does): our agent
installs which of NIC A's ports are down (the local_port_state default action); nothing leaves on
a down port, every SACK and NACK we send carries the bitmap, and the peer's bitmap in its SACKs
moves our EV choice off its down planes without touching any EV's state, nor does a loss the
host reports on a down plane."""

from __future__ import annotations

from nic_base import (
    ASSUMED_BAD,
    CONN,
    DSCP_TRIMMED,
    EV_COUNT,
    HOST_PORT,
    OP_EV_REPORT,
    PLANE_PORT,
    PLANES,
    PROFILE,
    NicTest,
)
from ptf.testutils import group, verify_no_other_packets
from scapy.layers.l2 import Ether

from mrc_transport.sender import ECHO_TOOK_OUT
from mrc_transport.wire import BTH, PETH, Opcode, nack_fields, sack_fields
from ptf_tests.base import autocleanup

DIGEST = "ev_event_t"


class PortStateTest(NicTest):
    def sends(self, psns: range) -> list[tuple[int, int]]:
        """(port, slot) of the one packet each host write becomes."""
        return [(port, ip.fl & 0xFF) for port, ip in (self.sent_on(psn) for psn in psns)]

    def sack_in(self, ev: int, port_state: int, *, probe_answer: bool = False) -> None:
        """A SACK from the peer for our packet on `ev` (or, before we sent any, its answer to
        a probe of `ev`: a SACK of nothing sent is a ghost), with its port-state bitmap."""
        self.send_packet(PLANE_PORT[ev % PLANES],
                         self.peer_sack(ev, cack=0, port_state=port_state,
                                        pr=int(probe_answer)))
        [(port, [data])] = self.receive_all(1).items()
        self.assertEqual(port, HOST_PORT)
        self.assertIsNotNone(sack_fields(data))


@group("nic")
class LocalPortStateInFeedbackTest(PortStateTest):
    """SACKs carry our bitmap: 0 by default, bit 1 with plane 1's port down; NACKs too; data that
    comes in on the down port is delivered but not SACKed (nothing leaves on that port)."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        for psn, down, state in ((0, (), 0), (1, (1,), 0b10), (2, (), 0)):
            with self.case(f"ports down {down}"):
                self.ports_down(*down)
                self.send_packet(PLANE_PORT[0], self.peer_data(psn, plane=0, ev=0))
                got = self.receive_all(2)
                self.assertEqual(sorted(got), [HOST_PORT, PLANE_PORT[0]])
                fields = sack_fields(got[PLANE_PORT[0]][0])
                assert fields is not None
                self.assertEqual(fields["port_state"], state)
        self.ports_down(1)
        with self.case("data on the down port"):
            self.send_packet(PLANE_PORT[1], self.peer_data(3, plane=1, ev=1))
            got = self.receive_all(1)   # the host's copy only, then nothing
            self.assertEqual(list(got), [HOST_PORT])
            self.assertEqual(self.wait_count("port_down_drop", 1), 1)
            self.assertEqual(self.count("sack_sent"), 3)
        with self.case("NACK"):
            self.send_packet(PLANE_PORT[0], self.peer_data(4, plane=0, ev=2, dscp=DSCP_TRIMMED))
            [(port, [nack])] = self.receive_all(1).items()
            self.assertEqual(port, PLANE_PORT[0])
            fields = nack_fields(nack)
            assert fields is not None
            self.assertEqual(fields["port_state"], 0b10)


@group("nic")
class PeerPortDownTest(PortStateTest):
    """A SACK saying the peer's plane-1 port is down: every packet goes on plane 0 (the cursor
    moves past the slots taken: plane 0's share equally), no EV event; the next SACK saying it
    is up brings plane 1 back, every slot in turn (no EV was made SKIP or ASSUMED_BAD)."""

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure()
        self.sack_in(0, port_state=0b10, probe_answer=True)
        self.assertEqual(self.sends(range(8)),
                         [(PLANE_PORT[0], slot) for slot in (0, 2, 4, 6, 0, 2, 4, 6)])
        self.assertEqual(self.wait_count("tx_port_passed", 7), 7)
        self.sack_in(2, port_state=0)
        # The cursor stands at 15: slot 7, then the whole rotation.
        self.assertEqual(self.sends(range(8, 8 + EV_COUNT)),
                         [(PLANE_PORT[s % PLANES], s) for s in (7, 0, 1, 2, 3, 4, 5, 6)])
        self.assertEqual(self.count("tx_port_passed"), 7)
        self.verify_no_digest()


@group("nic")
class LocalPortDownTest(PortStateTest):
    """Our plane-1 port down: data goes on plane 0 only, a probe of a plane-1 EV is not sent;
    back up, plane 1 is used again."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.ports_down(1)
        self.assertEqual({port for port, _ in self.sends(range(6))}, {PLANE_PORT[0]})
        with self.case("probe on the down port"):
            self.host_to_own_nic(Opcode.PROBE, 0, 1)   # a probe of EV 1 (plane 1)
            self.assertEqual(self.wait_count("port_down_drop", 1), 1)
            verify_no_other_packets(self)
            self.assertEqual(self.count("tx_probe"), 0)
        self.ports_down()
        # The cursor stands at 11 (past slot 2): slots 3, 4, 5, 6.
        self.assertEqual(self.sends(range(6, 10)),
                         [(PLANE_PORT[s % PLANES], s) for s in (3, 4, 5, 6)])


@group("nic")
class EveryPlaneDownTest(PortStateTest):
    """Every plane down by the peer's word: its bitmap is ignored (it may be stale, and only
    feedback to packets sent can refresh it), the choice goes by our ports; every port of ours
    down: nothing is sent, each packet counted."""

    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.sack_in(0, port_state=0b11, probe_answer=True)
        self.assertEqual(self.sends(range(4)),
                         [(PLANE_PORT[s % PLANES], s) for s in range(4)])
        self.ports_down(0, 1)
        for psn in range(4, 7):
            self.host_write(psn)
        self.assertEqual(self.wait_count("port_down_drop", 3), 3)
        verify_no_other_packets(self)
        self.assertEqual(self.count("tx_data"), 4)
        with self.case("ours down on plane 0, the peer's on plane 1"):
            self.ports_down(0)
            self.sack_in(0, port_state=0b10)
            self.assertEqual({port for port, _ in self.sends(range(7, 11))}, {PLANE_PORT[1]})


@group("nic")
class PortDownLossNotChargedTest(PortStateTest):
    """The host reports lost a packet that left on plane 1, once while our plane-1 port is down
    and once while the peer's bitmap says its plane-1 port is: the port took it, not the path,
    so neither report touches its EV (no EV event, no echo to probe with, counted apart). With
    both ports up the same report takes the EV out of service."""

    def report(self, psn: int) -> None:
        self.host_to_own_nic(OP_EV_REPORT, psn, 0)

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure()
        sent = self.sends(range(4))
        self.assertEqual([port for port, _ in sent], [PLANE_PORT[s % PLANES] for s in range(4)])
        with self.case("our port down"):
            self.ports_down(1)
            self.report(1)
            self.assertEqual(self.wait_count("report_port_down", 1), 1)
            verify_no_other_packets(self)
            self.verify_no_digest()
        with self.case("the peer's port down"):
            self.ports_down()
            self.sack_in(0, port_state=0b10)
            self.report(3)
            self.assertEqual(self.wait_count("report_port_down", 2), 2)
            verify_no_other_packets(self)
            self.verify_no_digest()
            self.assertEqual(self.count("host_report"), 0)
        with self.case("both ports up"):
            self.sack_in(0, port_state=0)
            self.report(3)
            [(port, [echo])] = self.receive_all(1).items()
            self.assertEqual(port, HOST_PORT)
            self.assertEqual(PETH(bytes(Ether(echo)[BTH].payload)).probe_id,
                             ECHO_TOOK_OUT | sent[3][1])
            self.verify_digest(DIGEST, [{"conn": CONN, "profile": PROFILE, "ev": sent[3][1],
                                         "state": ASSUMED_BAD, "drops": 1}])
            self.assertEqual(self.count("report_port_down"), 2)
            self.assertEqual(self.wait_count("host_report", 1), 1)
