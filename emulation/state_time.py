"""Time spent in a state, per bin, exactly: cells (an EV of a connection on a NIC) move between
states at given virtual instants, and each bin gets the cell-ns spent in each watched state
within it. Sampling a state at bin ends misses what is brief: a NIC holds an EV in SKIP from
an ECN echo only until the EV is next passed over, a few µs."""

from __future__ import annotations

from collections.abc import Hashable, Iterable


class StateTime:
    """Cell-ns per bin of `bin_ns` in each state of `watched` (`rows[state][k]`)."""

    def __init__(self, bin_ns: int, watched: Iterable[int]) -> None:
        if bin_ns <= 0:
            raise ValueError("bin_ns must be positive")
        self.bin_ns = bin_ns
        self.rows: dict[int, list[int]] = {s: [] for s in watched}
        self._open: dict[Hashable, tuple[int, int]] = {}   # cell -> (watched state, since ns)

    def move(self, cell: Hashable, state: int, at_ns: int) -> None:
        """`cell` is in `state` from `at_ns` on (the same state again changes nothing)."""
        was = self._open.get(cell)
        if was is not None:
            if was[0] == state:
                return
            del self._open[cell]
            self._add(was[0], was[1], at_ns)
        if state in self.rows:
            self._open[cell] = (state, at_ns)

    def flush(self, now_ns: int) -> None:
        """Count the time of the cells still in a watched state up to `now_ns`."""
        for cell, (state, since) in self._open.items():
            if since < now_ns:
                self._add(state, since, now_ns)
                self._open[cell] = (state, now_ns)

    def _add(self, state: int, start_ns: int, end_ns: int) -> None:
        """Spread [start_ns, end_ns) over the bins it covers."""
        rows = self.rows[state]
        bin_ns = self.bin_ns
        while start_ns < end_ns:
            k = start_ns // bin_ns
            if k >= len(rows):
                rows.extend([0] * (k + 1 - len(rows)))
            edge = min(end_ns, (k + 1) * bin_ns)
            rows[k] += edge - start_ns
            start_ns = edge


def integrate(moves: Iterable[tuple[int, Hashable, int]], bin_ns: int, end_ns: int,
              watched: Iterable[int]) -> dict[int, list[int]]:
    """Cell-ns per bin in each watched state, from (at ns, cell, new state) moves in time
    order (every cell starts outside the watched states) up to `end_ns`."""
    clock = StateTime(bin_ns, watched)
    for at_ns, cell, state in moves:
        clock.move(cell, state, at_ns)
    clock.flush(end_ns)
    return clock.rows
