"""The packets one connection's sender has in flight (sent, not acknowledged), indexed for its
timers: so that a poll or a deadline looks at the packets that can be due, not at all of them.

Every packet in flight is in `by_seq` (seq order: the oldest unacknowledged first) and in exactly
one of:

- `nacked`: seq -> the cause a NACK gave; it goes again at the next poll (or, refused by the
  receiver's window, once that window reaches it) and runs no timer meanwhile;
- `fresh`: sent once, timer running, in the order of transmission, which is seq order too
  (new packets go in seq order);
- `resent`: retransmitted, timer running, in the order of their latest transmission.

While no transmission is stamped earlier than the one before it (`in_time_order`: an injected
clock that never goes back), `fresh` and `resent` are in the order of their send times as well,
and the sender stops scanning them at the first packet sent too late to be due.
"""

from __future__ import annotations

from typing import Generic, TypeVar

P = TypeVar("P")


class Flight(Generic[P]):
    """See the module docstring. `sent` a first transmission, `resent_at` a retransmission,
    `nack` a NACK, `acked` an acknowledgement."""

    def __init__(self) -> None:
        self.by_seq: dict[int, P] = {}
        self.nacked: dict[int, str] = {}
        self.fresh: dict[int, P] = {}
        self.resent: dict[int, P] = {}
        self.in_time_order = True
        self._latest = 0   # the latest transmission's time

    def _stamp(self, at: int) -> None:
        if at < self._latest:
            self.in_time_order = False   # for good: the orders no longer say which is older
        self._latest = at

    def latest_fresh(self) -> P:
        """The packet sent once most recently (`fresh` must not be empty)."""
        return next(reversed(self.fresh.values()))

    def sent(self, seq: int, pkt: P, at: int) -> None:
        """`pkt` went for the first time at `at`."""
        self._stamp(at)
        self.by_seq[seq] = pkt
        self.fresh[seq] = pkt

    def resent_at(self, seq: int, pkt: P, at: int) -> None:
        """In-flight `pkt` went again at `at` (NACKed, or its timer expired): its timer
        restarts, last in `resent`."""
        self._stamp(at)
        self._untimed(seq)
        self.resent[seq] = pkt

    def nack(self, seq: int, cause: str) -> None:
        """A NACK named in-flight `seq`: it waits to go again, its timer stopped (the first
        NACK's cause stands until it goes)."""
        if seq not in self.nacked:
            self._untimed(seq)
            self.nacked[seq] = cause

    def acked(self, seq: int) -> P:
        """In-flight `seq` is acknowledged: out of every index."""
        self._untimed(seq)
        return self.by_seq.pop(seq)

    def _untimed(self, seq: int) -> None:
        if (self.fresh.pop(seq, None) is None and self.resent.pop(seq, None) is None):
            self.nacked.pop(seq, None)
