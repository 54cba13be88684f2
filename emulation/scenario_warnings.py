"""What a scenario's failures will not do as written: warnings, not errors (the run is still
well defined). The failures are traced in the order the run applies them (emulation/failures.py:
time order, ties as listed) to know what is up when each one comes."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulation.scenario import Failure

# What a change sets: the thing it acts on, and whether it takes it out (down, off, blackholed).
Change = tuple[int, Hashable, bool, bool]   # (at µs, thing, out, the failure's own act)


def warnings(failures: Sequence[tuple[Failure, str, int]], duration_us: int,
             cable: Callable[[tuple[str, int]], Hashable]) -> list[str]:
    """One line per problem, `PLACE: message`, in the file's order; `failures` in the run's
    order, each with where it is written (`FILE:LINE:COL: warning: failures[k]`) and k;
    `cable(end)` is the same for both ends of a cable."""
    out: list[tuple[int, str]] = []   # (k, line)
    changes: list[tuple[Change, Failure, str, int]] = []
    for failure, place, k in failures:
        if failure.at_us >= duration_us:
            out.append((k, f"{place}: at_us {failure.at_us} is not before duration_us "
                           f"{duration_us}: it never happens"))
        if failure.kind in ("loss", "ev_loss") and failure.percent == 0:
            out.append((k, f"{place}: a {failure.kind} of 0 % drops nothing"))
        changes += [(c, failure, place, k) for c in _changes(failure, cable)]
    state: dict[Hashable, bool] = {}   # thing -> out now (absent: in service)
    # sorted() is stable: ties keep the order the run schedules them in
    for (at, thing, taken_out, own), failure, place, k in sorted(changes,
                                                                  key=lambda c: c[0][0]):
        if own and at < duration_us and state.get(thing, False) == taken_out:
            now = ("blackholed" if failure.kind == "blackhole" else
                   "off" if failure.kind == "switch_reboot" else "down" if taken_out else "up")
            out.append((k, f"{place}: {failure.describe()} does nothing at {at} µs: "
                           f"{_target(failure)} is {now} then"))
        state[thing] = taken_out
    return [line for _, line in sorted(out, key=lambda item: item[0])]


def _changes(f: Failure, cable: Callable[[tuple[str, int]], Hashable]) -> Iterator[Change]:
    """What `f` takes out and puts back, and when (the run's own schedule of it)."""
    if f.kind in ("link_down", "link_up") and f.link is not None:
        yield f.at_us, ("cable", cable(f.link)), f.kind == "link_down", True
    elif f.kind == "flap" and f.link is not None:
        t = f.at_us
        for _ in range(f.count):
            yield t, ("cable", cable(f.link)), True, True
            yield t + f.down_us, ("cable", cable(f.link)), False, False
            t += f.down_us + f.up_us
    elif f.kind == "switch_reboot":
        yield f.at_us, ("switch", f.switch), True, True
        yield f.at_us + f.down_us, ("switch", f.switch), False, False
    elif f.kind in ("nic_port_down", "blackhole"):
        thing = (("nic port", f.nic, f.plane) if f.kind == "nic_port_down" else
                 ("blackhole", cable(f.link) if f.link is not None else f.switch))
        yield f.at_us, thing, True, True
        if f.until_us:
            yield f.until_us, thing, False, False


def _target(f: Failure) -> str:
    if f.link is not None:
        return "the cable"
    if f.kind == "nic_port_down":
        return f"{f.nic}'s port in plane {f.plane}"
    return f.switch
