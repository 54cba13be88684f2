"""`mrc-ctl push` and `mrc-ctl fabric up` from the command line (controller.cli.main)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main
from controller.fabric_up import build_fabric
from controller.topology import yaml_io

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"

pytestmark = pytest.mark.skipif(not TINY.is_file(), reason="topologies/tiny.yaml not written yet")


def test_push_twice_then_a_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fabric, running = build_fabric(yaml_io.load(TINY), ephemeral_ports=True)
    try:
        path = tmp_path / "tiny-running.yaml"
        path.write_text(yaml_io.dumps(running))
        assert main(["push", str(path)]) == 0
        first = capsys.readouterr().out
        assert "8 switch(es), 0 failed" in first and "pipeline pushed" in first
        assert main(["push", str(path), "--switch", "p0-t0-0"]) == 0
        again = capsys.readouterr().out
        assert "1 switch(es), 0 failed; entries: +0 ~0 -0" in again and "pipeline kept" in again
        assert main(["push", str(path), "--workers", "2"]) == 0   # two processes, four each
        sharded = capsys.readouterr().out
        assert "8 switch(es), 0 failed; entries: +0 ~0 -0" in sharded
        # The switches remember the highest election id they granted (0,1, the topology's),
        # even after that controller left: a controller with 0,0 is a backup, refused.
        assert main(["push", str(path), "--election-id", "0,0"]) == 1
        refused = capsys.readouterr().out
        assert "8 switch(es), 8 failed" in refused
        assert "election id 0,0 is below the switch's primary election id 0,1" in refused
    finally:
        fabric.close()


def test_push_reports_bad_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control oops(")
    assert main(["push", str(TINY), "--program", str(bad)]) == 2
    assert "bad.p4:" in capsys.readouterr().err


def test_fabric_up_runs_and_stops(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fabric", "up", str(TINY), "--ephemeral-ports", "--seconds", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "8 switch(es), 0 failed; entries: +200" in out
    assert "fabric tiny: 8 softswitches, 8 NIC ports" in out


GARBAGE = bytes((i * 167 + 13) % 256 for i in range(600))   # not a protobuf, not UTF-8


@pytest.mark.parametrize("command", ["push", "run"])
@pytest.mark.parametrize(("name", "data", "reason"), [
    ("p4info.bin", GARBAGE, "cannot read P4Info: not a binary P4Info (use .txt or .json for text)"),
    ("p4info.txt", GARBAGE, "cannot read P4Info: not UTF-8 text (byte 1)"),
    ("p4info.json", b"\xff\xfe{}", "cannot read P4Info: not UTF-8 text (byte 0)"),
    ("p4info.bin", b"", "not a program's P4Info (no tables)"),
])
def test_a_hostile_p4info_is_one_error_line_naming_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, name: str,
        data: bytes, reason: str) -> None:
    p4info, config = tmp_path / name, tmp_path / "config.json"
    p4info.write_bytes(data)
    config.write_bytes(GARBAGE)
    extra = ["--seconds", "0.1", "--state", str(tmp_path / "state")] if command == "run" else []
    assert main([command, str(TINY), "--p4info", str(p4info), "--config", str(config),
                 *extra]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {p4info}: {reason}\n"
    assert not (tmp_path / "state").exists()   # refused before anything ran


def test_run_refuses_a_bad_deny_list_with_one_line_and_keeps_the_health_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    state.mkdir()
    health = '{"links": [[0, "p0-t0-0", "p0-t1-0"]], "switches": []}\n'
    (state / "health.json").write_text(health)
    (state / "denied.json").write_bytes(b"\x00\xffnot json")
    assert main(["run", str(TINY), "--state", str(state), "--seconds", "0.1"]) == 2
    assert capsys.readouterr().err == (
        f"error: {state / 'denied.json'}: not a deny-list: not UTF-8 text (byte 1) "
        "(fix or remove it; nothing was started)\n")
    assert (state / "health.json").read_text() == health
    assert sorted(p.name for p in state.iterdir()) == ["denied.json", "health.json"]
