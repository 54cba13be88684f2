"""What the emulated messages write (emulation/run.py: payload_block, message_data): the same
bytes for the same seed and message, other bytes for another seed or message, and no packet of
a message that could be taken for another packet of it (the period is a prime: no multiple of an
MTU), however long the message."""

from __future__ import annotations

from emulation.run import PAYLOAD_PERIOD, message_data, payload_block
from emulation.workloads import Message

MTU = 4096


def message(mid: int, size: int) -> Message:
    return Message(mid, "nic0", "nic1", size)


def test_the_same_seed_and_message_write_the_same_bytes_others_other_bytes() -> None:
    block = payload_block(1)
    assert block == payload_block(1) and block != payload_block(2)
    assert len(block) == PAYLOAD_PERIOD
    first = message_data(block, message(3, 1 << 20))
    assert len(first) == 1 << 20
    assert first == message_data(payload_block(1), message(3, 1 << 20))
    assert first != message_data(payload_block(2), message(3, 1 << 20))
    assert first != message_data(block, message(4, 1 << 20))


def test_no_packet_of_a_message_repeats_another_of_it_even_past_the_period() -> None:
    block = payload_block(7)
    size = 2 * PAYLOAD_PERIOD + 3 * MTU + 5   # the block repeated: three laps
    data = message_data(block, message(600, size))
    assert len(data) == size
    # byte i is the block's byte (i + start) mod PAYLOAD_PERIOD, across the laps too
    start = data[:64]
    assert data[PAYLOAD_PERIOD:PAYLOAD_PERIOD + 64] == start
    packets = [data[i:i + MTU] for i in range(0, size - MTU, MTU)]
    assert len(set(packets)) == len(packets)


def test_a_short_message_is_cut_from_the_block() -> None:
    block = payload_block(1)
    assert message_data(block, message(0, 1)) == block[:1]
    assert message_data(block, message(1, 0)) == b""


def test_byte_i_is_the_blocks_byte_i_plus_start_across_its_end() -> None:
    block = payload_block(3)
    for mid, size in ((400, 1 << 20), (531, PAYLOAD_PERIOD + 1), (9, 2 * PAYLOAD_PERIOD + 17)):
        start = mid * 7919 % PAYLOAD_PERIOD
        data = message_data(block, message(mid, size))
        assert len(data) == size
        for i in (0, 1, PAYLOAD_PERIOD - start - 1, PAYLOAD_PERIOD - start, size // 2,
                  size - 1):
            if 0 <= i < size:
                assert data[i] == block[(i + start) % PAYLOAD_PERIOD], (mid, i)
