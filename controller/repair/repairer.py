"""The repair loop: EV-event digests from every NIC → the correlator → every affected NIC's
`ev_path` entries rewritten over P4Runtime (MODIFY only; connections and switches untouched).

    repairer = Repairer(plan, nics)       # ManagedNic per NIC: session, connections, its plan
    repairer.poll(now_s)                  # read digests, infer, write; returns what it wrote

It needs no clock of its own: the caller says what time it is (virtual or real), so the same
loop runs in an emulation and against hardware.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller.devices.codec import PlanCodec
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile
from controller.plan.plan import FabricPlan
from controller.repair.correlate import Correlator, EvReport, Verdict
from controller.repair.damping import Damper
from controller.repair.operator import (
    EVENTS,
    DenyList,
    OperatorError,
    describe,
    write_status,
)
from controller.repair.rewrite import repaired_paths, rewrites
from p4rt import SwitchConnection
from p4rt.entities import MODIFY

EV_STATES = {0: "GOOD", 1: "SKIP", 2: "ASSUMED_BAD"}
logger = logging.getLogger(__name__)


@dataclass
class ManagedNic:
    """One NIC the controller programs: its P4Runtime session (digests enabled), its
    connections (state index -> peer NIC), its EV profile and planned `ev_path` entries, and
    what it holds now."""

    name: str
    session: SwitchConnection
    peers: dict[int, str]
    profile: EvProfile
    planned: list[PlannedEntry]
    installed: list[PlannedEntry] = field(default_factory=list)
    # EV -> (when its path was last rewritten, the path before): events still in flight then
    # are about the old path.
    moved: dict[int, tuple[float, tuple[int, int] | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.installed:
            self.installed = list(self.planned)

    def path_of(self, ev: int, now_s: float = 0.0, settle_s: float = 0.0
                ) -> tuple[int, int] | None:
        """(plane, T1 uSID) an event about `ev` at `now_s` refers to: the installed path, or
        the one before if it was rewritten less than `settle_s` ago; None if DENIED."""
        moved = self.moved.get(ev)
        if moved is not None and now_s - moved[0] < settle_s:
            return moved[1]
        for e in self.installed:
            if dict(e.match).get("ev") == ev and e.action == "set_path":
                params = dict(e.params)
                return params["plane"], params["t1_usid"]
        return None

    def install(self, target: list[PlannedEntry], changes: list[PlannedEntry],
                now_s: float) -> None:
        for e in changes:
            ev = dict(e.match)["ev"]
            self.moved[ev] = (now_s, self.path_of(ev))
        self.installed = target


@dataclass
class RepairLog:
    """What one poll did: reports taken, the verdict after them, entries written per NIC."""

    reports: list[EvReport]
    verdict: Verdict
    written: dict[str, int]


class Repairer:
    def __init__(self, plan: FabricPlan, nics: Sequence[ManagedNic], *,
                 settle_s: float = 0.05, damper: Damper | None = None,
                 state: Path | None = None, **rules: float) -> None:
        """`settle_s`: how long after a rewrite an EV's events still name its old path (they
        were raised by packets sent before it); `damper`: flap damping (damping.py); `state`:
        the operator's directory (operator.py: deny-list read every poll, status written,
        events appended); `rules`: the Correlator's."""
        self.plan = plan
        self.state = state
        self.settle_s = settle_s
        self.damper = damper or Damper()
        self.verdict = Verdict()   # what the NICs are rewritten to (damped)
        self.nics = {n.name: n for n in nics}
        self.correlator = Correlator(plan.topology, **rules)  # type: ignore[arg-type]
        self._t1_names = {plan.usid(s.name): s.name for s in plan.topology.switches}
        self.history: list[RepairLog] = []
        self._codecs: dict[str, PlanCodec] = {}
        self._denied: DenyList | None = None

    def reports(self, now_s: float) -> list[EvReport]:
        """Every digest waiting on the NICs' streams, acknowledged, placed on its path."""
        out: list[EvReport] = []
        for nic in self.nics.values():
            while (digest := nic.session.get_digest(timeout=0)) is not None:
                nic.session.ack_digest(digest)
                for fields in digest.data:
                    state = EV_STATES.get(fields["state"], "?")
                    # A loss may predate a rewrite; a probe answer is about the path now.
                    settle = self.settle_s if state == "ASSUMED_BAD" else 0.0
                    path = nic.path_of(fields["ev"], now_s, settle)
                    peer = nic.peers.get(fields["conn"])
                    if path is None or peer is None:
                        continue   # a DENIED EV's last word, or an unknown connection
                    out.append(EvReport(nic.name, peer, fields["ev"], path[0],
                                        self._t1_names[path[1]], state, now_s))
        return out

    def poll(self, now_s: float) -> RepairLog:
        """One round: digests in, verdict, rewrites out to every NIC that needs them."""
        reports = self.reports(now_s)
        verdict = self.damper.effective(self.correlator.add(reports, now_s), now_s)
        if self.state is not None:   # the operator's maintenance list, as it is now
            try:
                self._denied = DenyList.load(self.state)
            except OperatorError as error:   # a bad edit: keep the last good list, say so
                logger.warning("%s; keeping the deny-list read before", error)
            if self._denied is not None:
                verdict = Verdict(verdict.links_down | self._denied.links,
                                  verdict.switches_down | self._denied.switches)
        self._log_changes(self.verdict, verdict, reports, now_s)
        self.verdict = verdict
        written: dict[str, int] = {}
        for nic in self.nics.values():
            target = repaired_paths(self.plan, nic.name, sorted(set(nic.peers.values())),
                                    nic.planned, nic.profile, verdict)
            changes = rewrites(nic.installed, target)
            if changes:
                codec = self._codecs.setdefault(nic.name, PlanCodec(nic.session.schema))
                nic.session.write([codec.update(MODIFY, e) for e in changes])
                nic.install(target, changes, now_s)
                written[nic.name] = len(changes)
        log = RepairLog(reports, verdict, written)
        if reports or written:
            self.history.append(log)
            self._log([{"event": "rewrite", "nic": n, "entries": c} for n, c in written.items()],
                      now_s)
            if self.state is not None:
                write_status(self.state, self.status_json(now_s))
        return log

    def _log_changes(self, before: Verdict, after: Verdict, reports: list[EvReport],
                     now_s: float) -> None:
        records: list[dict[str, object]] = [
            {"event": "ev", "nic": r.nic, "peer": r.peer, "ev": r.ev, "plane": r.plane,
             "t1": r.t1, "state": r.state} for r in reports]
        for thing in sorted(map(describe, after.links_down - before.links_down)):
            records.append({"event": "link_down", "link": thing})
        for thing in sorted(map(describe, before.links_down - after.links_down)):
            records.append({"event": "link_up", "link": thing})
        for name in sorted(after.switches_down - before.switches_down):
            records.append({"event": "switch_down", "switch": name})
        for name in sorted(before.switches_down - after.switches_down):
            records.append({"event": "switch_up", "switch": name})
        self._log(records, now_s)

    def _log(self, records: list[dict[str, object]], now_s: float) -> None:
        if self.state is None or not records:
            return
        self.state.mkdir(parents=True, exist_ok=True)
        with (self.state / EVENTS).open("a") as out:
            for record in records:
                out.write(json.dumps({"at_s": round(now_s, 6), **record}) + "\n")

    def status_json(self, now_s: float) -> dict[str, object]:
        """What `mrc-ctl status` prints: links and switches down, EVs off plan per NIC."""
        moved = {name: sum(e != p for e, p in zip(nic.installed, nic.planned, strict=True))
                 for name, nic in self.nics.items()}
        return {"at_s": now_s,
                "links_down": sorted(map(describe, self.verdict.links_down)),
                "switches_down": sorted(self.verdict.switches_down),
                "evs_off_plan": {name: count for name, count in sorted(moved.items()) if count},
                "denied_evs": {name: sum(e.action == "deny_path" for e in nic.installed)
                               for name, nic in sorted(self.nics.items())
                               if any(e.action == "deny_path" for e in nic.installed)}}

    def status(self) -> str:
        """What `mrc-ctl status` shows: links and switches down, EVs rewritten per NIC, the
        last reports."""
        verdict = self.verdict
        lines = [f"links down: {len(verdict.links_down)}"]
        for plane, t0, t1 in sorted(verdict.links_down):
            reporters = {r.nic for log in self.history for r in log.reports
                         if (plane, t0, t1) in self.correlator.path_links(r)}
            lines.append(f"  plane {plane}: {t0} <-> {t1}  ({len(reporters)} NICs reported)")
        lines.append(f"switches down: {', '.join(sorted(verdict.switches_down)) or 'none'}")
        moved = {name: sum(e != p for e, p in zip(nic.installed, nic.planned, strict=True))
                 for name, nic in self.nics.items()}
        lines.append("EVs off their planned path: " + (", ".join(
            f"{name} {count}" for name, count in sorted(moved.items()) if count) or "none"))
        last = [r for log in self.history[-3:] for r in log.reports][-5:]
        lines += [f"  {r.nic} EV {r.ev} (plane {r.plane}, {r.t1}) {r.state}" for r in last]
        return "\n".join(lines)
