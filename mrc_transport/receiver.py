"""The receiving half of one MRC connection: each write packet's payload is placed at its RETH
address on arrival (RETH is in every packet: no reorder buffer), the bytes that arrived are
tracked per message (by MSN), and messages complete in MSN order."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Final

from scapy.packet import Packet, Padding, Raw

from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import Parsed, WriteFrame, parse
from mrc_transport.wire import (
    BTH,
    IMM_OPCODES,
    METH,
    RETH,
    WRITE_OPCODES,
    ImmDt,
    Opcode,
    bind_roce_port,
    dissect,
)

# The packets that carry a message's extent (RETH va = start, dma_length = total length) and
# the ones that end it.
_OPENING: Final = frozenset({Opcode.WRITE_FIRST, Opcode.WRITE_ONLY, Opcode.WRITE_ONLY_IMM})
_CLOSING: Final = frozenset({Opcode.WRITE_LAST, *IMM_OPCODES, Opcode.WRITE_ONLY})
COUNTERS: Final = ("placed", "duplicates", "bad_va", "bad_r_key", "foreign", "malformed")

Completion = tuple[int, int, int, int | None]   # (msn, va, length, immediate)


@dataclass
class _Message:
    start: int | None = None
    length: int = 0
    closed: bool = False           # its last packet arrived
    immediate: int | None = None
    arrived: list[tuple[int, int]] = field(default_factory=list)   # disjoint [lo, hi), sorted

    def add(self, lo: int, hi: int) -> None:
        """[lo, hi) arrived: merged with the ranges it overlaps or touches."""
        arrived = self.arrived
        i = j = bisect_left(arrived, lo, key=_start)   # the ranges from i on start at lo or later
        if i and arrived[i - 1][1] >= lo:
            i -= 1
            lo, hi = arrived[i][0], max(hi, arrived[i][1])
        while j < len(arrived) and arrived[j][0] <= hi:
            hi = max(hi, arrived[j][1])
            j += 1
        arrived[i:j] = [(lo, hi)]

    def completion(self) -> tuple[int, int, int | None] | None:
        """(va, length, immediate) once every byte and the last packet have arrived."""
        if self.start is None or not self.closed:
            return None
        end = self.start + self.length
        if self.length and not any(a <= self.start and end <= b for a, b in self.arrived):
            return None
        return self.start, self.length, self.immediate


def _start(extent: tuple[int, int]) -> int:
    return extent[0]


def _payload(layer: Packet) -> bytes:
    # Padding is not payload (a frame longer than its IPv6 length).
    return layer.load if isinstance(layer, Raw) and not isinstance(layer, Padding) else b""


class Receiver:
    """The peer's writes into `memory` (a bytearray of `memory_size` bytes, address 0 first).

    A packet with a bad address or length, a foreign QP or a wrong R_Key is counted and ignored;
    nothing raises. Counters: `placed`, `duplicates` (packets of completed messages), `bad_va`,
    `bad_r_key`, `foreign`, `malformed`.
    """

    def __init__(self, config: ConnectionConfig, memory_size: int | bytearray) -> None:
        """`memory_size`: the size of a fresh memory, or a bytearray to place into (one
        memory shared by several connections' receivers, as a host's is)."""
        bind_roce_port(config.udp_port)
        self.config = config
        self.memory = (memory_size if isinstance(memory_size, bytearray)
                       else bytearray(memory_size))
        self.counters = dict.fromkeys(COUNTERS, 0)
        self._messages: dict[int, _Message] = {}   # by MSN counted without wrapping
        self._next = 0                             # the next message to complete
        self._ready: list[Completion] = []

    def on_frame(self, frame: bytes | Packet) -> None:
        """One decapsulated write packet from the NIC."""
        if not isinstance(frame, Packet) and (parsed := parse(frame)) is not None:
            self.on_parsed(parsed)
            return
        pkt = dissect(frame)
        if pkt is None:
            self.counters["malformed"] += 1
            return
        bth, meth, reth = pkt.getlayer(BTH), pkt.getlayer(METH), pkt.getlayer(RETH)
        if bth is None or meth is None or reth is None or bth.opcode not in WRITE_OPCODES:
            self.counters["malformed"] += 1
            return
        imm = pkt.getlayer(ImmDt)
        self._on_write(bth.opcode, bth.dest_qp, meth.msn, int(reth.virtual_address),
                       reth.r_key, int(reth.dma_length), None if imm is None else int(imm.data),
                       bth.opcode in IMM_OPCODES and imm is None,
                       _payload(imm.payload if imm is not None else reth.payload))

    def on_parsed(self, parsed: Parsed) -> None:
        """on_frame for a frame fastwire.parse() has read."""
        if not isinstance(parsed, WriteFrame):
            self.counters["malformed"] += 1
            return
        self._on_write(parsed.opcode, parsed.dest_qp, parsed.msn, parsed.virtual_address,
                       parsed.r_key, parsed.dma_length, parsed.immediate, False, parsed.payload)

    def _on_write(self, opcode: int, dest_qp: int, msn: int, va: int, r_key: int,
                  dma_length: int, immediate: int | None, imm_missing: bool,
                  data: bytes) -> None:
        if dest_qp != self.config.local_qp:
            self.counters["foreign"] += 1
            return
        if r_key != self.config.r_key:
            self.counters["bad_r_key"] += 1
            return
        if imm_missing:
            self.counters["malformed"] += 1
            return
        ahead = (msn - self._next) & 0xFFFF
        if ahead >= 0x8000:
            self.counters["duplicates"] += 1   # a message that completed already
            return
        self._place(self._next + ahead, opcode, va, dma_length, data, immediate)

    def completions(self) -> list[Completion]:
        """(msn, va, length, immediate or None) of the messages completed since the last call,
        in MSN order: a message completes when it and every earlier one have fully arrived."""
        ready, self._ready = self._ready, []
        return ready

    def _place(self, index: int, opcode: int, va: int, dma_length: int, data: bytes,
               immediate: int | None) -> None:
        end = va + len(data)
        message = self._messages.get(index)
        if message is None:
            message = _Message()
        start, length = ((va, dma_length) if opcode in _OPENING
                         else (message.start, message.length))
        if start is None:   # a later packet overtook the first: the memory bounds it
            fits = end <= len(self.memory)
        else:
            fits = start <= va and end <= start + length <= len(self.memory)
        if not fits:
            self.counters["bad_va"] += 1
            return
        self.memory[va:end] = data
        message.start, message.length = start, length
        message.add(va, end)
        message.closed |= opcode in _CLOSING
        if opcode in IMM_OPCODES:
            message.immediate = immediate
        self._messages[index] = message
        self.counters["placed"] += 1
        while (ready := self._messages.get(self._next)) is not None and (
                done := ready.completion()) is not None:
            del self._messages[self._next]
            self._ready.append((self._next & 0xFFFF, *done))
            self._next += 1
