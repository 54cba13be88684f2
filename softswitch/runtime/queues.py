"""Egress queues between ingress and egress, as simple_switch's egress buffers.

Per egress port, ``priority_queues`` FIFO queues. A job goes to the queue numbered by its
``standard_metadata.priority``; a priority at or above the queue count drops the packet, as
simple_switch does ("Priority out of range, dropping packet"). Queues are served in strict
priority, the highest number first (with one queue, everything is priority 0). Each queue
holds at most `depth` packets (BMv2's default: 64); a full queue drops new arrivals.

TNA programs (`track_cells`): a job's queue is its qid (TnaJob.priority), and each queue's
depth is also kept in Tofino 1's 80-byte buffer cells, given to the job as `enq_cells` (cells
queued ahead of it when it arrived) and `deq_cells` (cells left behind when it left), which the
TNA pipeline reports as enq_qdepth/deq_qdepth.

Departure from BMv2, on purpose: a drain rate belongs to the port (the queues of one port
share it), like a link, where BMv2 paces each priority queue on its own.

Two ways to pace a port, independent of each other (a port with both obeys the slower):
- a packet rate (`set_rate`, packets/s, BMv2's ``set_queue_rate``): the port is free again one
  interval after each departure;
- a line rate (`set_line_rate`, bits/s): the port is charged for the bytes its egress pass put
  on the wire. After `pop` the port sends nothing until the caller reports, with
  `transmitted`, how many bytes that pass sent on it (0 when the packet was dropped,
  recirculated, or only cloned elsewhere); it is free again at departure + bytes * 8 / rate.

Time is the caller's clock in µs since the device started, so tests can step time by hand; it
may be a float clock (sub-µs line rates), while the queueing metadata handed to P4 stays in
whole µs. A packet's departure time is the later of its arrival and the moment its port is free
again; ``deq_timedelta`` is measured to that departure time, so a slow device loop does not
inflate it, and a port that fell behind catches up to its rate. Times within `EPSILON_US` of
each other count as equal (float noise of sub-µs arithmetic never delays a packet).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from softswitch.engine.pipeline import PacketJob, QueueInfo

DEFAULT_DEPTH = 64  # simple_switch: egress_buffers(nb_egress_threads, 64, ...)
EPSILON_US = 1e-6  # 1 ps: departure times closer than this to "now" are due
_BUSY = float("inf")  # free_at of a line-rate port whose egress pass is not reported yet


# a queued packet: (job, enqueue time µs, enq_qdepth, arrival sequence number)
_Queued = tuple[PacketJob, float, int, int]


@dataclass(slots=True)
class _Port:
    queues: list[deque[_Queued]]
    depth: int
    interval_us: float | None  # None: no packet rate
    bps: float | None = None  # line rate (bits/s); None: none
    free_at: float = 0.0  # when the port may send its next packet (0 on an unpaced port)
    sent_at: float = 0.0  # departure of the packet in its egress pass (line-rate ports)
    count: int = 0
    dropped: int = 0
    cells: list[int] | None = None  # per queue, buffer cells held (track_cells only)


class EgressQueues:
    """The egress buffers of one device; not thread-safe (the Device holds its lock)."""

    def __init__(self, priority_queues: int = 1,
                 clock: Callable[[], int] | Callable[[], float] | None = None,
                 depth: int = DEFAULT_DEPTH) -> None:
        """`clock`: µs (int, or float for sub-µs line-rate arithmetic); default: always 0."""
        if priority_queues < 1:
            raise ValueError("priority_queues must be at least 1")
        self.priority_queues = priority_queues
        self._order = range(priority_queues - 1, -1, -1)  # strict priority: highest first
        self.clock: Callable[[], float] = clock if clock is not None else (lambda: 0)
        self._default_depth = depth
        self._default_interval: float | None = None
        self._default_bps: float | None = None
        self._ports: dict[int, _Port] = {}
        self._active: dict[int, _Port] = {}  # ports with packets waiting
        self._seq = 0
        self._count = 0
        self.dropped = 0  # tail drops and out-of-range priorities, all ports
        self.departure: float = 0.0  # departure (µs) of the packet `pop` returned last
        # TNA: keep each queue's depth in buffer cells too, and tell each job (its `cells`,
        # `enq_cells`, `deq_cells`): Tofino's enq_qdepth/deq_qdepth count cells
        self.track_cells = False
        self.awaiting: int | None = None  # line-rate port whose pass `transmitted` must report
        # The earliest a queued packet may leave (inf: none may until a report), known until
        # the queues change: a stepped fabric asks again and again while nothing changes.
        self._earliest: float | None = None

    def __len__(self) -> int:
        return self._count

    # -- configuration --------------------------------------------------------------------------

    def _port(self, port: int) -> _Port:
        p = self._ports.get(port)
        if p is None:
            p = _Port([deque() for _ in range(self.priority_queues)], self._default_depth,
                      self._default_interval, self._default_bps)
            self._ports[port] = p
        return p

    def set_rate(self, port: int | None, packets_per_second: float | None) -> None:
        """Drain rate of `port` (None: every port, and ports seen later); None = unlimited."""
        self._earliest = None
        if packets_per_second is not None and packets_per_second <= 0:
            raise ValueError("a queue rate must be positive (None for unlimited)")
        interval = None if packets_per_second is None else 1e6 / packets_per_second
        targets = list(self._ports.values()) if port is None else [self._port(port)]
        if port is None:
            self._default_interval = interval
        for p in targets:
            p.interval_us = interval
            if interval is None and p.bps is None:
                p.free_at = 0.0  # unlimited: nothing to wait for

    def set_line_rate(self, port: int | None, bits_per_second: float | None) -> None:
        """Line rate of `port` in bits/s (None: every port, and ports seen later); None = no
        line rate. Independent of `set_rate`: a port with both obeys both."""
        self._earliest = None
        if bits_per_second is not None and not bits_per_second > 0:
            raise ValueError("a line rate must be positive (None for none)")
        bps = None if bits_per_second is None else float(bits_per_second)
        targets = list(self._ports.values()) if port is None else [self._port(port)]
        if port is None:
            self._default_bps = bps
        for p in targets:
            p.bps = bps
            if bps is None and p.interval_us is None:
                p.free_at = 0.0

    def set_depth(self, port: int | None, packets: int) -> None:
        """Tail-drop limit of each priority queue of `port` (None: every port)."""
        self._earliest = None
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

    def line_rate(self, port: int) -> float | None:
        """The line rate of `port` in bits/s (None: none)."""
        p = self._ports.get(port)
        return self._default_bps if p is None else p.bps

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
        self._earliest = None
        if self.track_cells:
            cells = p.cells
            if cells is None:
                cells = p.cells = [0] * self.priority_queues
            job.enq_cells = cells[priority]  # type: ignore[attr-defined]
            cells[priority] += job.cells  # type: ignore[attr-defined]
        q.append((job, self.clock(), len(q), self._seq))
        if not p.count:
            self._active[job.port] = p
        p.count += 1
        self._count += 1
        return True

    def pop(self) -> tuple[PacketJob, QueueInfo] | None:
        """The next packet that may leave by now (earliest departure across ports, then
        arrival order), with its queueing metadata; None if none may yet. Its departure time
        is in `departure`; on a line-rate port (`awaiting` is its number), report its egress
        pass with `transmitted` before the port can send again."""
        if not self._count:
            return None
        now = self.clock()
        limit = now + EPSILON_US
        earliest = self._earliest
        if earliest is not None and earliest > limit:
            return None
        order = self._order
        best_port: _Port | None = None
        depart = best_seq = qi = 0
        for p in self._active.values():
            free_at = p.free_at  # 0 on an unpaced port
            queues = p.queues
            for i in order:  # the first queue, highest priority first, whose head may leave
                q = queues[i]
                if q:
                    head = q[0]
                    enq = head[1]
                    t = enq if enq >= free_at else free_at
                    if t <= limit:
                        if best_port is None or t < depart or (t == depart
                                                               and head[3] < best_seq):
                            best_port, depart, best_seq, qi = p, t, head[3], i
                        break
        if best_port is None:
            self._earliest = self._heads_earliest()
            return None
        self._earliest = None
        q = best_port.queues[qi]
        job, enq, enq_qdepth, _seq = q.popleft()
        if self.track_cells and best_port.cells is not None:
            best_port.cells[qi] -= job.cells  # type: ignore[attr-defined]
            job.deq_cells = best_port.cells[qi]  # type: ignore[attr-defined]
        best_port.count -= 1
        if not best_port.count:
            del self._active[job.port]
        self._count -= 1
        enq_us = int(enq)
        if best_port.bps is not None:
            best_port.free_at = _BUSY  # until `transmitted`
            best_port.sent_at = depart
            self.awaiting = job.port
        elif best_port.interval_us is not None:
            best_port.free_at = depart + best_port.interval_us
        else:
            depart = now  # unlimited: leaves when the device gets to it, as in BMv2
        self.departure = depart
        return job, QueueInfo(enq_us, enq_qdepth, max(0, int(depart) - enq_us), len(q))

    def transmitted(self, port: int, nbytes: int) -> float:
        """Report the egress pass of the packet just popped from line-rate `port`: it put
        `nbytes` on the wire there. Returns when its last bit is sent (µs): departure +
        nbytes * 8 / rate, the moment the port is free again (later if its packet rate says
        so)."""
        p = self._ports.get(port)
        if p is None or self.awaiting != port or p.bps is None:
            raise ValueError(f"port {port} has no egress pass waiting to be reported")
        self.awaiting = None
        self._earliest = None
        depart = p.sent_at
        end = depart + nbytes * 8e6 / p.bps
        interval = p.interval_us
        p.free_at = end if interval is None or depart + interval < end else depart + interval
        return end

    def may_leave(self) -> bool:
        """Whether `pop` may find a packet now (False: it would not; cheap, no lock needed in
        the device's own thread, the only one that changes the queues' packets)."""
        if not self._count:
            return False
        earliest = self._earliest
        return earliest is None or earliest <= self.clock() + EPSILON_US

    def next_departure(self) -> float | None:
        """The earliest time (µs) a queued packet may leave; None when all queues are empty
        (or the only port with packets waits for `transmitted`)."""
        if not self._count:
            return None
        earliest = self._earliest
        if earliest is None:
            earliest = self._earliest = self._heads_earliest()
        return None if earliest == _BUSY else earliest

    def _heads_earliest(self) -> float:
        """When the first head of line may leave (inf: every port with packets waits for
        `transmitted`)."""
        best = _BUSY
        for p in self._active.values():
            for q in p.queues:
                if q:
                    enq = q[0][1]
                    t = float(enq) if enq >= p.free_at else p.free_at
                    if t < best:
                        best = t
        return best

    def clear(self) -> None:
        """Drop everything queued (a pipeline swap)."""
        for p in self._ports.values():
            for q in p.queues:
                q.clear()
            p.count = 0
            p.cells = None
            if p.free_at == _BUSY:
                p.free_at = p.sent_at
        self._active.clear()
        self._count = 0
        self.awaiting = None
        self._earliest = None
