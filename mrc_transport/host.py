"""One host behind one NIC host port: a Sender and a Receiver for one connection, and the
dispatch of what the NIC hands up. (nic_host.NicHost: several connections behind one port.)"""

from __future__ import annotations

from scapy.packet import Packet

from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import NackFrame, SackFrame, WriteFrame, parse
from mrc_transport.receiver import Receiver
from mrc_transport.sender import FEEDBACK_OPCODES, Sender
from mrc_transport.wire import BTH, WRITE_OPCODES, dissect


class Host:
    """The host end of one connection: `poll` gives the frames for the NIC's host port,
    `on_frame` takes what the NIC delivers there; `unexpected` counts frames that are neither
    the peer's writes nor feedback for this host's sends. `next_deadline_us` is the sender's."""

    def __init__(self, config: ConnectionConfig, memory_size: int) -> None:
        self.config = config
        self.sender = Sender(config)
        self.receiver = Receiver(config, memory_size)
        self.unexpected = 0

    def poll(self, now_us: int) -> list[bytes]:
        # The receiving half sends nothing: the NIC builds SACKs and NACKs itself.
        return self.sender.poll(now_us)

    def next_deadline_us(self, now_us: int | None = None) -> int | None:
        """Sender.next_deadline_us: when `poll` next has frames if nothing arrives."""
        return self.sender.next_deadline_us(now_us)

    def on_frame(self, frame: bytes | Packet, now_us: int) -> None:
        if not isinstance(frame, Packet) and (parsed := parse(frame)) is not None:
            if isinstance(parsed, WriteFrame):
                self.receiver.on_parsed(parsed)
            elif isinstance(parsed, SackFrame | NackFrame) or parsed.opcode in FEEDBACK_OPCODES:
                self.sender.on_parsed(parsed, now_us)
            else:
                self.unexpected += 1
            return
        pkt = dissect(frame)   # once for both halves
        bth = None if pkt is None else pkt.getlayer(BTH)
        if pkt is None or bth is None:
            self.unexpected += 1
        elif bth.opcode in WRITE_OPCODES:
            self.receiver.on_frame(pkt)
        elif bth.opcode in FEEDBACK_OPCODES:
            self.sender.on_frame(pkt, now_us)
        else:
            self.unexpected += 1
