"""WorkerPool: `workers` threads for calls that end on their own, one more per detached call."""

from __future__ import annotations

import threading

import pytest

from softswitch.runtime.server.worker_pool import WorkerPool

WAIT_S = 5.0


def test_a_detached_call_leaves_the_workers_to_the_others() -> None:
    pool = WorkerPool(1)
    release = threading.Event()

    def stream() -> str:
        pool.detach()
        assert release.wait(WAIT_S)
        return "stream"

    streams = [pool.submit(stream) for _ in range(3)]
    # three calls hold their threads; the pool's one worker still runs the next call
    assert pool.submit(lambda: "unary").result(WAIT_S) == "unary"
    assert pool.threads == 4
    release.set()
    assert [f.result(WAIT_S) for f in streams] == ["stream"] * 3
    pool.shutdown()
    assert pool.threads == 0


def test_calls_that_do_not_detach_share_the_workers() -> None:
    pool = WorkerPool(2)
    release = threading.Event()
    started = threading.Semaphore(0)

    def call(n: int) -> int:
        started.release()
        assert release.wait(WAIT_S)
        return n

    futures = [pool.submit(call, n) for n in range(5)]
    assert started.acquire(timeout=WAIT_S) and started.acquire(timeout=WAIT_S)
    assert pool.threads == 2                       # the other three wait for a worker
    assert not started.acquire(timeout=0.05)
    release.set()
    assert [f.result(WAIT_S) for f in futures] == [0, 1, 2, 3, 4]
    assert pool.threads == 2
    pool.shutdown()
    assert pool.threads == 0


def test_the_thread_a_detached_call_added_goes_when_it_ends() -> None:
    pool = WorkerPool(1)
    release = threading.Event()
    running = threading.Event()

    def stream() -> None:
        pool.detach()
        pool.detach()   # twice counts once
        running.set()
        assert release.wait(WAIT_S)

    long_call = pool.submit(stream)
    assert running.wait(WAIT_S)
    assert pool.submit(lambda: None).result(WAIT_S) is None
    assert pool.threads == 2
    release.set()
    long_call.result(WAIT_S)
    pool.shutdown()   # waits for the threads
    assert pool.threads == 0


def test_errors_reach_the_future_and_a_shut_pool_refuses_calls() -> None:
    pool = WorkerPool(1)
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 // 0).result(WAIT_S)
    assert pool.submit(lambda: 2).result(WAIT_S) == 2   # the worker survived
    pool.detach()   # not one of the pool's threads: nothing happens
    pool.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(lambda: 3)
    with pytest.raises(ValueError, match="at least 1"):
        WorkerPool(0)
