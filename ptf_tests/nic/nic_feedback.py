"""Feedback at the sender: SACK M=SKIP_ONCE skips an EV for one rotation (within the
connection's skip_us; later, the EV's turn is its own again); M=ALWAYS_SKIP and a
loss the host reports make it ASSUMED_BAD (EV event; its slot refilled from the plane's
backups); probes of it, answered K times in a row, bring it back (EV event), and so, at once,
does the SACK of the very PSN reported lost, come over that EV after all. The host's queries
about PSNs in flight are answered for those that left on an EV out of service; a SACK whose
packet's predecessor on its EV has not arrived names that one to the host (overtaken)."""

from __future__ import annotations

from nic_base import (
    ASSUMED_BAD,
    CONN,
    EV_COUNT,
    GOOD,
    HOST_PORT,
    OP_EV_REPORT,
    PLANE_PORT,
    PLANES,
    PROFILE,
    SKIP_HOLDS_US,
    NicTest,
    compact_ev,
)
from ptf.testutils import group
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.sender import ECHO_TOOK_OUT, REPORT_PROBE_FLAG, REPORT_QUERY_FLAG
from mrc_transport.wire import BTH, PETH, Opcode, sack_fields
from ptf_tests.base import autocleanup

DIGEST = "ev_event_t"


def event(ev: int, state: int, drops: int) -> dict:
    return {"conn": CONN, "profile": PROFILE, "ev": ev, "state": state, "drops": drops}


class FeedbackTest(NicTest):
    def rotation(self, first_psn: int) -> list[int]:
        return [self.sent_on(psn)[1].fl & 0xFF for psn in range(first_psn, first_psn + EV_COUNT)]

    def sack_in(self, ev: int, cack: int = 0, **kw: int) -> None:
        """A SACK from the peer for our packet on `ev`; handed on to our host."""
        self.send_packet(PLANE_PORT[ev % 2], self.peer_sack(ev, cack=cack, **kw))
        [(port, [data])] = self.receive_all(1).items()
        self.assertEqual(port, HOST_PORT)
        self.assertIsNotNone(sack_fields(data))


@group("nic")
class SkipOnceTest(FeedbackTest):
    @autocleanup
    def runTest(self) -> None:
        self.configure(skip_us=SKIP_HOLDS_US)
        self.assertEqual(self.rotation(0), list(range(EV_COUNT)))
        self.sack_in(2, m=1)
        # 2 sat out once: its turn went to the next slot of its plane (4): the planes keep
        # their shares
        self.assertEqual(self.rotation(8), [0, 1, 4, 3, 4, 5, 6, 7])
        self.assertEqual(self.rotation(16), list(range(EV_COUNT)))
        self.verify_no_digest()   # SKIP is not an EV event


@group("nic")
class SkipHandOffTest(FeedbackTest):
    @autocleanup
    def runTest(self) -> None:
        # the controller's step: three slots of a plane on
        self.configure(hand_off=3 * PLANES, skip_us=SKIP_HOLDS_US)
        self.rotation(0)
        self.sack_in(2, m=1)
        # 2's turn went 6 slots on, wrapping to slot 0 (same plane, another T1 in the plan)
        self.assertEqual(self.rotation(8), [0, 1, 0, 3, 4, 5, 6, 7])
        self.assertEqual(self.rotation(16), list(range(EV_COUNT)))
        self.verify_no_digest()


@group("nic")
class SkipSpentTest(FeedbackTest):
    """A SKIP holds for its EV's next turn only within skip_us of the echo: with 0, any later
    turn (this test's next packet comes at least a µs later on any target) is the EV's own."""

    @autocleanup
    def runTest(self) -> None:
        self.configure(skip_us=0)
        self.rotation(0)
        self.sack_in(2, m=1)
        self.assertEqual(self.rotation(8), list(range(EV_COUNT)))
        self.assertEqual(self.wait_count("ev_skipped", 1), 1)   # it was SKIP, and spent
        self.verify_no_digest()


@group("nic")
class AlwaysSkipTest(FeedbackTest):
    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure()
        self.rotation(0)
        self.sack_in(4, m=2)
        self.verify_digest(DIGEST, [event(4, ASSUMED_BAD, 0)])
        self.assertEqual(self.rotation(8), [0, 1, 2, 3, 8, 5, 6, 7])   # slot 4: backup EV 8


@group("nic")
class HostReportAndProbeRecoveryTest(FeedbackTest):
    """The host's timer reports PSN 5 lost: its EV goes ASSUMED_BAD and the report comes back
    naming it; probes of it go out on that EV, and two answers in a row bring it back."""

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure(probe_successes=2)
        sent = self.rotation(0)
        self.host_to_own_nic(OP_EV_REPORT, 5, 0)
        [(port, [echo])] = self.receive_all(1).items()
        self.assertEqual(port, HOST_PORT)
        self.assertEqual(PETH(bytes(Ether(echo)[BTH].payload)).probe_id,
                         ECHO_TOOK_OUT | sent[5])   # and it took the EV out
        self.verify_digest(DIGEST, [event(sent[5], ASSUMED_BAD, 1)])
        for answer in range(2):
            with self.case(f"probe {answer}"):
                self.host_to_own_nic(Opcode.PROBE, 0, sent[5])
                [(port, [probe])] = self.receive_all(1).items()
                self.assertEqual(port, PLANE_PORT[sent[5] % 2])
                self.assertEqual(Ether(probe)[IPv6].fl, compact_ev(sent[5] % 2, sent[5]))
                self.sack_in(sent[5], pr=1)
        self.verify_digest(DIGEST, [event(sent[5], GOOD, 1)])


@group("nic")
class QueryTest(FeedbackTest):
    """After PSN 5's loss took its EV out, the host asks about each PSN of the rotation: only
    PSN 5's query comes back, naming the EV; the others' EVs are in service, and nothing
    changes (no EV event, no loss counted)."""

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure()
        sent = self.rotation(0)
        self.host_to_own_nic(OP_EV_REPORT, 5, 0)
        self.receive_all(1)
        self.verify_digest(DIGEST, [event(sent[5], ASSUMED_BAD, 1)])
        for psn in range(EV_COUNT):
            with self.case(f"PSN {psn}"):
                self.host_to_own_nic(OP_EV_REPORT, psn, REPORT_QUERY_FLAG)
                if psn == 5:
                    [(port, [answer])] = self.receive_all(1).items()
                    self.assertEqual(port, HOST_PORT)
                    self.assertEqual(PETH(bytes(Ether(answer)[BTH].payload)).probe_id,
                                     REPORT_QUERY_FLAG | sent[5])
                else:
                    self.receive_all(0)
        self.assertEqual(self.wait_count("query_in_service", EV_COUNT - 1), EV_COUNT - 1)
        self.assertEqual(self.count("query_out"), 1)
        self.assertEqual(self.count("host_report"), 1)
        self.verify_no_digest()


@group("nic")
class OvertakenTest(FeedbackTest):
    """Two rotations: PSN 2 and PSN 10 leave on one EV. The SACK for PSN 10 reports PSN 2 not
    arrived: one path keeps its order, so PSN 2 is lost, and the SACK the host gets says so
    (SETH spdcid = 8, the gap back to it). The SACK for PSN 11, whose EV's PSN before it (3)
    arrived, says nothing, whatever the peer wrote there; nor does a probe's answer. No EV
    state changes: the host's report of the loss does that."""

    def sack_up(self, ev: int, *, cack: int, offset: int, spdcid: int = 0) -> int:
        """The spdcid of the SACK our host gets for the peer's SACK (`spdcid` on the wire)."""
        self.send_packet(PLANE_PORT[ev % 2],
                         self.peer_sack(ev, cack=cack, offset=offset, spdcid=spdcid))
        [(port, [data])] = self.receive_all(1).items()
        self.assertEqual(port, HOST_PORT)
        fields = sack_fields(data)
        assert fields is not None
        return fields["spdcid"]

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure()
        first, second = self.rotation(0), self.rotation(EV_COUNT)
        self.assertEqual(first, second)   # PSN p and p + 8 on one EV
        with self.case("PSN 2 missing"):
            self.assertEqual(self.sack_up(second[2], cack=1, offset=9), EV_COUNT)
        with self.case("PSN 3 arrived"):
            self.assertEqual(self.sack_up(second[3], cack=3, offset=8, spdcid=0x1234), 0)
        with self.case("a probe's answer"):
            self.send_packet(PLANE_PORT[second[2] % 2],
                             self.peer_sack(second[2], cack=1, offset=9, pr=1))
            [(port, [data])] = self.receive_all(1).items()
            self.assertEqual((port, sack_fields(data)["spdcid"]), (HOST_PORT, 0))
        self.verify_no_digest()
        self.assertEqual(self.count("host_report"), 0)


class LateArrivalTest(FeedbackTest):
    def report_lost(self, psn: int, ev: int, *, digest: bool = True) -> None:
        """The host reports `psn` (sent on `ev`) lost: the report comes back naming `ev`, and
        whether it took `ev` out (then an EV event, `digest`)."""
        self.host_to_own_nic(OP_EV_REPORT, psn, 0)
        [(port, [echo])] = self.receive_all(1).items()
        self.assertEqual(port, HOST_PORT)
        self.assertEqual(PETH(bytes(Ether(echo)[BTH].payload)).probe_id,
                         ev | (ECHO_TOOK_OUT if digest else 0))
        if digest:
            self.verify_digest(DIGEST, [event(ev, ASSUMED_BAD, 1)])


@group("nic")
class LateArrivalUndoTest(LateArrivalTest):
    """PSN 5 is reported lost and its EV goes ASSUMED_BAD; then PSN 5's SACK comes back over
    that very EV (the packet was late behind a queue, not lost): the EV is GOOD again at once.
    The same PSN's SACK over another EV (its resend's), or another PSN's over the EV, undoes
    nothing; nor does the lost PSN's SACK a second time."""

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure(probe_successes=2)
        sent = self.rotation(0)
        self.report_lost(5, sent[5])
        for name, ev, cack, offset in (("the resend's EV", sent[6], 5, 0),
                                       ("another PSN", sent[5], 4, 2),
                                       ("a PSN behind the cumulative point", sent[5], 7, -3)):
            with self.case(name):
                self.sack_in(ev, cack=cack, offset=offset)
                self.verify_no_digest()
                self.assertEqual(self.count("ev_loss_undone"), 0)
        with self.case("the lost PSN over its EV"):
            self.sack_in(sent[5], cack=7, offset=-2)
            self.verify_digest(DIGEST, [event(sent[5], GOOD, 1)])
            self.assertEqual(self.wait_count("ev_loss_undone", 1), 1)
        with self.case("again"):
            self.sack_in(sent[5], cack=5)
            self.verify_no_digest()
            self.assertEqual(self.count("ev_loss_undone"), 1)


@group("nic")
class LateArrivalForgottenTest(LateArrivalTest):
    """What speaks against an EV after the loss that took it out — a probe of it unanswered,
    a second loss pinned on it, ALWAYS_SKIP — leaves it out even when the first lost PSN's
    SACK then comes over it."""

    @autocleanup
    def runTest(self) -> None:
        self.enable_digest(DIGEST)
        self.configure(probe_successes=2)
        sent = self.rotation(0)
        for psn in (5, 6, 7):
            self.report_lost(psn, sent[psn])
        with self.case("a probe unanswered"):
            self.host_to_own_nic(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | sent[5])
            self.receive_all(1)
        with self.case("a second loss"):
            self.report_lost(6, sent[6], digest=False)
        with self.case("ALWAYS_SKIP"):
            self.sack_in(sent[7], cack=0, m=2)
        for psn in (5, 6, 7):
            with self.case(f"PSN {psn} late"):
                self.sack_in(sent[psn], cack=psn)
        self.verify_no_digest()
        self.assertEqual(self.count("ev_loss_undone"), 0)
