"""BMv2's `--packet-in` port backend: every port over one nanomsg/NNG PAIR socket.

The switch binds (listens on) the address; PTF's `nn` platform dials it. Each message starts with
a packed little-endian header of three 32-bit ints, ``type, port, more``:

======================  ========  ==================================================
type                    value     `more`
======================  ========  ==================================================
PORT_ADD / PORT_REMOVE  0 / 1     0
PORT_SET_STATUS         2         the status (see below)
PACKET_IN               3         packet length; the packet follows (peer → switch)
PACKET_OUT              4         packet length; the packet follows (switch → peer)
INFO_REQ / INFO_REP     5 / 6     the info type; the reply adds an int32 status
======================  ========  ==================================================

As BMv2 (without port enforcement), packets are accepted on any port whether or not it was
added, and every INFO_REQ is answered NOT_SUPPORTED. Port status values disagree between the two
sides (BMv2: DOWN 0 / UP 1; PTF sends UP 0 / DOWN 1); the status is only recorded, so it does
not matter.
"""

from __future__ import annotations

import enum
import logging
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass

import pynng

from softswitch.runtime.ports import PortError, Receive

log = logging.getLogger(__name__)

HEADER = struct.Struct("<iii")
INFO_STATUS = struct.Struct("<i")
INFO_STATUS_NOT_SUPPORTED = 1
RECV_TIMEOUT_MS = 100  # how often the receive thread looks at the stop flag (as BMv2)
SEND_TIMEOUT_MS = 2000  # a peer that stops reading makes us drop, not hang the dataplane
LOGGED_BAD_MESSAGES = 100  # bad messages logged one by one; after that one in 1,000


class MsgType(enum.IntEnum):
    PORT_ADD = 0
    PORT_REMOVE = 1
    PORT_SET_STATUS = 2
    PACKET_IN = 3
    PACKET_OUT = 4
    INFO_REQ = 5
    INFO_REP = 6


@dataclass(frozen=True, slots=True)
class NnMessage:
    type: int
    port: int
    more: int
    payload: bytes = b""


def encode(msg_type: int, port: int, more: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(msg_type, port, more) + payload


def decode(message: bytes) -> NnMessage:
    """Split a message into header and payload; raises ValueError when it is too short."""
    if len(message) < HEADER.size:
        raise ValueError(f"message of {len(message)} bytes is shorter than the header")
    msg_type, port, more = HEADER.unpack_from(message)
    return NnMessage(msg_type, port, more, bytes(message[HEADER.size:]))


def packet_out(port: int, data: bytes) -> bytes:
    """The switch → peer message carrying a transmitted packet."""
    return encode(MsgType.PACKET_OUT, port, len(data), data)


def packet_in(port: int, data: bytes) -> bytes:
    """The peer → switch message carrying a packet to receive (what PTF sends)."""
    return encode(MsgType.PACKET_IN, port, len(data), data)


class SkippedMessages:
    """Counts bad messages from one peer and logs the first LOGGED_BAD_MESSAGES, then one in
    1,000, so that a peer sending garbage cannot fill the disk through the log."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.count = 0

    def __call__(self, why: str) -> None:
        self.count += 1
        n = self.count
        if n <= LOGGED_BAD_MESSAGES:
            log.error("nanomsg message from %s skipped: %s", self.peer, why)
        elif n % 1000 == 0:
            log.error("nanomsg message from %s skipped: %s (%d bad messages so far; only one "
                      "in 1,000 is logged)", self.peer, why, n)


def receive_loop(sock: pynng.Socket, stop: threading.Event,
                 handle: Callable[[NnMessage], None], skipped: Callable[[str], None]) -> None:
    """Decode every message from `sock` and hand it to `handle` until `stop` is set or the
    socket closes; what cannot be read or decoded goes to `skipped` (the socket stays usable).
    Both ends of a nanomsg port run this: the switch (NanomsgPorts) and a host on it."""
    while not stop.is_set():
        try:
            message = sock.recv()
        except pynng.Timeout:
            continue
        except pynng.Closed:
            return
        except Exception as exc:
            # pynng cannot unpack an empty message (RuntimeError); the socket is fine.
            if stop.is_set():
                return
            skipped(f"empty or unreadable ({type(exc).__name__}: {exc})")
            continue
        try:
            msg = decode(message)
        except ValueError as exc:
            skipped(str(exc))
            continue
        handle(msg)


class NanomsgPorts:
    """All ports over one PAIR socket bound to `address` (``ipc://PATH`` or ``tcp://HOST:PORT``)."""

    def __init__(self, address: str) -> None:
        self.address = address
        try:
            self._socket = pynng.Pair0(recv_timeout=RECV_TIMEOUT_MS,
                                       send_timeout=SEND_TIMEOUT_MS)
            self._socket.listen(address)
        except pynng.NNGException as exc:
            raise PortError(f"cannot listen on {address}: {exc}") from exc
        self._port_status: dict[int, bool] = {}  # added ports → up
        self._status_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._skipped = SkippedMessages(address)

    def port_status(self) -> dict[int, bool]:
        """Ports the peer added, and whether it last set them up (BMv2's numbering)."""
        with self._status_lock:
            return dict(self._port_status)

    def start(self, receive: Receive) -> None:
        self._thread = threading.Thread(target=self._loop, args=(receive,),
                                        name=f"nanomsg {self.address}", daemon=True)
        self._thread.start()

    def send(self, port: int, data: bytes) -> None:
        try:
            self._socket.send(packet_out(port, data))
        except pynng.Timeout:
            log.warning("nanomsg peer not reading: packet out port %d dropped", port)
        except pynng.Closed:
            pass

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self._socket.close()

    def _loop(self, receive: Receive) -> None:
        def handle(msg: NnMessage) -> None:
            try:
                self._handle(msg, receive)
            except ValueError as exc:
                self._skipped(str(exc))
            except Exception:  # a failing device must not end the loop
                log.exception("nanomsg message from %s: handling failed", self.address)

        receive_loop(self._socket, self._stop, handle, self._skipped)

    @property
    def bad_messages(self) -> int:
        """Messages skipped: empty, shorter than the header, bad length, unknown type."""
        return self._skipped.count

    def _handle(self, msg: NnMessage, receive: Receive) -> None:
        match msg.type:
            case MsgType.PACKET_IN:
                if not 0 <= msg.more <= len(msg.payload):
                    raise ValueError(f"PACKET_IN on port {msg.port} says {msg.more} bytes, "
                                     f"{len(msg.payload)} follow")
                receive(msg.port, msg.payload[:msg.more])
            case MsgType.PORT_ADD:
                with self._status_lock:
                    self._port_status.setdefault(msg.port, True)
            case MsgType.PORT_REMOVE:
                with self._status_lock:
                    self._port_status.pop(msg.port, None)
            case MsgType.PORT_SET_STATUS:
                with self._status_lock:
                    if msg.port in self._port_status:
                        self._port_status[msg.port] = msg.more == 1
            case MsgType.INFO_REQ:
                reply = encode(MsgType.INFO_REP, msg.port, msg.more,
                               INFO_STATUS.pack(INFO_STATUS_NOT_SUPPORTED))
                self._socket.send(reply)
            case _:
                raise ValueError(f"unexpected message type {msg.type} (port {msg.port})")
