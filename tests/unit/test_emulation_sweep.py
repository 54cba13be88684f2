"""`mrc-ctl sweep` (emulation/sweep.py): a 2-job sweep gives the bytes of the runs done one by
one, sweep.json lists every run, and a bad scenario file stops the sweep before any run.

The sweep runs tests/scenarios/tiny-ring.yaml (8 KiB per rank on the tiny fabric, a cable cut
at 5 µs) in modes mrc and ecmp with seeds 1 and 2: four runs of about 2 s each."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from emulation import report, sweep
from emulation.metrics import MessageRecord, RunResult, Series
from emulation.scenario import load

ROOT = Path(__file__).resolve().parents[2]
TINY_RING = ROOT / "tests" / "scenarios" / "tiny-ring.yaml"
TINY = ROOT / "topologies" / "tiny.yaml"


@pytest.fixture(scope="module")
def switch_program():  # type: ignore[no-untyped-def]
    from controller.devices.session import Program
    from emulation.command import SWITCH_PROGRAM

    return Program.compile(SWITCH_PROGRAM)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mrc-ctl")
    sweep.add_sweep_parser(p.add_subparsers(dest="command", required=True))
    return p


def test_a_two_job_sweep_gives_the_bytes_of_runs_alone(tmp_path: Path, switch_program) -> None:  # type: ignore[no-untyped-def]
    from emulation.command import NIC_PROGRAM
    from emulation.run import run_mode

    scenario = load(TINY_RING)
    assert scenario.modes == ("mrc", "ecmp")
    runs = sweep.plan_runs([scenario], seeds=(1, 2))
    assert [(r.seed, r.mode) for r in runs] == [(1, "mrc"), (1, "ecmp"), (2, "mrc"), (2, "ecmp")]
    seen: list[str] = []
    result = sweep.run_sweep(runs, tmp_path, jobs=2, program=switch_program,
                             progress=lambda o, done, total: seen.append(
                                 sweep.progress_line(o, done, total)))
    assert result.ok and result.jobs == 2, [o.error for o in result.outcomes]
    assert len(seen) == 4 and all(line.startswith(f"[{k + 1}/4] tiny-ring seed ")
                                  for k, line in enumerate(seen))

    listed = json.loads((tmp_path / sweep.SWEEP_JSON).read_text())
    assert listed["runs"] == 4 and listed["failed"] == 0
    seeds = listed["scenarios"]["tiny-ring"]["seeds"]
    assert {(seed, m) for seed, entry in seeds.items() for m in entry["modes"]} == {
        ("1", "mrc"), ("1", "ecmp"), ("2", "mrc"), ("2", "ecmp")}

    for seed in (1, 2):
        seeded = dataclasses.replace(scenario, seed=seed)   # as `mrc-ctl emulate --seed`
        alone = [run_mode(seeded, m, switch_program, str(NIC_PROGRAM)) for m in scenario.modes]
        folder = tmp_path / "tiny-ring" / str(seed)
        assert (folder / "report.json").read_text() == report.report_json(seeded, alone)
        assert (folder / "report.md").is_file() and (folder / "goodput.png").is_file()
        for run in alone:
            assert seeds[str(seed)]["modes"][run.mode] == json.loads(
                json.dumps(run.summary_json()))
    assert seeds["1"]["report"] == "tiny-ring/1/report.json"

    table = (tmp_path / sweep.SWEEP_MD).read_text()
    rows = [line for line in table.splitlines() if line.startswith("| tiny-ring |")]
    assert len(rows) == 4 and all("| 24/24 | 0 |" in row for row in rows)


def test_a_bad_scenario_file_fails_before_any_run(tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                  capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\n"
                   f"topology: {TINY}\n"
                   "workload: {kind: ring_allreduce, bytes: 4096}\n"
                   "failures:\n"
                   "  - {at_us: 5, kind: link_down, link: 'p0-t0-0:9'}\n")
    worse = tmp_path / "worse.yaml"
    worse.write_text("name: worse\n"
                     f"topology: {TINY}\n"
                     "workload: {kind: ring_allreduce, bytes: 4096}\n"
                     "modes: [mrc, fast]\n")

    def no_runs(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a run started")

    monkeypatch.setattr(sweep, "run_sweep", no_runs)
    out = tmp_path / "out"
    args = parser().parse_args(["sweep", str(TINY_RING), str(bad), str(worse), "-o", str(out)])
    assert args.func(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{bad}:5:") and "error: failures[0].link" in err[0]
    assert err[1].startswith(f"{worse}:4:") and "error: modes[1]" in err[1]
    assert len(err) == 2 and not out.exists()


def test_a_scenario_s_warnings_are_printed_before_the_runs(tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                          capsys) -> None:
    late = tmp_path / "late.yaml"
    late.write_text("name: late\n"
                    f"topology: {TINY}\n"
                    "duration_us: 100\n"
                    "workload: {kind: ring_allreduce, bytes: 4096}\n"
                    "failures:\n"
                    "  - {at_us: 500, kind: link_down, link: 'p0-t0-0:2'}\n")
    ran: list[object] = []

    def no_runs(*args: object, **_kwargs: object) -> None:
        ran.append(args)
        raise SystemExit(0)

    monkeypatch.setattr(sweep, "run_sweep", no_runs)
    args = parser().parse_args(["sweep", str(late), "-o", str(tmp_path / "out")])
    with pytest.raises(SystemExit):
        args.func(args)
    err = capsys.readouterr().err
    assert f"{late}:6:" in err and "warning: failures[0]: at_us 500 is not before duration_us" \
        in err
    assert ran   # a warning does not stop the sweep


def test_two_scenarios_may_not_share_a_name(tmp_path: Path) -> None:
    twin = tmp_path / "twin.yaml"
    twin.write_text(TINY_RING.read_text().replace("../../topologies", str(ROOT / "topologies")))
    scenarios, errors = sweep.load_scenarios([TINY_RING, twin])
    assert len(scenarios) == 1
    assert errors == [f"{twin}: error: name: 'tiny-ring' is also the name of {TINY_RING} "
                      "(each scenario's reports go to DIR/<name>/)"]


def test_the_command_line() -> None:
    args = parser().parse_args(["sweep", "a.yaml", "b.yaml", "--mode", "mrc", "--mode", "ecmp",
                                "--seeds", "1,4-6", "-j", "3", "-o", "x"])
    assert (args.scenarios, args.mode, args.seeds, args.jobs, args.output) == (
        ["a.yaml", "b.yaml"], ["mrc", "ecmp"], (1, 4, 5, 6), 3, "x")
    assert parser().parse_args(["sweep", "a.yaml"]).seeds is None
    for bad in ("1,1", "x", "3-1", "-1"):
        with pytest.raises(argparse.ArgumentTypeError):
            sweep.parse_seeds(bad)


def test_the_plan_and_the_table_without_devices(tmp_path: Path) -> None:
    scenario = load(TINY_RING)
    runs = sweep.plan_runs([scenario], modes=("ecmp",))
    assert [(r.index, r.seed, r.mode) for r in runs] == [(0, 1, "ecmp")]
    with pytest.raises(ValueError):
        sweep.plan_runs([scenario], modes=("mrc", "mrc"))
    runs = sweep.plan_runs([scenario], modes=("ecmp", "mrc"), seeds=(7,))
    done = RunResult("ecmp", 12.5, True, [MessageRecord(0, "nic0", "nic1", 100, "main", 0.0,
                                                        12.5, True)],
                     Series(50), {"wire_hops": 9, "host_handoffs": 2}, [])
    result = sweep.SweepResult(tmp_path, [
        sweep.Outcome(runs[0], done, cpu_seconds=1.0, wall_seconds=1.0),
        sweep.Outcome(runs[1], error="Traceback...\nRuntimeError: boom | here")])
    result.report_errors[("tiny-ring", 7)] = "not written: mrc failed"
    sweep.write_summary(result)
    data = json.loads((tmp_path / "sweep.json").read_text())
    entry = data["scenarios"]["tiny-ring"]["seeds"]["7"]
    assert data["failed"] == 1 and entry["report"] is None
    assert entry["modes"]["ecmp"]["mct_p50_us"] == 12.5
    assert entry["modes"]["mrc"] == {"error": "Traceback...\nRuntimeError: boom | here"}
    table = (tmp_path / "sweep.md").read_text()
    assert "| tiny-ring | 7 | ecmp | 1/1 | 0 | 12.5 | 12.5 | 12.5 | — | — | — |" in table
    assert "| tiny-ring | 7 | mrc | error: RuntimeError: boom \\| here |" in table
    assert "FAILED: RuntimeError: boom | here" in sweep.progress_line(result.outcomes[1], 2, 2)
