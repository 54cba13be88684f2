"""NSCC (mrc_transport/nscc.py) on synthetic acknowledgement streams, in the directions the
spec and uet-htsim give (shared/reference/nscc.md §8), and the Sender keeping its bytes in
flight within NSCC's window."""

from __future__ import annotations

import random

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet

from mrc_transport.config import ConnectionConfig
from mrc_transport.nscc import HEADER_BYTES, Nscc, NsccConfig, scaled_reference_bdp
from mrc_transport.sender import Sender
from mrc_transport.wire import BTH, NETH, SETH, CCState, NackReason, Opcode, SackM

MTU = 1024
PKT = MTU + HEADER_BYTES
# The emulator's tiny fabric: 2 planes x 10 Gb/s, ~8 µs unloaded RTT.
TINY = NsccConfig(base_rtt_us=8.0, linkspeed_gbps=20.0, mtu=MTU)


class Stream:
    """Packets sent and acknowledged one by one against an Nscc, keyed by a counter."""

    def __init__(self, cc: Nscc) -> None:
        self.cc = cc
        self.key = 0

    def ack(self, now: float, delay: float | None, ecn: bool = False, count: int = 1) -> None:
        """`count` packets sent and acknowledged, each with RTT base_rtt + delay (None: a
        retransmission, no RTT sample)."""
        for _ in range(count):
            self.cc.on_send(self.key, MTU)
            rtt = None if delay is None else self.cc.base_rtt + delay
            self.cc.on_ack([self.key], now, rtt, ecn)
            self.key += 1

    def window(self, now: float, delay: float | None, ecn: bool = False) -> None:
        """One window's worth of packets acknowledged at `now`."""
        self.ack(now, delay, ecn, max(1, int(self.cc.cwnd) // PKT))


def fill_window(cc: Nscc, first_key: int) -> int:
    """Packets keyed from `first_key` sent while they fit, until the window holds the next
    back (a sender with more to send than the window lets out); how many went."""
    sent = 0
    while cc.can_send(MTU):
        cc.on_send(first_key + sent, MTU)
        sent += 1
    return sent


def test_defaults_scale_with_the_bdp() -> None:
    cc = Nscc(TINY)
    bdp = 20e9 / 8 * 8e-6                        # 20 kB
    assert cc.max_cwnd == int(1.5 * bdp) and cc.cwnd == cc.max_cwnd   # starts at MaxWnd
    assert cc.target == pytest.approx(6.0)       # 0.75 base_rtt with trimming
    assert cc.fi == pytest.approx(5 * MTU * bdp / 150_000)
    assert cc.qa_threshold == float("inf")       # quick adapt on trims only
    fast = Nscc(NsccConfig(base_rtt_us=8.0, linkspeed_gbps=80.0, mtu=MTU))
    assert fast.max_cwnd == pytest.approx(4 * cc.max_cwnd, abs=1)
    assert fast.fi == pytest.approx(4 * cc.fi)
    assert Nscc(NsccConfig(base_rtt_us=8.0, linkspeed_gbps=20.0, trimming=False)).target == 8.0



def test_a_scale_model_with_small_packets_keeps_the_specs_gains_per_bdp() -> None:
    # The spec's fabric (100 Gb/s, 12 µs, 4 KiB) and the emulator's (20 Gb/s over 2 planes,
    # 8 µs, 1 KiB): with the reference BDP in packets, every gain is the same share of the
    # BDP per RTT; with it in bytes, the small packets' gains are a quarter of that.
    spec = Nscc(NsccConfig(base_rtt_us=12.0, linkspeed_gbps=100.0, mtu=4096))
    model = Nscc(NsccConfig(base_rtt_us=8.0, linkspeed_gbps=20.0, mtu=MTU,
                            reference_bdp=scaled_reference_bdp(MTU)))
    assert scaled_reference_bdp(4096) == 150_000
    assert spec.fi == pytest.approx(5 * 4096)     # Table 3-82 at a = 1

    def shares(cc: Nscc) -> tuple[float, ...]:
        bdp = cc.config.bdp()
        b = cc.target / 12.0   # the spec's b: target delay over 12 µs, absolute time
        # per RTT: fair +fi, proportional (delay 0) +alpha x target (x b)
        return (cc.fi / bdp, cc.alpha * cc.target / b / bdp)

    for got, want in zip(shares(model), shares(spec), strict=True):
        assert got == pytest.approx(want, rel=0.05)
    # fast increase, x(1 + 0.25 a) per RTT: a is the BDP in packets over the spec's 36.6
    assert model.fi_scale == pytest.approx(0.25 * (20e3 / MTU) / (150_000 / 4096), rel=0.05)
    by_bytes = Nscc(TINY)
    assert by_bytes.fi / TINY.bdp() == pytest.approx(shares(spec)[0] / 4, rel=0.05)
    with pytest.raises(ValueError, match="reference_bdp"):
        NsccConfig(base_rtt_us=8.0, linkspeed_gbps=20.0, reference_bdp=0)

def test_no_ecn_and_low_delay_grows_the_window_to_max_and_not_beyond() -> None:
    cc = Nscc(TINY)
    cc.cwnd = cc.min_cwnd
    s = Stream(cc)
    now, rtts, last = 0.0, 0, cc.cwnd
    while cc.cwnd < cc.max_cwnd and rtts < 200:   # fast increase: x(1 + fi_scale) per RTT
        now += 8.0
        rtts += 1
        s.window(now, 0.0)
        assert cc.cwnd > last
        last = cc.cwnd
    assert cc.cwnd == cc.max_cwnd and rtts < 120 and cc.increase_mode
    s.window(now + 8.0, 0.0)
    assert cc.cwnd == cc.max_cwnd


def test_proportional_increase_is_larger_the_lower_the_delay() -> None:
    grown = []
    for delay in (1.5, 3.0, 5.0):   # above the fast-increase range, below target (6 µs)
        cc = Nscc(TINY)
        cc.cwnd = before = 10 * PKT
        s = Stream(cc)
        for rtt in range(1, 4):
            s.ack(rtt * 8.0, delay, count=9)
        grown.append(cc.cwnd - before)
    assert grown[0] > grown[1] > grown[2] > 0


def test_no_ecn_and_high_delay_is_a_fair_additive_increase() -> None:
    cc = Nscc(TINY)
    cc.cwnd = before = 10 * PKT
    s = Stream(cc)
    for rtt in range(1, 4):
        s.ack(rtt * 8.0, 10.0, count=9)
    # ~fi (plus eta) per window acknowledged, not multiplicative
    assert before < cc.cwnd < before + 4 * (cc.fi + cc.eta)


def test_ecn_with_low_delay_leaves_the_window_exactly_unchanged() -> None:
    cc = Nscc(TINY)
    cc.cwnd = before = 12 * PKT
    s = Stream(cc)
    for rtt in range(1, 6):
        s.ack(rtt * 8.0, 2.0, ecn=True, count=10)
    assert cc.cwnd == before


def test_ecn_with_high_delay_decreases_at_most_once_per_base_rtt_by_at_most_half() -> None:
    cc = Nscc(TINY)
    s = Stream(cc)
    cc.avg_delay = 40.0              # a standing queue far above target
    before = cc.cwnd
    s.ack(10.0, 40.0, ecn=True)
    # floored at max_md_jump; the batched eta of the elapsed adjust period comes after
    assert cc.cwnd == pytest.approx(before * 0.5 + cc.eta)
    once = cc.cwnd
    s.ack(12.0, 40.0, ecn=True, count=5)   # within one base_rtt: no second cut
    assert cc.cwnd == once
    s.ack(19.0, 40.0, ecn=True)
    assert cc.cwnd == pytest.approx(once * 0.5 + cc.eta)
    assert cc.counters["md"] == 2


def test_a_mild_average_delay_cuts_less_than_half() -> None:
    cc = Nscc(TINY)
    cc.avg_delay = 7.0               # target 6: factor 1 - 0.8 * 1/7
    before = cc.cwnd
    Stream(cc).ack(10.0, 8.0, ecn=True)
    avg = cc.avg_delay               # 7 moved toward the 8 µs sample
    assert 7 < avg < 8
    assert cc.cwnd == pytest.approx(before * (1 - 0.8 * (avg - 6) / avg) + cc.eta)


def test_a_trim_quick_adapts_to_what_was_delivered_and_ignores_stale_feedback() -> None:
    cc = Nscc(TINY)
    s = Stream(cc)
    s.ack(1.0, 2.0)                  # starts the first quick-adapt period
    burst = fill_window(cc, 100)     # a burst; the window holds the rest of the message back
    s.ack(10.0, 2.0, count=2)        # little delivered meanwhile: an incast share
    cc.on_nack(100, 16.0)
    assert cc.counters["qa"] == 1
    assert cc.cwnd == 2 * PKT        # what arrived since the period began
    assert cc.bytes_to_ignore == cc.inflight == (burst - 1) * PKT
    # ECN feedback of packets sent under the old window does not cut again
    cut = cc.cwnd
    cc.avg_delay = 40.0
    for key in range(101, 110):
        cc.on_ack([key], 30.0 + key, 40.0 + cc.base_rtt, True)
    assert cc.cwnd == cut and cc.counters["md"] == 0


def test_a_trim_after_an_idle_spell_does_not_quick_adapt_to_what_the_idle_spell_delivered(
) -> None:
    # The same trim after the same delivery as above, but the sender had nothing to send in
    # between (nothing in flight) and starts again: quick adapt starts over as at the
    # connection's start, its first period from the first answer after the restart.
    cc = Nscc(TINY)
    s = Stream(cc)
    s.ack(1.0, 2.0)
    s.ack(10.0, 2.0, count=2)
    assert cc.inflight == 0
    cc.resume()                      # a new message, after 190 µs idle
    for key in range(100, 120):
        cc.on_send(key, MTU)
    cc.on_nack(100, 205.0)           # the first answer: the period starts here
    assert cc.counters["qa"] == 0 and cc.cwnd == cc.max_cwnd - PKT
    # More than a round trip later the period (base_rtt + target from the first answer, not
    # from the restart) is not over: a trim is one packet less, not a window of the little
    # the first answers brought.
    cc.on_nack(102, 205.0 + cc.base_rtt + cc.target / 2)
    assert cc.counters["qa"] == 0 and cc.cwnd == cc.max_cwnd - 2 * PKT
    fill_window(cc, 120)             # the rest of the message: held back by the window
    # Judged at the end of a period the sender filled: still quick adapt when it delivered
    # little of what it sent (an incast share).
    cc.on_ack([101], 230.0, cc.base_rtt + 2.0, False)
    assert cc.counters["qa"] == 1 and cc.cwnd == PKT


@pytest.mark.parametrize("held_back", [False, True])
def test_only_a_period_the_window_limited_is_judged_by_quick_adapt(held_back: bool) -> None:
    # A ring step's end: a trim, the rest delivered but for one lost packet, then nothing new
    # to send for longer than a period while the lost one is still in flight (the window had
    # room). That period delivered nothing because the sender offered nothing: it says nothing
    # of the path, and the next message must not start from one packet. Had the window held
    # packets back in it, it would be an incast share (quick adapt, as the spec has it).
    cc = Nscc(TINY)
    s = Stream(cc)
    s.ack(1.0, 2.0)                  # the period from 1 to 1 + base_rtt + target (15)
    for key in range(100, 110):
        cc.on_send(key, MTU)
    cc.on_nack(100, 3.0)             # quick adapt triggered; the period is not over
    cc.on_ack(list(range(101, 109)), 5.0, cc.base_rtt + 2.0, False)
    s.ack(16.0, 2.0)                 # the period judged: it delivered plenty; the next from 16
    assert cc.counters["qa"] == 0 and cc.trigger_qa and cc.inflight == PKT   # 109, lost
    if held_back:                    # the next message at 44: more than the window lets out
        fill_window(cc, 200)
    else:                            # the next message at 44: it fits what the window has
        for key in range(200, 205):
            assert cc.can_send(MTU)
            cc.on_send(key, MTU)
    cc.on_ack([200], 50.0, cc.base_rtt + 1.0, False)   # the first answer, after the period
    if held_back:
        assert cc.counters["qa"] == 1 and cc.cwnd == PKT
    else:
        assert cc.counters["qa"] == 0 and cc.cwnd > cc.max_cwnd - 2 * PKT


def test_a_trim_without_quick_adapt_costs_one_packet() -> None:
    cc = Nscc(NsccConfig(base_rtt_us=8.0, linkspeed_gbps=20.0, disable_quick_adapt=True))
    before = cc.cwnd
    cc.on_send(1, MTU)
    cc.on_nack(1, 5.0)
    assert cc.cwnd == before - PKT and cc.inflight == 0 and cc.counters["nack_cuts"] == 1


def test_a_timeout_costs_one_packet_no_halving_no_quick_adapt() -> None:
    cc = Nscc(TINY)
    Stream(cc).ack(1.0, 0.0)
    cc.on_send(7, MTU)
    before = cc.cwnd
    cc.on_loss(7)
    assert cc.cwnd == before - PKT and cc.inflight == 0 and cc.counters["qa"] == 0
    cc.on_loss(7)                    # counted once: inflight never drifts
    assert cc.cwnd == before - PKT and cc.inflight == 0


def test_no_rtt_sample_no_window_change_and_base_rtt_only_falls() -> None:
    cc = Nscc(TINY)
    cc.cwnd = before = 10 * PKT
    s = Stream(cc)
    s.ack(5.0, None, count=20)       # retransmissions: bytes count, the window stays
    assert cc.cwnd == before and cc.inflight == 0
    cc.on_send(999, MTU)
    cc.on_ack([999], 6.0, 4.0, False)   # a shorter path: base_rtt 4, max_cwnd follows
    assert cc.base_rtt == 4.0 and cc.max_cwnd == int(1.5 * 20e9 / 8 * 4e-6)
    cc.on_send(1000, MTU)
    cc.on_ack([1000], 7.0, 9.0, False)
    assert cc.base_rtt == 4.0


def test_the_window_stays_within_its_bounds_on_any_feedback() -> None:
    rng = random.Random(7)
    cc = Nscc(TINY)
    now = 0.0
    for key in range(3000):
        now += rng.random()
        cc.on_send(key, rng.randrange(1, MTU + 1))
        roll = rng.random()
        if roll < 0.1:
            cc.on_nack(key, now)
        elif roll < 0.15:
            cc.on_loss(key)
        else:
            cc.on_ack([key], now, rng.choice([None, rng.uniform(1, 60)]), rng.random() < 0.4)
        assert cc.min_cwnd <= cc.cwnd <= cc.max_cwnd
    assert cc.inflight == 0


# -- the Sender under NSCC ------------------------------------------------------------------

LOCAL, PEER = "fd00::1", "fd00::2"
LOCAL_QP, PEER_QP = 0x11, 0x22


def to_sender(feedback: Packet) -> bytes:
    return bytes(Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
                 / IPv6(src=PEER, dst=LOCAL, nh=17) / UDP(sport=0, dport=4791)
                 / feedback)


def sack(psn: int, cack: int, m: int = SackM.NONE, bitmap: int = 0) -> bytes:
    """A SACK triggered by `psn`: everything up to `cack`, and cack + 1 + i for each set bit
    i of `bitmap`."""
    return to_sender(BTH(opcode=Opcode.SACK, dest_qp=LOCAL_QP, psn=psn)
                     / SETH(m=m, cack_psn=cack, sack_bitmap=bitmap) / CCState())


def nack(psn: int) -> bytes:
    return to_sender(BTH(opcode=Opcode.NACK, dest_qp=LOCAL_QP, psn=psn)
                     / NETH(nack_reason=NackReason.TRIMMED, nack_psn=psn))


def make_sender(cc: NsccConfig | None) -> Sender:
    return Sender(ConnectionConfig(local_addr=LOCAL, peer_addr=PEER, local_qp=LOCAL_QP,
                                   peer_qp=PEER_QP, mtu=MTU, cc=cc))


def test_nscc_limits_the_bytes_a_sender_has_in_flight() -> None:
    fixed = make_sender(None)
    fixed.write(b"x" * 64 * MTU, 0)
    assert len(fixed.poll(0)) == 64                   # the PSN window alone
    sender = make_sender(TINY)
    assert sender.cc is not None
    sender.write(b"x" * 64 * MTU, 0)
    first = sender.poll(0)
    assert len(first) == sender.cc.max_cwnd // PKT == 27
    assert sender.poll(1) == [] and sender.next_deadline_us(1) == 0 + 500   # only the RTO
    sender.on_frame(sack(0, 0), 8)                    # one acknowledged: one more goes
    assert len(sender.poll(8)) == 1
    # Answered once: the latest sent (PSN 27) has a tail allowance, well before the RTO.
    tail = sender.next_deadline_us(8)
    assert 8 < tail < 500
    sender.on_frame(nack(5), 9)                       # a trim: quick adapt or one packet less
    assert sender.cc.cwnd < sender.cc.max_cwnd
    # The trimmed one is resent within the window, as new data (UEC §3.6.12): the window
    # the trim cut is full, so it waits, and nothing new goes either; only an answer (or
    # the tail's allowance, a loss) can open the window.
    assert sender.cc.inflight + PKT > sender.cc.cwnd
    assert sender.poll(9) == [] and sender.counters["nack_trimmed"] == 0
    assert sender.next_deadline_us(9) == tail
    psn = 1
    while not sender.counters["nack_trimmed"]:      # acknowledgements drain the window
        sender.on_frame(sack(psn, psn), 10 + psn)
        sender.poll(10 + psn)
        psn += 1
    assert sender.counters["retransmitted"] == 1    # after an answer, not at the trim
    assert sender.cc.inflight <= sender.cc.cwnd
    for later in range(psn, 28):
        sender.on_frame(sack(later, later), 10 + later)   # cumulative: the resent PSN 5 too
    assert sender.cc.inflight == 0
    assert 0 < len(sender.poll(40)) * PKT <= sender.cc.cwnd


def test_a_message_after_an_idle_spell_keeps_its_window_through_a_trim_at_its_start(
) -> None:
    sender = make_sender(TINY)
    assert sender.cc is not None
    sender.write(b"x" * 4 * MTU, 0)
    assert len(sender.poll(0)) == 4
    for psn in range(4):                              # delivered: nothing in flight
        sender.on_frame(sack(psn, psn), 8 + psn)
    assert sender.cc.inflight == 0
    sender.write(b"x" * 20 * MTU, 4 * MTU)            # the next message, 100 µs later
    assert len(sender.poll(111)) == 20
    sender.on_frame(nack(4), 116)                     # its first packet trimmed at once
    assert sender.cc.counters["qa"] == 0              # one packet less, not 4 packets' worth
    assert sender.cc.cwnd == sender.cc.max_cwnd - PKT


def test_a_sender_quick_adapts_only_after_a_period_its_window_held_it_back() -> None:
    # More to send than the window lets out (64 packets, a window of 27): a trim, then a
    # period that delivered one packet: an incast share, quick adapt.
    held = make_sender(TINY)
    assert held.cc is not None
    held.write(b"x" * 64 * MTU, 0)
    assert len(held.poll(0)) == 27
    held.on_frame(sack(0, 0), 8)                      # the first answer: the period from 8
    assert len(held.poll(8)) == 1                     # and the window holds the rest back
    held.on_frame(nack(5), 9)                         # trimmed: quick adapt triggered
    held.on_frame(sack(1, 1), 30)                     # the period (to 22) delivered 1 packet
    assert held.cc.counters["qa"] == 1 and held.cc.cwnd == PKT
    # A ring step's end: the same trim, the rest delivered but the last packet (lost, still
    # in flight), nothing else to send until the next message at 40, whose first answer
    # ends a period that delivered one packet. The sender offered nothing: no quick adapt.
    idle = make_sender(TINY)
    assert idle.cc is not None
    idle.write(b"x" * 8 * MTU, 0)
    assert len(idle.poll(0)) == 8
    idle.on_frame(nack(2), 5)                         # the first answer: the period from 5
    assert len(idle.poll(6)) == 1                     # the trimmed one again
    idle.on_frame(sack(6, 6), 20)                     # a period of 7 packets; the next from 20
    assert idle.cc.counters["qa"] == 0 and idle.cc.trigger_qa and idle.cc.inflight == PKT
    idle.write(b"x" * 4 * MTU, 8 * MTU)
    assert len(idle.poll(40)) == 4                    # the next message fits the window
    idle.on_frame(sack(8, 6, bitmap=0b10), 50)       # PSN 8; 7 still missing
    assert idle.cc.counters["qa"] == 0 and idle.cc.cwnd >= idle.cc.max_cwnd - 2 * PKT


def test_an_ecn_echo_with_a_queue_cuts_the_window() -> None:
    sender = make_sender(TINY)
    assert sender.cc is not None
    sender.write(b"x" * 64 * MTU, 0)
    sender.poll(0)
    sender.cc.avg_delay = 30.0
    before = sender.cc.cwnd
    sender.on_frame(sack(0, 0, SackM.SKIP_ONCE), 40)  # RTT 40 µs: delay far above target
    assert sender.cc.cwnd == pytest.approx(before / 2 + sender.cc.eta)
    assert sender.cc.counters["rtt_samples"] == 1


def test_the_answer_to_a_trimmed_packets_resend_is_an_rtt_sample() -> None:
    """A trim NACK proves the first transmission delivered nothing, so the SACK of the PSN
    times its resend for NSCC (no Karn ambiguity); a resend after a timeout gives none. The
    RTO estimator keeps to first transmissions (sender.py says why)."""
    sender = make_sender(TINY)
    assert sender.cc is not None
    sender.write(b"x" * 4 * MTU, 0)
    assert len(sender.poll(0)) == 4
    sender.on_frame(nack(0), 5)                     # PSN 0 trimmed
    assert len(sender.poll(6)) == 1 and sender.counters["nack_trimmed"] == 1   # resent
    samples = sender.cc.counters["rtt_samples"]
    sender.on_frame(sack(0, 0), 16)                 # the resend's answer, 10 µs after it
    assert sender.cc.counters["rtt_samples"] == samples + 1
    assert sender.rto.samples == 0
    # A PSN resent for a timeout: its SACK could answer either transmission.
    timed_out = make_sender(TINY)
    timed_out.write(b"x" * MTU, 0)
    timed_out.poll(0)
    assert timed_out.poll(500) and timed_out.counters["timeout"] == 1
    timed_out.on_frame(sack(0, 0), 510)
    assert timed_out.cc is not None and timed_out.cc.counters["rtt_samples"] == 0
    assert timed_out.rto.samples == 0


# -- the scenario's knobs -------------------------------------------------------------------

SCENARIO = """name: cc
topology: {generate: {planes: 2, radix: 4, nics: 4}}
workload: {kind: all_to_all, bytes: 4096}
"""


def test_a_scenario_runs_nscc_unless_told_fixed_with_the_ocp_knob_names() -> None:
    from emulation.scenario import ScenarioError, loads

    fixed = loads(SCENARIO + "transport: {rto_us: 150, cc_algorithm: fixed}\n")
    assert fixed.transport.nscc(8.0, fixed.mtu, 20) is None
    named = loads(SCENARIO + "transport: {rto_us: 150, cc_algorithm: uet-1.0-nscc}\n")
    s = loads(SCENARIO + "transport: {rto_us: 150}\n")   # the OCP MRC API's default
    # A NIC's line rate is its cables' (emulation/run.py gives a sprayed connection this)
    line_rate = s.nic_line_rate_gbps("nic0", s.topology.planes)
    cfg = s.transport.nscc(s.longest_path_rtt_us(), s.mtu, line_rate)
    assert cfg is not None and s.transport.rto_us == 150
    assert cfg == named.transport.nscc(named.longest_path_rtt_us(), named.mtu, line_rate)
    # 10 Gb/s x 2 planes; 4 cables of 500 ns each way plus serialization: ~8 µs (measured 8)
    assert cfg.linkspeed_gbps == 20 and 7.5 < cfg.base_rtt_us < 9
    tuned = loads(SCENARIO + "transport: {cc_algorithm: uet-1.0-nscc, base_rtt_us: 10, "
                  "target_delay_us: 4.5, max_cwnd: 40000}\n")
    cfg = tuned.transport.nscc(tuned.longest_path_rtt_us(), tuned.mtu, 20)
    assert cfg is not None and (cfg.base_rtt_us, cfg.target, cfg.max_cwnd) == (10, 4.5, 40000)
    for bad in ("cc_algorithm: reno", "target_delay_us: 0", "max_cwnd: -1",
                "reference_bdp: 0"):
        with pytest.raises(ScenarioError, match="transport"):
            loads(SCENARIO + f"transport: {{{bad}}}\n")


def test_a_scenario_is_a_scale_model_of_the_spec_s_fabric_unless_told_the_reference() -> None:
    from emulation.scenario import loads

    # 1 KiB packets: the spec's 150 kB in packets (36.6 of 4 KiB), so a gain is the spec's
    # share of the BDP per RTT; at 4 KiB the spec's reference as written
    model = loads(SCENARIO).transport.nscc(8.0, 1024, 20)
    assert model is not None and model.reference_bdp == scaled_reference_bdp(1024) == 37_500
    spec = Nscc(NsccConfig(base_rtt_us=12.0, linkspeed_gbps=100.0, mtu=4096))
    assert Nscc(model).fi / model.bdp() == pytest.approx(spec.fi / spec.config.bdp(), rel=0.05)
    full = loads(SCENARIO + "mtu: 4096\n")
    cfg = full.transport.nscc(8.0, full.mtu, 20)
    assert cfg is not None and cfg.reference_bdp == 150_000
    literal = loads(SCENARIO + "transport: {reference_bdp: 150000}\n").transport.nscc(8.0, 1024, 20)
    assert literal is not None and literal.reference_bdp == 150_000
    assert Nscc(literal).fi == pytest.approx(Nscc(model).fi / 4)


# -- a loss that was not one ------------------------------------------------------------------

def test_a_loss_cut_is_returned_and_can_be_given_back_within_bounds() -> None:
    cc = Nscc(TINY)
    Stream(cc).ack(1.0, 0.0)
    cc.on_send(7, MTU)
    before = cc.cwnd
    assert cc.on_loss(7) == PKT and cc.cwnd == before - PKT
    cc.undo_loss(PKT)
    assert cc.cwnd == before and cc.counters["loss_undone"] == 1
    assert cc.on_loss(7) == 0                      # counted once: nothing more to give back
    cc.undo_loss(10 * cc.max_cwnd)                 # never past the maximum
    assert cc.cwnd == cc.max_cwnd
    low = Nscc(TINY)
    low.cwnd = low.min_cwnd
    low.on_send(1, MTU)
    assert low.on_loss(1) == 0 and low.cwnd == low.min_cwnd   # the floor took nothing


def test_a_spurious_resend_gives_its_window_cut_back() -> None:
    """RFC 3708 finds the resend spurious (its answer came sooner than any round trip: the
    first transmission arrived, late); RFC 4015's response undoes the cut the loss made."""
    from mrc_transport.fastwire import SackFrame
    from mrc_transport.wire import PSN_MOD
    from tests.unit.test_mrc_transport_timers import QP, config

    sender = Sender(config(rto_us=500, reorder_us=10, cc=TINY))
    assert sender.cc is not None
    sender.write(bytes(8 * MTU), 0x1000)
    assert len(sender.poll(0)) == 8
    # PSNs 1-7 answered over fast paths at 8 µs (RTT samples: 8 µs), PSN 0 late behind a queue
    sender.on_parsed(SackFrame(QP, 7, 0, 0, 0, 0, PSN_MOD - 1, 1, 0b11111110), 8)
    before = sender.cc.cwnd
    assert sender.poll(30) == []                   # within the reordering allowance
    sender.poll(40)                                # past it: resent (and reported to the NIC)
    assert sender.counters["sack_hole"] == 1 and sender.cc.cwnd == before - PKT
    sender.on_parsed(SackFrame(QP, 0, 0, 0, 0, 0, 7, 1, 0), 42)   # 2 µs after the resend
    assert sender.counters["spurious"] == 1 and sender.completed() == [0]
    assert sender.cc.cwnd == before and sender.cc.counters["loss_undone"] == 1
