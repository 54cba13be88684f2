"""The long-running controller (controller.daemon, `mrc-ctl run`) on the tiny fabric, every
switch and NIC blank at first and programmed by it over P4Runtime: it brings the fabric up,
repairs a cut link and probes it back, re-programs a T1 and a NIC that reboot, finishes a repair
it was killed in the middle of, and, run twice with two election ids, the backup writes nothing
until the primary dies, then takes over without changing what is already right.

The fabric runs in virtual time; the controller is polled from it (every 20 µs), its timing
rules (reconnect back-off, probe interval, hold-down) in virtual seconds. gRPC answers take real
time, so waits for them are bounded loops, never sleeps that a slow machine could outrun.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.daemon.controller import Controller, DaemonConfig, nic_specs
from controller.daemon.keeper import DeviceKeeper
from controller.devices.session import Program
from controller.nic_fabric import NicFabric
from controller.plan.nic_plan import EvProfile
from controller.topology.yaml_io import load
from p4rt import P4RuntimeWriteError, SwitchConnection, TableEntry
from p4rt.role_config import RoleConfig

ROOT = Path(__file__).resolve().parents[2]
SWITCH_P4 = ROOT / "p4src/switch/srv6_switch.p4"
NIC_P4 = ROOT / "p4src/nic/mrc_nic.p4"
PAIRS = [("nic0", "nic2"), ("nic3", "nic1")]
PROFILE = EvProfile(ev_count=16, backups=2, ev_min_active=4)
CUT = ("p0-t0-0", 2)                    # p0-t0-0 <-> p0-t1-0
DEAD_T1 = "p0-t1-0"
VA = 0x1000
FAST = DaemonConfig(retry_s=0.0005, max_retry_s=0.002, probe_interval_s=0.0005,
                    probe_successes=3, hold_s=0.002, connect_timeout_s=1.0)


@pytest.fixture(scope="module")
def programs() -> tuple[Program, Program]:
    return Program.compile(SWITCH_P4), Program.compile(NIC_P4)


@pytest.fixture
def fab() -> Iterator[NicFabric]:
    with NicFabric(load(ROOT / "topologies" / "tiny.yaml"), SWITCH_P4, NIC_P4, PAIRS,
                   profile=PROFILE, program=False) as fabric:
        yield fabric


def controller(fab: NicFabric, programs: tuple[Program, Program], state: Path, *,
               config: DaemonConfig = FAST, window_s: float = 0.01,
               **options: object) -> Controller:
    return Controller(fab.running, *programs, nic_specs(fab.nic_endpoints(), fab.connections),
                      profile=PROFILE, state=state, config=config, window_s=window_s,
                      settle_s=0.005, echo=lambda line: None, **options)  # type: ignore[arg-type]


def settle(fab: NicFabric, done: Callable[[], bool], what: str, step_us: int = 200,
           seconds: float = 60.0) -> None:
    """Run the fabric (and so the controller) until `done()`, for at most `seconds` of real
    time: connects and reconciles finish on the controller's worker threads."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not {what} after {seconds:g} s ({fab.now} µs)"
        fab.run_for(step_us)
        time.sleep(0.002)


def bring_up(fab: NicFabric, ctl: Controller) -> Callable[[], None]:
    """Poll `ctl` from the fabric's clock until every device is programmed; returns what
    stops the polling."""
    stop = fab.every(20, lambda now_us: ctl.poll(now_us / 1e6))
    settle(fab, ctl.ready, "every device programmed")
    return stop


def ev_t1s(fab: NicFabric, ctl: Controller, nic: str) -> set[str]:
    """The T1s the NIC's ev_path entries name, read back from the device."""
    session = ctl.keepers[nic].session
    assert session is not None
    names = {fab.plan.usid(s.name): s.name for s in fab.topology.switches}
    found = set()
    for entry in session.read(TableEntry(session.schema, "ev_path")):
        assert isinstance(entry, TableEntry) and entry.action_call is not None
        found.add(names.get(int(entry.action_call.params.get("t1_usid", 0)), "DENIED"))
    return found


def read_t1s(fab: NicFabric, nic: str) -> set[str]:
    """The T1s of the NIC's ev_path entries, read by a client of our own (a backup: reads
    only)."""
    endpoint = fab.nic_endpoints()[nic]
    names = {fab.plan.usid(s.name): s.name for s in fab.topology.switches}
    with SwitchConnection(endpoint.grpc_address, endpoint.device_id, election_id=(0, 0)) as look:
        look.get_pipeline()
        return {names.get(int(e.action_call.params.get("t1_usid", 0)), "DENIED")  # type: ignore[union-attr]
                for e in look.read(TableEntry(look.schema, "ev_path"))}


def transfer(fab: NicFabric, pairs: list[tuple[str, str]], size: int = 256 << 10,
             during: Callable[[], None] | None = None) -> None:
    """Write `size` bytes on each pair's connection (calling `during` 30 µs in, long before
    the last packet is sent) and check every byte arrived."""
    data = {src: random.Random(src + str(fab.now)).randbytes(size) for src, _ in pairs}
    for src, _ in pairs:
        fab.host(src).sender.write(data[src], VA)
    if during is not None:
        fab.run_for(30)
        during()
    fab.run(limit_us=500_000)
    for src, dst in pairs:
        assert bytes(fab.host(dst).receiver.memory[VA:VA + size]) == data[src], (src, dst)


def written(ctl: Controller) -> int:
    return sum(k.last_sync.written for k in ctl.keepers.values() if k.last_sync is not None)


def test_the_controller_programs_a_blank_fabric_and_a_restarted_one_changes_nothing(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    ctl = controller(fab, programs, tmp_path)
    try:
        bring_up(fab, ctl)
        assert all(k.last_sync is not None and k.last_sync.pipeline_pushed and
                   k.last_sync.failed == 0 for k in ctl.keepers.values())
        transfer(fab, PAIRS)
    finally:
        ctl.close()
    again = controller(fab, programs, tmp_path)
    try:
        deadline = time.monotonic() + 30
        while not again.ready():
            assert time.monotonic() < deadline
            again.poll(fab.now / 1e6)
            time.sleep(0.005)
        assert written(again) == 0
        assert not any(k.last_sync.pipeline_pushed for k in again.keepers.values()
                       if k.last_sync is not None)
    finally:
        again.close()
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["devices_ready"] == status["devices_total"] == 12


def test_a_cut_link_is_routed_around_then_probed_back_into_every_nic(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    with controller(fab, programs, tmp_path) as ctl:
        bring_up(fab, ctl)
        transfer(fab, PAIRS, during=lambda: fab.fabric.set_link_up(*CUT, False))
        settle(fab, lambda: (0, "p0-t0-0", DEAD_T1) in ctl.repairer.verdict.links_down,
               "the cut link declared")
        for nic in fab.nics:
            settle(fab, lambda nic=nic: DEAD_T1 not in ev_t1s(fab, ctl, nic),
                   f"{nic} moved off the cut link")
        fab.run_for(3000)      # probes keep failing while the cable is cut
        assert (0, "p0-t0-0", DEAD_T1) in ctl.repairer.verdict.links_down
        assert ctl.probes.link_prober.sent > 3
        fab.fabric.set_link_up(*CUT, True)
        for nic in fab.nics:
            settle(fab, lambda nic=nic: DEAD_T1 in ev_t1s(fab, ctl, nic), f"{nic} restored")
        assert not ctl.repairer.verdict.links_down
    events = [json.loads(line)["event"] for line in (tmp_path / "events.jsonl").open()]
    assert "link_down" in events and "probed_healthy" in events and "link_up" in events


@pytest.fixture
def local_fab() -> Iterator[NicFabric]:
    """The tiny fabric with one connection, between two NICs of the same T0s: no connection's
    EVs cross a T0-T1 cable, so the idle sweep probes every cable."""
    with NicFabric(load(ROOT / "topologies" / "tiny.yaml"), SWITCH_P4, NIC_P4,
                   [("nic0", "nic1")], profile=PROFILE, program=False) as fabric:
        yield fabric


def test_a_cut_no_traffic_crosses_is_found_by_the_idle_sweep(
        local_fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    """No EV of any connection crosses the cut, so no NIC can report it: the idle sweep finds
    it, the confirmation probes declare it, and the NICs' EVs are moved off it."""
    fab = local_fab
    # Timeouts of several ms of the fabric's clock: PacketIns come back over gRPC in real
    # time, while the fabric's clock runs as fast as it can.
    config = dataclasses.replace(FAST, idle_probe_interval_s=0.001, confirm_interval_s=0.0005,
                                 probe_timeout_s=0.01)
    with controller(fab, programs, tmp_path, config=config) as ctl:
        bring_up(fab, ctl)
        sweep = ctl.probes.idle
        assert sweep is not None
        start = fab.now
        settle(fab, lambda: fab.now - start >= 15_000, "15 ms of idle probes")
        assert sweep.sent >= 8 * 10 and sweep.lost == 0, (
            sweep.sent, sweep.lost)   # every cable answers, again and again
        fab.fabric.set_link_up(*CUT, False)
        settle(fab, lambda: (0, "p0-t0-0", DEAD_T1) in ctl.repairer.verdict.links_down,
               "the idle cut declared")
        for nic in fab.nics:
            settle(fab, lambda nic=nic: DEAD_T1 not in ev_t1s(fab, ctl, nic),
                   f"{nic} moved off the cut link")
        assert ctl.repairer.verdict.switches_down == set()
        assert ctl.status_json()["idle_probes"]["lost"] >= 1  # type: ignore[index]
    (suspect,) = events(tmp_path, "suspect")
    assert suspect["link"] == "p0-t0-0:p0-t1-0" and suspect["reporters"] == ["idle-probe"]
    assert [v["link"] for v in events(tmp_path, "verdict") if v["down"]] == ["p0-t0-0:p0-t1-0"]


def test_a_t1_that_reboots_is_routed_around_then_reprogrammed_and_probed_back(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    with controller(fab, programs, tmp_path) as ctl:
        bring_up(fab, ctl)
        transfer(fab, PAIRS, during=lambda: fab.power_off(DEAD_T1))
        settle(fab, lambda: DEAD_T1 in ctl.repairer.verdict.switches_down, "the T1 declared")
        for nic in fab.nics:
            settle(fab, lambda nic=nic: DEAD_T1 not in ev_t1s(fab, ctl, nic), f"{nic} moved")
        assert ctl.keepers[DEAD_T1].state in ("down", "connecting")
        syncs = ctl.keepers[DEAD_T1].syncs
        fab.power_on(DEAD_T1)       # blank: no pipeline, no tables
        settle(fab, lambda: ctl.keepers[DEAD_T1].syncs > syncs, "the T1 reprogrammed")
        report = ctl.keepers[DEAD_T1].last_sync
        assert report is not None and report.pipeline_pushed and report.written > 0
        for nic in fab.nics:
            settle(fab, lambda nic=nic: DEAD_T1 in ev_t1s(fab, ctl, nic), f"{nic} restored")
        transfer(fab, PAIRS)


def test_a_nic_that_reboots_gets_its_tables_back_as_repaired(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    with controller(fab, programs, tmp_path) as ctl:
        bring_up(fab, ctl)
        assert main_deny(tmp_path, "p1-t0-1:p1-t1-1")
        settle(fab, lambda: "p1-t1-1" not in ev_t1s(fab, ctl, "nic2"), "nic2 off the link")
        syncs = ctl.keepers["nic2"].syncs
        fab.power_off("nic2")
        fab.power_on("nic2")
        settle(fab, lambda: ctl.keepers["nic2"].syncs > syncs, "nic2 reprogrammed")
        assert ctl.keepers["nic2"].last_sync.written > 20   # type: ignore[union-attr]
        t1s = ev_t1s(fab, ctl, "nic2")
        assert "p1-t1-1" not in t1s and "p1-t1-0" in t1s   # the repaired paths, not the plan


def main_deny(state: Path, target: str) -> bool:
    from controller.cli import main

    return main(["deny", str(ROOT / "topologies" / "tiny.yaml"), target,
                 "--state", str(state)]) == 0


class Killed(BaseException):
    """The controller process dying between two writes."""


def test_a_controller_killed_mid_repair_finishes_the_repair_when_restarted(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = controller(fab, programs, tmp_path)
    stop_polling = bring_up(fab, first)
    real_write = DeviceKeeper.write
    nic_writes: list[str] = []

    def dies_after_one_nic(self: DeviceKeeper, updates, descriptions):  # type: ignore[no-untyped-def]
        if nic_writes:
            raise Killed
        nic_writes.append(self.name)
        return real_write(self, updates, descriptions)

    monkeypatch.setattr(DeviceKeeper, "write", dies_after_one_nic)
    fab.fabric.set_link_up(*CUT, False)
    for src, _ in PAIRS:   # both senders cross the cut: two NICs report it
        fab.host(src).sender.write(random.Random(src).randbytes(256 << 10), VA)
    with pytest.raises(Killed):
        settle(fab, lambda: False, "killed")
    stop_polling()                  # it is dead: nothing polls it any more
    first.close()
    monkeypatch.setattr(DeviceKeeper, "write", real_write)
    assert len(nic_writes) == 1
    health = json.loads((tmp_path / "health.json").read_text())
    assert health["links"] or health["switches"]
    unrepaired = [n for n in fab.nics if n not in nic_writes]
    for nic in unrepaired:   # killed mid-repair: these still send through the cut
        assert DEAD_T1 in read_t1s(fab, nic), nic
    with controller(fab, programs, tmp_path) as second:
        bring_up(fab, second)
        for nic in unrepaired:
            assert DEAD_T1 not in ev_t1s(fab, second, nic), nic
        assert sum(second.keepers[n].last_sync.written  # type: ignore[union-attr]
                   for n in nic_writes) == 0               # the one finished stays as it is


def test_a_backup_controller_writes_nothing_then_takes_over_when_the_primary_dies(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    primary = controller(fab, programs, tmp_path / "a", election_id=(0, 10))
    backup = controller(fab, programs, tmp_path / "b", election_id=(0, 5),
                        config=DaemonConfig(takeover_s=1.0, connect_timeout_s=1.0))
    newer = controller(fab, programs, tmp_path / "c", election_id=(0, 20))
    try:
        start = time.monotonic()

        def poll(*controllers: Controller) -> None:
            assert time.monotonic() - start < 60, [c.states() for c in controllers]
            for c in controllers:
                c.poll(time.monotonic() - start)
            time.sleep(0.005)

        while not primary.ready():   # the primary first: a backup started alone is primary
            poll(primary)
        while set(backup.states().values()) != {"backup"}:
            poll(primary, backup)
        for _ in range(20):
            poll(primary, backup)
        assert all(k.syncs == 0 for k in backup.keepers.values())   # wrote nothing
        primary.close()
        died = time.monotonic()
        while not backup.ready():
            assert time.monotonic() - died < 20, backup.states()
            poll(backup)
        assert time.monotonic() - died < 10
        assert written(backup) == 0          # everything was already right
        assert all(k.election_id > (0, 10) for k in backup.keepers.values())
        # A controller with a higher election id arrives: this one steps down, writes nothing.
        while not newer.ready():
            poll(backup, newer)
        poll(backup, newer)
        assert set(backup.states().values()) == {"backup"} and not any(
            k.ready for k in backup.keepers.values())
    finally:
        for c in (primary, backup, newer):
            c.close()


EvPaths = dict[tuple[int, int], tuple[str, tuple[int, ...]]]


def ev_paths(fab: NicFabric, nic: str, via: Controller | None = None) -> EvPaths:
    """The NIC's ev_path entries, (profile, EV) -> (action, params): read back by a reader of
    our own, or (quicker, to wait on) over the session of controller `via`."""
    session = via.keepers[nic].session if via is not None else None
    if session is not None:
        return _ev_paths(session)
    endpoint = fab.nic_endpoints()[nic]
    with SwitchConnection(endpoint.grpc_address, endpoint.device_id, election_id=(0, 0)) as look:
        look.get_pipeline()
        return _ev_paths(look)


def _ev_paths(session: SwitchConnection) -> EvPaths:
    out = {}
    for e in session.read(TableEntry(session.schema, "ev_path")):
        assert isinstance(e, TableEntry) and e.action_call is not None
        key = (int(e.matches["profile"].value), int(e.matches["ev"].value))  # type: ignore[attr-defined]
        params = tuple(int(v) for _, v in sorted(e.action_call.params.items()))
        out[key] = (e.action_call.name, params)
    return out


def events(state: Path, kind: str) -> list[dict[str, object]]:
    return [r for line in (state / "events.jsonl").open()
            if (r := json.loads(line))["event"] == kind]


def nic_writes(ctl: Controller) -> int:
    """Entries this controller wrote to NICs: reconciles and repairs."""
    return (sum(ctl.keepers[n].last_sync.written  # type: ignore[union-attr]
                for n in ctl.nic_plans if ctl.keepers[n].last_sync is not None)
            + sum(sum(log.written.values()) for log in ctl.repairer.history))


class Polled:
    """Controllers polled from the fabric's clock (every 20 µs); one that dies (raises Killed
    in its poll, as a process killed between two writes) stops being polled."""

    def __init__(self, fab: NicFabric, *controllers: Controller) -> None:
        self.alive = list(controllers)
        self.dead: list[Controller] = []
        self._stop = fab.every(20, self._poll)

    def _poll(self, now_us: int) -> None:
        for c in list(self.alive):
            try:
                c.poll(now_us / 1e6)
            except Killed:
                self.alive.remove(c)
                self.dead.append(c)

    def kill(self, c: Controller) -> None:
        if c in self.alive:
            self.alive.remove(c)
            self.dead.append(c)
        c.close()

    def close(self) -> None:
        self._stop()
        for c in self.alive + self.dead:
            c.close()


def dies_after(ctl: Controller, nic_writes: int, written: list[str]) -> threading.Lock:
    """`ctl` dies (Killed) at its repair's NIC write after `nic_writes` of them (those are
    done, in `written`). Its NIC writes take turns under the lock returned: holding it, no
    write of the dead controller is still under way."""
    lock = threading.Lock()
    for name in ctl.nic_plans:
        keeper = ctl.keepers[name]

        def write(updates, descriptions, keeper=keeper, real=keeper.write):  # type: ignore[no-untyped-def]
            with lock:
                if len(written) >= nic_writes:
                    raise Killed
                written.append(keeper.name)
                return real(updates, descriptions)
        keeper.write = write  # type: ignore[method-assign]
    return lock


def standby(fab: NicFabric, programs: tuple[Program, Program], state: Path) -> Controller:
    """A backup (election id 5, taking over 2 ms after the primary's streams end)."""
    return controller(fab, programs, state, election_id=(0, 5),
                      config=dataclasses.replace(FAST, takeover_s=0.002), window_s=1.0)


@pytest.mark.parametrize("shared", [True, False], ids=["shared-state", "own-state"])
def test_a_backup_that_takes_over_keeps_every_repair_of_the_primary(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path, shared: bool) -> None:
    backup_state = tmp_path / ("a" if shared else "b")
    primary = controller(fab, programs, tmp_path / "a", election_id=(0, 10))
    backup = standby(fab, programs, backup_state)
    polled = Polled(fab, primary, backup)
    try:
        settle(fab, primary.ready, "the primary up")
        settle(fab, lambda: set(backup.states().values()) == {"backup"}, "the backup standing by")
        transfer(fab, PAIRS, during=lambda: fab.fabric.set_link_up(*CUT, False))
        settle(fab, lambda: (0, "p0-t0-0", DEAD_T1) in primary.repairer.verdict.links_down,
               "the cut link declared")
        for nic in fab.nics:
            settle(fab, lambda nic=nic: DEAD_T1 not in read_t1s(fab, nic), f"{nic} moved")
        left = {nic: ev_paths(fab, nic) for nic in fab.nics}
        polled.kill(primary)
        settle(fab, backup.ready, "the backup taken over")
        assert {nic: ev_paths(fab, nic) for nic in fab.nics} == left
        # Probes keep failing over the cut; a link the tables over-blame is probed back; the
        # NICs are never written.
        fab.run_for(20_000)
        assert (0, "p0-t0-0", DEAD_T1) in backup.repairer.verdict.links_down
        assert {nic: ev_paths(fab, nic) for nic in fab.nics} == left
        assert nic_writes(backup) == 0
        if shared:      # the old primary's model, read again on the takeover
            assert events(backup_state, "health_resumed")[-1]["links_down"] == [
                "p0-t0-0:p0-t1-0"]
        else:           # rebuilt from the tables the old primary left
            assert "p0-t0-0:p0-t1-0" in events(backup_state, "health_rebuilt")[0]["links_down"]
    finally:
        polled.close()


def test_a_device_down_during_a_takeover_comes_back_with_the_new_election_id(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    primary = controller(fab, programs, tmp_path / "a", election_id=(0, 10))
    backup = standby(fab, programs, tmp_path / "b")
    polled = Polled(fab, primary, backup)
    try:
        settle(fab, primary.ready, "the primary up")
        settle(fab, lambda: set(backup.states().values()) == {"backup"}, "the backup standing by")
        fab.power_off(DEAD_T1)
        polled.kill(primary)
        settle(fab, lambda: all(k.ready for n, k in backup.keepers.items() if n != DEAD_T1),
               "the backup taken over")
        fab.power_on(DEAD_T1)   # blank, and it remembers no election id
        settle(fab, backup.ready, "the T1 programmed by the new primary")
        # One id everywhere, on every stream too (a connect under way at the takeover is
        # redone): not the standby's old 5, which the next standby may hold.
        assert {k.election_id for k in backup.keepers.values()} == {(0, 11)}
        assert {k.session.election_id for k in backup.keepers.values()
                if k.session is not None} == {(0, 11)}
        third = controller(fab, programs, tmp_path / "c", election_id=(0, 5))
        polled.alive.append(third)
        settle(fab, lambda: set(third.states().values()) == {"backup"}, "a third standing by")
    finally:
        polled.close()


def test_ev_events_raised_while_no_controller_listened_are_read_from_the_nics(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    with controller(fab, programs, tmp_path) as first:
        stop = bring_up(fab, first)
    stop()   # no controller: the NICs' EV events go nowhere
    transfer(fab, PAIRS, during=lambda: fab.fabric.set_link_up(*CUT, False))
    bad = {nic: [ev for ev, state in fab.ev_states(nic).items() if state == "ASSUMED_BAD"]
           for nic, _ in PAIRS}
    assert all(bad.values()), bad
    # Found one NIC at a time as the controller takes them in: evidence that stands for a
    # 1 s window of the fabric's clock.
    with controller(fab, programs, tmp_path, window_s=1.0) as second:
        stop = bring_up(fab, second)
        try:
            settle(fab, lambda: (0, "p0-t0-0", DEAD_T1) in second.repairer.verdict.links_down,
                   "the cut link confirmed from the registers")
            for nic in fab.nics:
                settle(fab, lambda nic=nic: DEAD_T1 not in ev_t1s(fab, second, nic),
                       f"{nic} moved off the cut link")
        finally:
            stop()
    found = {str(r["nic"]) for r in events(tmp_path, "ev_found")}
    assert found >= {src for src, _ in PAIRS}
    verdict = [r for r in events(tmp_path, "verdict") if r.get("link") == "p0-t0-0:p0-t1-0"]
    assert verdict and verdict[-1]["down"] and verdict[-1]["probes_lost"] >= 3   # confirmed


SOAK_SEED = int(os.environ.get("SOAK_SEED", str(time.time_ns() % 1_000_000)))
SOAK_ROUNDS = int(os.environ.get("SOAK_ROUNDS", "6"))
CABLES = [("p0-t0-0", 2, "p0-t1-0"), ("p0-t0-1", 3, "p0-t1-1"), ("p1-t0-0", 3, "p1-t1-1"),
          ("p1-t0-1", 2, "p1-t1-0")]   # (T0, its port, the T1 at the other end)


@pytest.mark.slow
def test_soak_controller_failovers_in_the_middle_of_repairs(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    """SOAK_ROUNDS rounds (seeded by SOAK_SEED): a transfer runs, a cable is cut or a T1
    loses power, and the primary dies after a random number of its repair's NIC writes (none,
    some, or all: a repair finished); its standby (the state directory shared every other
    round, its own otherwise) takes over. Every NIC the dead primary wrote is left exactly as it
    left it, the others are repaired, every byte arrives; once the fault is mended every NIC is
    back on its plan. The standby is then the primary, and a new standby is started for the
    next round."""
    rng = random.Random(SOAK_SEED)
    print(f"SOAK_SEED={SOAK_SEED} SOAK_ROUNDS={SOAK_ROUNDS}")
    primary = controller(fab, programs, tmp_path / "s0", election_id=(0, 10), window_s=1.0)
    polled = Polled(fab, primary)
    last_t1 = ""
    try:
        settle(fab, primary.ready, "the first primary up")
        for round_ in range(SOAK_ROUNDS):
            state = primary.state if round_ % 2 else tmp_path / f"s{round_ + 1}"
            assert state is not None
            backup = standby(fab, programs, state)
            polled.alive.append(backup)
            settle(fab, lambda b=backup: set(b.states().values()) == {"backup"},
                   "the standby standing by")
            planned = {nic: ev_paths(fab, nic) for nic in fab.nics}
            # Not the last round's T1: a connection's NIC passes over the path it last took an
            # EV out of (its bad path) until an EV on it answers, so that path may carry
            # nothing to lose yet.
            t0, port, t1 = rng.choice([c for c in CABLES if c[2] != last_t1])
            last_t1 = t1
            power = rng.random() < 0.5
            budget = rng.randrange(len(fab.nics) + 1)   # NIC writes before it dies
            print(f"round {round_}: {'power off ' + t1 if power else f'cut {t0}:{t1}'}, "
                  f"primary dies after {budget} NIC writes, "
                  f"{'shared' if round_ % 2 else 'own'} state")
            written: list[str] = []
            writing = dies_after(primary, budget, written)

            def fault(t0: str = t0, port: int = port, t1: str = t1, power: bool = power) -> None:
                if power:
                    fab.power_off(t1)
                else:
                    fab.fabric.set_link_up(t0, port, False)

            # Dead, its streams stay open (as a hung process's would) until it is killed:
            # nobody takes over before then.
            transfer(fab, PAIRS, during=fault)
            settle(fab, lambda p=primary, t1=t1: p not in polled.alive or all(
                t1 not in ev_t1s(fab, p, n) for n in fab.nics), "the primary's repair or death")
            with writing:   # died, or finished its repair: it dies now
                left = {nic: ev_paths(fab, nic) for nic in written}
            polled.kill(primary)
            settle(fab, backup.ready if not power else
                   lambda b=backup, t1=t1: all(b.keepers[n].ready for n in b.keepers if n != t1),
                   "the standby taken over")
            for nic in fab.nics:
                settle(fab, lambda nic=nic, t1=t1, b=backup: t1 not in ev_t1s(fab, b, nic),
                       f"{nic} repaired by the new primary")
            assert {nic: ev_paths(fab, nic) for nic in written} == left, written
            transfer(fab, PAIRS)
            if power:
                fab.power_on(t1)
            else:
                fab.fabric.set_link_up(t0, port, True)
            for nic in fab.nics:
                settle(fab, lambda nic=nic, want=planned[nic], b=backup:
                       ev_paths(fab, nic, b) == want, f"{nic} back on its plan")
            assert {nic: ev_paths(fab, nic) for nic in fab.nics} == planned
            # The NICs' probes bring back what they took out themselves: the next fault then
            # raises fresh EV events (an EV still ASSUMED_BAD carries nothing to lose).
            settle(fab, lambda: not any(state == "ASSUMED_BAD" for nic in fab.nics
                                        for state in fab.ev_states(nic).values()),
                   "every EV back in service")
            primary = backup
    finally:
        polled.close()


def test_on_the_medium_fabric_a_t1_reboot_mid_transfer_is_ridden_through_and_repaired(
        programs: tuple[Program, Program], tmp_path: Path) -> None:
    # medium.yaml: 4 planes x (4 T1 + 8 T0); p1-t1-2 carries a quarter of plane 1's EVs.
    pairs = [("nic0", "nic9"), ("nic1", "nic17"), ("nic12", "nic2"), ("nic20", "nic3")]
    profile = EvProfile(ev_count=32, backups=2, ev_min_active=8)
    t1 = "p1-t1-2"
    with NicFabric(load(ROOT / "topologies" / "medium.yaml"), SWITCH_P4, NIC_P4, pairs,
                   profile=profile, program=False) as fab, \
            Controller(fab.running, *programs, nic_specs(fab.nic_endpoints(), fab.connections),
                       profile=profile, state=tmp_path, config=FAST, window_s=0.01,
                       settle_s=0.005, echo=lambda line: None) as ctl:
        bring_up(fab, ctl)
        transfer(fab, pairs, size=512 << 10, during=lambda: fab.power_off(t1))
        # Every pair has an end under p1-t0-0: that T0's link to the T1 has the evidence of
        # them all (the T1's other links have one NIC each, too little to declare them).
        settle(fab, lambda: (1, "p1-t0-0", t1) in ctl.repairer.verdict.links_down or
               t1 in ctl.repairer.verdict.switches_down, "the T1's links declared")
        for nic in fab.connections:
            settle(fab, lambda nic=nic: t1 not in ev_t1s(fab, ctl, nic), f"{nic} moved")
        fab.power_on(t1)
        for nic in fab.connections:
            settle(fab, lambda nic=nic: t1 in ev_t1s(fab, ctl, nic), f"{nic} restored")
        assert ctl.keepers[t1].last_sync.pipeline_pushed   # type: ignore[union-attr]
        status = json.loads((tmp_path / "status.json").read_text())
        assert status["switches_down"] == [] and status["devices_ready"] == len(ctl.keepers)


def test_a_role_config_scopes_the_switches_to_the_controller_and_a_bad_one_is_named(
        fab: NicFabric, programs: tuple[Program, Program], tmp_path: Path) -> None:
    tables = sorted({e.table for e in fab.plan.switch("p0-t0-0")})
    scoped = RoleConfig(exclusive=tuple(tables), receives_packet_ins=True,
                        can_push_pipeline=True)
    switches = [dataclasses.replace(s, endpoint=dataclasses.replace(
        s.endpoint, role="fabric", role_config=scoped)) for s in fab.running.switches]
    topology = dataclasses.replace(fab.running, switches=switches)
    lines: list[str] = []
    with Controller(topology, *programs, nic_specs(fab.nic_endpoints(), fab.connections),
                    profile=PROFILE, state=tmp_path, config=FAST, echo=lines.append) as ctl:
        bring_up(fab, ctl)
        transfer(fab, PAIRS)
        t0 = fab.running.switch("p0-t0-0").endpoint
        assert t0 is not None
        with SwitchConnection(t0.grpc_address, t0.device_id, election_id=(0, 1)) as other:
            other.get_pipeline()   # the default role: may not touch what "fabric" holds
            with pytest.raises(P4RuntimeWriteError, match="exclusively"):
                other.insert(TableEntry(other.schema, "route_v6").match(
                    dst_addr=("fcbb:bbbb:ffff::", 48)).action("drop"))
    bad = RoleConfig(exclusive=("no_such_table",), can_push_pipeline=True)
    badly = dataclasses.replace(topology, switches=[
        dataclasses.replace(s, endpoint=dataclasses.replace(s.endpoint, role_config=bad))
        if s.name == DEAD_T1 else s for s in topology.switches])
    lines.clear()
    with Controller(badly, *programs, state=tmp_path / "bad", config=FAST,
                    echo=lines.append) as ctl:
        deadline = time.monotonic() + 20
        while not any("device_down" in line for line in lines):
            assert time.monotonic() < deadline
            ctl.poll(fab.now / 1e6)
            time.sleep(0.01)
    assert any("no_such_table" in line and DEAD_T1 in line for line in lines), lines
