"""The sending half of one MRC connection (what a NIC's firmware does for a QP): writes cut into
packets, the window, retransmission of what NACKs, SACK holes and timers name, loss reports and
EV probes. Time is injected (`now_us`): no sleeps, no threads.

Internally PSNs are counted from the connection's initial PSN without wrapping (`seq`); the 24-bit
wire PSNs are mapped onto that count relative to the oldest unacknowledged one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Final, Literal, NamedTuple

from scapy.packet import Packet

from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import (
    PETH_BYTES,
    FrameBuilder,
    NackFrame,
    OtherFrame,
    Parsed,
    SackFrame,
    parse,
    set_retransmit,
)
from mrc_transport.flight import Flight
from mrc_transport.nscc import Nscc
from mrc_transport.rto import RtoEstimator
from mrc_transport.transmitter import Transmitter
from mrc_transport.wire import (
    BTH,
    PETH,
    PSN_MOD,
    NackReason,
    Opcode,
    SackM,
    bind_roce_port,
    dissect,
    nack_fields,
    psn_add,
    psn_diff,
    sack_fields,
    signed16,
    split_ev,
)

OP_EV_REPORT: Final = 0xDF          # host <-> own NIC only (p4src/include/mrc_headers.p4)
REPORT_PROBE_FLAG: Final = 0x8000   # PETH.probe_id of a report: "the probe of this EV timed out"
REPORT_QUERY_FLAG: Final = 0x4000   # ... of a query: "did this PSN go on an EV out of service?"
ECHO_TOOK_OUT: Final = 0x2000       # ... of a report's echo: the report took the EV out
ANSWER_EV_GOOD: Final = 0x2000      # ... of a query's answer: the EV is GOOD (on the bad path)
FEEDBACK_OPCODES: Final = frozenset({Opcode.SACK, Opcode.NACK, OP_EV_REPORT})
# The receiver tracks this many PSNs beyond its cumulative point (the SACK bitmap): a PSN further
# ahead is refused (NACK PSN_OOR_WINDOW) and resending it sooner would only be refused again.
RECEIVER_BITMAP: Final = 64
# An EV whose packets came back ECN-marked this recently queues: a packet late on it is behind
# that queue, no sign of a dead path (the NIC's NIC_CE_RECENT_US, for its bad path).
CE_RECENT_US: Final = 100

_NACK_CAUSE: Final[dict[int, str]] = {
    NackReason.TRIMMED: "nack_trimmed",
    NackReason.TRIMMED_LASTHOP: "nack_lasthop",
    NackReason.PSN_OOR_WINDOW: "nack_oor",
}
COUNTERS: Final = ("sent", "retransmitted", *_NACK_CAUSE.values(), "sack_hole", "timeout",
                   "reports", "unreported", "path_out", "path_out_reported", "queries", "overtaken",
                   "gave_up", "probes", "probe_answers", "probe_timeouts", "echoes", "ignored",
                   "spurious", "ghost", "early_reports")


class TransportError(Exception):
    """The connection cannot go on."""


class RetryLimitExceeded(TransportError):
    """A PSN is still unacknowledged after `max_retries` retransmissions that no NACK caused
    (a safety net: NoAnswer normally ends a dead connection first)."""

    def __init__(self, psn: int, retries: int) -> None:
        super().__init__(f"PSN {psn:#08x} unacknowledged after {retries} retransmissions")
        self.psn = psn
        self.retries = retries


GIVE_UP_ROUND_TRIPS: Final = 4   # the measured round trips a give-up waits at least


class NoAnswer(TransportError):
    """Nothing at all answered the connection (no SACK, NACK or probe answer, on any EV) for
    `give_up_us` (the configured one, or 4 measured round trips if longer) while it had
    packets in flight: it gave up at `at_us`; `last_answer_us`: the
    latest answer (or, if none came since, when the packets in flight started waiting);
    `retries`: the most retransmissions of one unacknowledged PSN."""

    def __init__(self, at_us: int, last_answer_us: int, give_up_us: int, retries: int) -> None:
        super().__init__(f"nothing answered for {at_us - last_answer_us} µs (give_up_us "
                         f"{give_up_us}; last answer at {last_answer_us} µs, {retries} "
                         "retransmissions of one PSN)")
        self.at_us = at_us
        self.last_answer_us = last_answer_us
        self.give_up_us = give_up_us
        self.retries = retries


class MessageTiming(NamedTuple):
    """One write, once every PSN of it is acknowledged (times in µs of the injected clock):
    posted (`write`), first packet handed to the NIC, completed (the SACK that acknowledged
    its last unacknowledged PSN arrived)."""

    msn: int
    size: int             # bytes
    packets: int
    posted_us: int
    first_sent_us: int
    completed_us: int


@dataclass(slots=True)
class _Message:
    msn: int
    remaining: int               # packets not acknowledged yet
    data: bytes
    va: int
    rq_msn: int
    immediate: int | None
    count: int                   # packets
    posted_us: int
    first_sent_us: int | None = None


@dataclass(slots=True)
class _Packet:
    """One PSN: what it carries and its latest transmission (the frame is built when it first
    goes, and dropped with the packet once acknowledged)."""

    seq: int
    psn: int
    message: _Message
    index: int                   # in its message
    frame: bytes | None = None
    sent_at: int = 0
    order: int = 0               # transmissions before the latest one of this PSN
    retries: int = 0             # retransmissions, whatever caused them
    failed: int = 0              # of them, the ones no NACK caused (max_retries counts these)
    timeouts: int = 0            # timeouts in a row, since the last NACK of it (the backoff)
    trimmed: bool = False        # a trim NACK named it: its losses are congestion, not the path
    cut: float = 0.0             # NSCC window bytes its inferred losses took (undone if spurious)
    queried: int = -1            # the transmission (order) the NIC was last asked about
    suspect_at: int = -1         # its path is suspect: a loss unless answered by then (-1: not)
    query_round: int = -1        # the query (Sender._query_round) it was last asked about in
    query_lossy: bool = False    # ... and a loss (not lateness alone) had taken an EV out then
    sign: bool = False           # a suspect whose suspect_at passing says its path is dead
    out_ev: int = -1             # a suspect's EV (the NIC's answer named it)
    early: bool = False          # reported late (not lost yet: _early_reports), not resent since
    suspected: bool = False      # resent because its EV went out of service, not found lost
    report_due: bool = False     # ... and that EV is still GOOD: the NIC is told (_report_loss)

    @property
    def timed(self) -> bool:
        """An answer to this PSN times its latest transmission: it is the only one that can
        have arrived (none went before it, or a NACK refused each that did — a trimmed packet
        delivers nothing, so its SACK is the resend's). NSCC's sample (UEC §3.6.12.5 takes a
        resend's RTT when the ACK says which transmission it answers)."""
        return self.failed == 0


@dataclass
class _Probe:
    """Probing of one EV the NIC pinned a loss on."""

    due: int                      # when the next request may go
    answers: int = 0              # answered in a row
    sent_at: int | None = None    # the request awaiting its answer


# Losses (resent whatever the window, reported unless path_out): found by the timer, a SACK
# hole, the NIC's answer (its EV out of service) or its note (overtaken on its own EV). The last
# two wait for nothing: poll resends them at once.
_LOST: Final = frozenset(("timeout", "sack_hole", "path_out", "overtaken"))
_AT_ONCE: Final = frozenset(("path_out", "overtaken"))


def _by_seq(found: tuple[_Packet, str]) -> int:
    return found[0].seq


def _write_opcode(index: int, count: int, immediate: bool) -> Opcode:
    if count == 1:
        return Opcode.WRITE_ONLY_IMM if immediate else Opcode.WRITE_ONLY
    if index == 0:
        return Opcode.WRITE_FIRST
    if index < count - 1:
        return Opcode.WRITE_MIDDLE
    return Opcode.WRITE_LAST_IMM if immediate else Opcode.WRITE_LAST


_HALF: Final = PSN_MOD // 2
_NO_RTT: Final = 1 << 62   # no RTT sample yet


class _Due(Enum):
    STALE = "stale"   # the cached deadline must be computed again
    NOW = "now"       # the cached deadline: something to send at once


_STALE: Final = _Due.STALE   # module constants: an Enum member's look-up is slow
_NOW: Final = _Due.NOW


class Sender:
    """Writes to the peer over one connection; `poll` says what to hand the NIC, `on_frame`
    takes the SACKs, NACKs and report echoes the NIC hands back; `next_deadline_us` says when
    `poll` has something to do next without a frame arriving (for a discrete-event loop).

    Counters: `sent` first transmissions, `retransmitted` the others, by cause (`nack_trimmed`,
    `nack_lasthop`, `nack_oor`, `sack_hole`, `timeout`, `path_out`, `overtaken`); `reports`
    loss reports, `early_reports` reports of packets late but not lost yet (one report per
    transmission either way), `queries`, `path_out_reported`, `probes`,
    `probe_answers`, `probe_timeouts`, `echoes` (reports the NIC sent back), `ignored` frames,
    `ghost` SACKs that acknowledged a PSN never sent (dropped whole, as InfiniBand drops a ghost
    ACK and TCP an ACK beyond SND.NXT: taking one would complete writes the peer never got).
    `timings`: a MessageTiming per completed write, in MSN order.
    """

    def __init__(self, config: ConnectionConfig,
                 transmitter: Transmitter | None = None) -> None:
        bind_roce_port(config.udp_port)
        self.config = config
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.timings: list[MessageTiming] = []
        self._frames = FrameBuilder(src=config.local_addr, dst=config.peer_addr,
                                    dest_qp=config.peer_qp, r_key=config.r_key,
                                    udp_dport=config.udp_port)
        self._now = 0                              # the latest time poll or on_frame was given
        self._due: int | _Due | None = _STALE   # next_deadline_us before max(now): cached
        self._next_seq = 0
        self._next_msn = 0
        self._imm_count = 0
        self._unsent: deque[_Packet] = deque()
        self._flight: Flight[_Packet] = Flight()   # sent, unacknowledged
        self._acked_order = -1                     # the latest transmission known to arrive
        self._order = 0
        self._tail_order = -1                      # the latest resend the tail rule made
        self._messages: deque[_Message] = deque()  # not completed yet, in MSN order
        self._completed: list[int] = []
        self._probes: dict[int, _Probe] = {}
        self.rto = RtoEstimator(config.rto_us, config.rto_floor_us, config.rto_ceiling_us,
                                config.retry_linear_cnt)
        # The latest answer (SACK, NACK, probe answer), or when the packets in flight started
        # waiting if later: NoAnswer once give_up_us passed since with packets in flight.
        self._answered_at = 0
        self._timed_out = 0   # the most timeouts in a row of a packet resent in this poll
        # A report took an EV out of service: ask the NIC which packets in flight went on it.
        self._query_due = False
        # The round trip of the latest transmission known to arrive (RFC 8985's RACK.rtt): a
        # hole is a loss once reorder_us later than that round trip would have answered it.
        self._acked_rtt = 0
        self._min_rtt = _NO_RTT       # the shortest RTT sample (RFC 8985's RACK.min_RTT)
        self._reorder_steps = 0      # spurious resends seen: the allowance grows (_reorder_us)
        # Packets whose latest transmission went on an EV out of service or on the bad path
        # (the NIC's answers to a query): lost unless answered by their suspect_at.
        self._suspects: dict[int, _Packet] = {}
        self._query_round = 0        # queries sent (each asks about every packet in flight)
        # Per plane, the round trip of the latest packet answered that went once on it (the
        # SACK names its EV, so its plane): the slowest plane's is the longest one to expect.
        self._plane_rtt: dict[int, int] = {}
        # Per plane: when its latest answer (with a round trip) came, and that transmission's
        # order: a plane silent past its round trip while it owes answers is slower now.
        self._plane_heard: dict[int, tuple[int, int]] = {}
        self._ce_at: dict[int, int] = {}   # EV -> the latest SACK with its ECN echo (SKIP_ONCE)
        self._queued_at = -CE_RECENT_US - 1  # the latest ECN echo or trim NACK: a queue
        self._ev_heard: dict[int, int] = {}    # EV -> the latest SACK for a packet on it
        self._dead_round = -1        # the latest query whose answers confirmed a dead path
        self._lossy_due = False      # a loss (not only lateness) took an EV out: the query due
        # NSCC's window (bytes) on top of the PSN window; None: the PSN window alone.
        self.cc: Nscc | None = None if config.cc is None else Nscc(config.cc)
        # The NIC's transmitter: the wire this connection shares with the NIC's others (a
        # NicHost's), or its own at config.tx_gbps.
        self.transmitter = Transmitter(config.tx_gbps) if transmitter is None else transmitter

    # -- the application side ---------------------------------------------------------------

    def write(self, data: bytes, va: int, immediate: int | None = None,
              now_us: int | None = None) -> int:
        """Queue an RDMA write of `data` to the peer's address `va`; returns its message id
        (the MSN). With `immediate`, a write-with-immediate. `now_us` is when it is posted (for
        `timings`; default: the latest time `poll` or `on_frame` was given). Its packets go at
        the next `poll`."""
        cfg = self.config
        if va < 0 or va + len(data) > 1 << 64:
            raise ValueError(f"write of {len(data)} bytes at {va:#x} leaves the 64-bit space")
        if len(data) >= 1 << 32:
            raise ValueError(f"write of {len(data)} bytes: RETH's DMA length has 32 bits")
        if immediate is not None and not 0 <= immediate < 1 << 32:
            raise ValueError(f"immediate does not fit in 32 bits: {immediate:#x}")
        msn = self._next_msn
        self._next_msn = (msn + 1) & 0xFFFF
        # RQ MSN: the receive WQE a write-with-immediate consumes (the count of earlier ones).
        rq_msn = self._imm_count & 0xFFFF
        self._imm_count += immediate is not None
        count = max(1, -(-len(data) // cfg.mtu))   # a zero-length write is one packet
        message = _Message(msn, count, bytes(data), va, rq_msn, immediate, count,
                           self._now if now_us is None else now_us)
        self._messages.append(message)
        seq = self._next_seq
        for index in range(count):
            self._unsent.append(_Packet(seq + index, self._psn(seq + index), message, index))
        self._next_seq = seq + count
        self._due = _STALE
        return msn

    def completed(self) -> list[int]:
        """Message ids completed (every PSN acknowledged) since the last call, in MSN order."""
        done, self._completed = self._completed, []
        return done

    @property
    def done(self) -> bool:
        """Every message written so far is acknowledged."""
        return not self._messages

    @property
    def probing(self) -> frozenset[int]:
        """The EVs being probed (the NIC named them in report echoes), until K answers."""
        return frozenset(self._probes)

    # -- the NIC side --------------------------------------------------------------------------

    def poll(self, now_us: int, new_limit: int | None = None) -> list[bytes]:
        """The frames to hand the NIC now: probe timeouts and requests, loss reports and
        retransmissions, then new packets within the window (at most `new_limit` of them:
        a NicHost serving several connections takes one at a time from each)."""
        self._now = now_us
        self._due = _STALE
        frames: list[bytes] = []
        if self._probes:
            self._poll_probes(now_us, frames)
        if self._query_due:
            self._query(frames)
        base = self._base()
        waiting = False   # a NACKed packet waits for the window: so do new ones
        if self._flight.by_seq:
            self._check_answered(now_us)
            if self._suspects:
                self._suspects_due(now_us)
            self._early_reports(now_us, frames)
            self._timed_out = 0
            cc = self.cc
            for pkt, cause in self._resends(now_us, base):
                lost = cause in _LOST
                if not lost and (waiting or self._nack_waits(pkt.seq, base)):
                    # A NACKed packet is resent as new data is sent, within the window (UEC
                    # §3.6.12: a retransmission counts against cwnd): the trims that cut the
                    # window do not come straight back as resends. Later NACKed ones, and new
                    # packets, wait behind it. The oldest unacknowledged one never waits: the
                    # window cannot drain past it (what arrived beyond it may stay
                    # unacknowledged until it does).
                    waiting = True
                    continue
                if lost and cause != "path_out" and not pkt.early:   # (else reported late)
                    self._report_loss(pkt, frames)
                elif lost and pkt.report_due:   # (else: its EV is out already)
                    self.counters["path_out_reported"] += 1
                    self._report_loss(pkt, frames)
                if cc is not None:
                    if lost and cause != "path_out":
                        # a loss to NSCC: it goes whatever the window (loss recovery). (One
                        # that went with an EV the NIC took out of service is the path's:
                        # the loss that took it out was NSCC's signal.)
                        pkt.cut += cc.on_loss(pkt.seq)
                    cc.on_send(pkt.seq, self._payload_len(pkt))
                self._transmit(pkt, now_us, frames, cause)
            self.rto.timed_out(self._timed_out)
        self._send_new(now_us, base, frames, new_limit, waiting)
        return frames

    def _first_nack(self, base: int) -> int | None:
        """The first NACKed packet poll would resend (seq order; None: none). (A packet whose
        EV went out of service is no NACK's: it goes at once, as a loss.)"""
        nacked = self._flight.nacked
        if not nacked:
            return None
        return min((seq for seq, cause in nacked.items()
                    if cause not in _AT_ONCE and not self._held(seq, cause, base)), default=None)

    def _nack_waits(self, seq: int | None, base: int) -> bool:
        """NACKed packet `seq` (None: none) does not fit NSCC's window and is not the oldest
        unacknowledged one: it, the NACKed ones after it and new packets wait for an answer
        to open the window."""
        cc = self.cc
        return cc is not None and seq is not None and seq != base and not cc.can_send(
            self._payload_len(self._flight.by_seq[seq]))

    def send_new(self, now_us: int, limit: int | None = None) -> list[bytes]:
        """Only the new packets of poll(now_us) (at most `limit`): for a NicHost's next turn
        on the wire within the instant it polled this connection at."""
        self._now = now_us
        self._due = _STALE
        frames: list[bytes] = []
        base = self._base()
        self._send_new(now_us, base, frames, limit,
                       self._nack_waits(self._first_nack(base), base))
        return frames

    def _send_new(self, now_us: int, base: int, frames: list[bytes],
                  limit: int | None, nack_waits: bool) -> None:
        if nack_waits:
            return   # a NACKed packet goes first
        unsent = self._unsent
        cc = self.cc
        left = -1 if limit is None else limit
        while left and self._may_send_new(base) and self._tx_ready_us() <= now_us:
            pkt = unsent.popleft()
            if cc is not None:
                if not self._flight.by_seq:
                    cc.resume()
                cc.on_send(pkt.seq, self._payload_len(pkt))
            self._transmit(pkt, now_us, frames, None)
            left -= 1

    def _may_send_new(self, base: int) -> bool:
        """The next unsent packet fits the PSN window and NSCC's window (if any). A refusal of
        NSCC's marks its quick-adapt period window-limited: poll and next_deadline_us both ask
        after every change (a frame, a write, a poll), so a period the window held the sender
        back in is known as one whoever drives the sender."""
        unsent = self._unsent
        if not unsent or unsent[0].seq - base >= self.config.window:
            return False
        return self.cc is None or self.cc.can_send(self._payload_len(unsent[0]))

    def _tx_ready_us(self) -> int:
        """The µs tick in which the NIC's wire is free for the next new packet: it goes in the
        tick its transmission starts (0: not paced, or idle)."""
        return self.transmitter.ready_us()

    def _payload_len(self, pkt: _Packet) -> int:
        mtu = self.config.mtu
        return max(0, min(mtu, len(pkt.message.data) - pkt.index * mtu))

    def next_deadline_us(self, now_us: int | None = None) -> int | None:
        """When `poll` next has something to do if no frame arrives meanwhile: `now_us` when
        `poll(now_us)` would hand out frames now (new packets within the window, a NACKed
        packet, a timer already expired), else the earliest timer (a retransmission timeout, a
        SACK hole older than the reordering allowance, a probe due or timing out); None when
        only an arriving frame (or a write) can give `poll` something to do. Without `now_us`,
        the time is not clamped: an expired timer gives its own time, work due at once the
        latest time `poll` or `on_frame` was given (either way: poll now).

        Exact: `poll` at any time before it returns nothing and changes nothing; at it, it
        hands out frames (or raises RetryLimitExceeded). What an arriving frame changes (a
        window opening, a NACK, an echo) shows in the next call. Cheap when nothing changed
        since the last call (cached until the next write, poll or frame)."""
        due = self._due
        if due is _STALE:
            due = self._due = self._next_due()
        if due is None:
            return None
        if due is _NOW:
            return self._now if now_us is None else now_us
        if now_us is None:
            return due
        return due if due >= now_us else now_us

    def poll_if_due(self, now_us: int, new_limit: int | None = None) -> list[bytes]:
        """poll(now_us, new_limit) when next_deadline_us(now_us) is now, else [] at the cost
        of a cached look-up (poll would return nothing and change nothing)."""
        if self.next_deadline_us(now_us) == now_us:
            return self.poll(now_us, new_limit)
        self._now = now_us
        return []

    def _next_due(self) -> int | Literal[_Due.NOW] | None:
        """The earliest timer (_NOW: something goes at once; None: nothing but a frame or a
        write can make poll act)."""
        base = self._base()
        due: int | None = None
        first_nack = self._first_nack(base)
        waits = self._nack_waits(first_nack, base)   # only an answer (or a timeout) opens it
        if not waits and self._may_send_new(base):
            ready = self._tx_ready_us()
            if ready <= self._now:
                return _NOW
            due = ready   # the wire is busy with what went before
        flight = self._flight
        if self._query_due and len(flight.by_seq) > len(flight.nacked):
            return _NOW   # (poll clears the flag when there is nothing to ask about)
        rto = self.rto.timer_us()
        for probe in self._probes.values():
            t = probe.due if probe.sent_at is None else probe.sent_at + rto
            if due is None or t < due:
                due = t
        if flight.by_seq:
            give_up = self._answered_at + self._give_up_us()
            if due is None or give_up < due:
                due = give_up
            if not waits and first_nack is not None:
                return _NOW
            if not _AT_ONCE.isdisjoint(flight.nacked.values()):
                return _NOW
            for pkt in self._suspects.values():
                due = min(due, pkt.suspect_at)
            if (late := self._next_late()) is not None:
                due = min(due, self._late_at(late, self._late_us()))
            ordered = flight.in_time_order
            for pkt in flight.fresh.values():
                due = min(due, self._expiry(pkt))
                if ordered:   # the first sent once expires first, but for the latest sent
                    due = min(due, self._expiry(flight.latest_fresh()))
                    break   # (see _resends)
            soonest = self._soonest_expiry() if flight.resent else 0
            for pkt in flight.resent.values():
                if ordered and pkt.sent_at + soonest >= due:
                    break   # neither this one nor any sent after it expires before `due`
                due = min(due, self._expiry(pkt))
        return due

    def on_frame(self, frame: bytes | Packet, now_us: int) -> None:
        """A SACK, NACK or report echo from the NIC (decapsulated); anything else is ignored."""
        if not isinstance(frame, Packet) and (parsed := parse(frame)) is not None:
            self.on_parsed(parsed, now_us)
            return
        self._now = now_us
        self._due = _STALE
        pkt = dissect(frame)
        bth = None if pkt is None else pkt.getlayer(BTH)
        if pkt is None or bth is None:
            self.counters["ignored"] += 1
        elif (sack := sack_fields(pkt)) is not None:
            self._on_sack(sack["cack_psn"], sack["sack_offset"], sack["sack_bitmap"],
                          sack["m"], sack["probe_response"], sack["entropy"], now_us,
                          sack["psn"], sack["spdcid"])
        elif (nack := nack_fields(pkt)) is not None:
            self._on_nack(nack["nack_reason"], nack["nack_psn"])
        elif bth.opcode == OP_EV_REPORT and len(echo := bytes(bth.payload)) >= len(PETH()):
            self._on_echo(PETH(echo).probe_id, bth.psn, now_us)
        else:
            self.counters["ignored"] += 1

    def on_parsed(self, parsed: Parsed, now_us: int) -> None:
        """on_frame for a frame fastwire.parse() has read."""
        self._now = now_us
        self._due = _STALE
        if isinstance(parsed, SackFrame):
            self._on_sack(parsed.cack_psn, parsed.sack_offset, parsed.sack_bitmap, parsed.m,
                          parsed.probe_response, parsed.entropy, now_us, parsed.psn,
                          parsed.spdcid)
        elif isinstance(parsed, NackFrame):
            self._on_nack(parsed.nack_reason, parsed.nack_psn)
        elif (isinstance(parsed, OtherFrame) and parsed.opcode == OP_EV_REPORT
              and len(parsed.tail) >= PETH_BYTES):
            self._on_echo(int.from_bytes(parsed.tail[:2]), parsed.psn, now_us)
        else:
            self.counters["ignored"] += 1

    # -- internals -----------------------------------------------------------------------------

    def _psn(self, seq: int) -> int:
        return psn_add(self.config.initial_psn, seq)

    def _first_unsent(self) -> int:
        return self._unsent[0].seq if self._unsent else self._next_seq

    def _base(self) -> int:
        """The oldest unacknowledged seq (the next to send when nothing is in flight)."""
        for seq in self._flight.by_seq:
            return seq
        return self._first_unsent()

    def _seq(self, psn: int) -> int:
        base = self._base()
        return base + psn_diff(psn, self._psn(base))

    def _resends(self, now: int, base: int) -> list[tuple[_Packet, str]]:
        """What poll(now) retransmits, in seq order, and why (_resend_cause): the NACKed
        packets (but those held for the receiver's window) and those whose timer expired. Of
        the packets whose timer runs, only those sent early enough to be due are looked at:
        in `fresh`, a prefix (a packet sent once after another has the same timeout after its
        transmission, and is a hole only if the other one is); in `resent`, those sent at
        least _soonest_expiry() ago. No retransmission in a poll changes another packet's
        cause, so they are all found first."""
        flight = self._flight
        found: list[tuple[_Packet, str]] = []
        for pkt in map(flight.by_seq.__getitem__, flight.nacked):
            if (cause := self._resend_cause(pkt, now, base)) is not None:
                found.append((pkt, cause))
        ordered = flight.in_time_order
        for pkt in flight.fresh.values():
            if (cause := self._resend_cause(pkt, now, base)) is not None:
                found.append((pkt, cause))
            elif ordered:
                # (and the latest sent, which the tail rule may make due before the rest)
                last = flight.latest_fresh()
                if last is not pkt and (cause := self._resend_cause(last, now, base)):
                    found.append((last, cause))
                break
        latest = now - self._soonest_expiry()
        for pkt in flight.resent.values():
            if ordered and pkt.sent_at > latest:
                break
            if (cause := self._resend_cause(pkt, now, base)) is not None:
                found.append((pkt, cause))
        found.sort(key=_by_seq)
        return found

    def _resend_cause(self, pkt: _Packet, now: int, base: int) -> str | None:
        cause = self._flight.nacked.get(pkt.seq)
        if cause is not None:
            return None if self._held(pkt.seq, cause, base) else cause
        timeout, hole = self._timers(pkt)
        if now >= timeout:
            return "timeout"
        if hole is not None and now >= hole:
            return "sack_hole"
        return None

    @staticmethod
    def _held(seq: int, cause: str, base: int) -> bool:
        """A NACKed packet waits for the receiver's window to reach it (a SACK moving the
        base)."""
        return cause == "nack_oor" and seq - base >= RECEIVER_BITMAP

    def _timers(self, pkt: _Packet) -> tuple[int, int | None]:
        """When a packet whose timer runs (not NACKed) times out, and when it is a SACK hole
        to resend (None: it is no hole now); the one rule of _resend_cause and
        next_deadline_us."""
        timeout = pkt.sent_at + self.rto.timer_us(pkt.timeouts)
        # A hole (RFC 8985's RACK, by time sent, not by PSN): a transmission sent after it was
        # answered, and the packet is unanswered reorder_us past the round trip of the latest
        # one answered (spraying reorders: a packet queued on one plane is overtaken by the
        # ones sent after it on another; and with queues on every path a fixed age would call
        # every reordering a loss). A resend is a hole again by the same rule: `order` and
        # `sent_at` are its own. The latest transmission of all has nothing after it to be
        # overtaken by (a message's last packet; a resend while the window waits on it): by
        # the same allowance it goes again (RACK-TLP's tail loss probe, here the packet
        # itself), so that the retransmission timer is the last resort, not the rule (once
        # something was answered: before, no round trip says what the allowance is; and once
        # in a row, and not for a packet the timer has resent: a tail resend unanswered is the
        # retransmission timer's, which backs off).
        if pkt.order < self._acked_order or (pkt.order == self._order - 1
                                              and self._acked_order >= 0
                                              and pkt.order != self._tail_order
                                              and not pkt.timeouts):
            return timeout, pkt.sent_at + self._reorder_us() + self._acked_rtt
        return timeout, None

    def _expiry(self, pkt: _Packet) -> int:
        """The earlier of _timers(pkt)."""
        timeout, hole = self._timers(pkt)
        return timeout if hole is None or timeout <= hole else hole

    def _soonest_expiry(self) -> int:
        """No running timer expires sooner than this after its packet's transmission (the
        shortest timeout, the hole allowance)."""
        return min(self.rto.timer_us(), self._reorder_us() + self._acked_rtt)

    def _reorder_us(self) -> int:
        """How much later than the latest answered round trip a hole is a loss: reorder_us,
        and reorder_us more per spurious resend seen, up to SRTT (RFC 8985 §6.2)."""
        base = self.config.reorder_us
        if not self._reorder_steps:
            return base
        srtt = int(self.rto.srtt_us or 0)
        return max(base, min(base * (1 + self._reorder_steps), srtt))

    def _check_answered(self, now: int) -> None:
        """NoAnswer when nothing has answered the packets in flight for give_up_us."""
        give_up = self._give_up_us()
        if now >= self._answered_at + give_up:
            self.counters["gave_up"] += 1
            raise NoAnswer(now, self._answered_at, give_up,
                           max(pkt.retries for pkt in self._flight.by_seq.values()))

    def _report_loss(self, pkt: _Packet, frames: list[bytes]) -> None:
        """A loss with no trim notice (a timeout, or a SACK hole past reorder_us): before the
        retransmission, the NIC is told, and pins it on the EV the PSN last left on (ASSUMED_BAD
        at once, within ev_min_active; the retransmission overwrites that EV). A packet a trim
        NACK named is not reported: the trim was the notice (congestion, not a failed path)."""
        if pkt.trimmed:
            self.counters["unreported"] += 1
            return
        frames.append(self._frames.control(OP_EV_REPORT, pkt.psn, 0))
        self.counters["reports"] += 1

    def _give_up_us(self) -> int:
        """How long nothing may answer before the connection gives up: give_up_us, or
        GIVE_UP_ROUND_TRIPS of the round trips measured (SRTT + 4 RTTVAR) if longer (queues
        that delay every answer that long are congestion the connection has seen, not a
        dead peer; a short give_up_us must not end a connection the fabric is slow to)."""
        return max(self.config.give_up_after_us, GIVE_UP_ROUND_TRIPS * self.rto.spread_us())

    def _answered(self, now: int) -> None:
        """A SACK, NACK or probe answer came: the connection is alive."""
        if now > self._answered_at:
            self._answered_at = now

    def _transmit(self, pkt: _Packet, now: int, frames: list[bytes], cause: str | None) -> None:
        tail = False
        if cause is None:
            self.counters["sent"] += 1
            if not self._flight.by_seq:
                self._answered(now)   # nothing was waiting for an answer before
            self._flight.sent(pkt.seq, pkt, now)
            if pkt.frame is None:
                pkt.frame = self._build(pkt)
            if pkt.message.first_sent_us is None:
                pkt.message.first_sent_us = now
        else:
            pkt.retries += 1
            if not cause.startswith("nack"):   # a NACK proves path and receiver alive
                pkt.failed += 1
                if pkt.failed > self.config.max_retries:
                    raise RetryLimitExceeded(pkt.psn, pkt.failed - 1)
            if cause == "timeout":
                pkt.timeouts += 1
                # The connection's timer doubles after this poll: the packets that time out
                # with this one all go now.
                self._timed_out = max(self._timed_out, pkt.timeouts)
            # (a "hole" no answered transmission overtook: the tail rule's)
            tail = cause == "sack_hole" and pkt.order >= self._acked_order
            self._flight.resent_at(pkt.seq, pkt, now)
            self._unsuspect(pkt)
            pkt.early = False
            pkt.suspected = cause == "path_out"
            assert pkt.frame is not None   # built when it first went
            pkt.frame = set_retransmit(pkt.frame)
            self.counters["retransmitted"] += 1
            self.counters[cause] += 1
        pkt.sent_at = now
        pkt.order = self._order
        if tail:
            self._tail_order = pkt.order
        self._order += 1
        frames.append(pkt.frame)
        self.transmitter.carry(len(pkt.frame), now)

    def _build(self, pkt: _Packet) -> bytes:
        message, index, mtu = pkt.message, pkt.index, self.config.mtu
        last = index == message.count - 1
        return self._frames.data(
            psn=pkt.psn, opcode=_write_opcode(index, message.count, message.immediate is not None),
            msn=message.msn, rq_msn=message.rq_msn, va=message.va + index * mtu,
            dma_length=len(message.data), payload=message.data[index * mtu:(index + 1) * mtu],
            immediate=message.immediate if last else None)

    def _on_sack(self, cack_psn: int, sack_offset: int, bitmap: int, m: int,
                 probe_response: int, entropy: int, now: int, psn: int | None = None,
                 lost_gap: int = 0) -> None:
        # The PSNs acknowledged: cack_psn and base + i for each set bit i of the bitmap, where
        # base = cack_psn + sack_offset (wire.psns_acked), each mapped to its seq relative to
        # the oldest unacknowledged one (_seq), all before anything is taken off.
        base = self._base()
        base_psn = self._psn(base) - _HALF
        cack = base + (cack_psn - base_psn) % PSN_MOD - _HALF
        first = cack_psn + signed16(sack_offset) - base_psn
        highest = cack
        sacked: list[int] = []
        while bitmap:
            low = bitmap & -bitmap
            bitmap ^= low
            seq = base + (first + low.bit_length() - 1) % PSN_MOD - _HALF
            sacked.append(seq)
            if seq > highest:
                highest = seq
        if highest >= self._first_unsent():
            self.counters["ghost"] += 1   # not an answer either: the peer did not send it
            return
        flight = self._flight
        in_flight = flight.by_seq
        # The NIC's note (SETH spdcid, 0: none): the PSN `lost_gap` (signed 16-bit) before the
        # one this SACK answers went on the same EV just before it, and has not arrived: one
        # path keeps its packets' order, so it is lost. Believed for the transmission the note
        # is about: the answered PSN went once (the SACK is that transmission's), the other
        # has not gone again since.
        noted: _Packet | None = None
        try:
            plane, ev = split_ev(entropy)   # the EV the answered packet came over
        except ValueError:
            plane = ev = -1
        answered = (None if psn is None or probe_response
                    else in_flight.get(self._seq(psn)))
        if answered is not None and answered.retries == 0 and ev >= 0:
            self._plane_rtt[plane] = now - answered.sent_at
            self._plane_heard[plane] = (now, answered.order)
            if lost_gap and psn is not None:
                noted = in_flight.get(self._seq(psn_add(psn, -signed16(lost_gap))))
                if noted is not None and (noted.order > answered.order
                                          or noted.seq in flight.nacked):
                    noted = None
        acked = []
        for seq in in_flight:   # in seq order: everything up to the cumulative point
            if seq > cack:
                break
            acked.append(seq)
        acked += [seq for seq in sacked if seq > cack and seq in in_flight]
        if self.cc is not None and acked:
            self._cc_ack(acked, m, now, answered)
        # The latest sent of those that went once (Karn's rule, strict for the RTO: a resend
        # leaves on another EV, often another plane, and the latest-sent packets of a SACK
        # are resends; their round trips would size the hole allowance of the first
        # transmissions still queued on the slow plane).
        timed: _Packet | None = None
        suspects = self._suspects
        late_arrived = False
        for seq in acked:
            pkt = flight.acked(seq)
            if suspects and suspects.pop(seq, None) is not None:
                pkt.suspect_at = -1
            late_arrived = late_arrived or pkt.early
            if not pkt.timed and now - pkt.sent_at < self._min_rtt:
                # Answered sooner than any round trip: an earlier transmission arrived, the
                # resend was spurious (a path slower than the rest, not a loss). (Not when a
                # NACK refused each earlier one: a trimmed packet delivers nothing, and the
                # round trips measured while the incast that trimmed it queued may all be
                # longer than its resend's.) As RFC 8985's
                # DSACK rule: the reordering allowance grows by reorder_us, up to SRTT (not for
                # a resend its EV's going out of service caused: no reordering misled that).
                self.counters["spurious"] += 1
                if not pkt.suspected:
                    self._reorder_steps += 1
                # RFC 4015's response: NSCC gets back the window the "loss" cost it.
                if self.cc is not None and pkt.cut:
                    self.cc.undo_loss(pkt.cut)
                    pkt.cut = 0.0
            if pkt.order > self._acked_order:
                self._acked_order = pkt.order
                self._acked_rtt = now - pkt.sent_at
            if pkt.retries == 0 and (timed is None or pkt.order > timed.order):
                timed = pkt
            pkt.message.remaining -= 1
        self._answered(now)
        if ev >= 0:
            self._ev_heard[ev] = now
            if self._suspects:
                self._heard_on(ev)
        if acked:
            self.rto.acknowledged()
            if timed is not None and not probe_response:
                self.rto.sample(now - timed.sent_at)
                self._min_rtt = min(self._min_rtt, now - timed.sent_at)
            # Paths differ in queueing: the allowance counts from the longer of the latest
            # round trip and what the round trips measured explain (SRTT + 4 RTTVAR, without
            # the RTO's floor): a queue on one plane is no loss.
            if (spread := self.rto.spread_us()) > self._acked_rtt:
                self._acked_rtt = spread
        if late_arrived and suspects:
            self._late_one_arrived()
        if noted is not None and noted.seq in in_flight:
            flight.nack(noted.seq, "overtaken")
        messages = self._messages
        while messages and messages[0].remaining == 0:
            message = messages.popleft()
            self._completed.append(message.msn)
            self.timings.append(MessageTiming(
                message.msn, len(message.data), message.count, message.posted_us,
                now if message.first_sent_us is None else message.first_sent_us, now))
        if not probe_response and m != SackM.ALWAYS_SKIP:
            if m == SackM.SKIP_ONCE:
                self._queued_at = now
                if ev >= 0:
                    self._ce_at[ev] = now
            return
        if ev < 0:
            self.counters["ignored"] += 1
        elif probe_response:   # first, as in the NIC
            self._on_probe_answer(ev, now)
        else:
            # The NIC took the EV out of service on this SACK and echoes nothing: only probes
            # bring it back.
            self._start_probing(ev, now)

    def _cc_ack(self, acked: list[int], m: int, now: int, answered: _Packet | None) -> None:
        """NSCC's view of a SACK: the bytes it newly acknowledged, and the RTT and CE echo of
        `answered`, the packet in flight that made the NIC send it (the SACK's BTH PSN; None
        for a probe's answer), if the answer times that packet's latest transmission
        (`_Packet.timed`: this wire echoes no retransmit flag) and is among them. A trimmed
        packet's resend is timed: without that, a connection whose window trims cut to one
        packet would resend them all one round trip apart with no sample to grow the window
        by."""
        rtt: float | None = None
        if answered is not None and answered.timed and answered.seq in acked:
            rtt = float(now - answered.sent_at)
        assert self.cc is not None
        self.cc.on_ack(acked, now, rtt, m == SackM.SKIP_ONCE)

    def _on_nack(self, reason: int, nack_psn: int) -> None:
        cause = _NACK_CAUSE.get(reason)
        seq = self._seq(nack_psn)
        self._answered(self._now)
        if cause is None or seq not in self._flight.by_seq:
            self.counters["ignored"] += 1   # an unknown reason, or acknowledged meanwhile
        else:
            self._flight.nack(seq, cause)
            pkt = self._flight.by_seq[seq]
            self._unsuspect(pkt)
            if cause != "nack_oor":
                self._queued_at = self._now
            pkt.timeouts = 0   # it reached the receiver, or a switch that trimmed it
            pkt.trimmed = pkt.trimmed or cause != "nack_oor"
            if self.cc is not None:
                # A trim (in the fabric or at the last hop: MRC has no receiver-side CC, so
                # both cut); a PSN beyond the receiver's window only leaves the network.
                if cause == "nack_oor":
                    self.cc.release(seq)
                else:
                    self.cc.on_nack(seq, self._now)

    def _on_echo(self, probe_id: int, psn: int, now: int) -> None:
        """The NIC pinned a loss (or a probe timeout) on EV probe_id (and with ECHO_TOOK_OUT,
        took it out of service); or, a query's answer, PSN `psn` went on that EV, out of
        service now."""
        self.counters["echoes"] += 1
        if probe_id & REPORT_QUERY_FLAG:
            seq = self._seq(psn)
            pkt = self._flight.by_seq.get(seq)
            # Only about the transmission asked about (not acknowledged, resent or NACKed
            # since): what went over an EV out of service is suspect. It is lost once it is
            # unanswered past the round trip that answers the rest, with RFC 8985's default
            # reordering window (min RTT / 4) instead of reorder_us: on a dead path (a
            # blackhole, a cut) what went long enough ago goes at once, the rest as soon as
            # its answer is late; after one random loss, what went on the path since is
            # answered in time and is not sent twice.
            if pkt is not None and pkt.queried == pkt.order and seq not in self._flight.nacked:
                # Its EV only passed over for sharing the bad path: the report takes it out too
                # (the evidence the controller hears of, as the EV's own loss would have been).
                pkt.report_due = bool(probe_id & ANSWER_EV_GOOD)
                pkt.sign = False
                pkt.out_ev = probe_id & 0xFF
                lossy = pkt.query_lossy
                ce_at = self._ce_at.get(probe_id & 0xFF)
                if pkt.early or (not lossy and ce_at is not None
                                 and now - ce_at <= CE_RECENT_US):
                    # Reported late itself, or, where only lateness took EVs out, on an EV
                    # that queues (ECN lately): late for a reason of its own, no sign of a
                    # dead path. It goes at its reordering allowance, or with the path.
                    pkt.suspect_at = self._expiry(pkt)
                elif lossy:
                    pkt.suspect_at = self._suspect_deadline(pkt)
                else:
                    # Only lateness took EVs out (a slower path, or a dead one): a second
                    # packet on it as late as the first is the sign of a dead one, unless the
                    # late one arrives first (_late_one_arrived).
                    pkt.suspect_at = pkt.sent_at + self._late_us()
                    pkt.sign = True
                    if not self._silent(pkt):   # (its EV answers: see _heard_on)
                        pkt.sign, pkt.suspect_at = False, self._expiry(pkt)
                self._suspects[seq] = pkt
                if pkt.query_round == self._dead_round or (
                        pkt.suspect_at <= now and (lossy or pkt.sign)):
                    self._dead_round = pkt.query_round
                    self._suspects_due(now, everyone=True)
            return
        self._start_probing(probe_id & 0xFF, now)
        if probe_id & ECHO_TOOK_OUT:
            self._query_due = True
            reported = self._flight.by_seq.get(self._seq(psn))
            if reported is None or not reported.early:
                self._lossy_due = True

    def _suspects_due(self, now: int, everyone: bool = False) -> None:
        """The suspects past their suspect_at (`everyone`: all of them) are lost: resent at
        once (path_out). One asked about after lateness alone is the second late packet on a
        path out of service: that path is dead, all of them go. One reported late itself is
        lost now (its reordering allowance passed): the rest are judged as after any loss,
        each due once late (_suspect_deadline), all at once if one already is."""
        suspects = self._suspects
        due = [p for p in suspects.values() if everyone or now >= p.suspect_at]
        if not everyone and any(p.sign for p in due):   # (silent: _heard_on)
            due = list(suspects.values())
        elif not everyone and any(p.early for p in due):
            for pkt in suspects.values():
                pkt.suspect_at = min(pkt.suspect_at, self._suspect_deadline(pkt))
            due = [p for p in suspects.values() if now >= p.suspect_at]
            if any(not p.early for p in due):
                due = list(suspects.values())
        for pkt in due:
            self._unsuspect(pkt)
            self._flight.nack(pkt.seq, "path_out")

    def _heard_on(self, ev: int) -> None:
        """EV `ev` answered: a suspect late on it is late on a path that delivers, not a
        sign of a dead one (its own timers run; it goes with the path if that dies)."""
        for pkt in self._suspects.values():
            if pkt.sign and pkt.out_ev == ev and not self._silent(pkt):
                pkt.sign = False
                pkt.suspect_at = self._expiry(pkt)

    def _silent(self, pkt: _Packet) -> bool:
        """Nothing on suspect `pkt`'s EV was answered since `pkt` could have been: the EV
        delivers nothing (a dead path), not late (a slow one delivers what went before)."""
        heard = self._ev_heard.get(pkt.out_ev)
        return heard is None or heard < pkt.sent_at + self._min_rtt

    def _late_one_arrived(self) -> None:
        """A packet reported late arrived: its path is slow, not dead. What lateness alone
        made suspect runs its own timers again."""
        for pkt in [p for p in self._suspects.values() if p.sign]:
            self._unsuspect(pkt)

    def _suspect_deadline(self, pkt: _Packet) -> int:
        """When a packet that went on an EV out of service is lost unless answered: past the
        round trip that answers the rest, with RFC 8985's default reordering window (min RTT
        / 4) instead of reorder_us."""
        window = 0 if self._min_rtt == _NO_RTT else self._min_rtt // 4
        return pkt.sent_at + self._acked_rtt + window

    def _late_us(self) -> int:
        """How long after its transmission an overtaken packet is late: twice the longest
        round trip the connection expects (the latest answered round trip, SRTT + 4 RTTVAR,
        or the slowest plane's latest: a slower plane, a queue on one path is no sign of a
        dead one; and a queue rarely doubles a round trip within one; a plane that fell silent
        past its round trip while another answers is slower than its latest, by its silence),
        and at least three shortest round trips."""
        longest = max(self._acked_rtt, max(self._plane_rtt.values(), default=0))
        now = self._now
        heard_of = self._plane_heard
        if len(heard_of) > 1:
            latest = max(heard for heard, _ in heard_of.values())
            for plane, (heard, order) in heard_of.items():
                rtt = self._plane_rtt[plane]
                if latest > heard + rtt and self._owes(order):   # (so now - heard > rtt)
                    # Silent past its round trip, another plane answering since, and packets
                    # out since its latest answer: that plane queues (a slower plane, its
                    # load not yet moved), and its silence, up to 4 of its round trips, is
                    # its round trip now. (A dead path is one of a plane's paths: the others
                    # answer. A plane with nothing out is not slow; nor is one when every
                    # plane fell silent: that says nothing of one plane.)
                    longest = max(longest, min(now - heard, 4 * rtt))
        return max(3 * self._min_rtt, 2 * longest)

    def _owes(self, order: int) -> bool:
        """At least a rotation's worth of transmissions (one per plane) sent after `order`
        wait for an answer: with equal spraying, one of them is on every plane."""
        nacked = self._flight.nacked
        owed = 0
        for seq, pkt in self._flight.by_seq.items():
            if pkt.order > order and seq not in nacked:
                owed += 1
                if owed >= self.config.planes:
                    return True
        return False

    def _late_at(self, pkt: _Packet, late_us: int) -> int:
        """When `pkt` is reported late (_early_reports): `late_us` after it went, and not
        while an ECN echo or trim came in the last CE_RECENT_US (a queue explains lateness,
        and is no sign of a dead path)."""
        return max(pkt.sent_at + late_us, self._queued_at + CE_RECENT_US + 1)

    def _next_late(self) -> _Packet | None:
        """The first packet sent once, overtaken by an answered later transmission and not
        reported late yet (those reported are the first ones sent; None: none)."""
        if self._min_rtt == _NO_RTT or not self._flight.in_time_order:
            return None
        if len(self._plane_rtt) < self.config.planes:
            # A plane with no round trip timed yet may be a slower one (its first packets
            # would look late behind the faster plane's answers): lateness waits for one.
            return None
        for pkt in self._flight.fresh.values():
            if pkt.early:
                continue
            return pkt if pkt.order < self._acked_order else None
        return None

    def _early_reports(self, now: int, frames: list[bytes]) -> None:
        """Report packets that are late but not lost yet (_late_us; reorder_us decides a
        loss): the NIC takes the EV out, and what went on it or its path is asked about. A
        dead path (a cut, a blackhole) loses everything on it, and nothing sent later on it
        arrives to name the losses: the late packet is the first sign. If it arrives after
        all, the NIC brings its EV back (EvLateArrival). Not resent: reordering is no loss."""
        late_us = self._late_us()
        while (pkt := self._next_late()) is not None and now >= self._late_at(pkt, late_us):
            pkt.early = True   # (sent once: no trim NACK named it)
            frames.append(self._frames.control(OP_EV_REPORT, pkt.psn, 0))
            self.counters["early_reports"] += 1

    def _unsuspect(self, pkt: _Packet) -> None:
        """`pkt` is no suspect any more (acknowledged, NACKed, resent or found lost)."""
        if pkt.suspect_at >= 0:
            pkt.suspect_at = -1
            del self._suspects[pkt.seq]

    def _query(self, frames: list[bytes]) -> None:
        """Ask the NIC, for each packet in flight (not NACKed), whether its latest
        transmission went on an EV out of service (it answers only those that did)."""
        self._query_due = False
        self._query_round += 1
        lossy, self._lossy_due = self._lossy_due, False
        nacked = self._flight.nacked
        for seq, pkt in self._flight.by_seq.items():
            if seq not in nacked:
                frames.append(self._frames.control(OP_EV_REPORT, pkt.psn, REPORT_QUERY_FLAG))
                pkt.queried = pkt.order
                pkt.query_round = self._query_round
                pkt.query_lossy = lossy
                self.counters["queries"] += 1

    def _start_probing(self, ev: int, now: int) -> None:
        # The NIC's count of answers in a row starts over on every loss pinned on the EV.
        self._probes.setdefault(ev, _Probe(due=now)).answers = 0

    def _on_probe_answer(self, ev: int, now: int) -> None:
        probe = self._probes.get(ev)
        if probe is None or probe.sent_at is None:
            return   # late, or for an EV that is back already
        sent_at, probe.sent_at = probe.sent_at, None
        probe.answers += 1
        self.counters["probe_answers"] += 1
        if probe.answers >= self.config.probe_successes:
            del self._probes[ev]   # the NIC has it GOOD again
        if self._suspects:
            self._overtaken_by_probe(ev, sent_at, now)

    def _overtaken_by_probe(self, ev: int, probe_sent: int, now: int) -> None:
        """The probe of EV `ev` sent at `probe_sent` came back: its path delivers. A packet
        reported late (twice the longest round trip) that went on that EV before the probe and
        is still unanswered did not arrive: one path keeps its packets' order, as for the
        NIC's note (`overtaken`). Lost now, not at its reordering allowance (a random loss on
        a path that delivers the rest: Fig. 13's lossy EV, whose probe is answered). Not while
        a queue explains lateness (an ECN echo or trim lately: the probe, a control packet,
        may pass a queued data packet)."""
        if now - self._queued_at <= CE_RECENT_US:
            return
        for pkt in [p for p in self._suspects.values()
                    if p.early and p.out_ev == ev and p.sent_at < probe_sent]:
            self._unsuspect(pkt)
            self._flight.nack(pkt.seq, "overtaken")

    def _poll_probes(self, now: int, frames: list[bytes]) -> None:
        rto = self.rto.timer_us()
        for ev, probe in self._probes.items():
            if probe.sent_at is not None and now >= probe.sent_at + rto:
                # Unanswered: the NIC's count of answers in a row starts over, and so does ours.
                frames.append(self._frames.control(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | ev))
                self.counters["probe_timeouts"] += 1
                probe.sent_at = None
                probe.answers = 0
            if probe.sent_at is None and now >= probe.due:
                frames.append(self._frames.control(Opcode.PROBE, 0, ev))
                self.counters["probes"] += 1
                probe.sent_at = now
                probe.due = now + self.config.probe_interval_us

    def _to_nic(self, opcode: int, psn: int, probe_id: int) -> bytes:
        """A loss report or probe request: BTH + PETH to the peer's QP, for this NIC only."""
        return self._frames.control(opcode, psn, probe_id)
