"""Frame ports: where a host transport's frames go to and come from, one interface for every kind
of link to a NIC (or to anything else with Ethernet ports).

- `NanomsgDevice(address).port(n)`: port `n` of a switch reached over one nanomsg PAIR socket,
  framed as `softswitch run --packet-in` / simple_switch_grpc `--packet-in` and PTF's `nn`
  platform frame it (one socket carries every port of the device: frames are demultiplexed by
  port number).
- `RawSocketPort(interface)`: a Linux interface through AF_PACKET (root), e.g. one end of a veth
  pair whose other end is simple_switch_grpc's or `softswitch run`'s `-i PORT@IFACE`.
- `FabricPort(host)`: a host of an in-process `softswitch.fabric.Fabric`.

The nanomsg and raw-socket ports queue what arrives (their backends receive on threads of their
own), so `recv` only waits on a queue; a fabric host keeps its own list. `send` never raises for
a frame the link refuses (it is lost, as on a wire) but does (PortClosed) on a closed port.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Protocol

import pynng

from softswitch.runtime.ports.afpacket import AfPacketPort
from softswitch.runtime.ports.nanomsg import (
    MsgType,
    NnMessage,
    SkippedMessages,
    encode,
    packet_in,
    receive_loop,
)

if TYPE_CHECKING:   # the fabric (and the engine behind it) is only needed by who has one
    from softswitch.fabric import Host as FabricHost

log = logging.getLogger(__name__)

QUEUE_FRAMES = 65536   # frames held per port before the oldest are dropped (a reader stalled)
_RECV_POLL_MS = 100     # how often a receive thread looks at its stop flag
_SEND_TIMEOUT_MS = 2000


class PortClosed(Exception):
    """The port (or its device) is closed."""


class FramePort(Protocol):
    """One Ethernet port: frames out with `send`, in with `recv`."""

    def send(self, frame: bytes) -> None: ...

    def recv(self, timeout: float) -> bytes | None:
        """The next frame, or None when none arrives within `timeout` s (0: do not wait)."""
        ...

    def close(self) -> None: ...


class _Inbox:
    """A bounded queue of received frames; full, it drops the oldest (a link that overflows
    loses packets rather than blocking the receive thread that feeds several ports)."""

    def __init__(self, limit: int = QUEUE_FRAMES) -> None:
        self._queue: queue.Queue[bytes] = queue.Queue(limit)
        self.dropped = 0

    def put(self, frame: bytes) -> None:
        while True:
            try:
                self._queue.put_nowait(frame)
                return
            except queue.Full:
                with contextlib.suppress(queue.Empty):
                    self._queue.get_nowait()
                    self.dropped += 1

    def get(self, timeout: float) -> bytes | None:
        try:
            if timeout <= 0:
                return self._queue.get_nowait()
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None


# -- nanomsg ----------------------------------------------------------------------------------


class NanomsgDevice:
    """Every port of one device over one nanomsg PAIR socket, dialled at `address`
    (``ipc://PATH`` or ``tcp://HOST:PORT``, the switch's `--packet-in`).

    The switch may not listen yet: dialling is retried for `connect_timeout` s. Counters:
    `bad_messages` (too short, bad length or unknown type: logged, skipped), `unclaimed`
    (packets for a port nobody asked for with `port`).
    """

    def __init__(self, address: str, *, connect_timeout: float = 10.0) -> None:
        self.address = address
        self._skipped = SkippedMessages(address)
        self.unclaimed = 0
        self._inboxes: dict[int, _Inbox] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._socket = pynng.Pair0(recv_timeout=_RECV_POLL_MS, send_timeout=_SEND_TIMEOUT_MS)
        deadline = time.monotonic() + connect_timeout
        while True:
            try:
                self._socket.dial(address, block=True)
                break
            except pynng.NNGException as exc:
                if time.monotonic() >= deadline:
                    self._socket.close()
                    raise ConnectionError(f"cannot dial {address}: {exc}") from exc
                time.sleep(0.05)
        self._thread = threading.Thread(target=self._loop, name=f"nanomsg {address}",
                                        daemon=True)
        self._thread.start()

    def port(self, number: int) -> NanomsgPort:
        """Port `number` of the device (announced with PORT_ADD, as PTF does)."""
        with self._lock:
            if number in self._inboxes:
                raise ValueError(f"port {number} of {self.address} is open already")
            inbox = self._inboxes[number] = _Inbox()
        self._send(encode(MsgType.PORT_ADD, number, 0))
        return NanomsgPort(self, number, inbox)

    def _release(self, number: int) -> None:
        with self._lock:
            if self._inboxes.pop(number, None) is None:
                return
        if not self._stop.is_set():
            self._send(encode(MsgType.PORT_REMOVE, number, 0))

    def _send(self, message: bytes) -> None:
        if self._stop.is_set():
            raise PortClosed(f"{self.address} is closed")
        try:
            self._socket.send(message)
        except pynng.Timeout:
            log.warning("%s: the switch is not reading; message dropped", self.address)
        except pynng.Closed as exc:
            raise PortClosed(f"{self.address} is closed") from exc

    def close(self) -> None:
        """Stop receiving and close the socket (idempotent)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=2)
        self._socket.close()

    def __enter__(self) -> NanomsgDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _loop(self) -> None:
        receive_loop(self._socket, self._stop, self._deliver, self._skipped)

    def _deliver(self, msg: NnMessage) -> None:
        if msg.type == MsgType.INFO_REP:
            return   # the switch answers requests we do not make
        if msg.type != MsgType.PACKET_OUT or not 0 <= msg.more <= len(msg.payload):
            self._skipped(f"type {msg.type}, port {msg.port}, length {msg.more} with "
                          f"{len(msg.payload)} bytes")
            return
        with self._lock:
            inbox = self._inboxes.get(msg.port)
        if inbox is None:
            self.unclaimed += 1
        else:
            inbox.put(msg.payload[:msg.more])

    @property
    def bad_messages(self) -> int:
        return self._skipped.count


class NanomsgPort:
    """One port of a `NanomsgDevice` (made by `NanomsgDevice.port`)."""

    def __init__(self, device: NanomsgDevice, number: int, inbox: _Inbox) -> None:
        self.device = device
        self.number = number
        self._inbox = inbox

    @property
    def dropped(self) -> int:
        """Frames lost because nobody read them (the queue was full)."""
        return self._inbox.dropped

    def send(self, frame: bytes) -> None:
        self.device._send(packet_in(self.number, frame))

    def recv(self, timeout: float) -> bytes | None:
        return self._inbox.get(timeout)

    def close(self) -> None:
        """Give the port number back (the device stays open)."""
        self.device._release(self.number)

    def __repr__(self) -> str:
        return f"NanomsgPort({self.device.address!r}, {self.number})"


# -- AF_PACKET --------------------------------------------------------------------------------


class RawSocketPort:
    """A Linux interface through an AF_PACKET socket (needs root: CAP_NET_RAW).

    softswitch's own `-i` backend does the socket work (promiscuous mode, frames sent from here
    not read back, VLAN tags the kernel took out put back); this adds the queue. Raises
    `softswitch.runtime.ports.PortError` when the interface is missing or raw sockets are not
    allowed.
    """

    def __init__(self, interface: str) -> None:
        self.interface = interface
        self._inbox = _Inbox()
        self._closed = False
        self._backend = AfPacketPort(0, interface)
        self._backend.start(lambda _port, frame: self._inbox.put(frame))

    @property
    def dropped(self) -> int:
        return self._inbox.dropped

    def send(self, frame: bytes) -> None:
        if self._closed:
            raise PortClosed(f"{self.interface} is closed")
        self._backend.send(0, frame)   # a frame the kernel refuses is logged and lost

    def recv(self, timeout: float) -> bytes | None:
        return self._inbox.get(timeout)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._backend.close()

    def __repr__(self) -> str:
        return f"RawSocketPort({self.interface!r})"


# -- in-process fabric ------------------------------------------------------------------------


class FabricPort:
    """A host of an in-process `softswitch.fabric.Fabric` (`Fabric.add_host`). With the fabric
    running threads (`Fabric.start`) frames move on their own; otherwise each `recv` first runs
    the fabric until idle (deterministic, one thread)."""

    def __init__(self, host: FabricHost) -> None:
        self.host = host
        self._closed = False
        self._ready: deque[bytes] = deque()   # taken from the host, not yet returned

    def send(self, frame: bytes) -> None:
        if self._closed:
            raise PortClosed(f"{self.host!r} is closed")
        self.host.send(frame)

    def recv(self, timeout: float) -> bytes | None:
        if not self._ready:
            if not self.host.fabric.running:
                self.host.fabric.run_until_idle()   # stepped: each recv moves the fabric
            # take(), not receive(): the host then keeps no history of what was read
            self._ready.extend(self.host.take(max(timeout, 0.0)))
        return self._ready.popleft() if self._ready else None

    def close(self) -> None:
        self._closed = True

    def __repr__(self) -> str:
        return f"FabricPort({self.host!r})"
