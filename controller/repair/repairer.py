"""The repair loop: EV-event digests from every NIC → the correlator → every affected NIC's
`ev_path` entries rewritten over P4Runtime (MODIFY only; connections and switches untouched).

    repairer = Repairer(plan, nics)       # ManagedNic per NIC: session, connections, its plan
    repairer.poll(now_s)                  # read digests, infer, write; returns what it wrote

It needs no clock of its own: the caller says what time it is (virtual or real), so the same
loop runs in an emulation and against hardware.

With `confirm_probes` N > 0 the events only name suspects, and only what probes prove bad is acted
on (confirm.py); the caller runs the probes each round:

    repairer.probed(probe_loop.take(now_s, packet_ins), now_s)   # answers and timeouts in
    repairer.poll(now_s)                                         # events, verdict, rewrites
    probe_loop.send(now_s, repairer.confirm_targets(), send)     # the suspects' probes out

Reports from a NIC whose own port in the EV's plane is down (or towards such a NIC) are the
NIC's own matter (its port-state bitmap, which it already acts on): they make no cable suspect.
The loop reads each reporting NIC's `local_port_state` (the bitmap its firmware writes) over
P4Runtime, or asks `ports_down` when given.

The health model is never reset silently. It starts from `health.json` (a bad file refuses the
start: OperatorError), is read again when a backup takes over (`resume`), and takes in each NIC
as found when it becomes this controller's (`adopt`): its `ev_path` entries as they are
(rebuild.py: what a previous primary took out, so it is never undone) and the EVs its registers
hold ASSUMED_BAD (evidence, as their lost digests would have been).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from finsy.proto import p4r

from controller.daemon.probes import ProbeResult
from controller.devices.codec import PlanCodec
from controller.devices.logged_write import write_each
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EV_STATES, EvProfile, NicPlanner
from controller.plan.plan import FabricPlan
from controller.repair.confirm import Confirmer
from controller.repair.correlate import Correlator, EvReport, FabricLink, Verdict
from controller.repair.damping import Damper
from controller.repair.operator import (
    EVENTS,
    DenyList,
    DenyListWatch,
    OperatorError,
    describe,
    load_health,
    save_health,
    write_status,
)
from controller.repair.rebuild import TableEvidence
from controller.repair.rewrite import repaired_paths, rewrites
from p4rt import SwitchConnection, TableEntry
from p4rt.entities import MODIFY

logger = logging.getLogger(__name__)

IDLE_REPORTER = "idle-probe"   # a suspect's reporter when the idle sweep found it


class NicDevice(Protocol):
    """How the repair loop reaches a NIC: its session (digests enabled), whether writes may go
    to it now, and a write that reports each failure (logged_write.write_each)."""

    @property
    def session(self) -> SwitchConnection | None: ...

    @property
    def ready(self) -> bool: ...

    def write(self, updates: Sequence[p4r.Update], descriptions: Sequence[str]) -> list[bool]: ...


@dataclass
class DirectNic:
    """A NIC behind a session that is always up (an in-process fabric's); failures logged."""

    session: SwitchConnection
    name: str = ""
    ready: bool = True

    def write(self, updates: Sequence[p4r.Update], descriptions: Sequence[str]) -> list[bool]:
        return write_each(self.session, self.name or self.session.address, updates,
                          descriptions, logger.warning)


@dataclass
class ManagedNic:
    """One NIC the controller programs: the device, its connections (state index -> peer
    NIC), its EV profile and planned `ev_path` entries, and what it holds now.

    `profiles`: each connection's profile id where it is not `profile`'s (on a fabric with a
    T0-T1 cable left out a connection may have one of its own, nic_plan.py); `planned` holds
    every profile's entries. Left empty, the Repairer fills it from the planner (the same
    connections give the same profiles)."""

    name: str
    device: NicDevice
    peers: dict[int, str]
    profile: EvProfile
    planned: list[PlannedEntry]
    installed: list[PlannedEntry] = field(default_factory=list)
    # (profile, EV) -> (when its path was last rewritten, the path before): events still in
    # flight then are about the old path.
    moved: dict[tuple[int, int], tuple[float, tuple[int, int] | None]] = field(
        default_factory=dict)
    profiles: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.installed:
            self.installed = list(self.planned)

    def profile_of(self, conn: int) -> int:
        return self.profiles.get(conn, self.profile.profile_id)

    def path_of(self, ev: int, now_s: float = 0.0, settle_s: float = 0.0,
                profile: int | None = None) -> tuple[int, int] | None:
        """(plane, T1 uSID) an event about `ev` of `profile` (default: the NIC's) at `now_s`
        refers to: the installed path, or the one before if it was rewritten less than
        `settle_s` ago; None if DENIED."""
        profile = self.profile.profile_id if profile is None else profile
        moved = self.moved.get((profile, ev))
        if moved is not None and now_s - moved[0] < settle_s:
            return moved[1]
        for e in self.installed:
            match = dict(e.match)
            if match.get("ev") == ev and match.get("profile") == profile \
                    and e.action == "set_path":
                params = dict(e.params)
                return params["plane"], params["t1_usid"]
        return None

    def install(self, changes: Sequence[PlannedEntry], now_s: float) -> None:
        """`changes` (same keys as installed entries) are on the device now."""
        for e in changes:
            match = dict(e.match)
            key = (match["profile"], match["ev"])
            self.moved[key] = (now_s, self.path_of(key[1], profile=key[0]))
        written = {e.key: e for e in changes}
        self.installed = [written.get(e.key, e) for e in self.installed]


@dataclass
class RepairLog:
    """What one poll did: reports taken, the verdict after them, entries written per NIC."""

    reports: list[EvReport]
    verdict: Verdict
    written: dict[str, int]


class Repairer:
    def __init__(self, plan: FabricPlan, nics: Sequence[ManagedNic], *,
                 settle_s: float = 0.05, damper: Damper | None = None,
                 state: Path | None = None, writers: int = 1, confirm_probes: int = 0,
                 ports_down: Callable[[str], int] | None = None, **rules: float) -> None:
        """`settle_s`: how long after a rewrite an EV's events still name its old path (they
        were raised by packets sent before it); `damper`: flap damping (damping.py); `state`:
        the operator's directory (operator.py: deny-list read every poll, status written,
        events appended); `writers`: NICs written at once (round trips to real devices
        overlap; an in-process fabric's servers share one interpreter, where one is faster);
        `confirm_probes`: lost probes in a row that confirm a suspect (0: the events alone
        decide, as before confirmation); `ports_down`: NIC -> its port-state bitmap (default:
        read from the NIC); `rules`: the Correlator's."""
        self.plan = plan
        self.state = state
        self.settle_s = settle_s
        self.damper = damper or Damper()
        self.verdict = Verdict()   # what the NICs are rewritten to (damped)
        self.nics = {n.name: n for n in nics}
        planner = NicPlanner(plan)
        for n in nics:
            if not n.profiles and len({dict(e.match)["profile"] for e in n.planned}) > 1:
                n.profiles = planner.connection_profiles(n.name, n.peers, n.profile)
        self.correlator = Correlator(plan.topology, **rules)  # type: ignore[arg-type]
        self.confirmer = Confirmer(plan.topology, confirm_probes) if confirm_probes else None
        self.ports_down = ports_down or self._read_ports_down
        self.ignored = 0   # reports set aside: a NIC port down at one end
        self.verdicts: list[dict[str, object]] = []   # the last verdicts and their evidence
        self._t1_names = {plan.usid(s.name): s.name for s in plan.topology.switches}
        self.history: list[RepairLog] = []
        self._codecs: dict[str, PlanCodec] = {}
        self._denied = DenyListWatch(state or Path(), DenyList(state or Path()))
        self._saved: Verdict | None = None
        self.tables = TableEvidence(plan)
        self._rebuilt: set[FabricLink] = set()   # down only because the NICs' tables say so
        self._found: list[EvReport] = []   # EVs found ASSUMED_BAD in a NIC's registers...
        # ...which stand while NICs are being taken in (`adopt`), each within the window of
        # the one before: they are found one NIC at a time, not raised together.
        self._standing: dict[tuple[str, int, int], EvReport] = {}
        # Whether this loop's NICs are its own: a backup's writes no state file (the daemon
        # says; alone, it is).
        self.primary = True
        self._writers = ThreadPoolExecutor(writers, thread_name_prefix="nic-rewrite")
        self._parallel = writers > 1
        self.on_record: Callable[[dict[str, object]], None] | None = None
        # What status.json holds; the daemon adds its devices to status_json's.
        self.status_of: Callable[[float], dict[str, object]] | None = None
        if state is not None:
            self._resume(state)

    def _resume(self, state: Path) -> None:
        """Start from what a previous run declared down (and the deny-list): the NICs are then
        reconciled to that, finishing a repair cut short by a restart. Each file is read on
        its own; a bad one raises OperatorError naming it (nothing is overwritten)."""
        saved = load_health(state)
        error = self._denied.poll()
        if error is not None:
            raise OperatorError(error)
        if saved is not None:
            self._saved = saved
            self._declare(saved, 0.0)
        self.verdict = self._with_denied(self.damper.effective(self.raw_verdict, 0.0))

    def resume(self, now_s: float) -> None:
        """Becoming primary again (a takeover): read `health.json` again, which the old primary
        kept current when the state directory is shared. A bad file is logged and the model
        kept; the NICs' tables (`adopt`) still show what was taken out."""
        if self.state is None:
            return
        try:
            saved = load_health(self.state)
        except OperatorError as error:
            self.record([{"event": "state_file_bad", "message": str(error)}], now_s)
            return
        if saved is not None:
            self._declare(saved, now_s)
            self.record([{"event": "health_resumed",
                          "links_down": sorted(map(describe, saved.links_down)),
                          "switches_down": sorted(saved.switches_down)}], now_s)

    def _declare(self, found: Verdict, now_s: float) -> None:
        """Take `found` as declared down (a previous primary's word), at once: in the evidence's
        verdict (not to be confirmed again) and in the one acted on."""
        for verdict in self._raw_verdicts():
            verdict.links_down |= found.links_down
            verdict.switches_down |= found.switches_down
        self._rebuilt -= found.links_down
        self.verdict = self._with_denied(self.damper.effective(self.raw_verdict, now_s))

    def _raw_verdicts(self) -> list[Verdict]:
        return [self.correlator.verdict] + ([self.confirmer.verdict] if self.confirmer else [])

    def adopt(self, name: str, held: Sequence[PlannedEntry], bad: Sequence[tuple[int, int]],
              now_s: float) -> None:
        """NIC `name` is this controller's now, found holding `held` (its `ev_path` entries,
        kept as they are) and its (connection, EV)s `bad` ASSUMED_BAD in its registers: the
        model takes in what the tables show taken out (rebuild.py) and the EVs are evidence,
        as their digests would have been (confirmed before anything is acted on)."""
        nic = self.nics[name]
        believed = nic.installed
        if held:
            nic.installed = list(held)
        by_profile: dict[int, list[str]] = {}
        for conn, peer in nic.peers.items():
            by_profile.setdefault(nic.profile_of(conn), []).append(peer)
        self.tables.found(name, nic.planned, nic.installed, by_profile, believed)
        self._rebuild(name, now_s)
        window = self.correlator.window_s
        self._standing = {k: r for k, r in self._standing.items()
                          if k[0] != name and now_s - r.at_s <= window}
        for conn, ev in bad:
            path = nic.path_of(ev, profile=nic.profile_of(conn))
            peer = nic.peers.get(conn)
            if path is not None and peer is not None:
                self._standing[(name, conn, ev)] = EvReport(
                    name, peer, ev, path[0], self._t1_names[path[1]], "ASSUMED_BAD", now_s)
        if self._standing:
            self._found += [dataclasses.replace(r, at_s=now_s) for r in self._standing.values()]
            self._standing = {k: dataclasses.replace(r, at_s=now_s)
                              for k, r in self._standing.items()}
        if bad:
            self.record([{"event": "ev_found", "nic": name, "assumed_bad": len(bad)}], now_s)

    def _rebuild(self, source: str, now_s: float) -> None:
        """The model as the NICs' tables show it (rebuild.py): links they show taken out are
        declared; ones a later NIC shows in use are taken back before anything acts on them."""
        raw = self.raw_verdict
        for link in self._rebuilt - raw.links_down:   # evidence cleared it since
            self.tables.cleared(link)
        self._rebuilt &= raw.links_down
        # What the model explains without the tables: the evidence's verdict and the one acted
        # on (a link in its hold-down still keeps EVs off), the deny-list included.
        acted = self.verdict
        known = Verdict((raw.links_down | acted.links_down) - self._rebuilt,
                        raw.switches_down | acted.switches_down)
        found = self.tables.taken_out(known)
        added, dropped = found - raw.links_down, self._rebuilt - found
        if not added and not dropped:
            return
        for verdict in self._raw_verdicts():
            verdict.links_down = (verdict.links_down | added) - dropped
        for link in dropped:
            self.damper.forget(link)   # never acted on as down: no hold-down to sit out
        self._rebuilt = (self._rebuilt | added) - dropped
        self.verdict = self._with_denied(self.damper.effective(self.raw_verdict, now_s))
        self.record([{"event": "health_rebuilt", "nic": source,
                      "links_down": sorted(map(describe, added)),
                      "taken_back": sorted(map(describe, dropped))}], now_s)

    def _with_denied(self, verdict: Verdict) -> Verdict:
        """`verdict` with the operator's deny-list added (a new Verdict)."""
        denied = self._denied.current
        return Verdict(verdict.links_down | denied.links, verdict.switches_down | denied.switches)

    def probe_targets(self) -> set[FabricLink]:
        """The links whose health only probes can show: each link declared down, and every
        link of each T1 declared down (the deny-list's are left to the operator)."""
        raw = self.raw_verdict
        denied = self._denied.current
        links = set(raw.links_down)
        for t1 in raw.switches_down:
            s = self.plan.topology.switch(t1)
            links |= {(s.plane, t0, t1) for _, t0, _ in self.plan.topology.neighbors(t1)
                      if self.plan.topology.is_switch(t0)}
        cabled = self.correlator.reach.cabled   # a saved verdict may name a cable gone since
        return {link for link in links if cabled(link[1], link[2])
                and link not in denied.links and link[2] not in denied.switches}

    def proven_healthy(self, links: set[FabricLink], now_s: float) -> None:
        """Probes came back over `links`: they (and their T1s) are up as far as evidence goes;
        the NICs get them back after the damper's hold-down."""
        for link in sorted(links):
            self.correlator.recovered(link)
            if self.confirmer is not None:
                self.confirmer.recovered(link)
            self.tables.cleared(link)
        self.record([{"event": "probed_healthy", "link": describe(link)} for link in sorted(links)],
                  now_s)

    @property
    def raw_verdict(self) -> Verdict:
        """What the evidence says is down now, before damping and the deny-list: with
        confirmation, what the probes proved; without, the events' own inference."""
        return self.correlator.verdict if self.confirmer is None else self.confirmer.verdict

    def confirm_targets(self) -> set[FabricLink]:
        """The cables to probe to confirm or clear the suspects (none without confirmation)."""
        return set() if self.confirmer is None else self.confirmer.targets()

    def probed(self, results: Sequence[ProbeResult], now_s: float) -> list[dict[str, object]]:
        """Confirmation probes' results in: what they prove is in the verdict the next `poll`
        acts on; what answered is cleared. Returns the records logged (probes, verdicts)."""
        if self.confirmer is None or not results:
            return []
        records: list[dict[str, object]] = [
            {"event": "probe", "link": describe(r.link), "seq": r.seq,
             "answered": r.answered, "sent_at_s": round(r.sent_s, 6),
             **({"rtt_us": round(r.rtt_s * 1e6, 2)} if r.rtt_s is not None else {})}
            for r in results]
        verdicts, cleared = self.confirmer.probed(results, now_s)
        for link in sorted(cleared):
            self.correlator.recovered(link)
        records += verdicts
        self.record(records, now_s)
        return records

    def idle_probed(self, results: Sequence[ProbeResult], now_s: float
                    ) -> list[dict[str, object]]:
        """The idle sweep's results (daemon/idle_probes.py) in. Every one is evidence for the
        confirmer (an answer shows a cable and its ends work); a lost one makes its cable a
        suspect, or its T1 when two or more of the T1's cables lost theirs in this round (the
        sweep probes a T1's cables together). Only the confirmation probes turn a suspect
        into a verdict. Returns the records logged (lost probes, suspects, verdicts)."""
        if self.confirmer is None or not results:
            return []
        verdicts, cleared = self.confirmer.probed(results, now_s)
        for link in sorted(cleared):
            self.correlator.recovered(link)
        confirmer, raw = self.confirmer, self.confirmer.verdict
        lost = sorted({r.link for r in results if not r.answered
                       and r.link not in confirmer.links and r.link not in raw.links_down
                       and r.link[2] not in confirmer.switches
                       and r.link[2] not in raw.switches_down})
        by_t1: dict[str, list[FabricLink]] = {}
        for link in lost:
            by_t1.setdefault(link[2], []).append(link)
        suspects = Verdict({link for links in by_t1.values() if len(links) < 2 for link in links},
                           {t1 for t1, links in by_t1.items() if len(links) >= 2})
        records: list[dict[str, object]] = [
            {"event": "probe", "sweep": "idle", "link": describe(r.link), "seq": r.seq,
             "answered": False, "sent_at_s": round(r.sent_s, 6)}
            for r in results if not r.answered]
        records += verdicts
        records += confirmer.suspect(suspects, now_s, {link: {IDLE_REPORTER} for link in lost})
        self.record(records, now_s)
        return records

    def _read_ports_down(self, name: str) -> int:
        """The NIC's port-state bitmap (`local_port_state`'s default action: bit p = plane p's
        port down), as its firmware wrote it; 0 when it cannot be read."""
        session = self.nics[name].device.session if name in self.nics else None
        if session is None or session.schema is None:
            return 0
        try:
            for entry in session.read(TableEntry(session.schema, "local_port_state",
                                                 is_default=True)):
                if isinstance(entry, TableEntry) and entry.action_call is not None:
                    return int(entry.action_call.params.get("down_planes", 0))
        except Exception as error:   # a NIC that cannot answer now: no port known down
            logger.debug("%s: local_port_state unreadable: %s", name, error)
        return 0

    def _own_port(self, reports: list[EvReport]) -> tuple[list[EvReport], list[EvReport]]:
        """(reports that may name the fabric, reports explained by a NIC port down at
        either end in the EV's plane)."""
        bad = [r for r in reports if r.state == "ASSUMED_BAD"]
        if not bad:
            return reports, []
        masks = {n: self.ports_down(n) for n in sorted({x for r in bad for x in (r.nic, r.peer)})}
        keep, own = [], []
        for r in reports:
            down = r.state == "ASSUMED_BAD" and (
                masks.get(r.nic, 0) >> r.plane & 1 or masks.get(r.peer, 0) >> r.plane & 1)
            (own if down else keep).append(r)
        return keep, own

    def reports(self, now_s: float) -> list[EvReport]:
        """Every digest waiting on the NICs' streams, acknowledged, placed on its path."""
        out, self._found = self._found, []
        for nic in self.nics.values():
            session = nic.device.session
            if session is None or not nic.device.ready:
                continue
            while (digest := session.get_digest(timeout=0)) is not None:
                session.ack_digest(digest)
                for fields in digest.data:
                    state = EV_STATES.get(fields["state"], "?")
                    self._standing.pop((nic.name, fields["conn"], fields["ev"]), None)
                    # A loss may predate a rewrite; a probe answer is about the path now.
                    settle = self.settle_s if state == "ASSUMED_BAD" else 0.0
                    path = nic.path_of(fields["ev"], now_s, settle,
                                       fields.get("profile", nic.profile_of(fields["conn"])))
                    peer = nic.peers.get(fields["conn"])
                    if path is None or peer is None:
                        continue   # a DENIED EV's last word, or an unknown connection
                    out.append(EvReport(nic.name, peer, fields["ev"], path[0],
                                        self._t1_names[path[1]], state, now_s))
        return out

    def poll(self, now_s: float) -> RepairLog:
        """One round: digests in, verdict, rewrites out to every NIC that needs them."""
        reports = self.reports(now_s)
        fabric, own = self._own_port(reports)
        self.ignored += len(own)
        suspects = self.correlator.add(fabric, now_s)
        if self.confirmer is not None:
            reporters: dict[FabricLink, set[str]] = {}
            for r in self.correlator.pending:
                for link in self.correlator.path_links(r):
                    reporters.setdefault(link, set()).add(r.nic)
            self.record(self.confirmer.suspect(suspects, now_s, reporters), now_s)
        verdict = damped = self.damper.effective(self.raw_verdict, now_s)
        if self.state is not None:   # the operator's maintenance list, as it is now
            error = self._denied.poll()
            if error is not None:   # a bad edit: keep the last good list, say so once
                self.record([{"event": "state_file_bad",
                              "message": f"{error}; keeping the deny-list read before"}], now_s)
            verdict = self._with_denied(verdict)
        if self.state is not None and self.primary and damped != self._saved:
            save_health(self.state, damped)   # before the writes: a restart finishes them
            self._saved = damped
        self._log_changes(self.verdict, verdict, reports, now_s)
        self.verdict = verdict
        jobs: list[tuple[ManagedNic, list[PlannedEntry], list[p4r.Update]]] = []
        for nic in self.nics.values():
            session = nic.device.session
            if session is None or not nic.device.ready:
                continue   # reconciled to `target` when it is back (the daemon's keeper)
            changes = rewrites(nic.installed, self.target(nic.name))
            if changes:
                codec = self._codecs.setdefault(nic.name, PlanCodec(session.schema))
                jobs.append((nic, changes, [codec.update(MODIFY, e) for e in changes]))

        def write(job: tuple[ManagedNic, list[PlannedEntry], list[p4r.Update]]) -> list[bool]:
            nic, changes, updates = job
            return nic.device.write(updates, [f"MODIFY {e.describe()}" for e in changes])

        # Every NIC's batch at once: a fabric-wide repair costs one round trip, not one per NIC.
        results = (list(self._writers.map(write, jobs)) if self._parallel and len(jobs) > 1
                   else [write(job) for job in jobs])
        written: dict[str, int] = {}
        for (nic, changes, _), ok in zip(jobs, results, strict=True):
            done = [e for e, good in zip(changes, ok, strict=True) if good]
            nic.install(done, now_s)
            if done:
                written[nic.name] = len(done)
        if own:
            self.record([{"event": "ev_ignored", "nic": r.nic, "peer": r.peer, "ev": r.ev,
                          "plane": r.plane, "reason": "nic_port_down"} for r in own], now_s)
        log = RepairLog(reports, verdict, written)
        if reports or written:
            self.history.append(log)
            self.record([{"event": "rewrite", "nic": n, "entries": c,
                          "denied": sum(e.action == "deny_path" for e in self.nics[n].installed)}
                         for n, c in written.items()], now_s)
            if self.state is not None:
                write_status(self.state, (self.status_of or self.status_json)(now_s))
        return log

    def close(self) -> None:
        self._writers.shutdown(wait=False)

    def target(self, nic: str) -> list[PlannedEntry]:
        """The NIC's `ev_path` entries under the verdict acted on now."""
        m = self.nics[nic]
        by_profile: dict[int, list[str]] = {}
        for conn, peer in sorted(m.peers.items()):
            by_profile.setdefault(m.profile_of(conn), []).append(peer)
        return repaired_paths(self.plan, m.name, sorted(set(m.peers.values())), m.planned,
                              m.profile, self.verdict, by_profile=by_profile)

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
        self.record(records, now_s)

    def record(self, records: list[dict[str, object]], now_s: float) -> None:
        """Append `records` to the event log (with the time), and show them to `on_record`."""
        if not records:
            return
        stamped = [{"at_s": round(now_s, 6), **record} for record in records]
        self.verdicts += [r for r in stamped if r.get("event") == "verdict"]
        del self.verdicts[:-100]
        if self.on_record is not None:
            for record in stamped:
                self.on_record(record)
        if self.state is None:
            return
        self.state.mkdir(parents=True, exist_ok=True)
        with (self.state / EVENTS).open("a") as out:
            for record in stamped:
                out.write(json.dumps(record) + "\n")

    def off_plan(self) -> dict[str, int]:
        """EVs not on their planned path (moved or DENIED), per NIC."""
        return {name: sum(e != p for e, p in zip(nic.installed, nic.planned, strict=True))
                for name, nic in self.nics.items()}

    def status_json(self, now_s: float) -> dict[str, object]:
        """What `mrc-ctl status` prints: links and switches down, EVs off plan per NIC."""
        moved = self.off_plan()
        confirming: dict[str, object] = {}
        if self.confirmer is not None:
            confirming = {"suspects": sorted([*map(describe, self.confirmer.links),
                                              *self.confirmer.switches]),
                          "verdicts": self.verdicts[-10:]}
        return {"at_s": now_s, **confirming,
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
        moved = self.off_plan()
        lines.append("EVs off their planned path: " + (", ".join(
            f"{name} {count}" for name, count in sorted(moved.items()) if count) or "none"))
        last = [r for log in self.history[-3:] for r in log.reports][-5:]
        lines += [f"  {r.nic} EV {r.ev} (plane {r.plane}, {r.t1}) {r.state}" for r in last]
        return "\n".join(lines)
