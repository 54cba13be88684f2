"""pcap taps, as BMv2's `--pcap DIR`: ``DIR/<iface>_in.pcap`` and ``DIR/<iface>_out.pcap``.

Classic libpcap files (microsecond timestamps, Ethernet link type, snaplen 65535), flushed after
every packet so that a capture can be read while the switch runs, as BMv2 does.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

from softswitch.runtime.ports import PortError

MAGIC = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535
FILE_HEADER = struct.Struct("<IHHiIII")
RECORD_HEADER = struct.Struct("<IIII")


class PcapWriter:
    """Appends packets to one pcap file; thread-safe."""

    def __init__(self, path: Path | str, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self._file = open(self.path, "wb")  # noqa: SIM115 (lives as long as the port)
        except OSError as exc:
            raise PortError(f"cannot write pcap file {self.path}: {exc.strerror}") from exc
        self._file.write(FILE_HEADER.pack(MAGIC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        self._file.flush()

    def write(self, data: bytes) -> None:
        now = self._clock()
        seconds = int(now)
        micros = min(int((now - seconds) * 1_000_000), 999_999)
        captured = data[:SNAPLEN]
        with self._lock:
            if self._file.closed:
                return
            self._file.write(RECORD_HEADER.pack(seconds, micros, len(captured), len(data)))
            self._file.write(captured)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


class PcapTap:
    """The two capture files of one interface (a `PortTap`)."""

    def __init__(self, directory: Path | str, name: str,
                 clock: Callable[[], float] = time.time) -> None:
        directory = Path(directory)
        self.in_writer = PcapWriter(directory / f"{name}_in.pcap", clock)
        self.out_writer = PcapWriter(directory / f"{name}_out.pcap", clock)

    def received(self, data: bytes) -> None:
        self.in_writer.write(data)

    def sent(self, data: bytes) -> None:
        self.out_writer.write(data)

    def close(self) -> None:
        self.in_writer.close()
        self.out_writer.close()
