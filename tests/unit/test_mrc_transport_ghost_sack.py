"""The sender takes no acknowledgement of what it never sent (issue 24, defect 4): a SACK whose
cumulative PSN or bitmap reaches past the last PSN sent is a ghost (forged, corrupt or stale),
dropped whole as InfiniBand drops a ghost ACK and TCP an ACK beyond SND.NXT. Taking it would
complete a write at the sender only and wedge the connection. The sender alone, fed SACKs as
its NIC hands them up, in virtual time."""

from __future__ import annotations

from mrc_transport.fastwire import SackFrame
from mrc_transport.sender import Sender
from mrc_transport.wire import PSN_MOD
from tests.unit.test_mrc_transport_timers import config, kinds, sack


def four_in_flight() -> Sender:
    """A sender with one 4-packet write in flight (PSNs 0..3, initial PSN 0)."""
    sender = Sender(config(rto_us=500, reorder_us=10))
    sender.write(bytes(4 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 4
    return sender


def test_a_cumulative_psn_beyond_the_last_sent_acknowledges_nothing() -> None:
    sender = four_in_flight()
    sender.on_parsed(sack(cumulative=10), 20)
    assert sender.counters["ghost"] == 1
    assert sender.completed() == [] and not sender.done
    # The genuine SACK still completes the write, and the lost ones are still found lost.
    sender.on_parsed(sack(2, cumulative=0), 30)
    assert sender.counters["ghost"] == 1
    sender.on_parsed(sack(cumulative=3), 40)
    assert sender.completed() == [0]


def test_a_bitmap_bit_past_the_last_sent_makes_the_whole_sack_a_ghost() -> None:
    sender = four_in_flight()
    sender.on_parsed(sack(1, 2, 3, 9), 20)   # PSN 9 never sent: none of it is believed
    assert sender.counters["ghost"] == 1
    sender.on_parsed(sack(1, 2, 3), 25)      # the same without the ghost bit
    assert sender.counters["ghost"] == 1
    assert sender.counters["sack_hole"] == 0
    sender.on_parsed(sack(cumulative=3), 30)
    assert sender.completed() == [0]


def test_a_sack_just_behind_the_wrap_is_no_ghost() -> None:
    """PSNs wrap at 2^24: a connection starting near the top acknowledges across the wrap."""
    sender = Sender(config(rto_us=500, reorder_us=10, initial_psn=PSN_MOD - 2))
    sender.write(bytes(4 * 1024), 0x1000)
    assert kinds(sender.poll(0)) == ["data"] * 4            # PSNs 2^24-2, 2^24-1, 0, 1
    sender.on_parsed(sack(cumulative=2), 20)                 # one past PSN 1: a ghost
    assert sender.counters["ghost"] == 1
    sender.on_parsed(sack(cumulative=1), 30)
    assert sender.counters["ghost"] == 1 and sender.completed() == [0]


def test_a_probe_answer_before_any_data_is_no_ghost() -> None:
    """A probe's answer reports the receiver's window as it is: before anything was sent, its
    cumulative point is the PSN before the first (nothing to acknowledge, nothing forged)."""
    sender = Sender(config(rto_us=500, reorder_us=10))
    sender.on_parsed(SackFrame(0x11, 0, 0, 0, 1, 0, PSN_MOD - 1, 1, 0), 5)
    assert sender.counters["ghost"] == 0
