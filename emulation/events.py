"""The run's agenda: actions at given virtual times, in time order, ties in the order given."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class Event:
    at_ns: int
    seq: int
    action: Callable[[], None] = field(compare=False)
    failure: str = field(compare=False, default="")   # what the report marks ("": nothing)


class Agenda:
    def __init__(self) -> None:
        self._heap: list[Event] = []
        self._seq = 0

    def at(self, us: float, action: Callable[[], None], failure: str = "") -> None:
        """Run `action` at `us`; a `failure` is marked on the report's plots."""
        self._seq += 1
        heapq.heappush(self._heap, Event(round(us * 1000), self._seq, action, failure))

    def next_ns(self) -> int | None:
        return self._heap[0].at_ns if self._heap else None

    def due(self, now_ns: int) -> list[Event]:
        """The events due by `now_ns`, taken off the agenda, in order."""
        out = []
        while self._heap and self._heap[0].at_ns <= now_ns:
            out.append(heapq.heappop(self._heap))
        return out
