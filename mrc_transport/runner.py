"""Wall-clock drivers: `Runner` runs Hosts over FramePorts (what arrives goes to `on_frame`, what
`poll` returns is sent), with a real clock in µs; `Wire` is a patch cable between ports.

The Host code is not changed by any of this: a Runner only calls `on_frame` and `poll`, the
application calls `write` (and reads completions) on the hosts, either between `run_until`
calls in the same thread, or with `Runner.lock` held while the runner runs its own thread
(`start`/`wait_until`/`stop`): the hosts are not thread-safe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mrc_transport.host import Host
from mrc_transport.ports import FramePort

log = logging.getLogger(__name__)

Clock = Callable[[], int]                    # now in µs
Filter = Callable[[bytes], bytes | None]     # a frame -> what goes on (None: dropped)

IDLE_WAIT = 0.002   # s a round waits for a frame when the previous one moved nothing
BURST = 256         # frames taken from one port per round (the others are not starved)
LOGGED = 100        # failures logged one by one per endpoint; then one in 1,000


def monotonic_us() -> int:
    """The default clock: monotonic time in µs."""
    return time.monotonic_ns() // 1000


@dataclass
class Endpoint:
    """One host on one port, with what the runner did for it: `received` frames handed to
    `on_frame`, `rejected` ones it raised on (logged and skipped), `sent` frames from `poll`,
    `send_failed` ones the port refused."""

    host: Host
    port: FramePort
    received: int = 0
    rejected: int = 0
    sent: int = 0
    send_failed: int = 0


def _count_failure(endpoint: Endpoint, what: str, count: int) -> None:
    if count <= LOGGED or count % 1000 == 0:   # a port spewing garbage must not flood the log
        log.warning("%r: %s (%d so far)", endpoint.port, what, count, exc_info=True)


class Runner:
    """Drives `(host, port)` pairs; `clock` (µs) is what the hosts' timers see."""

    def __init__(self, *pairs: tuple[Host, FramePort], clock: Clock = monotonic_us,
                 idle_wait: float = IDLE_WAIT) -> None:
        if not pairs:
            raise ValueError("a Runner needs at least one (host, port) pair")
        self.endpoints = [Endpoint(host, port) for host, port in pairs]
        self.clock = clock
        self.idle_wait = idle_wait
        self.lock = threading.Lock()
        self.error: BaseException | None = None   # what ended the background thread
        self._changed = threading.Condition(self.lock)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- one round ------------------------------------------------------------------------------

    def step(self, wait: float = 0.0) -> int:
        """One round over every endpoint: take what has arrived (waiting up to `wait` s in all
        for a first frame), hand it to the host, poll the host, send what it returns. The
        number of frames moved. A host's TransportError (e.g. RetryLimitExceeded) propagates."""
        share = wait / len(self.endpoints)
        # Waiting happens without the lock, so an application thread can write meanwhile.
        inbound = [self._receive(ep.port, share) for ep in self.endpoints]
        moved = 0
        with self.lock:
            for endpoint, frames in zip(self.endpoints, inbound):
                moved += self._deliver(endpoint, frames) + self._poll(endpoint)
            if moved:
                self._changed.notify_all()
        return moved

    @staticmethod
    def _receive(port: FramePort, wait: float) -> list[bytes]:
        frames: list[bytes] = []
        frame = port.recv(wait)
        while frame is not None:
            frames.append(frame)
            if len(frames) >= BURST:
                break
            frame = port.recv(0)
        return frames

    def _deliver(self, endpoint: Endpoint, frames: list[bytes]) -> int:
        for frame in frames:
            endpoint.received += 1
            try:
                endpoint.host.on_frame(frame, self.clock())
            except Exception:
                # A frame the host cannot dissect must not stop the others' traffic.
                endpoint.rejected += 1
                _count_failure(endpoint, f"{len(frame)}-byte frame rejected", endpoint.rejected)
        return len(frames)

    def _poll(self, endpoint: Endpoint) -> int:
        frames = endpoint.host.poll(self.clock())
        for frame in frames:
            try:
                endpoint.port.send(frame)
                endpoint.sent += 1
            except Exception:
                endpoint.send_failed += 1   # lost, as on a wire: the transport resends
                _count_failure(endpoint, "send failed", endpoint.send_failed)
        return len(frames)

    # -- in the caller's thread -----------------------------------------------------------------

    def run_until(self, predicate: Callable[[], bool], timeout: float) -> None:
        """Step until `predicate()` holds; TimeoutError after `timeout` s of real time (whatever
        the clock says)."""
        if self._thread is not None:
            raise RuntimeError("the runner has its own thread: use wait_until")
        deadline = time.monotonic() + timeout
        moved = 1
        while not predicate():
            if time.monotonic() >= deadline:
                raise TimeoutError(f"condition not met within {timeout:g} s")
            moved = self.step(0.0 if moved else self.idle_wait)

    def run_for(self, seconds: float) -> None:
        """Step for `seconds` of real time (e.g. to let late frames arrive)."""
        end = time.monotonic() + seconds
        self.run_until(lambda: time.monotonic() >= end, max(seconds, 0.0) + 1.0)

    # -- in a thread of its own -----------------------------------------------------------------

    def start(self) -> None:
        """Run in a background thread until `stop`; hold `lock` to touch the hosts."""
        if self._thread is not None:
            raise RuntimeError("the runner is running already")
        self._stop.clear()
        self.error = None
        self._thread = threading.Thread(target=self._loop, name="mrc runner", daemon=True)
        self._thread.start()

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> None:
        """Wait (the thread runs) until `predicate()` holds, called with `lock` held;
        TimeoutError after `timeout` s; the thread's error if it ended with one."""
        with self._changed:
            done = self._changed.wait_for(
                lambda: self.error is not None or self._thread is None or predicate(), timeout)
            if self.error is not None:
                raise self.error
            if not done:
                raise TimeoutError(f"condition not met within {timeout:g} s")

    def stop(self) -> None:
        """Stop the background thread (idempotent); raises the error that ended it, if any."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join(timeout=5)
        if self.error is not None:
            raise self.error

    def __enter__(self) -> Runner:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            self.stop()
            return
        try:   # an exception is on its way out already: do not mask it
            self.stop()
        except Exception:
            log.exception("the runner had failed too")

    def _loop(self) -> None:
        moved = 1
        while not self._stop.is_set():
            try:
                moved = self.step(0.0 if moved else self.idle_wait)
            except BaseException as exc:   # the connection cannot go on: tell the waiters
                with self._changed:
                    self.error = exc
                    self._changed.notify_all()
                return


class Wire:
    """A patch cable: frames from each port of a `(a, b)` pair go out of the other, through
    `filter` when given (called under one lock, so a seeded RNG in it needs no locking of its
    own; it must not keep the wire busy for long). One thread per direction; `forwarded`,
    `dropped` count frames over all pairs."""

    def __init__(self, pairs: Iterable[tuple[FramePort, FramePort]],
                 filter: Filter | None = None) -> None:
        self.filter = filter
        self.forwarded = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._carry, args=(src, dst), daemon=True,
                             name=f"wire {src!r} -> {dst!r}")
            for a, b in pairs for src, dst in ((a, b), (b, a))]
        for thread in self._threads:
            thread.start()

    def _carry(self, src: FramePort, dst: FramePort) -> None:
        while not self._stop.is_set():
            try:
                frame = src.recv(0.05)
            except Exception:
                log.exception("wire: receiving on %r failed; that direction stops", src)
                return
            if frame is None:
                continue
            with self._lock:
                try:
                    passed = frame if self.filter is None else self.filter(frame)
                except Exception:
                    log.exception("wire filter failed: frame dropped")
                    passed = None
                if passed is None:
                    self.dropped += 1
                    continue
                self.forwarded += 1
            try:
                dst.send(passed)
            except Exception:
                if not self._stop.is_set():
                    log.exception("wire: sending on %r failed: frame lost", dst)

    def close(self) -> None:
        """Stop carrying frames (the ports stay open)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
