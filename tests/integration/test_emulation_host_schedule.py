"""The emulator visits a host only when something happened to it: the fabric handed it frames,
a message was posted to it, or the deadline it reported is due. Idle hosts cost nothing per
instant, and the next transport timer is the one a scan of every host would find."""

from __future__ import annotations

from collections import Counter
from typing import Any

from emulated import scenario

from controller.devices.session import Program
from emulation.command import NIC_PROGRAM
from emulation.modes import mode
from emulation.network import Network
from emulation.run import RunState
from emulation.workloads import connections, messages
from mrc_transport.nic_host import NicHost

CUT = "p0-t0-0:2"   # p0-t0-0 <-> p0-t1-0: losses on it make the sender's timers fire


class CountedHost:
    """A NicHost as the loop sees it, counting its visits (the transport's classes may be
    compiled: their methods cannot be replaced on an instance)."""

    def __init__(self, host: NicHost, name: str, counts: dict[str, Counter[str]]) -> None:
        self.host, self.name, self.counts = host, name, counts

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.host, attr)

    def poll(self, now_us: int) -> list[bytes]:
        self.counts["polls"][self.name] += 1
        # a visit a sender's deadline justified: one of them due now
        if any(c.sender.next_deadline_us(now_us) == now_us for c in self.host.connections):
            self.counts["due"][self.name] += 1
        return self.host.poll(now_us)

    def next_deadline_us(self, now_us: int | None = None) -> int | None:
        self.counts["asked"][self.name] += 1
        return self.host.next_deadline_us(now_us)

    def on_frame(self, frame: bytes, now_us: int) -> None:
        self.counts["handed"][self.name] += 1
        self.host.on_frame(frame, now_us)


def test_idle_hosts_are_not_polled_and_the_next_timer_is_the_scans(
        switch_program: Program) -> None:
    # nic1 -> nic3 is one packet, done at once; nic0 -> nic2 goes on for hundreds of instants
    # through a lossy cable.
    s = scenario("[{kind: flow, src: nic0, dst: nic2, bytes: 131072}, "
                 "{kind: flow, src: nic1, dst: nic3, bytes: 1000}]",
                 f"{{at_us: 0, kind: loss, link: '{CUT}', percent: 30}}")
    chosen = mode("spray", s.profile)
    schedule = messages(s.workloads, s.seed)
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("polls", "asked", "handed", "due")}
    polls, asked, handed, due = (counts[k] for k in ("polls", "asked", "handed", "due"))
    timers: list[tuple[int | None, int | None]] = []
    with Network.of(s, switch_program, str(NIC_PROGRAM), chosen,
                    connections(schedule)) as network:
        state = RunState(s, chosen, network, schedule)
        state._host_list = [(name, CountedHost(host, name, counts), wire, ends)  # type: ignore[misc]
                            for name, host, wire, ends in state._host_list]
        next_timer = state._next_timer_ns

        def both() -> int | None:
            # What the loop polling every host found: the earliest of every host's deadline.
            now_us, now_ns = state.clock(), state.clock.now_ns
            times = [t for host in state.hosts.values()
                     if (t := NicHost.next_deadline_us(host, now_us)) is not None]
            scan = max(min(times) * 1000, now_ns + 1) if times else None
            timers.append((next_timer(), scan))
            return timers[-1][0]

        state._next_timer_ns = both   # type: ignore[method-assign]
        result = state.run()
    summary = result.summary()
    assert result.finished and summary["completed"] == summary["messages"] == 2, summary
    assert sum(c.sender.counters["retransmitted"]
               for c in state.hosts["nic0"].connections) > 0   # timers did fire
    assert len(timers) > 50 and all(new == scan for new, scan in timers), \
        [t for t in timers if t[0] != t[1]][:5]
    # A visit per thing that happened to a host at most: the first instant, a pass in which
    # frames reached it, its message posted, a deadline due. The loop that polled every host
    # at every pass visited nic1 and nic3 at every instant of nic0's transfer too.
    for name in ("nic0", "nic1", "nic2", "nic3"):
        assert polls[name] <= 2 + handed[name] + due[name], (name, polls, handed, due)
        assert asked[name] == polls[name]   # its deadline once per visit, never in a scan
    assert polls["nic1"] + polls["nic3"] < 20 < polls["nic0"]
