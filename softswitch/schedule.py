"""Which devices of a stepped virtual-time fabric have something to do at this instant.

The fabric (softswitch/fabric.py) steps only these, never every device: a device is *ready*
when something not of its own doing may have given it work — a packet received (off a wire,
from a host, a packet-out), its queues reconfigured or cleared (`Device.set_waker` posts it,
from any thread) — or when the next departure of its egress queues is due. Departures are
timers in a heap keyed by that time in the queues' own float µs and fired with the queues'
own test (departure <= now + EPSILON_US), so a device wakes at exactly the instant its
`may_leave` would first say yes.

The order is that of a full scan, so a fabric steps exactly as one that visits every device
would: passes over the devices in the order they were added (their index), each ready device
visited once per pass for a burst of steps; a device made ready during a pass is visited in
this pass when its index comes after the one being stepped, else in the next pass.

Invariant between passes: a device is either marked ready (and has no timer) or has a timer
at its queues' next departure exactly (or none, with nothing queued), so the earliest valid
timer is the fabric's next departure (`earliest`).

The emulator (emulation/run.py) schedules its NIC hosts with the same class: woken by frames
handed to them and messages posted, their transports' deadlines (int µs) as the timers.
"""

from __future__ import annotations

from collections import deque
from heapq import heapify, heappop, heappush


class DeviceSchedule:
    """Ready devices by pass, and departure timers, for devices numbered 0, 1, 2... (`add`)."""

    def __init__(self) -> None:
        self._marked: list[bool] = []        # ready: in `_now` or `_next`
        self._now: list[int] = []            # heap: ready, to visit in this pass
        self._next: list[int] = []           # ready, for the next pass
        self._cursor = -1                    # the device being stepped (-1: none)
        self._posted: deque[int] = deque()   # wakes from `post`, any thread; applied in order
        self._timers: list[tuple[float, int]] = []   # heap of (departure µs, device)
        self._due: list[float | None] = []   # each device's timer; heap entries that differ
        self.enabled = True                  # False while devices run their own threads

    def __len__(self) -> int:
        return len(self._marked)

    def add(self) -> int:
        """A new device (ready: nothing is known of it yet); its index."""
        self._marked.append(False)
        self._due.append(None)
        i = len(self._marked) - 1
        self.wake(i)
        return i

    def post(self, i: int) -> None:
        """Device `i` may have work (thread-safe; applied by the stepping thread)."""
        if self.enabled:
            self._posted.append(i)

    def wake(self, i: int) -> None:
        """Device `i` may have work: visit it in this pass if it comes later, else the next."""
        if i >= len(self._marked):
            return   # not registered yet: `add` wakes it
        self._due[i] = None   # its timer may no longer hold: its step sets a new one
        if not self._marked[i]:
            self._marked[i] = True
            if i > self._cursor:
                heappush(self._now, i)
            else:
                self._next.append(i)

    def wake_all(self) -> None:
        for i in range(len(self._marked)):
            self.wake(i)

    def apply_posted(self) -> None:
        posted = self._posted
        while posted:
            self.wake(posted.popleft())

    def start_pass(self, limit_us: float) -> bool:
        """Begin a pass: the devices ready for it, and those whose departure is due by
        `limit_us` (the queues' now + EPSILON_US). False when none is."""
        self._cursor = -1
        if self._next:
            self._now.extend(self._next)
            self._next.clear()
            heapify(self._now)
        self.apply_posted()
        timers = self._timers
        due = self._due
        while timers and timers[0][0] <= limit_us:
            when, i = heappop(timers)
            if due[i] == when:
                self.wake(i)
        return bool(self._now)

    def pop(self) -> int | None:
        """The next device to step in this pass (in index order), or None: the pass is over."""
        if self._posted:
            self.apply_posted()
        if not self._now:
            self._cursor = -1
            return None
        i = heappop(self._now)
        self._marked[i] = False
        self._cursor = i
        return i

    def idle(self, i: int, departure: float | None) -> None:
        """Device `i` can do nothing more now; its queues' next departure (µs; None: none)."""
        if self._marked[i] or self._due[i] == departure:
            return   # ready again (its timer is set when it is next stepped), or unchanged
        self._due[i] = departure
        if departure is not None:
            heappush(self._timers, (departure, i))

    def ready(self) -> list[int]:
        """The devices marked ready (after applying what was posted)."""
        self.apply_posted()
        return [*self._now, *self._next]

    def earliest(self) -> float | None:
        """The earliest departure (µs) of the devices not marked ready; None: none queued."""
        timers = self._timers
        due = self._due
        while timers:
            when, i = timers[0]
            if due[i] == when:
                return when
            heappop(timers)   # stale: the device was stepped or woken since
        return None
