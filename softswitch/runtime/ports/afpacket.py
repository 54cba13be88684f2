"""Port backend on a Linux interface: a raw AF_PACKET socket, as BMv2's `-i PORT@IFACE`.

Needs root (CAP_NET_RAW). The interface is put in promiscuous mode (so frames for any MAC are
received), frames the host itself sends on it are ignored (BMv2 captures inbound only), and a
VLAN tag the kernel took out of the frame (VLAN offload) is put back, as libpcap does.
"""

from __future__ import annotations

import errno
import logging
import socket
import struct
import threading

from softswitch.runtime.ports import PortError, Receive

log = logging.getLogger(__name__)

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_AUXDATA = 8
PACKET_MR_PROMISC = 1
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
ETH_P_8021Q = 0x8100
PACKET_MREQ = struct.Struct("iHH8s")
TPACKET_AUXDATA = struct.Struct("IIIHHHH")
MAX_FRAME = 65536 + 4
POLL_SECONDS = 0.1  # how often the receive thread looks at the stop flag


def restore_vlan_tag(frame: bytes, ancillary: list[tuple[int, int, bytes]]) -> bytes:
    """`frame` with the VLAN tag the kernel reported in PACKET_AUXDATA put back after the MACs."""
    for level, kind, data in ancillary:
        if level != SOL_PACKET or kind != PACKET_AUXDATA or len(data) < TPACKET_AUXDATA.size:
            continue
        status, _, _, _, _, tci, tpid = TPACKET_AUXDATA.unpack_from(data)
        if not (tci or status & TP_STATUS_VLAN_VALID) or len(frame) < 12:
            return frame
        if not status & TP_STATUS_VLAN_TPID_VALID:
            tpid = ETH_P_8021Q
        return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
    return frame


class AfPacketPort:
    """One port number on one interface."""

    def __init__(self, port: int, interface: str) -> None:
        self.port = port
        self.interface = interface
        try:
            ifindex = socket.if_nametoindex(interface)
        except OSError as exc:
            raise PortError(f"-i {port}@{interface}: no such interface") from exc
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        except PermissionError as exc:
            raise PortError(f"-i {port}@{interface}: raw sockets need root "
                            "(or use --packet-in)") from exc
        try:
            sock.bind((interface, ETH_P_ALL))
            mreq = PACKET_MREQ.pack(ifindex, PACKET_MR_PROMISC, 0, b"")
            sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
            sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            sock.settimeout(POLL_SECONDS)
        except OSError as exc:
            sock.close()
            raise PortError(f"-i {port}@{interface}: {exc.strerror}") from exc
        self._socket = sock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, receive: Receive) -> None:
        self._thread = threading.Thread(target=self._loop, args=(receive,),
                                        name=f"port {self.port}@{self.interface}", daemon=True)
        self._thread.start()

    def send(self, port: int, data: bytes) -> None:
        try:
            self._socket.send(data)
        except OSError as exc:
            # A frame the kernel refuses (too short, too long, link down) is lost, as on a wire.
            log.warning("port %d@%s: %d-byte frame not sent: %s", self.port, self.interface,
                        len(data), exc.strerror)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self._socket.close()

    def _loop(self, receive: Receive) -> None:
        ancillary_size = socket.CMSG_SPACE(TPACKET_AUXDATA.size)
        while not self._stop.is_set():
            try:
                frame, ancillary, _, address = self._socket.recvmsg(MAX_FRAME, ancillary_size)
            except TimeoutError:
                continue
            except OSError as exc:
                if self._stop.is_set() or exc.errno == errno.EBADF:
                    return
                if exc.errno != errno.ENETDOWN:  # a link going down is routine
                    log.warning("port %d@%s: receive failed: %s", self.port, self.interface,
                                exc)
                self._stop.wait(POLL_SECONDS)
                continue
            if address[2] == PACKET_OUTGOING:
                continue
            try:
                receive(self.port, restore_vlan_tag(frame, ancillary))
            except Exception:  # the device must not take the port down with it
                log.exception("port %d@%s: receive handler failed", self.port, self.interface)
