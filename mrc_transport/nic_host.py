"""A host behind one NIC host port running several connections (a ring all-reduce: one to the
successor, one from the predecessor; all-to-all: one per peer), each its own Sender and
Receiver, with the frames the NIC hands up demultiplexed to them.

The NIC addresses every packet of a connection that it hands up to the connection's local QP
(BTH dest_qp): the peer's writes (the peer sends to it) and the SACKs and NACKs for our sends
(the NIC writes it). The one exception is the echo of our own EV report, which comes back as we
sent it, to the peer's address and QP: those are found by (peer address, peer QP), which the
NIC's tx_connection table makes unique per NIC.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from scapy.layers.inet6 import IPv6
from scapy.packet import Packet

from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import NackFrame, OtherFrame, SackFrame, WriteFrame, parse
from mrc_transport.receiver import Receiver
from mrc_transport.sender import OP_EV_REPORT, Sender, TransportError
from mrc_transport.transmitter import Transmitter
from mrc_transport.wire import BTH, WRITE_OPCODES, Opcode, dissect


def _packed(address: str) -> bytes:
    """An IPv6 address as the 16 bytes of the header (scapy reads addresses the same way)."""
    try:
        return socket.inet_pton(socket.AF_INET6, address)
    except OSError:
        return socket.inet_pton(socket.AF_INET6, str(socket.getaddrinfo(
            address, None, socket.AF_INET6)[0][4][0]))


@dataclass
class Connection:
    """One connection of a NicHost. `error`: the TransportError that ended it (its sender is
    polled no more; what arrives for it is still taken)."""

    config: ConnectionConfig
    sender: Sender
    receiver: Receiver
    error: TransportError | None = None


class NicHost:
    """The host end of several connections behind one NIC host port.

    `add_connection(config)` for each (distinct local QPs, and distinct (peer address, peer
    QP)); the connections share one Transmitter, the NIC's wire at their `tx_gbps` (one NIC,
    one line rate: a connection with another is refused), as a NIC's scheduler serves its QPs
    from one line rate. `poll(now_us)` merges every live connection's frames, interleaved one
    at a time; on a paced wire the connections take new packets one at a time in turn (round
    robin), each poll that hands out frames starting one connection further (without the
    turn, the first connection added would take the wire first at every µs); each
    connection's own order is kept (a loss report stays ahead of its retransmission).
    `on_frame(frame, now_us)` hands a write to the receiver of its
    BTH dest_qp, feedback to that connection's sender, an EV-report echo to the sender of its
    (IPv6 destination, dest_qp). `unexpected` counts the rest: frames for no known QP, probes,
    frames that are not MRC at all.

    A connection's TransportError (RetryLimitExceeded) does not end the others: it is kept in
    `connection.error` (and `failed`), and that connection is not polled again.

    The receivers place into one `memory` of `memory_size` bytes (a host's one address space:
    peers write at the addresses they are given), unless a connection brings its own.
    """

    def __init__(self, memory_size: int = 0) -> None:
        self.memory = bytearray(memory_size)
        self.connections: list[Connection] = []
        self.unexpected = 0
        self._by_qp: dict[int, Connection] = {}
        self._by_peer: dict[tuple[bytes, int], Connection] = {}
        self._live: list[Connection] = []
        self._turn = 0   # the index in _live the next poll starts at
        self.transmitter: Transmitter | None = None   # set by the first connection

    def add_connection(self, config: ConnectionConfig,
                       memory: int | bytearray | None = None) -> Connection:
        """A new connection; `memory`: a size (its own fresh memory) or a bytearray for its
        receiver instead of the host's."""
        peer = (_packed(config.peer_addr), config.peer_qp)
        if config.local_qp in self._by_qp:
            raise ValueError(f"local QP {config.local_qp:#x} is taken")
        if peer in self._by_peer:
            raise ValueError(f"a connection to QP {config.peer_qp:#x} of {config.peer_addr} "
                             "exists")
        if self.transmitter is None:
            self.transmitter = Transmitter(config.tx_gbps)
        elif config.tx_gbps != self.transmitter.gbps:
            raise ValueError(f"connection to QP {config.peer_qp:#x} of {config.peer_addr}: "
                             f"tx_gbps {config.tx_gbps} is not this NIC's "
                             f"{self.transmitter.gbps}")
        connection = Connection(config, Sender(config, self.transmitter),
                                Receiver(config, self.memory if memory is None else memory))
        self.connections.append(connection)
        self._live.append(connection)
        self._by_qp[config.local_qp] = connection
        self._by_peer[peer] = connection
        return connection

    def connection(self, local_qp: int) -> Connection:
        """The connection of this local QP (KeyError if none)."""
        return self._by_qp[local_qp]

    def sender(self, local_qp: int) -> Sender:
        return self._by_qp[local_qp].sender

    def receiver(self, local_qp: int) -> Receiver:
        return self._by_qp[local_qp].receiver

    @property
    def failed(self) -> list[Connection]:
        """Connections a TransportError ended, in the order they were added."""
        return [c for c in self.connections if c.error is not None]

    @property
    def done(self) -> bool:
        """Every live connection's writes are all acknowledged."""
        return all(c.sender.done for c in self._live)

    # -- the NIC side --------------------------------------------------------------------------

    def poll(self, now_us: int) -> list[bytes]:
        """Every live connection's frames for the NIC now, interleaved one at a time, from
        this poll's turn on (one further after each poll that hands out frames) in the order
        the connections were added. Only connections with
        something due are polled (Sender.poll_if_due): a poll costs what the connections that
        act cost. On a paced wire the connections take new packets one at a time in turn
        while the wire is free (a NIC's round robin over its QPs): a connection's window does
        not go out as one burst to one receiver while the others wait."""
        live = self._live
        if not live:
            return []
        start = self._turn % len(live)
        # Turns only matter between connections sharing a paced wire (the first connection
        # set it).
        paced = len(live) > 1 and self.transmitter is not None and self.transmitter.gbps > 0
        limit = 1 if paced else None
        batches: list[list[bytes]] = []
        sending: list[tuple[Sender, list[bytes]]] = []
        for connection in live[start:] + live[:start]:
            try:
                frames = connection.sender.poll_if_due(now_us, limit)
            except TransportError as error:
                connection.error = error
                live.remove(connection)
                continue
            if frames:
                batches.append(frames)
                if paced:
                    sending.append((connection.sender, frames))
        if sending:
            self._round_robin(now_us, sending)
        if batches:
            # The next turn: only a poll that hands out frames moves it (a poll with nothing
            # to do changes nothing, however often a loop calls it).
            self._turn = start + 1
        if len(batches) <= 1:
            return batches[0] if batches else []
        merged: list[bytes] = []
        for index in range(max(len(b) for b in batches)):
            merged.extend(b[index] for b in batches if index < len(b))
        return merged

    def _round_robin(self, now_us: int, sending: list[tuple[Sender, list[bytes]]]) -> None:
        """One more new packet from each connection in turn while the wire is free at
        `now_us`, each appended to that connection's frames; a connection with none to send
        drops out."""
        wire = self.transmitter
        assert wire is not None
        while sending:
            still: list[tuple[Sender, list[bytes]]] = []
            for sender, frames in sending:
                if wire.ready_us() > now_us:
                    return
                more = sender.send_new(now_us, 1)
                if more:
                    frames.extend(more)
                    still.append((sender, frames))
            sending = still

    def next_deadline_us(self, now_us: int | None = None) -> int | None:
        """The earliest of the live connections' Sender.next_deadline_us (None: none has a
        timer or anything to send; only arriving frames or writes can change that)."""
        due: int | None = None
        for connection in self._live:
            t = connection.sender.next_deadline_us(now_us)
            if t is not None and (due is None or t < due):
                due = t
        return due

    def on_frame(self, frame: bytes | Packet, now_us: int) -> None:
        """A frame from the NIC's host port, to the connection it names."""
        if not isinstance(frame, Packet) and (parsed := parse(frame)) is not None:
            kind = type(parsed)
            if kind is WriteFrame or kind is SackFrame or kind is NackFrame:
                connection = self._by_qp.get(parsed.dest_qp)
                if connection is None:
                    self.unexpected += 1
                elif kind is WriteFrame:
                    connection.receiver.on_parsed(parsed)
                else:
                    connection.sender.on_parsed(parsed, now_us)
            elif isinstance(parsed, OtherFrame) and parsed.opcode == OP_EV_REPORT:
                connection = self._by_peer.get((parsed.dst, parsed.dest_qp))
                if connection is None:
                    self.unexpected += 1
                else:
                    connection.sender.on_parsed(parsed, now_us)
            else:
                self.unexpected += 1
            return
        self._on_dissected(dissect(frame), now_us)

    def _on_dissected(self, pkt: Packet | None, now_us: int) -> None:
        """What fastwire.parse leaves to scapy (odd frames), dispatched the same way."""
        bth = None if pkt is None else pkt.getlayer(BTH)
        if pkt is None or bth is None:
            self.unexpected += 1
            return
        opcode = bth.opcode
        connection: Connection | None = None
        if opcode in WRITE_OPCODES or opcode in (Opcode.SACK, Opcode.NACK):
            connection = self._by_qp.get(bth.dest_qp)
        elif opcode == OP_EV_REPORT:
            ip = bth.underlayer.underlayer if bth.underlayer is not None else None
            if isinstance(ip, IPv6):
                connection = self._by_peer.get((_packed(ip.dst), bth.dest_qp))
        if connection is None:
            self.unexpected += 1
        elif opcode in WRITE_OPCODES:
            connection.receiver.on_frame(pkt)
        else:
            connection.sender.on_frame(pkt, now_us)
