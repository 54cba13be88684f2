"""Workloads as messages: who writes how many bytes to whom, and what each write waits for.

A `Message` is one write on the connection (src -> dst). It is posted once every message in
`after` has arrived at its receiver, and not before `start_us`, so a collective's steps follow
the data as they do on GPUs: in a ring all-reduce, rank i forwards a chunk only after it
received the previous one. Workloads run together: each is scheduled on its own, from its
`start_us`, and messages of different workloads between the same two NICs share their
connection. The schedule is a pure function of the workloads and the seed.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass

from emulation.scenario import MAIN_FLOW, VICTIM_FLOW, Workload


@dataclass(frozen=True)
class Message:
    """Write `size` bytes from `src` to `dst`; `flow` groups messages in the report (its
    workload's label: "main" for the first, or "victim" for an incast's victim); `step` and
    `iteration` place it in the collective; `start_us`: not posted before."""

    id: int
    src: str
    dst: str
    size: int
    after: tuple[int, ...] = ()
    flow: str = MAIN_FLOW
    step: int = 0
    iteration: int = 0
    start_us: int = 0


def messages(workloads: Workload | Sequence[Workload], seed: int) -> list[Message]:
    """Every message of the workloads, ids 0, 1, ... workload after workload, in posting
    order within a step."""
    if isinstance(workloads, Workload):
        workloads = (workloads,)
    out: list[Message] = []
    for k, workload in enumerate(workloads):
        # The first workload draws as a lone one always did: its schedule stays the same.
        rng = random.Random(seed if k == 0 else seed * 1_000_003 + k)
        out += _one(workload, rng, len(out))
    return out


def _one(workload: Workload, rng: random.Random, base: int) -> list[Message]:
    """One workload's messages, ids from `base`, labelled with its flow."""
    build = {"ring_allreduce": _ring, "all_to_all": _all_to_all,
             "permutation": _permutation, "incast": _incast, "flow": _flow}[workload.kind]
    out: list[Message] = []
    previous: tuple[int, ...] = ()
    for iteration in range(workload.iterations):
        made = build(workload, rng, base + len(out), previous, iteration)
        out += made
        # the next round waits for this one (an incast's victim runs beside it)
        previous = tuple(m.id for m in made if m.flow != VICTIM_FLOW)
    return [dataclasses.replace(m, start_us=workload.start_us,
                                flow=m.flow if m.flow == VICTIM_FLOW else workload.label)
            for m in out]


def _ring(w: Workload, rng: random.Random, base: int, barrier: tuple[int, ...],
          iteration: int) -> list[Message]:
    """2(N-1) steps (reduce-scatter, then all-gather); in step s rank i sends chunk
    (i - s) mod N to rank i + 1, after receiving step s - 1's chunk from rank i - 1."""
    ranks = w.nics
    n = len(ranks)
    sizes = _split(w.bytes, n)
    out: list[Message] = []
    ids: dict[tuple[int, int], int] = {}
    for step in range(2 * (n - 1)):
        for i in range(n):
            mid = base + len(out)
            ids[(step, i)] = mid
            after = (ids[(step - 1, (i - 1) % n)],) if step else barrier
            out.append(Message(mid, ranks[i], ranks[(i + 1) % n], sizes[(i - step) % n],
                               after, step=step, iteration=iteration))
    return out


def _all_to_all(w: Workload, rng: random.Random, base: int, barrier: tuple[int, ...],
                iteration: int) -> list[Message]:
    ranks = w.nics
    out: list[Message] = []
    for shift in range(1, len(ranks)):   # spread the first packets over all receivers
        for i, src in enumerate(ranks):
            out.append(Message(base + len(out), src, ranks[(i + shift) % len(ranks)], w.bytes,
                               barrier, iteration=iteration))
    return out


def _permutation(w: Workload, rng: random.Random, base: int, barrier: tuple[int, ...],
                 iteration: int) -> list[Message]:
    ranks = list(w.nics)
    target = derangement(len(ranks), rng)
    return [Message(base + i, src, ranks[target[i]], w.bytes, barrier, iteration=iteration)
            for i, src in enumerate(ranks)]


def _incast(w: Workload, rng: random.Random, base: int, barrier: tuple[int, ...],
            iteration: int) -> list[Message]:
    out = [Message(base + i, src, w.receiver, w.bytes, barrier, iteration=iteration)
           for i, src in enumerate(w.senders)]
    if w.victim is not None:
        out.append(Message(base + len(out), w.victim[0], w.victim[1], w.victim_bytes, barrier,
                           flow="victim", iteration=iteration))
    return out


def _flow(w: Workload, rng: random.Random, base: int, barrier: tuple[int, ...],
          iteration: int) -> list[Message]:
    return [Message(base, w.src, w.dst, w.bytes, barrier, iteration=iteration)]


def derangement(n: int, rng: random.Random) -> list[int]:
    """A uniformly drawn permutation of range(n) with no fixed point (n >= 2)."""
    while True:
        order = list(range(n))
        rng.shuffle(order)
        if all(order[i] != i for i in range(n)):
            return order


def _split(total: int, parts: int) -> list[int]:
    """`total` in `parts` sizes that differ by at most one, the larger first."""
    q, r = divmod(total, parts)
    return [q + (k < r) for k in range(parts)]


def connections(schedule: Sequence[Message]) -> list[tuple[str, str]]:
    """The (src, dst) pairs the schedule writes on, in order of first use."""
    seen: dict[tuple[str, str], None] = {}
    for m in schedule:
        seen.setdefault((m.src, m.dst), None)
    return list(seen)
