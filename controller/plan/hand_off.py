"""Where a passed-over EV's turn goes: the `hand_off` of a connection's `set_connection`.

A NIC passes over an EV that is not GOOD (a SKIP one after an ECN echo or an in-fabric trim, an
ASSUMED_BAD one, one on the connection's bad path) and gives its turn to the slot `hand_off`
slots on, in the same plane (a multiple of `planes`). If every connection handed off by one
step, every sender that congestion moves off T1 k would move onto T1 k + 1 together (the
GENERATED profile lists a plane's T1s in one order for every NIC) and load it twice over: the
herd the sources' pseudo-random EV choice exists to avoid (mrc-srv6.md §3.3). So the controller
gives each connection a step of its own among those that always land on another T1, and
whose further tries (each one more step on) meet the plane's other T1s, as the next slot's do.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from controller.plan.entries import PlannedEntry

EV_TRIES = 4  # the slots v1model's NIC looks at for one packet (p4src/nic/v1model/host_tx.p4)


def hand_off_steps(paths: Sequence[PlannedEntry], ev_count: int, planes: int,
                   tries: int = EV_TRIES) -> tuple[int, ...]:
    """The slot steps (multiples of `planes`, smallest first) with which every active slot of
    the profile `paths` (its `ev_path` entries) hands its turn to another T1 of its plane, and
    the tries after it (v1model's NIC tries `tries` slots, each `hand_off` on from the one
    before) to as many T1s as the plane has, up to `tries`; one step per distinct landing. A
    plane whose active EVs all share one T1 has no other to land on and does not count.
    `(planes,)` when no step does (the plane's next slot)."""
    t1 = {dict(e.match)["ev"]: dict(e.params).get("t1_usid") for e in paths}
    counts = {p: len({t1.get(slot) for slot in range(p, ev_count, planes)})
              for p in range(planes)}
    slots = [slot for slot in range(ev_count) if counts[slot % planes] > 1]
    if not slots:
        return (planes,)

    def spreads(slot: int, step: int) -> bool:
        met = [t1.get((slot + k * step) % ev_count) for k in range(tries)]
        return met[1] != met[0] and len(set(met)) == min(tries, counts[slot % planes])

    steps: list[int] = []
    landings: set[tuple[object, ...]] = set()
    for step in range(planes, ev_count, planes):
        landing = tuple(t1.get((slot + step) % ev_count) for slot in slots)
        if landing not in landings and all(spreads(slot, step) for slot in slots):
            landings.add(landing)
            steps.append(step)
    return tuple(steps) or (planes,)


def hand_off(steps: Sequence[int], sender: str, peer: str, peer_qp: int) -> int:
    """One of `steps` for the connection from `sender` to (`peer`, `peer_qp`): a hash, so the
    senders towards one NIC spread over the steps and a plan made twice is the same."""
    return steps[zlib.crc32(f"{sender}>{peer}:{peer_qp}".encode()) % len(steps)]
