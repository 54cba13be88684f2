"""Link probes: is a T0-T1 link the controller took out of the NICs' paths healthy again?

Once every NIC's EVs avoid a failed link, no NIC traffic (and so no NIC probe) crosses it any
more, so the controller probes the link's own path itself, through the switches' packet I/O:

- a PacketOut to the T0, out of its port to the T1, of an IPv6 packet addressed to the uSID
  carrier [T1, T0] with hop limit 2 (next header 253, RFC 3692's experimental value, and a
  payload naming the link and a sequence number);
- the T1, if it is up and programmed, shifts its uSID and routes the packet back to the T0 over
  the same link (hop limit now 1);
- the T0 drops it for hop limit, and punts it (the plan's `hop_limit_policy` is
  `punt_hop_limit`): the controller gets it as a PacketIn on the T0's stream.

So one probe proves both directions of the cable and the T1's forwarding. Probes carry the
control DSCP (`qos.dscp_control`), which the plan maps to the high-priority queue: the T1 sends
them back ahead of queued data (a PacketOut leaves the T0 at the priority the pipeline gives it,
0 on this program: on the way up a probe may wait behind a queue, which is why `ProbeLoop` waits
several RTTs before it counts one lost).

Two users. `LinkProber` (recovery): a link is
healthy again after `successes` probes in a row come back (one per `interval_s`; a probe not
back by the time the next is due counts as lost and starts the count over). A T1 declared down
is probed over each of its links; the first of its links proven healthy brings the switch back,
each link counting on its own. Only cables that exist are probed: a link named that has no
cable (a T0 and a T1 an irregular fabric leaves apart) is passed over, never proven healthy.
`ProbeLoop` (confirmation, controller/repair/confirm.py): one probe per link per interval, each
answered (whenever it comes back within `timeout_s`: late is still an answer) or lost (not back
within it); the results go to the confirmer.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from controller.plan.plan import FabricPlan
from controller.plan.usid import carrier, format_address, format_mac, switch_mac
from controller.repair.correlate import FabricLink
from p4rt import PacketIn

PROBE_NEXT_HEADER = 253
MAGIC = b"MRC-LINK-PROBE\x00\x01"
_SEQ = struct.Struct("!I")
_PAYLOAD_LENGTH = struct.Struct("!H")
_ETHERTYPE_IPV6 = b"\x86\xdd"
_PAYLOAD_AT = 14 + 40   # Ethernet, IPv6 header


def probe_frame(plan: FabricPlan, link: FabricLink, seq: int) -> bytes:
    """The frame the T0 of `link` sends to its T1 (see the module docstring)."""
    head, tail = _frame_parts(plan, link)
    return head + _SEQ.pack(seq) + tail


def _frame_parts(plan: FabricPlan, link: FabricLink) -> tuple[bytes, bytes]:
    """`link`'s probe frame before and after its sequence number (all else is fixed)."""
    plane, t0, t1 = link
    t0_usid, t1_usid = plan.usid(t0), plan.usid(t1)
    tail = f"{plane} {t0} {t1}".encode()
    control = plan.topology.qos.dscp_control << 2   # traffic class: DSCP, ECN 0
    packet = (Ether(dst=format_mac(switch_mac(t1_usid)), src=format_mac(switch_mac(t0_usid)))
              / IPv6(src=format_address(carrier(plan.block, [t0_usid])),
                     dst=format_address(carrier(plan.block, [t1_usid, t0_usid])),
                     hlim=2, nh=PROBE_NEXT_HEADER, tc=control)
              / (MAGIC + _SEQ.pack(0) + tail))
    frame = bytes(packet)
    return frame[:_PAYLOAD_AT + len(MAGIC)], tail


@dataclass
class ProbeFrames:
    """Probe frames by link, built once each (scapy takes ~0.1 ms a frame; an idle sweep sends
    one per cable per interval)."""

    plan: FabricPlan
    _parts: dict[FabricLink, tuple[bytes, bytes]] = field(default_factory=dict)

    def frame(self, link: FabricLink, seq: int) -> bytes:
        parts = self._parts.get(link)
        if parts is None:
            parts = self._parts[link] = _frame_parts(self.plan, link)
        return parts[0] + _SEQ.pack(seq) + parts[1]


def parse_probe(frame: bytes) -> tuple[FabricLink, int] | None:
    """(link, sequence number) of a returned probe; None for any other packet. Read off the
    bytes (Ethernet, then the IPv6 header whose next header is ours): every prober looks at
    every PacketIn, and an idle sweep brings back one per cable per interval."""
    if len(frame) < _PAYLOAD_AT + len(MAGIC) + _SEQ.size or frame[12:14] != _ETHERTYPE_IPV6 \
            or frame[14] >> 4 != 6 or frame[20] != PROBE_NEXT_HEADER:
        return None
    (length,) = _PAYLOAD_LENGTH.unpack_from(frame, 18)
    payload = frame[_PAYLOAD_AT:_PAYLOAD_AT + length]
    if not payload.startswith(MAGIC) or len(payload) < len(MAGIC) + _SEQ.size:
        return None
    (seq,) = _SEQ.unpack_from(payload, len(MAGIC))
    try:
        plane, t0, t1 = payload[len(MAGIC) + _SEQ.size:].decode().split(" ")
        return (int(plane), t0, t1), seq
    except ValueError:   # UnicodeDecodeError too
        return None


@dataclass
class _Probing:
    streak: int = 0
    outstanding: int | None = None   # sequence number sent and not back yet
    next_s: float = 0.0


@dataclass
class LinkProber:
    """Probes the links it is given each round; reports the ones proven healthy."""

    plan: FabricPlan
    interval_s: float = 0.1
    successes: int = 3
    _links: dict[FabricLink, _Probing] = field(default_factory=dict)
    _seq: int = 0
    sent: int = 0
    returned: int = 0

    def __post_init__(self) -> None:
        self.frames = ProbeFrames(self.plan)

    def round(self, now_s: float, links: Iterable[FabricLink],
              send: Callable[[str, int, bytes], bool],
              received: Iterable[PacketIn]) -> set[FabricLink]:
        """Take the returned probes in `received`, send the probes due now through
        `send(T0 name, port, frame)` (False: the T0 cannot send now), and return the links that
        have just reached `successes` probes in a row."""
        ports = {link: t0_port(self.plan, link) for link in set(links)}
        wanted = {link for link, port in ports.items() if port is not None}
        for link in list(self._links):
            if link not in wanted:
                del self._links[link]
        healthy: set[FabricLink] = set()
        for packet in received:
            parsed = parse_probe(packet.payload)
            if parsed is None:
                continue
            link, seq = parsed
            state = self._links.get(link)
            if state is None or state.outstanding != seq:
                continue   # late, or for a link no longer probed
            self.returned += 1
            state.outstanding = None
            state.streak += 1
            if state.streak >= self.successes:
                healthy.add(link)
                del self._links[link]
        for link in sorted(wanted - healthy):
            state = self._links.setdefault(link, _Probing())
            if now_s < state.next_s:
                continue
            if state.outstanding is not None:   # not back within an interval: lost
                state.streak = 0
            self._seq = self._seq + 1 if self._seq < IDLE_SEQ_BASE - 1 else 1
            port = ports[link]
            assert port is not None   # `wanted` holds cabled links only
            if send(link[1], port, self.frames.frame(link, self._seq)):
                state.outstanding = self._seq
                self.sent += 1
            state.next_s = now_s + self.interval_s
        return healthy


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One confirmation probe's fate: answered (`rtt_s` set) or lost (not back in time)."""

    link: FabricLink
    seq: int
    sent_s: float
    answered: bool
    rtt_s: float | None = None


# Each prober numbers its probes in a range of its own (all read the same PacketIns):
# LinkProber below IDLE_SEQ_BASE, idle sweeps (idle_probes.py) from it, confirmation from
# CONFIRM_SEQ_BASE.
IDLE_SEQ_BASE = 1 << 30
CONFIRM_SEQ_BASE = 1 << 31


@dataclass
class ProbeLoop:
    """Confirmation probes: `take` the returned ones (and those timed out), `send` the due ones.
    Several may be outstanding per link: one goes every `interval_s`, each waits `timeout_s`."""

    plan: FabricPlan
    interval_s: float = 20e-6
    timeout_s: float = 100e-6
    seq_base: int = CONFIRM_SEQ_BASE   # numbers from here up to the next range (or 2**32)
    offsets: dict[FabricLink, float] = field(default_factory=dict)   # first probe's delay
    # A link whose last `patience` probes were all lost is probed every `slow_interval_s`
    # instead (0: never slowed): it is down as far as probes go, and one still probed (a
    # suspect no alternative around can confirm, say every cable of a plane that lost power)
    # would otherwise cost a probe, and an event, every interval for as long as it lasts.
    patience: int = 0
    slow_interval_s: float = 0.0
    _out: dict[int, tuple[FabricLink, float]] = field(default_factory=dict)
    _next: dict[FabricLink, float] = field(default_factory=dict)
    sent: int = 0
    answered: int = 0
    lost: int = 0

    def __post_init__(self) -> None:
        self.frames = ProbeFrames(self.plan)
        self._seq = self.seq_base
        self._lost_run: Counter[FabricLink] = Counter()
        self._seq_end = min((b for b in (IDLE_SEQ_BASE, CONFIRM_SEQ_BASE, 1 << 32)
                             if b > self.seq_base), default=1 << 32)

    def take(self, now_s: float, received: Iterable[PacketIn]) -> list[ProbeResult]:
        """The probes back in `received`, then those outstanding past `timeout_s` (lost)."""
        results: list[ProbeResult] = []
        for packet in received:
            parsed = parse_probe(packet.payload)
            if parsed is None or parsed[1] not in self._out:
                continue   # another prober's, or already counted lost
            link, sent_s = self._out.pop(parsed[1])
            if link != parsed[0]:
                continue
            self.answered += 1
            if self._lost_run.pop(link, None) and link in self._next:   # back to the fast pace
                self._next[link] = min(self._next[link], now_s + self.interval_s)
            results.append(ProbeResult(link, parsed[1], sent_s, True, now_s - sent_s))
        for seq, (link, sent_s) in sorted(self._out.items()):
            if now_s - sent_s > self.timeout_s:
                del self._out[seq]
                self.lost += 1
                self._lost_run[link] += 1
                results.append(ProbeResult(link, seq, sent_s, False))
        return results

    def outstanding(self) -> Counter[FabricLink]:
        """The probes sent and not back (nor counted lost) yet, by link."""
        return Counter(link for link, _ in self._out.values())

    def send(self, now_s: float, links: Iterable[FabricLink],
             send: Callable[[str, int, bytes], bool]) -> list[tuple[FabricLink, int]]:
        """Send a probe over each of `links` whose interval is up; the (link, seq) sent."""
        wanted = set(links)
        for link in list(self._next):
            if link not in wanted:
                del self._next[link]
                self._lost_run.pop(link, None)
        sent: list[tuple[FabricLink, int]] = []
        for link in sorted(wanted):
            due = self._next.get(link)
            if due is None:   # newly wanted: its first probe after its offset
                due = self._next[link] = now_s + self.offsets.get(link, 0.0)
            if now_s < due:
                continue
            port = t0_port(self.plan, link)
            if port is None:
                continue
            self._seq = self._seq + 1 if self._seq < self._seq_end - 1 else self.seq_base
            if send(link[1], port, self.frames.frame(link, self._seq)):
                self._out[self._seq] = (link, now_s)
                self.sent += 1
                sent.append((link, self._seq))
            slow = self.patience and self._lost_run[link] >= self.patience
            self._next[link] = now_s + (max(self.slow_interval_s, self.interval_s) if slow
                                        else self.interval_s)
        return sent


def t0_port(plan: FabricPlan, link: FabricLink) -> int | None:
    """The T0's port on the cable to the T1; None when no cable joins them (a fabric wired
    without it: nothing to probe, and nothing down)."""
    _, t0, t1 = link
    topo = plan.topology
    if not topo.is_switch(t1):
        return None
    return next((port for _, peer, port in topo.neighbors(t1) if peer == t0), None)
