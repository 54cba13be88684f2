"""The threads that run P4Runtime calls, shared by the gRPC servers of one owner.

gRPC runs each call's handler on a thread of the server's executor. A unary call (or a Read)
ends on its own; a StreamChannel lasts as long as its client keeps it, holding its thread all
that time. With a bounded pool shared by many servers, enough open streams would take every
thread and the next Write would wait forever. So a long call `detach`es: from then on its
thread no longer counts against `workers`, and the pool starts another for queued calls if it
has to. Calls that did not detach therefore always have `workers` threads between them (no
stream can starve them), and the pool holds at most `workers` + (calls detached now) threads:
a thread left over when a detached call ends exits, an idle one waits without waking.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

_Job = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class WorkerPool(Executor):
    """An executor of at most `workers` threads for calls that end on their own, plus one
    per call that detached (see the module docstring)."""

    def __init__(self, workers: int, name: str = "p4rt") -> None:
        if workers < 1:
            raise ValueError(f"a worker pool needs at least 1 worker, not {workers}")
        self.workers = workers
        self._name = name
        self._cond = threading.Condition()
        self._jobs: deque[_Job] = deque()
        self._threads = 0     # alive
        self._idle = 0        # waiting for a job
        self._detached = 0    # running a detached call
        self._serial = 0
        self._closed = False
        self._mine = threading.local()   # set on this pool's threads: is the call detached

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("cannot run new calls after the worker pool shut down")
            self._jobs.append((future, fn, args, kwargs))
            self._dispatch()
        return future

    def detach(self) -> None:
        """Called by a long call on its thread: stop counting it against `workers` (no-op on a
        thread that is not this pool's, or already detached)."""
        mine = self._mine
        if getattr(mine, "running", False) and not mine.detached:
            mine.detached = True
            with self._cond:
                self._detached += 1
                self._dispatch()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._cond:
            self._closed = True
            if cancel_futures:
                while self._jobs:
                    self._jobs.popleft()[0].cancel()
            self._cond.notify_all()
            while wait and self._threads and not getattr(self._mine, "running", False):
                self._cond.wait()

    @property
    def threads(self) -> int:
        """Threads alive now."""
        with self._cond:
            return self._threads

    def _dispatch(self) -> None:
        """(Lock held.) A thread for each queued job: an idle one, else a new one while the
        attached threads are fewer than `workers`."""
        waiting = len(self._jobs)
        if self._idle:
            self._cond.notify(min(waiting, self._idle))
        spare = waiting - self._idle
        while spare > 0 and self._threads - self._detached < self.workers:
            self._threads += 1
            spare -= 1
            self._serial += 1
            threading.Thread(target=self._work, name=f"{self._name}_{self._serial}",
                             daemon=True).start()

    def _work(self) -> None:
        mine = self._mine
        mine.running, mine.detached = False, False
        cond = self._cond
        cond.acquire()
        try:
            while True:
                if self._jobs:
                    future, fn, args, kwargs = self._jobs.popleft()
                    cond.release()
                    mine.running = True
                    try:
                        _run(future, fn, args, kwargs)
                    finally:
                        del future, fn, args, kwargs   # no reference kept while idle
                        cond.acquire()
                        mine.running = False
                    if mine.detached:
                        mine.detached = False
                        self._detached -= 1
                        if self._threads - self._detached > self.workers:
                            return   # the pool grew for this call; the extra thread goes
                    continue
                if self._closed:
                    return
                self._idle += 1
                cond.wait()
                self._idle -= 1
        finally:
            self._threads -= 1
            cond.notify_all()   # a shutdown waits for the threads to go
            cond.release()


def _run(future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...],
         kwargs: dict[str, Any]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:
        future.set_exception(exc)
    else:
        future.set_result(result)
