"""Workload schedules (emulation/workloads.py) and the report's summary rules
(emulation/metrics.py), without devices."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from emulation.metrics import MessageRecord, RunResult, Series, percentile, time_to_steady
from emulation.scenario import Workload
from emulation.workloads import connections, derangement, messages

RANKS = ("a", "b", "c", "d")


def test_ring_allreduce_moves_each_chunk_around_the_ring() -> None:
    ms = messages(Workload("ring_allreduce", 1003, RANKS), seed=1)
    n = len(RANKS)
    assert len(ms) == 2 * (n - 1) * n
    # every rank sends 2(N-1) chunks to its successor, together twice its buffer less a chunk
    sent = Counter()
    for m in ms:
        assert RANKS.index(m.dst) == (RANKS.index(m.src) + 1) % n
        sent[m.src] += m.size
    for rank in RANKS:
        assert 2 * 1003 * (n - 1) // n - 2 <= sent[rank] <= 2 * 1003 * (n - 1) // n + 2
    by_id = {m.id: m for m in ms}
    for m in ms:
        if m.step == 0:
            assert m.after == ()
            continue
        (before,) = m.after   # the chunk this rank received in the previous step
        prev = by_id[before]
        assert prev.dst == m.src and prev.step == m.step - 1
        assert prev.size == m.size   # the same chunk travels on
    assert sum(ms[k].size for k in range(n)) == 1003   # step 0: every chunk once


def test_iterations_wait_for_the_previous_round() -> None:
    ms = messages(Workload("all_to_all", 10, RANKS, iterations=2), seed=1)
    first = [m for m in ms if m.iteration == 0]
    second = [m for m in ms if m.iteration == 1]
    assert len(first) == len(second) == 12
    assert all(set(m.after) == {f.id for f in first} for m in second)
    assert {(m.src, m.dst) for m in first} == {(a, b) for a in RANKS for b in RANKS if a != b}
    assert len(connections(ms)) == 12


def test_permutation_is_a_seeded_derangement() -> None:
    one = messages(Workload("permutation", 5, RANKS), seed=3)
    assert [m.src for m in one] == list(RANKS)
    assert sorted(m.dst for m in one) == sorted(RANKS)
    assert all(m.src != m.dst for m in one)
    assert one == messages(Workload("permutation", 5, RANKS), seed=3)
    perms = {tuple(derangement(6, random.Random(s))) for s in range(40)}
    assert len(perms) > 10 and all(p[i] != i for p in perms for i in range(6))


def test_incast_and_its_victim() -> None:
    ms = messages(Workload("incast", 7, senders=("a", "b", "c"), receiver="d",
                           victim=("e", "f"), victim_bytes=3), seed=1)
    assert [(m.src, m.dst, m.size, m.flow) for m in ms] == [
        ("a", "d", 7, "main"), ("b", "d", 7, "main"), ("c", "d", 7, "main"),
        ("e", "f", 3, "victim")]


def run_of(records: list[MessageRecord], goodput: list[int], failures: list[float],
           end_us: float) -> RunResult:
    series = Series(10, goodput_bytes={"x": goodput})
    return RunResult("m", end_us, True, records, series, {}, [(f, "cut") for f in failures])


def test_summary_rules() -> None:
    records = [MessageRecord(k, "a", "b", 100, "main", posted_us=0.0, arrived_us=float(k + 1),
                             intact=True) for k in range(100)]
    records.append(MessageRecord(100, "a", "b", 500, "main", posted_us=5.0))   # never arrived
    records.append(MessageRecord(101, "a", "b", 50, "victim", posted_us=1.0, arrived_us=4.0,
                                 intact=True))
    run = run_of(records, [10, 10, 0, 0, 5, 9, 10, 10], [20.0], 80.0)
    s = run.summary()
    assert s["bytes_lost"] == 500 and s["completed"] == 101 and s["messages"] == 102
    # the undelivered message counts, as an infinite time: 101 main messages, nearest rank
    # 51 and 100; 1 of 101 missing (< 1 %) leaves p99 finite, the max is infinite
    assert (s["mct_p50_us"], s["mct_p99_us"], s["mct_max_us"]) == (51.0, 100.0, math.inf)
    assert s["victim_mct_p50_us"] == 3.0
    # before the cut (bins 0, 1): 10 a bin; from bin 4 the 3-bin mean is 8 (< 9), bin 5: 9.67
    assert time_to_steady(run, 20.0) == 30.0
    assert s["time_to_steady_us"] == [{"failure": "cut", "at_us": 20.0, "us": 30.0}]
    assert time_to_steady(run_of([], [10, 10, 0, 0, 0, 0, 0, 0], [], 80.0), 20.0) is None


@pytest.mark.parametrize(("values", "p", "want"), [
    ([], 50, None), ([7.0], 99, 7.0), ([1.0, 2.0, 3.0, 4.0], 50, 2.0),
    ([1.0, 2.0, 3.0, 4.0], 75, 3.0), ([float(k) for k in range(1, 201)], 99, 198.0)])
def test_percentile_is_nearest_rank(values: list[float], p: float, want: float | None) -> None:
    assert percentile(values, p) == want


def test_workloads_together_keep_their_own_schedules_and_labels() -> None:
    ring = Workload("ring_allreduce", 1003, RANKS)
    flow = Workload("flow", 50, src="a", dst="c", start_us=40, label="bg", iterations=2)
    a2a = Workload("all_to_all", 10, ("a", "b"), start_us=7, label="all_to_all2")
    incast = Workload("incast", 7, senders=("b",), receiver="d", victim=("e", "f"),
                      victim_bytes=3, label="incast3", iterations=2)
    ms = messages([ring, flow, a2a, incast], seed=5)
    alone = messages(ring, seed=5)
    assert ms[:len(alone)] == alone   # the first workload's schedule as if it were alone
    assert [m.id for m in ms] == list(range(len(ms)))
    rest = ms[len(alone):]
    assert [(m.src, m.dst, m.size, m.flow, m.start_us, m.after, m.iteration)
            for m in rest[:2]] == [("a", "c", 50, "bg", 40, (), 0),
                                   ("a", "c", 50, "bg", 40, (rest[0].id,), 1)]
    assert [(m.src, m.dst, m.flow, m.start_us) for m in rest[2:4]] == [
        ("a", "b", "all_to_all2", 7), ("b", "a", "all_to_all2", 7)]
    first, victim, second, victim2 = rest[4:]
    assert (first.flow, victim.flow, victim.size) == ("incast3", "victim", 3)
    # the next round waits for the incast, not its victim (as a lone incast's does)
    assert second.after == (first.id,) and victim2.after == (first.id,)
    # a pair written by two workloads is one connection: a -> b is the ring's and the a2a's
    assert connections(ms) == [*connections(alone), ("a", "c"), ("b", "a"), ("b", "d"),
                               ("e", "f")]


def test_later_workloads_draw_their_own_seeded_numbers() -> None:
    perm = Workload("permutation", 5, (*RANKS, "e", "f"))
    again = Workload("permutation", 5, (*RANKS, "e", "f"), label="permutation1")
    one = messages([perm, again], seed=3)
    assert one == messages([perm, again], seed=3)
    firsts, seconds = one[:6], one[6:]
    assert [m.dst for m in firsts] == [m.dst for m in messages(perm, seed=3)]
    assert [m.dst for m in seconds] != [m.dst for m in firsts]   # not the same draw twice
