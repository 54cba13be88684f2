"""Bursts: many frames in one contiguous buffer, in and out of `Switch.process_burst`.

A replay or benchmark tool loads its frames once (`Burst.of` a list, `Burst.from_pcap` a pcap
file's records, zero-copy: the offsets point into the file's bytes) and replays them as often
as it likes. `process_burst` gives a `BurstResult`: every output back to back in one buffer
plus one (input index, port, offset, length) record per output, in input order and each
input's outputs in BMv2's order (what `process_packet` of each frame in turn gives), so the
C engine makes no Python object per packet; iterating the result makes them on demand.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from softswitch.engine.pipeline import OutputPacket

RECORD = 4               # uint64 fields per output record: index, port, offset, length
MAX_PORT = 0x1FF         # a v1model / TNA port is 9 bits
# pcap magic (as read little-endian) -> (byte order, timestamps in ns)
_PCAP_MAGIC = {0xA1B2C3D4: ("<", False), 0xD4C3B2A1: (">", False),
               0xA1B23C4D: ("<", True), 0x4D3CB2A1: (">", True)}
_PCAP_HEADER, _PCAP_RECORD = 24, 16


class BurstError(ValueError):
    """A burst's frames or pcap data are malformed (the message says which and where)."""


def _u32(values: Iterable[int]) -> array[int]:
    return array("I", values)


@dataclass(frozen=True)
class Burst:
    """Frames to run in order: frame i is ``data[offsets[i]:offsets[i] + lengths[i]]``,
    received on ``ports[i]``. `data` is any bytes-like buffer (bytes, mmap, memoryview)."""

    data: bytes | bytearray | memoryview
    offsets: array[int]   # "I"
    lengths: array[int]   # "I"
    ports: array[int]     # "H"

    def __post_init__(self) -> None:
        n, size = len(self.offsets), memoryview(self.data).nbytes
        if not (len(self.lengths) == len(self.ports) == n):
            raise BurstError(f"a burst needs one offset, length and port per frame (got "
                             f"{n}, {len(self.lengths)}, {len(self.ports)})")
        for name, arr, code in (("offsets", self.offsets, "I"), ("lengths", self.lengths, "I"),
                                ("ports", self.ports, "H")):
            if not isinstance(arr, array) or arr.typecode != code:
                raise BurstError(f"a burst's {name} are an array('{code}')")
        for i, (off, length, port) in enumerate(zip(self.offsets, self.lengths, self.ports)):
            if off + length > size:
                raise BurstError(f"frame {i} (bytes {off}..{off + length}) runs past the "
                                 f"burst's {size} bytes")
            if port > MAX_PORT:
                raise BurstError(f"frame {i}: port {port} is not a 9-bit port")

    @classmethod
    def of(cls, frames: Iterable[bytes], port: int | Sequence[int]) -> Burst:
        """`frames` back to back in one buffer, all received on `port` (or frame i on
        ``port[i]``)."""
        frames = [bytes(f) for f in frames]
        lengths = _u32(map(len, frames))
        offsets = _u32([0] * len(frames))
        pos = 0
        for i, length in enumerate(lengths):
            offsets[i] = pos
            pos += length
        ports = array("H", [port] * len(frames) if isinstance(port, int) else port)
        return cls(b"".join(frames), offsets, lengths, ports)

    @classmethod
    def from_pcap(cls, source: bytes | bytearray | memoryview | str | Path,
                  port: int) -> Burst:
        """The records of a pcap capture (its bytes, or a path read once), all received on
        `port`: each record's captured bytes are a frame, read in place (no copy)."""
        data = Path(source).read_bytes() if isinstance(source, str | Path) else source
        view = memoryview(data).cast("B")
        if view.nbytes < _PCAP_HEADER:
            raise BurstError(f"pcap: {view.nbytes} bytes, shorter than the 24-byte file header")
        magic = int.from_bytes(view[:4], "little")
        if magic not in _PCAP_MAGIC:
            raise BurstError(f"pcap: bad magic number 0x{magic:08x} (not a pcap file; pcapng "
                             "is not read)")
        order = _PCAP_MAGIC[magic][0]
        record = struct.Struct(order + "IIII")
        offsets, lengths = _u32(()), _u32(())
        pos = _PCAP_HEADER
        while pos < view.nbytes:
            if pos + _PCAP_RECORD > view.nbytes:
                raise BurstError(f"pcap: record {len(offsets)} at byte {pos}: truncated "
                                 "record header")
            _sec, _frac, caplen, _wire = record.unpack_from(view, pos)
            pos += _PCAP_RECORD
            if pos + caplen > view.nbytes:
                raise BurstError(f"pcap: record {len(offsets)} at byte {pos - _PCAP_RECORD}: "
                                 f"{caplen} captured bytes, only {view.nbytes - pos} left")
            offsets.append(pos)
            lengths.append(caplen)
            pos += caplen
        return cls(view, offsets, lengths, array("H", [port]) * len(offsets))

    def __len__(self) -> int:
        return len(self.offsets)

    def frame(self, i: int) -> bytes:
        off = self.offsets[i]
        return bytes(memoryview(self.data).cast("B")[off:off + self.lengths[i]])


class BurstOutput(NamedTuple):
    """One output of a burst: which input frame made it, where it leaves, its bytes."""

    index: int
    port: int
    data: bytes


@dataclass(frozen=True)
class BurstResult:
    """What a burst made: `data` every output's bytes back to back; `records` RECORD
    integers per output, (input index, egress port, offset in `data`, length)."""

    data: memoryview
    records: array[int]   # "Q"

    def __len__(self) -> int:
        return len(self.records) // RECORD

    def __iter__(self) -> Iterator[BurstOutput]:
        data, rec = self.data, self.records
        for k in range(0, len(rec), RECORD):
            off = rec[k + 2]
            yield BurstOutput(rec[k], rec[k + 1], bytes(data[off:off + rec[k + 3]]))

    def per_input(self, count: int) -> list[list[OutputPacket]]:
        """Each of `count` inputs' outputs, as `process_packet` of each in turn returns them."""
        out: list[list[OutputPacket]] = [[] for _ in range(count)]
        for o in self:
            out[o.index].append(OutputPacket(o.port, o.data))
        return out


Buffer = Callable[[int], Any]   # a writable buffer of that many bytes (bytearray, cffi's)


class BurstSink:
    """A burst's output as it is made: a byte buffer from `alloc` (replaced by a larger one
    as needed) and a record array (the C engine writes into both in place, through
    `reserve`'s room)."""

    def __init__(self, data_bytes: int, records: int, alloc: Buffer = bytearray) -> None:
        self._alloc = alloc
        self.data = alloc(data_bytes)
        self.records = array("Q", bytes(8 * RECORD * records))
        self.used = 0      # bytes of `data` written
        self.count = 0     # records written

    def reserve(self, data_bytes: int, records: int) -> None:
        """Room for `data_bytes` more bytes and `records` more records (doubling)."""
        need = self.used + data_bytes
        if need > len(self.data):
            data = self._alloc(max(need, 2 * len(self.data)))
            data[:self.used] = memoryview(self.data)[:self.used]
            self.data = data
        need = RECORD * (self.count + records)
        if need > len(self.records):
            self.records.frombytes(bytes(8 * (max(need, 2 * len(self.records))
                                              - len(self.records))))

    def add(self, index: int, outputs: Sequence[OutputPacket]) -> None:
        """Input `index`'s outputs, appended."""
        self.reserve(sum(len(o.data) for o in outputs), len(outputs))
        for o in outputs:
            end = self.used + len(o.data)
            self.data[self.used:end] = o.data
            k = RECORD * self.count
            self.records[k:k + RECORD] = array("Q", (index, o.port, self.used, len(o.data)))
            self.used, self.count = end, self.count + 1

    def result(self) -> BurstResult:
        del self.records[RECORD * self.count:]
        return BurstResult(memoryview(self.data)[:self.used], self.records)


def burst_by_packet(process: Callable[[int, bytes], list[OutputPacket]],
                    burst: Burst) -> BurstResult:
    """`burst` through `process` (an engine's process_packet) frame by frame: the reference
    every faster burst path must equal."""
    sink = BurstSink(memoryview(burst.data).nbytes, len(burst))
    for i in range(len(burst)):
        sink.add(i, process(burst.ports[i], burst.frame(i)))
    return sink.result()
