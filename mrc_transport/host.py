"""One host behind one NIC host port: a Sender and a Receiver for one connection, and the
dispatch of what the NIC hands up."""

from __future__ import annotations

from scapy.layers.l2 import Ether

from mrc_transport.config import ConnectionConfig
from mrc_transport.receiver import Receiver
from mrc_transport.sender import FEEDBACK_OPCODES, Sender
from mrc_transport.wire import BTH, WRITE_OPCODES


class Host:
    """The host end of one connection: `poll` gives the frames for the NIC's host port,
    `on_frame` takes what the NIC delivers there; `unexpected` counts frames that are neither
    the peer's writes nor feedback for this host's sends."""

    def __init__(self, config: ConnectionConfig, memory_size: int) -> None:
        self.config = config
        self.sender = Sender(config)
        self.receiver = Receiver(config, memory_size)
        self.unexpected = 0

    def poll(self, now_us: int) -> list[bytes]:
        # The receiving half sends nothing: the NIC builds SACKs and NACKs itself.
        return self.sender.poll(now_us)

    def on_frame(self, frame: bytes, now_us: int) -> None:
        pkt = Ether(frame)   # dissected once for both halves
        bth = pkt.getlayer(BTH)
        opcode = None if bth is None else bth.opcode
        if opcode in WRITE_OPCODES:
            self.receiver.on_frame(pkt)
        elif opcode in FEEDBACK_OPCODES:
            self.sender.on_frame(pkt, now_us)
        else:
            self.unexpected += 1
