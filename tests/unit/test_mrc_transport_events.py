"""next_deadline_us: a discrete-event loop that polls a host only when its next_deadline_us says
so gives exactly the frames, at exactly the times, of one that polls every host every µs. Two
hosts behind the real NIC program (p4src/nic/mrc_nic.p4) back to back, as in
test_mrc_transport, but in event time: a plane frame reaches the other NIC a plane-dependent
delay later (the planes reorder), what a NIC hands its host arrives 1 µs later, what a host hands
its NIC is processed at once; seeded loss, trims and a dead EV. Plus the timing records
(Sender.timings) and next_deadline_us on its own."""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest
from test_mrc_nic_program import HOST_PORT, PROGRAM, A, B, Nic, Side
from test_mrc_transport import K, config, flow_label, is_data, payload, trim

from mrc_transport.host import Host
from mrc_transport.nic_host import NicHost
from mrc_transport.sender import Sender
from mrc_transport.wire import compact_ev
from softswitch.compiler import compile_file
from softswitch.ir.checked import CheckedProgram

PLANE_DELAY = {2: 3, 3: 11}   # µs on the wire, by NIC plane port
HOST_DELAY = 1                # NIC -> host
VA = 0x1000
MEMORY = VA + 256 * 1024
Filter = Callable[[bytes, int], bytes | None]   # (plane frame, now) -> what goes on
AnyHost = Host | NicHost
Trace = list[tuple[int, str, bytes]]


class EventLink:
    """Two hosts (Host or NicHost) behind two NICs, with an event queue in virtual µs."""

    def __init__(self, nics: dict[Side, Nic], hosts: dict[Side, AnyHost],
                 wire_filter: Filter | None = None) -> None:
        self.nics, self.hosts, self.filter = nics, hosts, wire_filter
        self.now = 0
        self.trace: Trace = []          # (time, side, frame) of every frame a host hands its NIC
        self.polls = 0
        self._queue: list[tuple[int, int, Any]] = []
        self._order = itertools.count()

    def at(self, time: int, action: Callable[[], None]) -> None:
        """Run `action` (e.g. a write) at `time`, before that time's polls."""
        self._push(time, ("call", action))

    def _push(self, time: int, event: Any) -> None:
        heapq.heappush(self._queue, (time, next(self._order), event))

    def _into_nic(self, side: Side, port: int, frame: bytes) -> None:
        peer = B if side is A else A
        for out in self.nics[side].sw.process_packet(port, frame):
            if out.port == HOST_PORT:
                self._push(self.now + HOST_DELAY, ("host", side, out.data))
            elif (passed := out.data if self.filter is None else self.filter(out.data, self.now)):
                self._push(self.now + PLANE_DELAY[out.port], ("nic", peer, out.port, passed))

    def _deliver(self) -> None:
        while self._queue and self._queue[0][0] == self.now:
            event = heapq.heappop(self._queue)[2]
            if event[0] == "call":
                event[1]()
            elif event[0] == "host":
                self.hosts[event[1]].on_frame(event[2], self.now)
            else:
                self._into_nic(event[1], event[2], event[3])

    def _poll(self, side: Side) -> list[bytes]:
        self.polls += 1
        frames = self.hosts[side].poll(self.now)
        for frame in frames:
            self.trace.append((self.now, side.name, frame))
            self._into_nic(side, HOST_PORT, frame)
        return frames

    def run_polling(self, end: int) -> None:
        """Every host polled every µs up to `end`."""
        while self.now <= end:
            self._deliver()
            for side in self.hosts:
                self._poll(side)
            self.now += 1

    def run_events(self, end: int) -> None:
        """Hosts polled only when their next_deadline_us is now; time jumps to the next event
        or deadline."""
        while self.now <= end:
            self._deliver()
            for side, host in self.hosts.items():
                if host.next_deadline_us(self.now) == self.now:
                    assert self._poll(side), "a deadline with nothing to send"
                    due = host.next_deadline_us(self.now)
                    assert due is None or due > self.now, "still due after polling"
            times = [t for t in (h.next_deadline_us(self.now + 1) for h in self.hosts.values())
                     if t is not None]
            if self._queue:
                times.append(self._queue[0][0])
            if not times:
                break
            self.now = min(times)

    def quiet(self) -> bool:
        return not self._queue and all(h.next_deadline_us(self.now) is None
                                       for h in self.hosts.values())


@pytest.fixture(scope="module")
def program() -> CheckedProgram:
    return compile_file(PROGRAM)


def lossy(seed: int, dead_until: int = 0, blackout: tuple[int, int] = (0, 0)) -> Filter:
    """Seeded: 2% of plane frames lost, 3% of data packets trimmed, EV 3 dead until
    `dead_until` µs, every frame lost in `blackout` (start, end) µs."""
    rng = random.Random(seed)
    dead = compact_ev(1, 3)

    def apply(frame: bytes, now: int) -> bytes | None:
        if now < dead_until and flow_label(frame) == dead:
            return None
        if blackout[0] <= now < blackout[1]:
            return None
        roll = rng.random()
        if roll < 0.02:
            return None
        if roll < 0.05 and is_data(frame):
            return trim(frame)
        return frame

    return apply


def single_hosts(program: CheckedProgram, **cfg: Any) -> tuple[dict[Side, Nic], dict[Side, Host]]:
    nics = {A: Nic(program, A, B, probe_successes=K), B: Nic(program, B, A, probe_successes=K)}
    hosts = {A: Host(config(A, B, **cfg), MEMORY), B: Host(config(B, A, **cfg), MEMORY)}
    return nics, hosts


def schedule_writes(link: EventLink, senders: dict[Side, list[Sender]]) -> None:
    """Writes both ways: some at 0, some later (while the first are in flight)."""
    for n, side_senders in enumerate(senders.values()):
        for m, sender in enumerate(side_senders):
            seed = 10 * n + m

            def post(sender: Sender = sender, seed: int = seed, link: EventLink = link) -> None:
                sender.write(payload(160 * 1024, seed), VA, now_us=link.now)
                sender.write(payload(3000, seed + 1), VA + 192 * 1024, immediate=seed,
                             now_us=link.now)

            link.at(0, post)
            link.at(400 + 37 * seed, lambda s=sender, d=seed: s.write(
                payload(20 * 1024, d + 2), VA + 224 * 1024, now_us=link.now))


def both_ways(make: Callable[[], EventLink], limit: int = 200_000) -> tuple[EventLink, EventLink]:
    """The same setup run event-driven (to quiet) and polled every µs to the same end."""
    events = make()
    events.run_events(limit)
    assert events.quiet(), "did not settle"
    polled = make()
    polled.run_polling(events.now)
    assert polled.quiet()
    return events, polled


def host_senders(host: AnyHost) -> list[Sender]:
    return [host.sender] if isinstance(host, Host) else [c.sender for c in host.connections]


@pytest.mark.parametrize("window", [64, 128])   # 128: past the receiver's bitmap (NACK OOR)
def test_deadlines_give_the_frames_of_polling_every_microsecond(
        program: CheckedProgram, window: int) -> None:
    def make() -> EventLink:
        nics, hosts = single_hosts(program, window=window)
        # the blackout: the later writes' packets sent in it are lost with nothing after them
        # to SACK, and so is the tail's resend (long enough for that at either window,
        # whatever the paths chosen): the retransmission timer's turn
        link = EventLink(nics, hosts, lossy(7, dead_until=1500, blackout=(405, 1500)))
        schedule_writes(link, {side: [host.sender] for side, host in hosts.items()})
        return link

    events, polled = both_ways(make)
    assert events.trace == polled.trace
    assert events.polls * 20 < polled.polls   # what it is for
    for side in (A, B):
        ev, po = events.hosts[side], polled.hosts[side]
        assert ev.sender.counters == po.sender.counters and ev.sender.done
        assert ev.receiver.memory == po.receiver.memory
        assert ev.sender.timings == po.sender.timings and len(ev.sender.timings) == 3
    counters = events.hosts[A].sender.counters
    # Every kind of timer and repair happened (the seed chosen for that): late packets
    # reported, a loss the NIC's answer to a query found, and (at window 64) one its note found
    # (overtaken on its own EV).
    assert counters["timeout"] and counters["sack_hole"] and counters["nack_trimmed"]
    assert counters["path_out"] and counters["queries"] and counters["early_reports"]
    assert counters["overtaken"] or window > 64
    # Every loss without a trim notice reported to the NIC once: when it was late, or when
    # found lost (a query's answer is no report: the EV is out already).
    unnoticed = counters["timeout"] + counters["sack_hole"] + counters["overtaken"] \
        - counters["unreported"]
    assert counters["reports"] <= unnoticed <= counters["reports"] + counters["early_reports"]
    assert counters["probes"] and counters["probe_timeouts"] and counters["probe_answers"]
    assert bool(counters["nack_oor"]) == (window > 64)


def test_deadlines_with_several_connections_per_host(program: CheckedProgram) -> None:
    import test_mrc_host_multi as multi  # the two-connection NIC setup

    def make() -> EventLink:
        nics, hosts = multi.two_connection_hosts(program, MEMORY)
        link = EventLink(nics, hosts, lossy(12, dead_until=1000))
        schedule_writes(link, {side: host_senders(host) for side, host in hosts.items()})
        return link

    events, polled = both_ways(make)
    assert events.trace == polled.trace
    for side in (A, B):
        for ev, po in zip(host_senders(events.hosts[side]), host_senders(polled.hosts[side])):
            assert ev.counters == po.counters and ev.timings == po.timings and ev.done
            assert ev.counters["retransmitted"] > 0
    assert events.hosts[A].unexpected == events.hosts[B].unexpected == 0


# -- timing records and deadlines on their own ---------------------------------------------------


def test_timings_record_each_write_posted_first_sent_and_completed(
        program: CheckedProgram) -> None:
    nics, hosts = single_hosts(program)
    link = EventLink(nics, hosts)
    sender = hosts[A].sender
    link.at(5, lambda: sender.write(payload(10 * 1024), VA, now_us=link.now))
    link.at(5, lambda: sender.write(b"x" * 100, VA + 0x8000, immediate=9))   # default: last time
    link.run_events(10_000)
    assert sender.completed() == [0, 1]
    first, second = sender.timings
    assert (first.msn, first.size, first.packets, first.posted_us) == (0, 10 * 1024, 10, 5)
    assert (second.msn, second.size, second.packets) == (1, 100, 1)
    assert first.first_sent_us == second.first_sent_us == 5
    # A round trip at least: the slower plane's wire both ways and the host hop.
    assert first.completed_us >= 5 + 2 * PLANE_DELAY[3] + HOST_DELAY
    assert second.completed_us >= first.completed_us - PLANE_DELAY[3]
    assert sender.counters["sent"] == 11 and sender.counters["retransmitted"] == 0


def test_next_deadline_follows_the_timers() -> None:
    sender = Sender(config(A, B, window=2, rto_us=500, reorder_us=150, retry_linear_cnt=0))
    assert sender.next_deadline_us(0) is None and sender.next_deadline_us() is None
    sender.on_frame(b"", 3)                       # the sender last heard of time 3
    sender.write(b"w" * 3000, 0)                  # 3 packets, a window of 2
    assert sender.next_deadline_us(7) == 7        # something to send now
    assert sender.next_deadline_us() == 3         # unclamped: due since the latest time seen
    assert len(sender.poll(10)) == 2
    assert sender.next_deadline_us(10) == 510     # the RTO of both (the window is full)
    assert sender.poll(509) == [] and sender.next_deadline_us(509) == 510
    assert sender.next_deadline_us(600) == 600    # overdue: now
    assert sender.next_deadline_us() == 510
    assert sender.poll_if_due(509) == [] and sender.next_deadline_us() == 510
    frames = sender.poll(510)                     # report + retransmission, for each
    assert len(frames) == 4 and sender.counters["timeout"] == 2
    assert sender.next_deadline_us(510) == 1510   # backed off: doubled
