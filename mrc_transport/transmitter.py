"""The NIC's transmitter as the host's connections see it: one wire (the NIC's planes together)
that every connection of the NIC shares. A NIC schedules its QPs onto that wire; it never takes
more than its line rate from them, so N connections do not offer N line rates to the NIC's own
egress queues (where the excess would wait, or overflow and be lost, for no fault of any path).
"""

from __future__ import annotations

from typing import Final

OUTER_HEADER_BYTES: Final = 40   # the SRv6 carrier the NIC puts in front of a data packet


class Transmitter:
    """A wire of `gbps` (0: not paced): `ready_us` is the µs tick in which the next packet may
    start (it goes in the tick its transmission starts); `carry` books one frame's time on it.
    Its clock only moves forward: a time read from it earlier is never later than now's."""

    def __init__(self, gbps: float = 0.0) -> None:
        if not 0.0 <= gbps < float("inf"):
            raise ValueError(f"transmitter rate out of range [0, inf) Gb/s: {gbps}")
        self.gbps = gbps
        self._free_ns = 0.0

    def ready_us(self) -> int:
        return int(self._free_ns // 1000)

    def carry(self, frame_bytes: int, now_us: int) -> None:
        """A frame of `frame_bytes` (without the NIC's outer header) handed out at `now_us`."""
        if self.gbps:
            bits = (frame_bytes + OUTER_HEADER_BYTES) * 8
            self._free_ns = max(self._free_ns, now_us * 1000.0) + bits / self.gbps
