"""The sender's timers on their own (mrc_transport/rto.py, sender.py): the RTO follows the
measured RTT (RFC 6298) and backs off; a NACKed resend is no failed retry; a connection gives
up only when nothing answers it for give_up_us, and says so (NoAnswer); a loss with no trim
notice is reported to the NIC, a trimmed packet's is not. The sender alone, fed SACKs and
NACKs as the NIC hands them up (fastwire's parsed frames), in virtual time."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from emulation.scenario import ScenarioError, loads
from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import NackFrame, OtherFrame, SackFrame, WriteFrame, parse
from mrc_transport.nic_host import NicHost
from mrc_transport.rto import RtoEstimator
from mrc_transport.sender import (
    ECHO_TOOK_OUT,
    OP_EV_REPORT,
    REPORT_QUERY_FLAG,
    NoAnswer,
    RetryLimitExceeded,
    Sender,
)
from mrc_transport.wire import PSN_MOD, NackReason, Opcode, SackM

QP = 0x11


def config(**kw: Any) -> ConnectionConfig:
    return ConnectionConfig(local_addr="2001:db8::1", peer_addr="2001:db8::2", local_qp=QP,
                            peer_qp=0x22, **kw)


def sack(*psns: int, cumulative: int = PSN_MOD - 1) -> SackFrame:
    """A SACK of `cumulative` and everything before it, and of `psns` (beyond it)."""
    bitmap = 0
    for psn in psns:
        bitmap |= 1 << (psn - cumulative - 1) % PSN_MOD
    return SackFrame(QP, 0, 0, 0, 0, 0, cumulative, 1, bitmap)


def nack(psn: int, reason: int = NackReason.TRIMMED) -> NackFrame:
    return NackFrame(QP, psn, reason, 0, 0, psn)


def kinds(frames: list[bytes]) -> list[str]:
    """"data", "probe" or "report" per frame."""
    out = []
    for frame in frames:
        parsed = parse(frame)
        if isinstance(parsed, WriteFrame):
            out.append("data")
        elif isinstance(parsed, OtherFrame) and parsed.opcode == Opcode.PROBE:
            out.append("probe")
        else:
            assert isinstance(parsed, OtherFrame) and parsed.opcode == OP_EV_REPORT
            out.append("report")
    return out


# -- the estimator ---------------------------------------------------------------------------


def test_the_estimator_follows_rfc_6298_within_its_floor_and_ceiling() -> None:
    rto = RtoEstimator(initial_us=100, floor_us=50, ceiling_us=2000)
    assert rto.rto_us == 100 and rto.timer_us() == 100           # before any sample
    rto.sample(300)                                              # SRTT R, RTTVAR R/2
    assert (rto.srtt_us, rto.rttvar_us, rto.rto_us) == (300, 150, 900)
    rto.sample(100)   # RTTVAR 3/4 150 + 1/4 200 = 162.5; SRTT 7/8 300 + 1/8 100 = 275
    assert (rto.srtt_us, rto.rttvar_us, rto.rto_us) == (275, 162.5, 925)
    for _ in range(200):
        rto.sample(5)
    assert rto.rto_us == 50                                      # the floor
    rto.sample(10_000)
    assert rto.rto_us == 2000                                    # the ceiling
    with pytest.raises(ValueError):
        RtoEstimator(100, 0, 10)


def test_the_backoff_doubles_per_timeout_in_a_row_and_new_data_ends_it() -> None:
    rto = RtoEstimator(initial_us=100, floor_us=100, ceiling_us=1000)
    rto.timed_out(1)
    assert rto.timer_us() == 200 and rto.timer_us(2) == 400
    rto.timed_out(1)                                             # another packet, same round
    assert rto.timer_us() == 200
    rto.timed_out(4)
    assert rto.timer_us() == 1000                                # capped
    rto.acknowledged()
    assert rto.timer_us() == 100 and rto.timer_us(2) == 400      # the packet's own count stays


# -- the sender ------------------------------------------------------------------------------


class Bottleneck:
    """The sender's frames through a FIFO served at `serve_us` per data packet, `delay_us` each
    way, a SACK of everything received for each packet that arrives (reports dropped): a
    receiver and a path that never lose anything, only queue."""

    def __init__(self, sender: Sender, serve_us: int, delay_us: int) -> None:
        self.sender = sender
        self.serve_us = serve_us
        self.delay_us = delay_us
        self.now = 0
        self.free_at = 0
        self.sacks: deque[tuple[int, int]] = deque()   # (arrival at the sender, psn)
        self.received: set[int] = set()

    def _hand(self, frames: list[bytes]) -> None:
        for frame in frames:
            parsed = parse(frame)
            if isinstance(parsed, WriteFrame):
                self.free_at = max(self.free_at, self.now) + self.serve_us
                self.sacks.append((self.free_at + 2 * self.delay_us, parsed.psn))

    def run(self, until_us: int) -> None:
        sender = self.sender
        while not sender.done and self.now < until_us:
            self._hand(sender.poll(self.now))
            due = sender.next_deadline_us(self.now)
            times = [t for t in (due, self.sacks[0][0] if self.sacks else None) if t is not None]
            self.now = max(self.now + 1, min(times))
            while self.sacks and self.sacks[0][0] <= self.now:
                _, psn = self.sacks.popleft()
                self.received.add(psn)
                cumulative = PSN_MOD - 1
                while (cumulative + 1) % PSN_MOD in self.received:
                    cumulative = (cumulative + 1) % PSN_MOD
                sender.on_parsed(sack(cumulative=cumulative), self.now)


@pytest.mark.parametrize("adaptive", [True, False])
def test_a_window_slower_to_drain_than_rto_us_does_not_time_out(adaptive: bool) -> None:
    # 64 packets take 256 µs to drain, RTO 100 µs: the first SACKs show the RTT and the RTO
    # follows it; with the RTO held at 100 µs (the old fixed timer) the window times out.
    sender = Sender(config(rto_us=100, **({} if adaptive else {"rto_max_us": 100})))
    sender.write(bytes(512 * 1024), 0)
    Bottleneck(sender, serve_us=4, delay_us=5).run(until_us=10_000)
    if adaptive:
        assert sender.done and sender.counters["timeout"] == 0 and sender.counters["retransmitted"] == 0
        assert sender.rto.rto_us > 256 and sender.rto.srtt_us is not None
        assert sender.rto.srtt_us > 250   # queueing included: the sender's own send times
    else:
        assert sender.counters["timeout"] > 100


def test_timeouts_of_one_packet_back_off_and_new_data_resets_the_connections_timer() -> None:
    # timers only; no fixed-interval retries first (test_linear_retries_come_first)
    sender = Sender(config(window=4, rto_us=100, reorder_us=10_000, retry_linear_cnt=0))
    sender.write(bytes(2048), 0)                                   # PSNs 0 and 1
    assert kinds(sender.poll(0)) == ["data", "data"]
    assert kinds(sender.poll(100)) == ["report", "data"] * 2       # both, in one round
    assert sender.next_deadline_us(100) == 300                     # 2 x 100
    sender.on_parsed(sack(1), 150)      # PSN 1's retransmission: no RTT sample (Karn)
    assert sender.rto.samples == 0 and sender.rto.backoff == 0
    assert sender.next_deadline_us(150) == 300                     # PSN 0's own count: 1
    assert kinds(sender.poll(300)) == ["report", "data"]
    assert sender.next_deadline_us(300) == 700                     # 4 x 100
    sender.write(bytes(1024), 0)                                   # PSN 2 goes at 300...
    assert kinds(sender.poll(300)) == ["data"]
    sender.on_parsed(sack(1, 2), 380)                              # ...answered at 380
    assert sender.rto.samples == 1 and sender.rto.rto_us == 80 + 4 * 40
    assert sender.next_deadline_us(380) == 300 + 4 * 240           # PSN 0: 2 timeouts in a row
    assert sender.counters["timeout"] == 3 and sender.counters["reports"] == 3


def test_linear_retries_come_first() -> None:
    """The OCP MRC API's retry.linear_cnt: that many timeouts in a row keep the plain RTO
    (each resend goes out on another EV), then the timer doubles."""
    sender = Sender(config(rto_us=100, reorder_us=10_000, retry_linear_cnt=2,
                           give_up_us=10**6))
    sender.write(bytes(1024), 0)
    sender.poll(0)
    times = []
    now = 0
    for _ in range(5):
        now = sender.next_deadline_us(now)
        assert kinds(sender.poll(now)) == ["report", "data"]
        times.append(now)
    assert times == [100, 200, 300, 500, 900]   # 2 at the RTO, then 2x, 4x, ...


def test_nacked_resends_are_no_failed_retries() -> None:
    # Every transmission of PSN 0 trimmed 40 times (an ecmp path pinned through a full queue):
    # each trim proves the path and the receiver alive.
    sender = Sender(config(rto_us=100, max_retries=2))
    sender.write(bytes(1024), 0)
    now = 0
    sender.poll(now)
    for _ in range(40):
        now += 10
        sender.on_parsed(nack(0), now)
        assert kinds(sender.poll(now)) == ["data"]                 # no report: a trim
    sender.on_parsed(sack(cumulative=0), now + 10)
    assert sender.done and sender.counters["nack_trimmed"] == 40
    assert sender.counters["reports"] == 0


def test_failed_retries_past_max_retries_end_the_connection() -> None:
    sender = Sender(config(rto_us=10, max_retries=2, give_up_us=10**6))
    sender.write(b"x", 0)
    sender.poll(0)
    sender.poll(10)
    sender.poll(30)
    with pytest.raises(RetryLimitExceeded, match="after 2 retransmissions"):
        sender.poll(70)


def test_a_loss_is_reported_unless_a_trim_announced_it() -> None:
    sender = Sender(config(window=4, rto_us=100, reorder_us=20))
    sender.write(bytes(4 * 1024), 0)                               # PSNs 0-3
    sender.poll(0)
    sender.on_parsed(nack(1), 5)                                   # PSN 1 trimmed
    assert kinds(sender.poll(5)) == ["data"]
    sender.on_parsed(sack(2, 3), 10)                               # 0 and 1 not acknowledged
    # PSN 0: a hole (reorder_us past the round trips measured: PSNs 2 and 3, sent with it,
    # answered in 10 µs; SRTT + 4 RTTVAR = 30) with no trim notice: reported (the NIC takes
    # its EV out), then resent; PSN 1's resend (at 5) is younger than the SACKed ones'.
    # (Late, twice that, would be at 60: the hole comes first.)
    assert sender.next_deadline_us(10) == 50
    assert kinds(sender.poll(50)) == ["report", "data"]
    assert sender.counters["sack_hole"] == 1 and sender.counters["reports"] == 1
    # PSN 0's resend is the latest transmission: nothing sent after it can overtake it, so
    # the same allowance later it is a loss again (the tail rule), before any timeout.
    assert sender.next_deadline_us(50) == 100
    assert kinds(sender.poll(100)) == ["report", "data"]
    assert sender.counters["sack_hole"] == 2 and sender.counters["timeout"] == 0
    # PSN 1's resend times out: the trim was its notice (congestion): resent, not reported.
    assert sender.next_deadline_us(100) == 105
    assert kinds(sender.poll(105)) == ["data"]
    assert sender.counters["timeout"] == 1 and sender.counters["unreported"] == 1
    assert sender.counters["reports"] == 2 and sender.counters["early_reports"] == 0


def advance(host: NicHost, start: int, until: int) -> None:
    """Poll `host` at each of its deadlines in [start, until]."""
    t = start
    while (due := host.next_deadline_us(t)) is not None and due <= until:
        host.poll(due)
        t = due + 1 if due == t else due


def test_a_connection_answered_on_any_ev_lives_and_one_answered_on_none_gives_up() -> None:
    host = NicHost()
    connection = host.add_connection(config(rto_us=100, reorder_us=10_000, give_up_us=1000))
    sender = connection.sender
    sender.write(bytes(1024), 0)                                   # PSN 0: never answered
    host.poll(0)
    # Other writes answered every 300 µs: PSN 0 keeps timing out, the connection lives on.
    now = 0
    for psn in range(1, 11):
        advance(host, now, now + 300)
        now += 300
        sender.write(bytes(1024), 0)
        host.poll(now)
        advance(host, now, now + 10)
        now += 10
        sender.on_parsed(sack(psn), now)
    assert connection.error is None and sender.counters["timeout"] >= 3
    # From now on nothing answers: it gives up exactly give_up_us after the last answer.
    assert host.next_deadline_us(now) is not None
    t = now
    while connection.error is None:
        t = host.next_deadline_us(t)
        assert t is not None and t <= now + 1000
        host.poll(t)
    error = connection.error
    assert isinstance(error, NoAnswer) and t == now + 1000
    assert (error.at_us, error.last_answer_us, error.give_up_us) == (now + 1000, now, 1000)
    assert error.retries == sender.counters["timeout"] >= 3        # all of them PSN 0's
    assert "nothing answered for 1000 µs" in str(error)
    assert sender.counters["gave_up"] == 1 and host.failed == [connection]


def test_a_give_up_waits_four_measured_round_trips_when_they_are_longer() -> None:
    """Answers the fabric takes 400 µs to bring (deep queues) are congestion the connection
    has measured, not a dead peer: with give_up_us 500 it still waits 4 x (SRTT + 4 RTTVAR)."""
    host = NicHost()
    connection = host.add_connection(config(rto_us=100, reorder_us=10_000, give_up_us=500))
    sender = connection.sender
    sender.write(bytes(1024), 0)
    host.poll(0)
    sender.on_parsed(sack(0, cumulative=0), 400)      # RTT 400: SRTT 400, RTTVAR 200
    assert sender.rto.spread_us() == 1200
    sender.write(bytes(1024), 0)                       # PSN 1: never answered
    host.poll(400)
    advance(host, 400, 400 + 4799)
    assert connection.error is None and sender.counters["timeout"] >= 3
    advance(host, 400 + 4799, 400 + 4800)
    error = connection.error
    assert isinstance(error, NoAnswer) and (error.at_us, error.give_up_us) == (5200, 4800)


def test_give_up_defaults_to_twenty_rtos_and_the_scenario_sets_the_timers() -> None:
    cfg = config(rto_us=150)
    assert (cfg.give_up_after_us, cfg.rto_floor_us, cfg.rto_ceiling_us) == (3000, 150, 3000)
    with pytest.raises(ValueError, match="rto_min_us"):
        config(rto_us=100, rto_max_us=50)
    text = """
name: t
topology: {generate: {planes: 2, radix: 4, nics: 4}}
workload: {kind: permutation, bytes: 4096}
transport: {rto_us: 100, rto_min_us: 20, rto_max_us: 800, give_up_us: 5000, max_retries: 9}
"""
    t = loads(text).transport
    assert (t.rto_us, t.rto_min_us, t.rto_max_us, t.give_up_us, t.max_retries) == (
        100, 20, 800, 5000, 9)
    with pytest.raises(ScenarioError, match="rto_max_us"):
        loads(text.replace("rto_max_us: 800", "rto_max_us: 10"))


# -- pacing and the lost retransmission ------------------------------------------------------


def test_new_packets_leave_at_the_nics_line_rate() -> None:
    """tx_gbps: a window is not handed to the NIC at once (it would wait in the NIC's queue
    and every RTT sample would carry that wait): each packet in the µs its transmission
    starts, and next_deadline_us names the tick the wire is free again."""
    sender = Sender(config(mtu=1000, tx_gbps=20.0))
    sender.write(bytes(20_000), 0x1000)
    at0 = sender.poll(0)
    wire_ns = (len(at0[0]) + 40) * 8 / 20.0          # one packet on the wire: about 0.4 µs
    assert len(at0) == 1 + int(1000 // wire_ns)       # those starting within µs 0
    assert sender.next_deadline_us(0) == 1 and sender.poll(0) == []
    sent = len(at0)
    for now in range(1, 20):
        sent += len(sender.poll(now))
    assert sent == 20   # 20 packets of 1,000 bytes: about 9 µs at 20 Gb/s
    unpaced = Sender(config(mtu=1000))
    unpaced.write(bytes(20_000), 0x1000)
    assert len(unpaced.poll(0)) == 20


def test_a_lost_retransmission_is_found_as_its_first_loss_was() -> None:
    """RACK (RFC 8985): a resent hole is lost again once a packet sent after the resend is
    acknowledged and reorder_us past that round trip passed, not one RTO after the resend."""
    sender = Sender(config(rto_us=500, reorder_us=10))
    sender.write(bytes(4 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 4
    sender.on_parsed(sack(1, 2, 3), 20)   # PSN 0 missing; RTT 20 µs: SRTT + 4 RTTVAR 60
    assert sender.next_deadline_us() == 0 + 10 + 60
    assert kinds(sender.poll(70)) == ["report", "data"]
    sender.write(bytes(1024), 0x9000)                    # sent after the resend ...
    assert kinds(sender.poll(71)) == ["data"]
    sender.on_parsed(sack(4, cumulative=PSN_MOD - 1), 91)   # ... acknowledged: SRTT + 4 RTTVAR 50
    assert sender.next_deadline_us() == 70 + 10 + 50    # the resend, lost again (RTO: 570)
    assert kinds(sender.poll(130)) == ["report", "data"]
    assert sender.counters["sack_hole"] == 2 and sender.counters["timeout"] == 0


def test_a_spurious_resend_widens_the_reordering_allowance() -> None:
    """A resend answered sooner than any round trip answers the first transmission: the path
    was slow, not lossy (a slower plane). The allowance grows by reorder_us, up to SRTT."""
    sender = Sender(config(rto_us=500, reorder_us=10))
    sender.write(bytes(8 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 8
    sender.on_parsed(sack(1, 2, 3), 40)                  # RTT 40: SRTT + 4 RTTVAR 120
    assert sender.next_deadline_us() == 0 + 10 + 120
    # PSN 0 a hole; PSN 7, the latest sent, the tail (nothing after it to overtake it)
    assert kinds(sender.poll(130)) == ["report", "data"] * 2
    sender.on_parsed(sack(1, 2, 3, 7, cumulative=0), 131)  # 1 µs after the resends: spurious
    assert sender.counters["spurious"] == 2
    assert sender._reorder_us() == 30                      # 10 + 2 x 10, below SRTT (40)
    sender.on_parsed(sack(4, 5, cumulative=3), 150)        # PSN 6 a hole now
    assert sender.next_deadline_us() == 0 + 30 + sender._acked_rtt < 500


def test_a_trimmed_packets_quick_resend_is_no_spurious_one() -> None:
    """Only a transmission no NACK refused can have arrived: a trimmed packet's resend answered
    sooner than the round trips measured under the queue that trimmed it is no reordering."""
    sender = Sender(config(rto_us=500, reorder_us=10))
    sender.write(bytes(4 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 4
    sender.on_parsed(sack(1, 2, 3), 40)                  # round trips of 40 µs (a queue)
    sender.on_parsed(nack(0), 41)                        # PSN 0 trimmed: it goes again
    assert kinds(sender.poll(41)) == ["data"]
    sender.on_parsed(sack(cumulative=3), 45)             # answered 4 µs later
    assert sender.done
    assert sender.counters["spurious"] == 0 and sender._reorder_us() == 10


# -- the NIC's note: a packet overtaken on its own EV -----------------------------------------


def noted(psn: int, gap: int, *psns: int, cumulative: int = PSN_MOD - 1) -> SackFrame:
    """A SACK as the NIC hands it up for PSN `psn` (and `psns`), noting the PSN `gap` before
    it on its EV as lost (spdcid; a negative gap in 16-bit two's complement)."""
    return sack(psn, *psns, cumulative=cumulative)._replace(psn=psn, spdcid=gap % (1 << 16))


def test_a_packet_the_nic_notes_lost_goes_at_once_and_is_reported() -> None:
    sender = Sender(config(rto_us=500, reorder_us=100))
    sender.write(bytes(8 * 1024), 0)
    sender.poll(0)
    sender.on_parsed(noted(5, 4, 2, 3, 4), 10)     # PSN 1 went on PSN 5's EV just before it
    assert sender.next_deadline_us(10) == 10           # not reorder_us later
    assert kinds(sender.poll(10)) == ["report", "data"]
    assert sender.counters["overtaken"] == 1 and sender.counters["reports"] == 1
    assert sender.counters["sack_hole"] == 0


def test_a_note_is_kept_only_for_the_transmissions_it_is_about() -> None:
    sender = Sender(config(rto_us=500, reorder_us=100))
    sender.write(bytes(8 * 1024), 0)
    sender.poll(0)
    sender.on_parsed(sack(1, 2, cumulative=PSN_MOD - 1), 10)    # PSN 0 a hole
    late = sender.next_deadline_us(10)
    assert kinds(sender.poll(late)) == ["report"]               # PSN 0 late: reported
    resend = sender.next_deadline_us(late)
    assert kinds(sender.poll(resend)) == ["data", "report", "data"]  # PSN 0, and 7 (the tail)
    # A note about PSN 0 from a SACK for PSN 4, sent before that resend: about the first
    # transmission, which the resend has replaced: nothing.
    sender.on_parsed(noted(4, 4), resend + 1)
    assert sender.poll(resend + 1) == [] and sender.counters["overtaken"] == 0
    # A note naming a PSN never sent: nothing.
    sender.on_parsed(noted(5, -0x7FFF), resend + 2)
    assert sender.poll(resend + 2) == [] and sender.counters["overtaken"] == 0


# -- the NIC's answers to a query: what went on an EV now out of service ------------------------


def echo(probe_id: int, psn: int = 0) -> OtherFrame:
    """An EV-report echo or a query's answer as the NIC hands it up."""
    return OtherFrame(OP_EV_REPORT, QP, psn, bytes(16), probe_id.to_bytes(2) + bytes(14))


def queried_after_a_loss() -> Sender:
    """PSNs 0-7 sent at 0; 1-3 answered at 20 (round trip 20 µs: SRTT + 4 RTTVAR 60); the
    NIC echoes a report that took EV 3 out, and the sender asks it about what is in flight."""
    sender = Sender(config(rto_us=500, reorder_us=100))
    sender.write(bytes(8 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 8
    sender.on_parsed(sack(1, 2, 3), 20)
    sender.on_parsed(echo(ECHO_TOOK_OUT | 3), 21)
    assert kinds(sender.poll(21)) == ["probe"] + ["report"] * 5   # queries: 0, 4, 5, 6, 7
    return sender


def test_what_went_on_an_ev_taken_out_goes_again_only_once_it_is_late() -> None:
    # One loss proves no dead path: PSNs 4 and 5 went on EV 3 too, but are not late yet (their
    # answers are due at 0 + 60 + min RTT / 4 = 65); 4 is answered in time and never goes
    # twice; 5 is not, and goes then (path_out), not at its reordering allowance (160).
    sender = queried_after_a_loss()
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=4), 22)
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=5), 22)
    assert sender.poll(22) == [] and sender.next_deadline_us(22) == 65
    sender.on_parsed(sack(1, 2, 3, 4), 40)
    assert sender.next_deadline_us(40) == 65
    assert kinds(sender.poll(65)) == ["data"]                    # PSN 5
    c = sender.counters
    assert c["path_out"] == 1 and c["retransmitted"] == 1 and c["reports"] == 0


def test_a_second_late_packet_on_an_ev_taken_out_says_its_path_is_dead() -> None:
    # PSN 4's answer comes once it is late already (a second loss on the EV taken out): the
    # path is dead, not unlucky; 4 goes at once, and so do 5 and 6, answered in that query too.
    sender = queried_after_a_loss()
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=5), 22)
    assert sender.poll(22) == []
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=4), 66)
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=6), 66)
    assert kinds(sender.poll(66)) == ["data"] * 3
    assert sender.counters["path_out"] == 3 and sender.next_deadline_us(66) > 66


# -- lateness: a packet reported before reorder_us says it is lost -----------------------------


def sent_eight_answered_three() -> Sender:
    """PSNs 0-7 sent at 0; 1-3 answered at 10 (round trip 10 µs, SRTT + 4 RTTVAR 30): PSN 0 is
    late at 60 (twice the longest round trip expected), lost at 130 (reorder_us 100 past 30)."""
    sender = Sender(config(rto_us=500, reorder_us=100))
    sender.write(bytes(8 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 8
    sender.on_parsed(sack(1, 2, 3), 10)
    return sender


def test_a_late_packet_is_reported_before_it_is_lost_and_resent_only_then() -> None:
    sender = sent_eight_answered_three()
    assert sender.next_deadline_us(10) == 60
    assert kinds(sender.poll(60)) == ["report"]               # its EV out, not resent
    assert sender.counters["early_reports"] == 1 and sender.counters["retransmitted"] == 0
    assert sender.next_deadline_us(60) == 130
    assert kinds(sender.poll(130)) == ["data", "report", "data"]   # 0 (reported), 7 (tail)
    assert sender.counters["sack_hole"] == 2 and sender.counters["reports"] == 1


def test_no_lateness_is_reported_while_a_queue_explains_it() -> None:
    # An ECN echo at 10: queues on the way, so lateness is theirs for CE_RECENT_US (100).
    sender = Sender(config(rto_us=500, reorder_us=100))
    sender.write(bytes(8 * 1024), 0x1000)
    sender.poll(0)
    sender.on_parsed(sack(1, 2, 3)._replace(m=SackM.SKIP_ONCE), 10)
    assert sender.next_deadline_us(10) == 111
    assert kinds(sender.poll(111)) == ["report"]
    assert sender.counters["early_reports"] == 1


@pytest.mark.parametrize("heard", [False, True])
def test_a_second_late_packet_on_an_ev_out_for_lateness_is_a_dead_path_if_it_is_silent(
        heard: bool) -> None:
    # PSN 0's lateness took EV 3 out; PSN 4 went on EV 3 too and is as late. If EV 3 answered
    # nothing since (a dead path), both go at once; if it answered a packet sent before 4,
    # after 4 could have been answered (a slow path delivering its queue), they wait.
    sender = sent_eight_answered_three()
    assert kinds(sender.poll(60)) == ["report"]
    sender.on_parsed(echo(ECHO_TOOK_OUT | 3, psn=0), 61)
    assert kinds(sender.poll(61)) == ["probe"] + ["report"] * 5   # queries: 0, 4, 5, 6, 7
    if heard:
        sender.on_parsed(sack(1, 2, 3)._replace(psn=3, entropy=3), 62)   # 3 came over EV 3
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=4), 63)
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=0), 63)
    if heard:
        assert sender.poll(63) == [] and sender.counters["path_out"] == 0
        assert sender.next_deadline_us(63) == 130
    else:
        assert kinds(sender.poll(63)) == ["data", "data"]
        assert sender.counters["path_out"] == 2


def late_and_asked_about() -> Sender:
    """PSN 0 reported late at 60 (sent_eight_answered_three); the NIC takes EV 3 out, probes
    it from 61, and answers that PSN 0 went on it."""
    sender = sent_eight_answered_three()
    assert kinds(sender.poll(60)) == ["report"]
    sender.on_parsed(echo(ECHO_TOOK_OUT | 3, psn=0), 61)
    assert kinds(sender.poll(61)) == ["probe"] + ["report"] * 5
    sender.on_parsed(echo(REPORT_QUERY_FLAG | 3, psn=0), 62)
    assert sender.poll(62) == []
    return sender


def probe_answer(ev: int) -> SackFrame:
    return sack(1, 2, 3)._replace(probe_response=1, entropy=ev)


def test_a_late_packet_whose_evs_probe_comes_back_is_lost_then() -> None:
    # The probe left after PSN 0 on the same path and came back: the path delivers and keeps
    # its packets' order, so 0 did not arrive. It goes at once (overtaken), not at 130.
    sender = late_and_asked_about()
    sender.on_parsed(probe_answer(3), 70)
    assert kinds(sender.poll(70)) == ["data"]
    c = sender.counters
    assert c["overtaken"] == 1 and c["retransmitted"] == 1 and c["sack_hole"] == 0


def test_another_evs_probe_answer_says_nothing_of_it() -> None:
    sender = late_and_asked_about()
    sender.on_parsed(echo(ECHO_TOOK_OUT | 4, psn=5), 63)   # EV 4 out too: probed from 63
    assert kinds(sender.poll(63))[0] == "probe"
    sender.on_parsed(probe_answer(4), 70)
    assert sender.poll(70) == [] and sender.counters["overtaken"] == 0
    assert sender.next_deadline_us(70) == 130


def test_a_probe_answer_proves_no_loss_while_a_queue_explains_lateness() -> None:
    # An ECN echo at 65: the probe, a control packet, may have passed PSN 0 in a queue. PSN 0
    # is lost only at its reordering allowance (130).
    sender = late_and_asked_about()
    sender.on_parsed(sack(1, 2, 3, 4)._replace(m=SackM.SKIP_ONCE, entropy=5), 65)
    sender.on_parsed(probe_answer(3), 70)
    assert sender.poll(70) == [] and sender.counters["overtaken"] == 0
    assert sender.next_deadline_us(70) == 130
    assert kinds(sender.poll(130)) == ["data"]       # its suspect deadline: path_out
    assert sender.counters["path_out"] == 1 and sender.counters["overtaken"] == 0


def test_lateness_waits_for_a_round_trip_timed_on_every_plane() -> None:
    # Two planes: PSNs 1-3 answered over plane 0 at 10. Plane 1 may be the slower one, its
    # packets behind plane 0's answers in order but not late: no report before plane 1 has
    # timed a round trip, only the hole's reordering allowance (130). Once PSN 4's answer
    # over plane 1 times one (20 µs), PSN 0 is late at twice the longest expected (SRTT + 4
    # RTTVAR: 37).
    sender = Sender(config(rto_us=500, reorder_us=100, planes=2))
    sender.write(bytes(8 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 8
    sender.on_parsed(sack(1, 2, 3)._replace(psn=3, entropy=0x002), 10)
    assert sender.next_deadline_us(10) == 130
    assert sender.poll(60) == [] and sender.counters["early_reports"] == 0
    sender.on_parsed(sack(1, 2, 3, 4)._replace(psn=4, entropy=0x102), 20)
    assert sender.next_deadline_us(20) == 74
    assert kinds(sender.poll(74)) == ["report"]
    assert sender.counters["early_reports"] == 1


def test_a_plane_silent_past_its_round_trip_while_another_answers_is_slow_not_dead() -> None:
    # Plane 1 times a round trip at 20 µs (PSN 4) and then falls silent with PSNs 5-7 out,
    # while plane 0 answers a packet every 10 µs (a new one written each time, 5 µs round
    # trips). A dead path leaves its plane's other paths answering; a plane queueing (slower
    # than it was: the tiny matrix's slow-plane) falls silent whole. Its silence, up to 4 of
    # its round trips, is its round trip now: PSN 0 and plane 1's packets are not reported
    # late at 65 (twice the longest round trip timed, as without the rule), and go as losses
    # at the hole's reordering allowance instead.
    sender = Sender(config(rto_us=500, reorder_us=100, planes=2))
    sender.write(bytes(8 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 8
    sender.on_parsed(sack(1, 2, 3)._replace(psn=3, entropy=0x002), 10)
    sender.on_parsed(sack(1, 2, 3, 4)._replace(psn=4, entropy=0x102), 20)
    acked, psn, sent = [1, 2, 3, 4], 8, []
    for now in range(21, 122):
        if now % 10 == 0:
            sender.write(bytes(1024), 0x9000 + now)
        if now % 10 == 5 and now >= 35:
            acked.append(psn)
            psn += 1
            sender.on_parsed(sack(*acked)._replace(psn=acked[-1], entropy=0x002), now)
        sent += [(now, kinds(sender.poll(now)))]
    assert [at for at, frames in sent if frames] == [30, 40, 50, 60, 70, 80, 90, 100, 110, 120,
                                                     121]
    assert sent[-1][1] == ["report", "data"] * 4   # PSNs 0, 5, 6, 7 lost: reported, resent
    assert sender.counters["early_reports"] == 0 and sender.counters["sack_hole"] == 4


def test_a_single_plane_connection_judges_lateness_after_its_first_answer() -> None:
    sender = sent_eight_answered_three()              # planes=1 (the default)
    assert sender.next_deadline_us(10) == 60
