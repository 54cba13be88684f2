"""Virtual time for stepped fabrics: an integer nanosecond clock that moves only when told to.

Devices read it as their µs clock (``clock()``: P4 timestamps, meters) and, through
``clock.us``, as a fine float µs clock for their egress queues' line-rate arithmetic; links
with a propagation delay schedule arrivals on ``now_ns`` (softswitch/fabric.py).
"""

from __future__ import annotations

from operator import index


class VirtualClock:
    """Nanoseconds since the start of the emulation; moved only by `advance_to`."""

    __slots__ = ("now_ns",)

    def __init__(self, now_ns: int = 0) -> None:
        self.now_ns: int = index(now_ns)
        if self.now_ns < 0:
            raise ValueError("virtual time starts at 0 or later")

    def __call__(self) -> int:
        """Whole µs (what devices use for P4 timestamps and meters)."""
        return self.now_ns // 1000

    def us(self) -> float:
        """µs as a float, for sub-µs arithmetic (egress queues on fast lines)."""
        return self.now_ns / 1000

    def advance_to(self, ns: int) -> None:
        """Move to `ns` (an int; the same time is fine). ValueError if it is in the past."""
        ns = index(ns)
        if ns < self.now_ns:
            raise ValueError(f"virtual time cannot go back from {self.now_ns} ns to {ns} ns")
        self.now_ns = ns

    def __repr__(self) -> str:
        return f"VirtualClock(now_ns={self.now_ns})"
