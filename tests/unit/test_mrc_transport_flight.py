"""The sender's packets in flight indexed by what their resend waits for (mrc_transport/
flight.py), and what the sender reads from it: a poll and a deadline look at the packets that
can be due, retransmissions still go in PSN order, and a clock that goes back is still served
exactly (every packet looked at)."""

from __future__ import annotations

from mrc_transport.fastwire import OtherFrame, WriteFrame, parse
from mrc_transport.flight import Flight
from mrc_transport.sender import OP_EV_REPORT, Sender
from mrc_transport.wire import NackReason
from tests.unit.test_mrc_transport_timers import config, nack


def sent_psns(frames: list[bytes]) -> list[str]:
    """"d<PSN>" per data packet, "r<PSN>" per loss report."""
    out = []
    for frame in frames:
        parsed = parse(frame)
        if isinstance(parsed, WriteFrame):
            out.append(f"d{parsed.psn}")
        else:
            assert isinstance(parsed, OtherFrame) and parsed.opcode == OP_EV_REPORT
            out.append(f"r{parsed.psn}")
    return out


def test_each_packet_in_flight_is_in_one_index_by_what_its_resend_waits_for() -> None:
    flight: Flight[str] = Flight()
    for seq in range(4):
        flight.sent(seq, f"p{seq}", 10 * seq)
    flight.resent_at(1, "p1", 40)
    flight.nack(2, "nack_trimmed")
    flight.nack(2, "nack_oor")                 # the first NACK's cause stands
    flight.resent_at(0, "p0", 50)
    assert list(flight.by_seq) == [0, 1, 2, 3]
    assert list(flight.fresh) == [3]
    assert list(flight.resent) == [1, 0]       # in the order of their latest transmission
    assert flight.nacked == {2: "nack_trimmed"}
    flight.resent_at(2, "p2", 60)              # a NACKed packet goes again: its timer runs
    assert list(flight.resent) == [1, 0, 2] and not flight.nacked
    assert flight.acked(1) == "p1" and flight.acked(3) == "p3"
    assert list(flight.by_seq) == [0, 2] and not flight.fresh and list(flight.resent) == [0, 2]
    assert flight.in_time_order


def test_a_transmission_stamped_before_the_latest_turns_the_time_order_off() -> None:
    flight: Flight[str] = Flight()
    flight.sent(0, "p0", 100)
    flight.resent_at(0, "p0", 100)
    assert flight.in_time_order
    flight.sent(1, "p1", 99)
    assert not flight.in_time_order
    flight.sent(2, "p2", 200)
    assert not flight.in_time_order            # for good


def test_resends_found_by_nack_and_by_timeout_go_in_psn_order() -> None:
    sender = Sender(config(rto_us=500))
    sender.write(bytes(4 * 1024), 0x1000)
    assert sent_psns(sender.poll(0)) == ["d0", "d1", "d2", "d3"]
    sender.write(bytes(2 * 1024), 0x9000)
    assert sent_psns(sender.poll(100)) == ["d4", "d5"]
    sender.on_parsed(nack(5), 110)
    sender.on_parsed(nack(1, NackReason.TRIMMED_LASTHOP), 120)
    assert sent_psns(sender.poll(120)) == ["d1", "d5"]   # resent: timers now run from 120
    # PSNs 0, 2 and 3 time out at 500; 1 and 5 (resent at 120) and 4 (sent at 100) later.
    assert sender.next_deadline_us() == 500
    assert sent_psns(sender.poll(500)) == ["r0", "d0", "r2", "d2", "r3", "d3"]
    assert sender.next_deadline_us() == 100 + 500
    # 4 times out at 600, 1 and 5 at 620 (no reports: their trims were the notice).
    assert sent_psns(sender.poll(620)) == ["d1", "r4", "d4", "d5"]
    assert sender.counters["timeout"] == 6 and sender.counters["nack_trimmed"] == 1


def test_a_clock_that_goes_back_is_served_by_looking_at_every_packet() -> None:
    """Packets sent once are in seq order; with a clock that went back, the first is not the
    one that times out first: the sender then looks at them all."""
    sender = Sender(config(rto_us=500))
    sender.write(bytes(1024), 0x1000)
    assert sent_psns(sender.poll(100)) == ["d0"]
    sender.write(bytes(1024), 0x2000)
    assert sent_psns(sender.poll(50)) == ["d1"]         # stamped before PSN 0
    assert sender.next_deadline_us() == 50 + 500
    assert sender.poll(549) == []
    assert sent_psns(sender.poll(550)) == ["r1", "d1"]
    assert sender.next_deadline_us() == 100 + 500
