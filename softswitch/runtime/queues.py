"""Egress queues between ingress and egress, as simple_switch's egress buffers.

Per egress port, ``priority_queues`` FIFO queues. A job goes to the queue numbered by its
``standard_metadata.priority``; a priority at or above the queue count drops the packet, as
simple_switch does ("Priority out of range, dropping packet"). Queues are served in strict
priority, the highest number first (with one queue, everything is priority 0). Each queue
holds at most `depth` packets (BMv2's default: 64); a full queue drops new arrivals.

Departure from BMv2, on purpose: a drain rate belongs to the port (the queues of one port
share it), like a link, where BMv2 paces each priority queue on its own.

Time is the caller's clock in µs since the device started, so tests can step time by hand.
A packet's departure time is the later of its arrival and the moment its port is free again;
``deq_timedelta`` is measured to that departure time, so a slow device loop does not inflate
it, and a port that fell behind catches up to its rate.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from softswitch.engine.pipeline import PacketJob, QueueInfo

DEFAULT_DEPTH = 64  # simple_switch: egress_buffers(nb_egress_threads, 64, ...)


# a queued packet: (job, enqueue time µs, enq_qdepth, arrival sequence number)
_Queued = tuple[PacketJob, int, int, int]


@dataclass(slots=True)
class _Port:
    queues: list[deque[_Queued]]
    depth: int
    interval_us: float | None  # None: unlimited rate
    free_at: float = 0.0  # when the port may send its next packet (rate-limited ports)
    count: int = 0
    dropped: int = 0


class EgressQueues:
    """The egress buffers of one device; not thread-safe (the Device holds its lock)."""

    def __init__(self, priority_queues: int = 1, clock: Callable[[], int] | None = None,
                 depth: int = DEFAULT_DEPTH) -> None:
        if priority_queues < 1:
            raise ValueError("priority_queues must be at least 1")
        self.priority_queues = priority_queues
        self.clock = clock if clock is not None else (lambda: 0)
        self._default_depth = depth
        self._default_interval: float | None = None
        self._ports: dict[int, _Port] = {}
        self._active: dict[int, _Port] = {}  # ports with packets waiting
        self._seq = 0
        self._count = 0
        self.dropped = 0  # tail drops and out-of-range priorities, all ports

    def __len__(self) -> int:
        return self._count

    # -- configuration --------------------------------------------------------------------------

    def _port(self, port: int) -> _Port:
        p = self._ports.get(port)
        if p is None:
            p = _Port([deque() for _ in range(self.priority_queues)], self._default_depth,
                      self._default_interval)
            self._ports[port] = p
        return p

    def set_rate(self, port: int | None, packets_per_second: float | None) -> None:
        """Drain rate of `port` (None: every port, and ports seen later); None = unlimited."""
        if packets_per_second is not None and packets_per_second <= 0:
            raise ValueError("a queue rate must be positive (None for unlimited)")
        interval = None if packets_per_second is None else 1e6 / packets_per_second
        targets = list(self._ports.values()) if port is None else [self._port(port)]
        if port is None:
            self._default_interval = interval
        for p in targets:
            p.interval_us = interval

    def set_depth(self, port: int | None, packets: int) -> None:
        """Tail-drop limit of each priority queue of `port` (None: every port)."""
        if packets < 0:
            raise ValueError("a queue depth cannot be negative")
        targets = list(self._ports.values()) if port is None else [self._port(port)]
        if port is None:
            self._default_depth = packets
        for p in targets:
            p.depth = packets

    def depth(self, port: int, priority: int = 0) -> int:
        """Packets waiting in one priority queue of `port`."""
        p = self._ports.get(port)
        return len(p.queues[priority]) if p is not None else 0

    # -- data path ------------------------------------------------------------------------------

    def enqueue(self, job: PacketJob) -> bool:
        """Queue an egress job; False when it was dropped (full queue, bad priority)."""
        priority = job.priority
        if priority >= self.priority_queues:
            self.dropped += 1
            return False
        p = self._port(job.port)
        q = p.queues[priority]
        if len(q) >= p.depth:
            p.dropped += 1
            self.dropped += 1
            return False
        self._seq += 1
        q.append((job, self.clock(), len(q), self._seq))
        if not p.count:
            self._active[job.port] = p
        p.count += 1
        self._count += 1
        return True

    def _head(self, p: _Port, now: float) -> tuple[float, int, int] | None:
        """(departure time, seq, queue index) of the packet `p` sends next, if it may by `now`."""
        for qi in range(self.priority_queues - 1, -1, -1):
            q = p.queues[qi]
            if q:
                _job, enq_us, _depth, seq = q[0]
                depart = float(enq_us) if p.interval_us is None else max(p.free_at, enq_us)
                if depart <= now:
                    return depart, seq, qi
        return None

    def pop(self) -> tuple[PacketJob, QueueInfo] | None:
        """The next packet that may leave by now (earliest departure across ports, then
        arrival order), with its queueing metadata; None if none may yet."""
        if not self._count:
            return None
        now = self.clock()
        best: tuple[float, int, int] | None = None
        best_port: _Port | None = None
        for p in self._active.values():
            head = self._head(p, now)
            if head is not None and (best is None or head[:2] < best[:2]):
                best, best_port = head, p
        if best is None or best_port is None:
            return None
        depart, _seq, qi = best
        q = best_port.queues[qi]
        job, enq_us, enq_qdepth, _seq = q.popleft()
        best_port.count -= 1
        if not best_port.count:
            del self._active[job.port]
        self._count -= 1
        if best_port.interval_us is None:
            depart_us = now  # unlimited: leaves when the device gets to it, as in BMv2
        else:
            best_port.free_at = depart + best_port.interval_us
            depart_us = int(depart)
        return job, QueueInfo(enq_us, enq_qdepth, max(0, depart_us - enq_us), len(q))

    def next_departure(self) -> float | None:
        """The earliest time (µs) a queued packet may leave; None when all queues are empty."""
        if not self._count:
            return None
        best: float | None = None
        for p in self._active.values():
            for q in p.queues:
                if q:
                    enq_us = q[0][1]
                    t = float(enq_us) if p.interval_us is None else max(p.free_at, enq_us)
                    if best is None or t < best:
                        best = t
        return best

    def clear(self) -> None:
        """Drop everything queued (a pipeline swap)."""
        for p in self._ports.values():
            for q in p.queues:
                q.clear()
            p.count = 0
        self._active.clear()
        self._count = 0
