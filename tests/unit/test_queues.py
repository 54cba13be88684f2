"""Egress queues: BMv2's priority mapping, strict priority, tail drop, drain rate, metadata."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from softswitch.engine.pipeline import PacketJob, QueueInfo
from softswitch.runtime.queues import DEFAULT_DEPTH, EgressQueues


class Clock:
    """µs, stepped by hand."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def job(port: int, tag: int = 0, priority: int = 0) -> PacketJob:
    sm = SimpleNamespace(priority=priority, packet_length=100, tag=tag)
    return PacketJob(False, port, b"", None, None, sm)


def drain(q: EgressQueues) -> list[tuple[int, QueueInfo]]:
    out = []
    while (item := q.pop()) is not None:
        j, info = item
        out.append((j.sm.tag, info))
    return out


def test_unlimited_rate_is_fifo_across_ports_and_counts_depth() -> None:
    clock = Clock()
    q = EgressQueues(clock=clock)
    for tag, port in enumerate([1, 2, 1, 1, 2]):
        assert q.enqueue(job(port, tag))
    assert len(q) == 5
    assert q.depth(1) == 3 and q.depth(2) == 2
    out = drain(q)
    assert [t for t, _ in out] == [0, 1, 2, 3, 4]
    # enq_qdepth: packets ahead in that queue on arrival; deq_qdepth: left behind on departure
    assert [i.enq_qdepth for _, i in out] == [0, 0, 1, 2, 1]
    assert [i.deq_qdepth for _, i in out] == [2, 1, 1, 0, 0]
    assert len(q) == 0 and q.next_departure() is None


def test_tail_drop_at_bmv2_default_depth_and_configured_depth() -> None:
    q = EgressQueues(clock=Clock())
    accepted = [q.enqueue(job(3, i)) for i in range(DEFAULT_DEPTH + 5)]
    assert DEFAULT_DEPTH == 64
    assert accepted.count(True) == 64 and accepted[64:] == [False] * 5
    assert q.dropped == 5
    q.set_depth(4, 2)
    assert [q.enqueue(job(4)) for _ in range(3)] == [True, True, False]
    q.set_depth(None, 1)  # every port, including ports not seen yet
    assert [q.enqueue(job(9)) for _ in range(2)] == [True, False]


def test_strict_priority_highest_number_first() -> None:
    clock = Clock()
    q = EgressQueues(priority_queues=8, clock=clock)
    q.set_rate(1, 1000)  # hold packets back so they build up
    for tag, prio in enumerate([0, 3, 7, 3, 0, 7]):
        assert q.enqueue(job(1, tag, prio))
    order = []
    for step in range(6):
        clock.now = step * 1000
        item = q.pop()
        assert item is not None
        order.append(item[0].sm.tag)
        assert q.pop() is None  # one packet per 1000 µs
    assert order == [2, 5, 1, 3, 0, 4]


def test_priority_out_of_range_drops_as_simple_switch() -> None:
    q = EgressQueues(priority_queues=1, clock=Clock())
    assert not q.enqueue(job(1, priority=1))
    assert q.enqueue(job(1, priority=0))
    q4 = EgressQueues(priority_queues=4, clock=Clock())
    assert q4.enqueue(job(1, priority=3)) and not q4.enqueue(job(1, priority=4))


def test_drain_rate_paces_departures_and_fills_timedelta() -> None:
    clock = Clock()
    q = EgressQueues(clock=clock)
    q.set_rate(1, 100)  # one packet per 10 ms
    for tag in range(4):
        q.enqueue(job(1, tag))
    got = drain(q)
    assert [t for t, _ in got] == [0]  # the first leaves at once
    assert got[0][1] == QueueInfo(0, 0, 0, 3)
    assert q.next_departure() == 10_000
    clock.now = 9_999
    assert q.pop() is None
    clock.now = 35_000  # late: the packets due at 10 and 20 ms catch up, 30 ms too
    got = drain(q)
    assert [t for t, _ in got] == [1, 2, 3]
    assert [i.deq_timedelta for _, i in got] == [10_000, 20_000, 30_000]
    assert [i.enq_qdepth for _, i in got] == [1, 2, 3]
    assert [i.deq_qdepth for _, i in got] == [2, 1, 0]


def test_rate_of_one_port_does_not_hold_another() -> None:
    clock = Clock()
    q = EgressQueues(clock=clock)
    q.set_rate(1, 10)
    q.enqueue(job(1, 0))
    q.enqueue(job(1, 1))
    q.enqueue(job(2, 2))
    assert [t for t, _ in drain(q)] == [0, 2]
    q.set_rate(None, None)  # back to unlimited everywhere
    assert [t for t, _ in drain(q)] == [1]


def test_idle_port_sends_at_once_after_a_pause() -> None:
    clock = Clock()
    q = EgressQueues(clock=clock)
    q.set_rate(1, 1000)
    q.enqueue(job(1, 0))
    assert drain(q)[0][1].deq_timedelta == 0
    clock.now = 50_000
    q.enqueue(job(1, 1))
    ((_tag, info),) = drain(q)
    assert info == QueueInfo(50_000, 0, 0, 0)


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError):
        EgressQueues(priority_queues=0)
    q = EgressQueues()
    with pytest.raises(ValueError):
        q.set_rate(1, 0)
    with pytest.raises(ValueError):
        q.set_depth(1, -1)


def test_clear_empties_every_queue() -> None:
    q = EgressQueues(priority_queues=2, clock=Clock())
    q.enqueue(job(1, priority=1))
    q.enqueue(job(2))
    q.clear()
    assert len(q) == 0 and q.pop() is None and q.depth(1, 1) == 0


class FineClock:
    """µs as a float, stepped by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_line_rate_charges_the_bytes_each_pass_transmitted() -> None:
    clock = FineClock()
    q = EgressQueues(clock=clock)
    q.set_line_rate(1, 10e9)  # 1000 B: 0.8 µs
    for tag in range(4):
        q.enqueue(job(1, tag))
    got = q.pop()
    assert got is not None and got[0].sm.tag == 0 and q.departure == 0.0 and q.awaiting == 1
    clock.now = 100.0
    assert q.pop() is None  # not reported yet: the port sends nothing else
    assert q.transmitted(1, 1000) == pytest.approx(0.8)
    assert q.awaiting is None
    clock.now = 0.5
    assert q.pop() is None and q.next_departure() == pytest.approx(0.8)
    clock.now = 0.8
    got = q.pop()
    assert got is not None and q.departure == pytest.approx(0.8)
    assert got[1] == QueueInfo(0, 1, 0, 2)  # whole µs for P4
    assert q.transmitted(1, 0) == pytest.approx(0.8)  # dropped or recirculated: no line time
    got = q.pop()
    assert got is not None and got[0].sm.tag == 2
    with pytest.raises(ValueError):
        q.transmitted(2, 100)  # not the port waiting for its report
    q.transmitted(1, 125)  # 0.1 µs
    assert q.next_departure() == pytest.approx(0.9)
    with pytest.raises(ValueError):
        q.transmitted(1, 125)  # reported already


def test_line_rate_and_packet_rate_together_the_slower_wins() -> None:
    clock = FineClock()
    q = EgressQueues(clock=clock)
    q.set_rate(None, 1e6)  # one packet per µs on every port
    q.set_line_rate(None, 8e9)  # a byte per ns on every port
    for tag in range(3):
        q.enqueue(job(7, tag))
    assert q.pop() is not None
    q.transmitted(7, 100)  # 0.1 µs of line time: the packet rate holds it to 1 µs
    assert q.next_departure() == 1.0
    clock.now = 1.0
    assert q.pop() is not None
    q.transmitted(7, 3000)  # 3 µs of line time: longer than the packet interval
    assert q.next_departure() == 4.0
    assert q.line_rate(7) == 8e9 and q.line_rate(99) == 8e9
    q.set_line_rate(7, None)
    q.set_rate(7, None)  # unlimited: what waits leaves at once
    assert q.next_departure() == 0.0 and q.line_rate(7) is None
    with pytest.raises(ValueError):
        q.set_line_rate(7, -1)
