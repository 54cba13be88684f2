"""The sending half of one MRC connection (what a NIC's firmware does for a QP): writes cut into
packets, the window, retransmission of what NACKs, SACK holes and timers name, loss reports and
EV probes. Time is injected (`now_us`): no sleeps, no threads.

Internally PSNs are counted from the connection's initial PSN without wrapping (`seq`); the 24-bit
wire PSNs are mapped onto that count relative to the oldest unacknowledged one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Final

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet

from mrc_transport.config import ConnectionConfig
from mrc_transport.wire import (
    BTH,
    HOST_MAC,
    NIC_MAC,
    PETH,
    NackReason,
    Opcode,
    SackM,
    bind_roce_port,
    data_packet,
    dissect,
    nack_fields,
    psn_add,
    psn_diff,
    psns_acked,
    sack_fields,
    split_ev,
)

OP_EV_REPORT: Final = 0xDF          # host <-> own NIC only (p4src/include/mrc_headers.p4)
REPORT_PROBE_FLAG: Final = 0x8000   # PETH.probe_id of a report: "the probe of this EV timed out"
FEEDBACK_OPCODES: Final = frozenset({Opcode.SACK, Opcode.NACK, OP_EV_REPORT})
# The receiver tracks this many PSNs beyond its cumulative point (the SACK bitmap): a PSN further
# ahead is refused (NACK PSN_OOR_WINDOW) and resending it sooner would only be refused again.
RECEIVER_BITMAP: Final = 64

_NACK_CAUSE: Final = {
    NackReason.TRIMMED: "nack_trimmed",
    NackReason.TRIMMED_LASTHOP: "nack_lasthop",
    NackReason.PSN_OOR_WINDOW: "nack_oor",
}
COUNTERS: Final = ("sent", "retransmitted", *_NACK_CAUSE.values(), "sack_hole", "timeout",
                   "reports", "probes", "probe_answers", "probe_timeouts", "echoes", "ignored")


class TransportError(Exception):
    """The connection cannot go on."""


class RetryLimitExceeded(TransportError):
    """A PSN is still unacknowledged after `max_retries` retransmissions."""

    def __init__(self, psn: int, retries: int) -> None:
        super().__init__(f"PSN {psn:#08x} unacknowledged after {retries} retransmissions")
        self.psn = psn
        self.retries = retries


@dataclass
class _Message:
    msn: int
    remaining: int   # packets not acknowledged yet


@dataclass
class _Packet:
    """One PSN: what it carries and its latest transmission."""

    seq: int
    message: _Message
    packet: Packet
    sent_at: int = 0
    order: int = 0               # transmissions before the latest one of this PSN
    hole_at: int | None = None   # the latest retransmission (a hole goes again once per RTO)
    retries: int = 0

    @property
    def psn(self) -> int:
        return int(self.packet[BTH].psn)


@dataclass
class _Probe:
    """Probing of one EV the NIC pinned a loss on."""

    due: int                      # when the next request may go
    answers: int = 0              # answered in a row
    sent_at: int | None = None    # the request awaiting its answer


def _write_opcode(index: int, count: int, immediate: bool) -> Opcode:
    if count == 1:
        return Opcode.WRITE_ONLY_IMM if immediate else Opcode.WRITE_ONLY
    if index == 0:
        return Opcode.WRITE_FIRST
    if index < count - 1:
        return Opcode.WRITE_MIDDLE
    return Opcode.WRITE_LAST_IMM if immediate else Opcode.WRITE_LAST


class Sender:
    """Writes to the peer over one connection; `poll` says what to hand the NIC, `on_frame`
    takes the SACKs, NACKs and report echoes the NIC hands back.

    Counters: `sent` first transmissions, `retransmitted` the others, by cause (`nack_trimmed`,
    `nack_lasthop`, `nack_oor`, `sack_hole`, `timeout`); `reports` loss reports, `probes`,
    `probe_answers`, `probe_timeouts`, `echoes` (reports the NIC sent back), `ignored` frames.
    """

    def __init__(self, config: ConnectionConfig) -> None:
        bind_roce_port(config.udp_port)
        self.config = config
        self.counters = dict.fromkeys(COUNTERS, 0)
        self._next_seq = 0
        self._next_msn = 0
        self._imm_count = 0
        self._unsent: deque[_Packet] = deque()
        self._in_flight: dict[int, _Packet] = {}   # sent, unacknowledged, in seq order
        self._resend: dict[int, str] = {}          # NACKed seq -> cause, waiting to go again
        self._highest_sacked = -1
        self._acked_order = -1                     # the latest transmission known to arrive
        self._order = 0
        self._messages: deque[_Message] = deque()  # not completed yet, in MSN order
        self._completed: list[int] = []
        self._probes: dict[int, _Probe] = {}

    # -- the application side ---------------------------------------------------------------

    def write(self, data: bytes, va: int, immediate: int | None = None) -> int:
        """Queue an RDMA write of `data` to the peer's address `va`; returns its message id
        (the MSN). With `immediate`, a write-with-immediate."""
        cfg = self.config
        if va < 0 or va + len(data) > 1 << 64:
            raise ValueError(f"write of {len(data)} bytes at {va:#x} leaves the 64-bit space")
        if immediate is not None and not 0 <= immediate < 1 << 32:
            raise ValueError(f"immediate does not fit in 32 bits: {immediate:#x}")
        msn = self._next_msn
        self._next_msn = (msn + 1) & 0xFFFF
        # RQ MSN: the receive WQE a write-with-immediate consumes (the count of earlier ones).
        rq_msn = self._imm_count & 0xFFFF
        self._imm_count += immediate is not None
        count = max(1, -(-len(data) // cfg.mtu))   # a zero-length write is one packet
        message = _Message(msn, count)
        self._messages.append(message)
        for index in range(count):
            last = index == count - 1
            packet = data_packet(
                src=cfg.local_addr, dst=cfg.peer_addr, dest_qp=cfg.peer_qp,
                psn=self._psn(self._next_seq),
                opcode=_write_opcode(index, count, immediate is not None),
                msn=msn, rq_msn=rq_msn, va=va + index * cfg.mtu, r_key=cfg.r_key,
                dma_length=len(data), payload=data[index * cfg.mtu:(index + 1) * cfg.mtu],
                immediate=immediate if last else None, udp_dport=cfg.udp_port)
            self._unsent.append(_Packet(self._next_seq, message, packet))
            self._next_seq += 1
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

    def poll(self, now_us: int) -> list[bytes]:
        """The frames to hand the NIC now: probe timeouts and requests, loss reports and
        retransmissions, then new packets within the window."""
        frames: list[bytes] = []
        self._poll_probes(now_us, frames)
        base = self._base()
        for pkt in list(self._in_flight.values()):
            cause = self._resend_cause(pkt, now_us, base)
            if cause == "timeout":
                # Before the retransmission: the NIC pins the loss on the EV its PSN last left
                # on, and the retransmission overwrites that.
                frames.append(self._to_nic(OP_EV_REPORT, pkt.psn, 0))
                self.counters["reports"] += 1
            if cause is not None:
                self._transmit(pkt, now_us, frames, cause)
        while self._unsent and self._unsent[0].seq - base < self.config.window:
            self._transmit(self._unsent.popleft(), now_us, frames, None)
        return frames

    def on_frame(self, frame: bytes | Packet, now_us: int) -> None:
        """A SACK, NACK or report echo from the NIC (decapsulated); anything else is ignored."""
        pkt = dissect(frame)
        bth = None if pkt is None else pkt.getlayer(BTH)
        if pkt is None or bth is None:
            self.counters["ignored"] += 1
        elif (sack := sack_fields(pkt)) is not None:
            self._on_sack(sack, now_us)
        elif (nack := nack_fields(pkt)) is not None:
            self._on_nack(nack)
        elif bth.opcode == OP_EV_REPORT and len(echo := bytes(bth.payload)) >= len(PETH()):
            self._on_echo(PETH(echo).probe_id, now_us)
        else:
            self.counters["ignored"] += 1

    # -- internals -----------------------------------------------------------------------------

    def _psn(self, seq: int) -> int:
        return psn_add(self.config.initial_psn, seq)

    def _first_unsent(self) -> int:
        return self._unsent[0].seq if self._unsent else self._next_seq

    def _base(self) -> int:
        """The oldest unacknowledged seq (the next to send when nothing is in flight)."""
        return next(iter(self._in_flight), self._first_unsent())

    def _seq(self, psn: int) -> int:
        base = self._base()
        return base + psn_diff(psn, self._psn(base))

    def _resend_cause(self, pkt: _Packet, now: int, base: int) -> str | None:
        cause = self._resend.get(pkt.seq)
        if cause is not None:
            if cause == "nack_oor" and pkt.seq - base >= RECEIVER_BITMAP:
                return None   # held until the receiver's window reaches it
            return cause
        if now - pkt.sent_at >= self.config.rto_us:
            return "timeout"
        # A hole: SACKed PSNs beyond it, one of them sent after it (so not merely overtaken by
        # a later SACK of an older transmission), the packet older than the reordering
        # allowance (spraying reorders: a packet queued on one plane is overtaken by the ones
        # sent after it on another), at most once per RTO.
        if (pkt.seq < self._highest_sacked and pkt.order < self._acked_order
                and now - pkt.sent_at >= self.config.reorder_us
                and (pkt.hole_at is None or now - pkt.hole_at >= self.config.rto_us)):
            return "sack_hole"
        return None

    def _transmit(self, pkt: _Packet, now: int, frames: list[bytes], cause: str | None) -> None:
        if cause is None:
            self.counters["sent"] += 1
            self._in_flight[pkt.seq] = pkt
        else:
            pkt.retries += 1
            if pkt.retries > self.config.max_retries:
                raise RetryLimitExceeded(pkt.psn, pkt.retries - 1)
            self._resend.pop(pkt.seq, None)
            pkt.packet[BTH].retransmit = 1
            pkt.hole_at = now
            self.counters["retransmitted"] += 1
            self.counters[cause] += 1
        pkt.sent_at = now
        pkt.order = self._order
        self._order += 1
        frames.append(bytes(pkt.packet))

    def _on_sack(self, sack: dict[str, Any], now: int) -> None:
        cack = self._seq(sack["cack_psn"])
        sacked = {self._seq(psn) for psn in
                  psns_acked(sack["cack_psn"], sack["sack_offset"], sack["sack_bitmap"])}
        for seq in [s for s in self._in_flight if s <= cack or s in sacked]:
            pkt = self._in_flight.pop(seq)
            self._resend.pop(seq, None)
            self._acked_order = max(self._acked_order, pkt.order)
            pkt.message.remaining -= 1
        self._highest_sacked = max(self._highest_sacked,
                                   min(max(sacked), self._first_unsent() - 1))
        while self._messages and self._messages[0].remaining == 0:
            self._completed.append(self._messages.popleft().msn)
        if not sack["probe_response"] and sack["m"] != SackM.ALWAYS_SKIP:
            return
        try:
            _, ev = split_ev(sack["entropy"])
        except ValueError:
            self.counters["ignored"] += 1
        else:
            if sack["probe_response"]:   # first, as in the NIC
                self._on_probe_answer(ev)
            else:
                # The NIC took the EV out of service on this SACK and echoes nothing: only
                # probes bring it back.
                self._start_probing(ev, now)

    def _on_nack(self, nack: dict[str, Any]) -> None:
        cause = _NACK_CAUSE.get(nack["nack_reason"])
        seq = self._seq(nack["nack_psn"])
        if cause is None or seq not in self._in_flight:
            self.counters["ignored"] += 1   # an unknown reason, or acknowledged meanwhile
        else:
            self._resend.setdefault(seq, cause)

    def _on_echo(self, probe_id: int, now: int) -> None:
        """The NIC pinned a loss (or a probe timeout) on EV probe_id."""
        self.counters["echoes"] += 1
        self._start_probing(probe_id & 0xFF, now)

    def _start_probing(self, ev: int, now: int) -> None:
        # The NIC's count of answers in a row starts over on every loss pinned on the EV.
        self._probes.setdefault(ev, _Probe(due=now)).answers = 0

    def _on_probe_answer(self, ev: int) -> None:
        probe = self._probes.get(ev)
        if probe is None or probe.sent_at is None:
            return   # late, or for an EV that is back already
        probe.sent_at = None
        probe.answers += 1
        self.counters["probe_answers"] += 1
        if probe.answers >= self.config.probe_successes:
            del self._probes[ev]   # the NIC has it GOOD again

    def _poll_probes(self, now: int, frames: list[bytes]) -> None:
        for ev, probe in self._probes.items():
            if probe.sent_at is not None and now - probe.sent_at >= self.config.rto_us:
                # Unanswered: the NIC's count of answers in a row starts over, and so does ours.
                frames.append(self._to_nic(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | ev))
                self.counters["probe_timeouts"] += 1
                probe.sent_at = None
                probe.answers = 0
            if probe.sent_at is None and now >= probe.due:
                frames.append(self._to_nic(Opcode.PROBE, 0, ev))
                self.counters["probes"] += 1
                probe.sent_at = now
                probe.due = now + self.config.probe_interval_us

    def _to_nic(self, opcode: int, psn: int, probe_id: int) -> bytes:
        """A loss report or probe request: BTH + PETH to the peer's QP, for this NIC only."""
        cfg = self.config
        return bytes(Ether(src=HOST_MAC, dst=NIC_MAC)
                     / IPv6(src=cfg.local_addr, dst=cfg.peer_addr, nh=17)
                     / UDP(sport=0, dport=cfg.udp_port)
                     / BTH(opcode=opcode, dest_qp=cfg.peer_qp, psn=psn)
                     / PETH(probe_id=probe_id))
