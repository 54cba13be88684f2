"""One thread that enforces the digest timeouts of many P4Runtime services.

A service's digest lists go out when their ``max_timeout_ns`` passes and their cache entries
expire when ``ack_timeout_ns`` does (digest_lists.py); something must look at the clock for
them. One thread per server did (a Fabric of 512 devices: 512 threads, each waking at least
once a second); a `DigestSweeper` serves every server of its owner (a Fabric's, or a standalone
server's own) from one thread.

Each service is swept when a digest is learned (`wake`) and again when what it answered is
due: the seconds until its next deadline, at most one (a config changed in between is seen
within a second), at least 0.5 ms. A service with nothing pending is not swept until it learns
a digest: its sweep would do nothing (no buffer to flush, no list awaiting an ack).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Protocol

RETRY_S = 0.1   # a sweep that raised is tried again this much later


class Sweepable(Protocol):
    def sweep_digests(self) -> float | None:
        """Enforce the timeouts; the seconds until the next is due (None: nothing pending)."""


class DigestSweeper:
    """Sweeps the services `add`ed to it from one daemon thread (started with the first)."""

    def __init__(self, name: str = "p4rt-digests",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._name = name
        self._clock = clock
        self._cond = threading.Condition()
        self._services: set[Sweepable] = set()
        self._woken: set[Sweepable] = set()
        self._due: list[tuple[float, int, Sweepable]] = []   # heap; stale entries skipped
        self._when: dict[Sweepable, float] = {}               # each service's live entry
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, service: Sweepable) -> Callable[[], None]:
        """Sweep `service` from now on; returns its wake-up (call it when it learns a
        digest)."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the digest sweeper is closed")
            self._services.add(service)
            self._woken.add(service)   # one sweep to start with, as a fresh thread did
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()
        return lambda: self.wake(service)

    def remove(self, service: Sweepable) -> None:
        """Stop sweeping `service` (a sweep of it already running still finishes)."""
        with self._cond:
            self._services.discard(service)
            self._woken.discard(service)
            self._when.pop(service, None)

    def wake(self, service: Sweepable) -> None:
        """Sweep `service` now (it learned a digest)."""
        with self._cond:
            if service in self._services:
                self._woken.add(service)
                self._cond.notify()

    def close(self) -> None:
        """Stop the thread (services still added are no longer swept)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    @property
    def threads(self) -> int:
        """Threads running (0 or 1)."""
        thread = self._thread
        return int(thread is not None and thread.is_alive())

    def _take_due(self) -> list[Sweepable] | None:
        """Wait until some service is due; take them (None: closed)."""
        with self._cond:
            while not self._closed:
                now = self._clock()
                due = self._woken
                self._woken = set()
                while self._due and self._due[0][0] <= now:
                    when, _, service = heapq.heappop(self._due)
                    if self._when.get(service) == when:
                        del self._when[service]
                        due.add(service)
                if due:
                    # woken ones count as swept now: their scheduled sweep is replaced
                    for service in due:
                        self._when.pop(service, None)
                    return list(due)
                self._cond.wait(self._due[0][0] - now if self._due else None)
        return None

    def _run(self) -> None:
        while (due := self._take_due()) is not None:
            for service in due:
                try:
                    delay = service.sweep_digests()
                except Exception:   # never let the sweeper die; the next sweep retries
                    delay = RETRY_S
                if delay is None:
                    continue
                with self._cond:
                    # removed meanwhile, or woken again (then swept again at once anyway)
                    if service not in self._services or service in self._woken:
                        continue
                    when = self._clock() + delay
                    self._when[service] = when
                    heapq.heappush(self._due, (when, next(self._seq), service))
