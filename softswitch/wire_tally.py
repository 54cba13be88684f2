"""Counts of what a fabric's wires carry, per time bin (`Fabric.tally`): for each direction
of a cable or host attachment and each bin of `bin_ns`, the packets put on it, their bytes,
and how many of them carry an outer IPv6 DSCP of a given set — what a measurement needs
without an observer seeing every packet.

A packet counts where an observer would see it (fabric.py's module docstring): when it is
put on a wire that is up (a blackholed or lossy wire's packets too), in the bin of its
`Delivery.time_ns`; a host's packet on its switch's host port. The Python fabric counts in
`WireTally.count`; the native core (native/fabric_core.py) counts by the same rules in C and
hands its counts over at each `take`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

ETH = 14   # the outer IPv6 header starts here

# a wire direction: (sender, sender port (None: a host), receiver, receiver port)
WireKey = tuple[str, int | None, str, int]


class WireCount(NamedTuple):
    """What one wire direction carried in bin `bin` ([bin * bin_ns, (bin + 1) * bin_ns))."""

    sender: str
    sender_port: int | None
    receiver: str
    receiver_port: int
    bin: int
    packets: int
    bytes: int
    marked: int    # packets whose outer DSCP is in the tally's set


def dscp(frame: bytes) -> int:
    """The outer IPv6 DSCP (-1 for a frame too short)."""
    if len(frame) < ETH + 2:
        return -1
    return (((frame[ETH] & 0x0F) << 4) | (frame[ETH + 1] >> 4)) >> 2


class WireTally:
    """Per wire direction and bin: packets, bytes, packets with a DSCP in `dscps`."""

    def __init__(self, bin_ns: int, dscps: Iterable[int]) -> None:
        if bin_ns < 1:
            raise ValueError(f"a tally's bin must be at least 1 ns (got {bin_ns})")
        self.bin_ns = bin_ns
        self.dscps = frozenset(dscps)
        wrong = sorted(d for d in self.dscps if not 0 <= d < 64)
        if wrong:
            raise ValueError(f"a DSCP is 0..63 (got {wrong})")
        self._counts: dict[tuple[WireKey, int], list[int]] = {}
        # the native core's counts since the last take (set while it runs the fabric)
        self.native: Callable[[], list[WireCount]] | None = None

    def count(self, key: WireKey, time_ns: int, data: bytes) -> None:
        """One packet on wire `key`, put on it at `time_ns`."""
        slot = (key, time_ns // self.bin_ns)
        counts = self._counts.get(slot)
        if counts is None:
            counts = self._counts[slot] = [0, 0, 0]
        counts[0] += 1
        counts[1] += len(data)
        if dscp(data) in self.dscps:
            counts[2] += 1

    def take(self) -> list[WireCount]:
        """What was counted since the last take, one record per wire direction and bin that
        carried a packet, sorted (bin, then the wire's key; a host's port as -1)."""
        counts, self._counts = self._counts, {}
        if self.native is not None:
            for r in self.native():
                key = (r.sender, r.sender_port, r.receiver, r.receiver_port)
                slot = counts.get((key, r.bin))
                if slot is None:
                    counts[(key, r.bin)] = [r.packets, r.bytes, r.marked]
                else:
                    slot[0] += r.packets
                    slot[1] += r.bytes
                    slot[2] += r.marked
        records = [WireCount(*key, b, *c) for (key, b), c in counts.items()]
        records.sort(key=lambda r: (r.bin, r.sender, -1 if r.sender_port is None
                                    else r.sender_port, r.receiver, r.receiver_port))
        return records
