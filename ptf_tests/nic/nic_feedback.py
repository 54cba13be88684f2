"""Feedback at the sender: SACK M=SKIP_ONCE skips an EV for one rotation; M=ALWAYS_SKIP and a
loss the host reports make it ASSUMED_BAD (EV event; its slot refilled from the plane's
backups); probes of it, answered K times in a row, bring it back (EV event)."""

from __future__ import annotations

from nic_base import (
    ASSUMED_BAD,
    CONN,
    EV_COUNT,
    GOOD,
    HOST_PORT,
    OP_EV_REPORT,
    PLANE_PORT,
    PROFILE,
    NicTest,
    compact_ev,
)
from ptf.testutils import group
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.wire import BTH, PETH, Opcode, sack_fields
from ptf_tests.base import autocleanup

DIGEST = "ev_event_t"


def event(ev: int, state: int, drops: int) -> dict:
    return {"conn": CONN, "profile": PROFILE, "ev": ev, "state": state, "drops": drops}


class FeedbackTest(NicTest):
    def rotation(self, first_psn: int) -> list[int]:
        return [self.sent_on(psn)[1].fl & 0xFF for psn in range(first_psn, first_psn + EV_COUNT)]

    def sack_in(self, ev: int, **kw: int) -> None:
        """A SACK from the peer for our packet on `ev`; handed on to our host."""
        self.send_packet(PLANE_PORT[ev % 2], self.peer_sack(ev, cack=0, **kw))
        [(port, [data])] = self.receive_all(1).items()
        self.assertEqual(port, HOST_PORT)
        self.assertIsNotNone(sack_fields(data))


@group("nic")
class SkipOnceTest(FeedbackTest):
    @autocleanup
    def runTest(self) -> None:
        self.configure()
        self.assertEqual(self.rotation(0), list(range(EV_COUNT)))
        self.sack_in(2, m=1)
        # 2 sat out once: its turn went to the next slot in the rotation (3, the other plane)
        self.assertEqual(self.rotation(8), [0, 1, 3, 3, 4, 5, 6, 7])
        self.assertEqual(self.rotation(16), list(range(EV_COUNT)))
        self.verify_no_digest()   # SKIP is not an EV event


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
        self.assertEqual(PETH(bytes(Ether(echo)[BTH].payload)).probe_id, sent[5])
        self.verify_digest(DIGEST, [event(sent[5], ASSUMED_BAD, 1)])
        for answer in range(2):
            with self.case(f"probe {answer}"):
                self.host_to_own_nic(Opcode.PROBE, 0, sent[5])
                [(port, [probe])] = self.receive_all(1).items()
                self.assertEqual(port, PLANE_PORT[sent[5] % 2])
                self.assertEqual(Ether(probe)[IPv6].fl, compact_ev(sent[5] % 2, sent[5]))
                self.sack_in(sent[5], pr=1)
        self.verify_digest(DIGEST, [event(sent[5], GOOD, 1)])
