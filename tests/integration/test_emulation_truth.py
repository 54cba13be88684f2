"""The emulator tells the whole truth (emulation/metrics.py, emulation/drops.py) on the tiny
fabric: every drop is counted under its cause, the P4 programs' own drops read over P4Runtime
and per bin from the engines alike (a rebooted switch keeps what it counted); a mode that
leaves messages undelivered is "not done", and `mrc-ctl emulate --check` says which
connection left which message and what became of it. The two scenarios are the issue's
must-show cases: scenarios/cut-ecmp-stuck.yaml and scenarios/nic-isolated.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scapy.layers.inet import IP
from scapy.layers.inet6 import UDP, IPv6
from scapy.layers.l2 import Ether

from controller.cli import main
from controller.devices.session import Program
from emulation.command import NIC_PROGRAM, SWITCH_PROGRAM
from emulation.metrics import NOT_DONE, RunResult
from emulation.network import Network
from emulation.report import INFINITE
from emulation.run import run_mode
from emulation.scenario import loads

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"
SCENARIOS = ROOT / "scenarios"
T1 = "p0-t1-0"   # its port 0 is the cable from p0-t0-0


def strict_json(path: Path) -> dict[str, object]:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in {path}")
    return json.loads(path.read_text(), parse_constant=refuse)  # type: ignore[no-any-return]


def assert_bins_add_up(result: RunResult) -> None:
    """The bins (engines) and the totals (P4Runtime at the end) give the same drops."""
    series = result.series
    assert {c: sum(rows) for c, rows in series.drops.items()} == {
        c: n for c, n in result.drops.items() if n}
    assert sum(series.dropped) == result.totals["dropped"] == sum(result.drops.values())


def test_a_p4_drop_is_counted_under_its_cause_even_across_a_reboot() -> None:
    """Two packets the switch program drops (one with no route, one not IPv6) reach a T1
    before it loses power: the engine that counted them is gone after the reboot, and the
    count is still there, under each P4 reason, at that switch."""
    s = loads("\n".join([
        "name: p4-drops", f"topology: {TINY}", "duration_us: 2000",
        "transport: {rto_us: 100, reorder_us: 30}",
        "workload: {kind: ring_allreduce, bytes: 8192}",
        "failures:", f"  - {{at_us: 20, kind: switch_reboot, switch: {T1}, down_us: 40}}",
    ]) + "\n", "p4-drops.yaml")
    mac = {"dst": "02:00:00:00:00:01", "src": "02:00:00:00:00:02"}
    nowhere = bytes(Ether(**mac) / IPv6(dst="2001:db8::1", hlim=64) / UDP(dport=9))
    ipv4 = bytes(Ether(**mac) / IP(dst="10.0.0.1") / UDP(dport=9))

    def inject(phase: str, network: Network) -> None:
        if phase == "built":
            device = network.fabric.switch(T1).device
            assert device.receive(0, nowhere) and device.receive(0, ipv4)

    result = run_mode(s, "mrc_no_controller", Program.compile(SWITCH_PROGRAM),
                      str(NIC_PROGRAM), phase=inject)
    assert result.drops["switch: no route"] == 1 and result.drops["switch: not IPv6"] == 1
    assert result.drop_sites["switch: no route"] == {T1: 1}
    assert result.drop_sites["switch: not IPv6"] == {T1: 1}
    assert result.drops["switch powered off"] > 0   # what reached the T1 while it was off
    assert result.failures and result.failures[0][1].startswith("switch_reboot")
    assert_bins_add_up(result)
    assert result.summary()["undelivered"] == 0   # mrc went around the reboot


def test_ecmp_stuck_on_a_cut_cable_is_not_done_and_mrc_passes_the_check(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cut"
    assert main(["emulate", str(SCENARIOS / "cut-ecmp-stuck.yaml"), "--quiet", "--check",
                 "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "check: passed: mrc delivered every message intact (24 of 24)" in printed
    assert f"is below ecmp's {INFINITE}" in printed
    data = strict_json(out / "report.json")
    ecmp = data["modes"]["ecmp"]  # type: ignore[index]
    assert ecmp["summary"]["mct_p99_us"] == NOT_DONE and ecmp["summary"]["undelivered"] > 0
    assert ecmp["summary"]["drops"]["cut cable"] == ecmp["summary"]["dropped"] > 0
    gave_up = [c for c in ecmp["connections"] if c["fate"] == "gave_up"]
    # Nothing answered them for give_up_us (default 20 x rto_us 100) after the cut.
    assert gave_up and all(c["reason"].startswith("nothing answered for 2000 µs")
                           and 2000 < c["at_us"] < 2100 for c in gave_up)
    assert ecmp["summary"]["connections_lost"] >= len(gave_up)
    mrc = data["modes"]["mrc"]  # type: ignore[index]
    assert mrc["summary"]["connections_lost"] == 0
    assert all(c["fate"] == "done" for c in mrc["connections"])
    md = (out / "report.md").read_text()
    ecmp_row = next(line for line in md.splitlines() if line.startswith("| ecmp |"))
    assert f"| {INFINITE} |" in ecmp_row
    assert "## Connections" in md and "| ecmp | nic3 -> nic0 (QP 0x101) | gave up |" in md


def test_mrc_cut_off_from_a_nic_fails_the_check_naming_the_connections(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "isolated"
    assert main(["emulate", str(SCENARIOS / "nic-isolated.yaml"), "--quiet", "--check",
                 "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "check: FAILED: mrc did not deliver" in err
    assert "  nic0 -> nic1 (QP 0x100): messages " in err and "its transport gave up at" in err
    assert "  nic1 -> nic2 (QP 0x101): message" in err
    data = strict_json(out / "report.json")
    mrc = data["modes"]["mrc"]  # type: ignore[index]
    assert mrc["summary"]["mct_p99_us"] == NOT_DONE
    # nic1's own program drops what it cannot send on its dead ports: a P4 cause, at nic1
    assert mrc["summary"]["drops"]["nic: port down"] > 0
    assert set(mrc["drop_sites"]["nic: port down"]) == {"nic1"}
    fates = {(c["src"], c["dst"]): c for c in mrc["connections"]}
    assert fates[("nic0", "nic1")]["fate"] == "gave_up"
    assert fates[("nic0", "nic1")]["evs"], "nic0 had taken no EV to nic1 out of service"
