"""The frames a host exchanges with its NIC, built and read at the byte level (struct, precomputed
header templates): the per-packet paths of the transport, without scapy.

Bit-exact with the scapy layers of wire.py, which stay the reference (tests/unit/
test_mrc_transport_fast.py checks both ways on random field values and on cut and mangled
frames):

- `FrameBuilder(...).data(...)` is `bytes(data_packet(...))` for one connection's fixed fields
  (addresses, MACs, QP, R_Key, UDP ports), `.control(...)` a probe request or an EV report
  (BTH + PETH), `set_retransmit(frame)` the same frame with BTH.retransmit set (the UDP checksum
  mended, not recomputed);
- `parse(frame)` reads a plain (decapsulated) frame as the NIC hands it to its host:
  Ether / IPv6 / UDP to a RoCE port / BTH, then the write, SACK or NACK headers the opcode
  promises. It returns `None` whenever scapy's dissection could differ from the plain reading (a
  layer cut short, another EtherType or next header, a UDP port not bound to BTH first, ...):
  the caller then falls back to wire.dissect, so odd frames are handled exactly as before.
"""

from __future__ import annotations

import struct
from typing import Any, Final, NamedTuple

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.wire import (
    BTH,
    HOST_MAC,
    IMM_OPCODES,
    NIC_MAC,
    ROCE_UDP_PORT,
    WRITE_OPCODES,
    Opcode,
    _check_bits,
)
from mrc_transport.word_sum import word_sum_function

ETHERTYPE_IPV6: Final = 0x86DD
UDP_NH: Final = 17
UDP_AT: Final = 14 + 40          # Ethernet, IPv6
CHECKSUM_AT: Final = UDP_AT + 6
BTH_AT: Final = UDP_AT + 8
AFTER_BTH: Final = BTH_AT + 12
RETRANSMIT_AT: Final = BTH_AT + 8   # the byte of A | R | RTX | TS
RETRANSMIT_BIT: Final = 0x20
PETH_BYTES: Final = 16

_WRITES: Final = frozenset(int(op) for op in WRITE_OPCODES)
_IMMS: Final = frozenset(int(op) for op in IMM_OPCODES)
_SACK: Final = int(Opcode.SACK)
_NACK: Final = int(Opcode.NACK)

# From the EtherType to the end of BTH: EtherType, IPv6 plen, nh, dst, UDP dport and length,
# BTH opcode, reserved0 + dest_qp, flags + PSN.
_HEAD: Final = struct.Struct("!H4xHB17x16s2xHH2xB3xII")
_BTH: Final = struct.Struct("!BBHII")              # opcode, SE|M|pad|tver, pkey, QP, flags|PSN
_WRITE_HDR: Final = struct.Struct("!BBHIIHHQII")   # BTH, METH, RETH
_WRITE_IMM_HDR: Final = struct.Struct("!BBHIIHHQIII")   # BTH, METH, RETH, ImmDt
_METH_RETH: Final = struct.Struct("!HHQII")
_SETH_CC: Final = struct.Struct("!HhIHHIBBhQ")     # SETH (CCState is not read)
_NETH: Final = struct.Struct("!HBBIHHI")           # NETH through nack_psn
_LENGTHS: Final = struct.Struct("!HH")
_PLEN: Final = struct.Struct("!H")


class WriteFrame(NamedTuple):
    """A write packet: BTH, METH, RETH [, ImmDt] fields and the payload."""

    opcode: int
    dest_qp: int
    psn: int
    rq_msn: int
    msn: int
    virtual_address: int
    r_key: int
    dma_length: int
    immediate: int | None   # ImmDt.data of the *_IMM opcodes
    payload: bytes


class SackFrame(NamedTuple):
    """A SACK: the BTH and SETH fields the sender reads (CCState is there, unread)."""

    dest_qp: int
    psn: int
    m: int
    probe_response: int
    entropy: int
    port_state: int
    cack_psn: int
    sack_offset: int
    sack_bitmap: int
    spdcid: int = 0   # as the NIC hands it over: its loss note (Sender._on_sack)


class NackFrame(NamedTuple):
    """A NACK: the BTH and NETH fields the sender reads."""

    dest_qp: int
    psn: int
    nack_reason: int
    entropy: int
    port_state: int
    nack_psn: int


class OtherFrame(NamedTuple):
    """Any other opcode with a whole BTH (an EV-report echo, a probe, ...): `dst` is the IPv6
    destination (16 bytes), `tail` everything after BTH (what `bytes(pkt[BTH].payload)` gives:
    the BTH payload and any padding)."""

    opcode: int
    dest_qp: int
    psn: int
    dst: bytes
    tail: bytes


Parsed = WriteFrame | SackFrame | NackFrame | OtherFrame

# The UDP ports scapy dissects as BTH without looking further: the leading run of our own
# bindings in UDP.payload_guess (bind_roce_port puts each first). Recomputed when the list
# changes (scapy's binding functions and bind_roce_port assign a new one).
_guesses: list[Any] | None = None
_guesses_len = -1
_ports: frozenset[int] = frozenset()


def roce_ports() -> frozenset[int]:
    """The UDP destination ports a frame may have for parse() to read it."""
    global _guesses, _guesses_len, _ports
    guesses: list[Any] = UDP.payload_guess
    if guesses is not _guesses or len(guesses) != _guesses_len:
        ports = set()
        for fval, cls in guesses:
            if cls is not BTH or set(fval) != {"dport"}:
                break
            ports.add(fval["dport"])
        _guesses, _guesses_len, _ports = guesses, len(guesses), frozenset(ports)
    return _ports


def parse(frame: bytes) -> Parsed | None:
    """A frame from the NIC's host port read without scapy; None: read it with scapy."""
    n = len(frame)
    if n < AFTER_BTH:
        return None
    etype, plen, nh, dst, dport, ulen, opcode, qp, psn = _HEAD.unpack_from(frame, 12)
    if etype != ETHERTYPE_IPV6 or nh != UDP_NH:
        return None
    if dport not in roce_ports():
        return None
    # scapy cuts the IPv6 payload at plen and the UDP payload at its length (the rest is
    # padding): the headers must fit in both.
    end = UDP_AT + (plen if plen < ulen else ulen)
    if end > n:
        end = n
    if end < AFTER_BTH:
        return None
    qp &= 0xFFFFFF
    psn &= 0xFFFFFF
    if opcode in _WRITES:
        if opcode in _IMMS:
            if end < AFTER_BTH + 24:
                return None
            rq_msn, msn, va, r_key, length = _METH_RETH.unpack_from(frame, AFTER_BTH)
            imm = int.from_bytes(frame[AFTER_BTH + 20:AFTER_BTH + 24])
            return WriteFrame(opcode, qp, psn, rq_msn, msn, va, r_key, length, imm,
                              frame[AFTER_BTH + 24:end])
        if end < AFTER_BTH + 20:
            return None
        rq_msn, msn, va, r_key, length = _METH_RETH.unpack_from(frame, AFTER_BTH)
        return WriteFrame(opcode, qp, psn, rq_msn, msn, va, r_key, length, None,
                          frame[AFTER_BTH + 20:end])
    if opcode == _SACK:
        if end < AFTER_BTH + 36:   # SETH and CCState
            return None
        (bits, _, entropy, gap, _, cack, _, _, offset,
         bitmap) = _SETH_CC.unpack_from(frame, AFTER_BTH)
        return SackFrame(qp, psn, bits >> 5 & 3, bits >> 1 & 1, entropy, cack >> 24,
                         cack & 0xFFFFFF, offset, bitmap, gap)
    if opcode == _NACK:
        if end < AFTER_BTH + 20:
            return None
        _, reason, _, entropy, _, _, npsn = _NETH.unpack_from(frame, AFTER_BTH)
        return NackFrame(qp, psn, reason, entropy, npsn >> 24, npsn & 0xFFFFFF)
    return OtherFrame(opcode, qp, psn, dst, frame[AFTER_BTH:])


def _udp_checksum(total: int) -> int:
    """The UDP checksum from the sum of the 16-bit words it covers (pseudo-header included):
    2**16 = 1 mod 0xFFFF, so the one's-complement sum is the sum mod 0xFFFF; 0 is sent as
    0xFFFF, as scapy does."""
    return 0xFFFF - total % 0xFFFF


def set_retransmit(frame: bytes) -> bytes:
    """A frame built by FrameBuilder with BTH.retransmit set and its UDP checksum mended."""
    flags = frame[RETRANSMIT_AT]
    if flags & RETRANSMIT_BIT:
        return frame
    (checksum,) = _PLEN.unpack_from(frame, CHECKSUM_AT)
    # The flags byte is the high byte of an even-offset word: the sum grows by 0x2000.
    checksum = _udp_checksum(0xFFFF - checksum + (RETRANSMIT_BIT << 8))
    return b"".join((frame[:CHECKSUM_AT], _PLEN.pack(checksum), frame[CHECKSUM_AT + 2:RETRANSMIT_AT],
                     bytes((flags | RETRANSMIT_BIT,)), frame[RETRANSMIT_AT + 1:]))


class FrameBuilder:
    """The frames a host hands its NIC for one connection, as wire.data_packet and the sender's
    probes and reports build them with scapy, from templates made once (by scapy, so the
    addresses are read exactly as scapy reads them)."""

    def __init__(self, *, src: str, dst: str, dest_qp: int, r_key: int = 0, udp_sport: int = 0,
                 udp_dport: int = ROCE_UDP_PORT, smac: str = HOST_MAC, dmac: str = NIC_MAC,
                 ) -> None:
        _check_bits("dest_qp", dest_qp, 24)
        head = bytes(Ether(src=smac, dst=dmac) / IPv6(src=src, dst=dst, nh=UDP_NH, hlim=64)
                     / UDP(sport=udp_sport, dport=udp_dport, chksum=0))
        self.dest_qp = dest_qp
        self.r_key = r_key
        self._head = head[:18]             # Ethernet, IPv6 version / class / flow label
        self._middle = head[20:UDP_AT + 4]  # IPv6 nh, hop limit, addresses; UDP ports
        # The words every frame's checksum covers: the pseudo-header's addresses and next
        # header, the UDP ports (the two lengths, IPv6's and UDP's, are added per frame).
        self._fixed = int.from_bytes(head[22:UDP_AT]) + UDP_NH + udp_sport + udp_dport
        self._payload_sum = word_sum_function()

    def _frame(self, headers: bytes, payload: bytes) -> bytes:
        length = 8 + len(headers) + len(payload)
        total = (self._fixed + 2 * length + int.from_bytes(headers)
                 + self._payload_sum(payload))
        return b"".join((self._head, _PLEN.pack(length), self._middle,
                         _LENGTHS.pack(length, _udp_checksum(total)), headers, payload))

    def data(self, *, psn: int, opcode: int, msn: int, rq_msn: int = 0, va: int,
             dma_length: int, payload: bytes, immediate: int | None = None,
             retransmit: bool = False, ack_req: bool = False) -> bytes:
        """bytes(data_packet(...)) with this builder's addresses, QP, R_Key and ports; the same
        checks (a write opcode, the immediate with the *_IMM ones only, a 24-bit PSN)."""
        if opcode not in _WRITES:
            raise ValueError(f"not a write opcode: {opcode:#x}")
        if (immediate is not None) != (opcode in _IMMS):
            raise ValueError(f"opcode {opcode:#x} and immediate={immediate!r} do not go together")
        _check_bits("psn", psn, 24)
        flags = (0x80_000000 if ack_req else 0) | (0x20_000000 if retransmit else 0)
        if immediate is None:
            headers = _WRITE_HDR.pack(opcode, 0, 0xFFFF, self.dest_qp, flags | psn, rq_msn,
                                      msn, va, self.r_key, dma_length)
        else:
            headers = _WRITE_IMM_HDR.pack(opcode, 0, 0xFFFF, self.dest_qp, flags | psn, rq_msn,
                                          msn, va, self.r_key, dma_length, immediate)
        return self._frame(headers, payload)

    def control(self, opcode: int, psn: int, probe_id: int) -> bytes:
        """BTH(opcode, dest_qp, psn) / PETH(probe_id): a probe request or an EV report."""
        _check_bits("psn", psn, 24)
        return self._frame(_BTH.pack(opcode, 0, 0xFFFF, self.dest_qp, psn)
                           + probe_id.to_bytes(2) + bytes(PETH_BYTES - 2), b"")


def data_frame(*, src: str, dst: str, dest_qp: int, r_key: int, udp_sport: int = 0,
               udp_dport: int = ROCE_UDP_PORT, smac: str = HOST_MAC, dmac: str = NIC_MAC,
               **fields: Any) -> bytes:
    """bytes(wire.data_packet(**same arguments)), built without scapy layers per packet."""
    builder = FrameBuilder(src=src, dst=dst, dest_qp=dest_qp, r_key=r_key, udp_sport=udp_sport,
                           udp_dport=udp_dport, smac=smac, dmac=dmac)
    return builder.data(**fields)
