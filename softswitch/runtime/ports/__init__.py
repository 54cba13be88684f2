"""Packet ports: where a Device's packets come from and go to.

A backend carries the packets of one or more port numbers (a nanomsg socket carries all of them,
an AF_PACKET socket one interface). `PortMap` owns the backends and the pcap taps: it feeds every
received packet to one callback (the device's `receive`) and dispatches each transmitted packet
(`PortMap.send`, given to `Device.set_output`) to the backend that owns its port.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

Receive = Callable[[int, bytes], None]

log = logging.getLogger(__name__)


class PortError(Exception):
    """A port backend cannot be set up (bad address, missing interface, no permission)."""


class PortBackend(Protocol):
    """Carries packets for some port numbers; calls `receive(port, data)` from its own thread."""

    def start(self, receive: Receive) -> None: ...
    def send(self, port: int, data: bytes) -> None: ...
    def close(self) -> None: ...


class PortTap(Protocol):
    """Sees every packet of one port in both directions (pcap writers)."""

    def received(self, data: bytes) -> None: ...
    def sent(self, data: bytes) -> None: ...
    def close(self) -> None: ...


class PortMap:
    """Backends by port number, plus per-port taps; the device's input and output meet here."""

    def __init__(self) -> None:
        self._backends: dict[int, PortBackend] = {}
        self._default: PortBackend | None = None
        self._all: list[PortBackend] = []
        self._taps: dict[int, list[PortTap]] = {}
        self._tap_factory: Callable[[int], PortTap] | None = None
        self._receive: Receive | None = None
        self._lock = threading.Lock()
        self._closed = False

    def add(self, backend: PortBackend, ports: list[int] | None = None) -> None:
        """Route `ports` to `backend`; `None` makes it the backend for every other port."""
        if ports is None:
            if self._default is not None:
                raise PortError("only one backend can carry every port")
            self._default = backend
        else:
            for port in ports:
                if port in self._backends:
                    raise PortError(f"port {port} is attached twice")
                self._backends[port] = backend
        self._all.append(backend)

    def add_tap(self, port: int, tap: PortTap) -> None:
        self._taps.setdefault(port, []).append(tap)

    def set_tap_factory(self, factory: Callable[[int], PortTap]) -> None:
        """Make a tap for each port first seen in traffic (ports not known in advance)."""
        self._tap_factory = factory

    def _port_taps(self, port: int) -> list[PortTap]:
        taps = self._taps.get(port)
        if taps is not None:
            return taps
        with self._lock:
            taps = self._taps.get(port)
            if taps is None:
                taps = []
                if self._tap_factory is not None and not self._closed:
                    try:
                        taps.append(self._tap_factory(port))
                    except Exception:  # e.g. an unwritable capture: packets still flow
                        log.exception("no capture for port %d", port)
                self._taps[port] = taps
        return taps

    def ports(self) -> list[int]:
        """The explicitly attached port numbers."""
        return sorted(self._backends)

    def start(self, receive: Receive) -> None:
        """Start every backend's receive thread; packets go to `receive(port, data)`."""
        self._receive = receive
        for backend in self._all:
            backend.start(self._received)

    def _received(self, port: int, data: bytes) -> None:
        for tap in self._port_taps(port):
            self._tap(port, tap, tap.received, data)
        if self._receive is not None:
            self._receive(port, data)

    def _tap(self, port: int, tap: PortTap, record: Callable[[bytes], None],
             data: bytes) -> None:
        """Record a packet in a tap; a tap that fails (disk full) is logged and taken off the
        port, and the packet goes on: a capture must never cost a packet."""
        try:
            record(data)
        except Exception:
            log.exception("capture on port %d failed; it is stopped, packets still flow", port)
            with self._lock:  # a new list: a loop over the old one may be running
                self._taps[port] = [t for t in self._taps.get(port, []) if t is not tap]
            try:
                tap.close()
            except Exception:
                log.debug("closing the failed capture of port %d failed too", port)

    def send(self, port: int, data: bytes) -> None:
        """Transmit on `port`; a port nobody carries drops the packet, as a NIC with no link."""
        backend = self._backends.get(port, self._default)
        for tap in self._port_taps(port):
            self._tap(port, tap, tap.sent, data)
        if backend is None:
            log.debug("no port %d: packet of %d bytes dropped", port, len(data))
            return
        try:
            backend.send(port, data)
        except Exception:  # a port failure must not kill the dataplane thread
            log.exception("sending on port %d failed", port)

    def close(self) -> None:
        """Stop the backends and close the taps (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for backend in self._all:
            try:
                backend.close()
            except Exception:
                log.exception("closing a port backend failed")
        with self._lock:
            all_taps = list(self._taps.values())
        for taps in all_taps:
            for tap in taps:
                tap.close()
