"""Flap damping: the verdict the NICs are rewritten to, from the verdict the evidence gives.

Rule. A link or switch going DOWN takes effect at once (a dead path costs every packet sent on
it). Coming back UP takes effect only once it has stayed up for its hold-down, `hold_s` (1 s) to
start with; each time it goes down again within `flap_window_s` (30 s) of coming back, its
hold-down doubles, up to `max_hold_s` (60 s); a link quiet for `flap_window_s` starts over. So
a link flapping every 100 ms costs one rewrite to take it out and none while it flaps: a flap
storm does not become a write storm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.repair.correlate import FabricLink, Verdict

Thing = FabricLink | str  # a link, or a T1's name


@dataclass
class _History:
    hold_s: float
    down: bool = True  # as acted on
    up_since: float | None = None  # the evidence says up since; acted on after the hold-down
    restored_at: float | None = None


@dataclass
class Damper:
    hold_s: float = 1.0
    max_hold_s: float = 60.0
    flap_window_s: float = 30.0
    _things: dict[Thing, _History] = field(default_factory=dict)

    def effective(self, raw: Verdict, now_s: float) -> Verdict:
        """The verdict to act on now, given the evidence's `raw` verdict."""
        down = {*raw.links_down, *raw.switches_down}
        for thing in down:
            h = self._things.get(thing)
            if h is None:
                self._things[thing] = _History(self.hold_s)
            elif not h.down or h.up_since is not None:   # down again: a flap
                recent = h.restored_at is None or now_s - h.restored_at <= self.flap_window_s
                h.hold_s = min(h.hold_s * 2, self.max_hold_s) if recent else self.hold_s
                h.down, h.up_since = True, None
        for thing, h in list(self._things.items()):
            if thing in down:
                continue
            if h.down and h.up_since is None:
                h.up_since = now_s
            elif h.down and h.up_since is not None and now_s - h.up_since >= h.hold_s:
                h.down, h.up_since, h.restored_at = False, None, now_s
            elif not h.down and h.restored_at is not None and (
                    now_s - h.restored_at > self.flap_window_s):
                del self._things[thing]   # quiet for a whole window: forgotten
        held = {t for t, h in self._things.items() if h.down}
        return Verdict(links_down={t for t in held if isinstance(t, tuple)},
                       switches_down={t for t in held if isinstance(t, str)})

    def forget(self, thing: Thing) -> None:
        """`thing` was never really down (a belief taken back before it was acted on)."""
        self._things.pop(thing, None)

    def hold_of(self, thing: Thing) -> float | None:
        h = self._things.get(thing)
        return None if h is None else h.hold_s
