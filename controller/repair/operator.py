"""The operator's side of failure handling: a maintenance deny-list and the controller's status,
as two JSON files in a state directory (default `.mrc-ctl/` beside the topology file).

- `denied.json`: links and T1 switches the operator took out (`mrc-ctl deny`), kept until
  `mrc-ctl allow`. The repair loop treats them as down whatever the evidence says.
- `status.json`: what a running repair loop last believed (links and switches down, EVs off their
  planned path per NIC, the last events), written by `Repairer.write_status`; `mrc-ctl status`
  prints it with the deny-list.
- `events.jsonl`: one JSON object per EV event and per rewrite, appended by the repair loop.
- `health.json`: the links and switches the controller has declared down (its own evidence,
  not the deny-list), saved before the NICs are rewritten for them and read when it starts.

Files are replaced atomically (written beside, then renamed), so a reader never sees half of one.
A link is named `SWITCH:SWITCH` (a T0 and a T1 of one plane, cabled together), a switch by its
name; anything else is refused with the reason.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from controller.repair.correlate import FabricLink, Verdict
from controller.topology.model import Tier, Topology

DENIED = "denied.json"
STATUS = "status.json"
EVENTS = "events.jsonl"
HEALTH = "health.json"


class OperatorError(Exception):
    """A deny/allow target that names no link or T1 of the topology."""


def state_dir(topology_path: str | Path, override: str | Path | None = None) -> Path:
    return Path(override) if override is not None else Path(topology_path).parent / ".mrc-ctl"


def parse_target(topology: Topology, text: str) -> FabricLink | str:
    """`T0:T1` (either order) as a link, or a T1's name."""
    if ":" not in text:
        if not topology.is_switch(text) or topology.switch(text).tier != Tier.T1:
            raise OperatorError(f"{text!r} is not a T1 switch of {topology.name} (a link is "
                                "written T0:T1)")
        return text
    a, b = text.split(":", 1)
    for name in (a, b):
        if not topology.is_switch(name):
            raise OperatorError(f"{text!r}: {name!r} is not a switch of {topology.name}")
    t0, t1 = (a, b) if topology.switch(a).tier == Tier.T0 else (b, a)
    s0, s1 = topology.switch(t0), topology.switch(t1)
    if s0.tier != Tier.T0 or s1.tier != Tier.T1:
        raise OperatorError(f"{text!r}: a link joins a T0 and a T1")
    if not any(peer == t1 for _, peer, _ in topology.neighbors(t0)):
        raise OperatorError(f"{text!r}: no cable joins {t0} and {t1}")
    return (s0.plane, t0, t1)


def describe(target: FabricLink | str) -> str:
    return target if isinstance(target, str) else f"{target[1]}:{target[2]}"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _read_things(path: Path, what: str) -> tuple[set[FabricLink], set[str]] | None:
    """`{"links": [[plane, T0, T1], ...], "switches": [T1, ...]}`; None when there is no file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OperatorError(f"{path}: cannot read {what} ({error.strerror})") from None
    return _parse_things(path, data, what)


def _parse_things(path: Path, data: bytes, what: str) -> tuple[set[FabricLink], set[str]]:
    """`_read_things` of the file's bytes; OperatorError naming the file and the problem."""
    try:
        found = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise OperatorError(f"{path}: not {what}: not UTF-8 text (byte {error.start})") from None
    except ValueError as error:
        raise OperatorError(f"{path}: not {what}: bad JSON ({error})") from None
    shape = 'expected {"links": [[PLANE, T0, T1], ...], "switches": [T1, ...]}'
    if not isinstance(found, dict) or set(found) - {"links", "switches"}:
        raise OperatorError(f"{path}: not {what}: {shape}")
    links, switches = found.get("links", []), found.get("switches", [])
    if not (isinstance(links, list) and isinstance(switches, list)
            and all(isinstance(s, str) for s in switches)
            and all(isinstance(link, list) and len(link) == 3 and type(link[0]) is int
                    and isinstance(link[1], str) and isinstance(link[2], str)
                    for link in links)):
        raise OperatorError(f"{path}: not {what}: {shape}")
    return {(p, t0, t1) for p, t0, t1 in links}, set(switches)


def _write_things(path: Path, links: set[FabricLink], switches: set[str]) -> None:
    _write_atomically(path, json.dumps({"links": sorted(links), "switches": sorted(switches)},
                                       indent=1) + "\n")


def save_health(directory: Path, verdict: Verdict) -> None:
    """What the controller has declared down (not the deny-list): written before it rewrites
    the NICs for it, so a controller restarted mid-repair finishes the same repair."""
    _write_things(directory / HEALTH, verdict.links_down, verdict.switches_down)


def load_health(directory: Path) -> Verdict | None:
    found = _read_things(directory / HEALTH, "a health file")
    return None if found is None else Verdict(*found)


@dataclass
class DenyList:
    """The maintenance deny-list, persisted in `directory / denied.json`."""

    directory: Path
    links: set[FabricLink] = field(default_factory=set)
    switches: set[str] = field(default_factory=set)

    @classmethod
    def load(cls, directory: Path) -> DenyList:
        found = _read_things(directory / DENIED, "a deny-list")
        return cls(directory) if found is None else cls(directory, *found)

    def save(self) -> None:
        _write_things(self.directory / DENIED, self.links, self.switches)

    def deny(self, target: FabricLink | str) -> None:
        (self.switches if isinstance(target, str) else self.links).add(target)  # type: ignore[arg-type]
        self.save()

    def allow(self, target: FabricLink | str) -> bool:
        """Take `target` off the list; False when it was not on it."""
        group: set = self.switches if isinstance(target, str) else self.links
        if target not in group:
            return False
        group.discard(target)
        self.save()
        return True


@dataclass
class DenyListWatch:
    """The deny-list as a running loop reads it (every poll): parsed again only when the file's
    bytes change; a bad version is reported once (not every poll) and the last good list kept."""

    directory: Path
    current: DenyList
    _seen: bytes | str | None = None   # the file's bytes (or read error) last looked at

    def poll(self) -> str | None:
        """Look at the file; the error line when it has just turned bad, else None."""
        path = self.directory / DENIED
        try:
            seen: bytes | str | None = path.read_bytes()
        except FileNotFoundError:
            seen = None
        except OSError as error:
            seen = f"{path}: cannot read a deny-list ({error.strerror})"
        if seen == self._seen:
            return None
        self._seen = seen
        if isinstance(seen, str):
            return seen
        try:
            found = (set(), set()) if seen is None else _parse_things(path, seen, "a deny-list")
        except OperatorError as error:
            return str(error)
        self.current = DenyList(self.directory, *found)
        return None


def write_status(directory: Path, status: dict[str, object]) -> None:
    _write_atomically(directory / STATUS, json.dumps(status, indent=1) + "\n")


def read_status(directory: Path) -> dict[str, object] | None:
    path = directory / STATUS
    if not path.exists():
        return None
    try:
        found = json.loads(path.read_text())
    except ValueError as error:
        raise OperatorError(f"{path}: unreadable status ({error})") from None
    return found if isinstance(found, dict) else None
