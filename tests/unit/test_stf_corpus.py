"""Every program of the STF corpus passes its STF scripts on softswitch; every negative program
is rejected with the message and line its header names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from softswitch.cli import main as softswitch_main
from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch
from softswitch.errors import P4Error
from softswitch.stf.runner import run_stf
from softswitch.stf.script import read_stf

TESTS = Path(__file__).resolve().parent.parent
PROGRAMS = TESTS / "p4"
SCRIPTS = TESTS / "stf"


def _program_of(script: Path) -> Path:
    base = re.sub(r"-\d+$", "", script.stem)
    return PROGRAMS / f"{base}.p4"


STF_FILES = sorted(SCRIPTS.glob("*.stf"))
BAD_PROGRAMS = sorted((PROGRAMS / "bad").glob("*.p4"))


@pytest.mark.parametrize("script", STF_FILES, ids=lambda p: p.stem)
def test_stf_script_passes(script: Path) -> None:
    checked = compile_file(_program_of(script))
    result = run_stf(Switch(checked), read_stf(script))
    assert result.passed, "\n".join(result.problems)
    assert result.packets_sent > 0


@pytest.mark.parametrize("program", BAD_PROGRAMS, ids=lambda p: p.stem)
def test_negative_program_is_rejected(program: Path) -> None:
    header = program.read_text().splitlines()[:2]
    expected_text = header[0].split("expect-error:", 1)[1].strip()
    expected_line = int(header[1].split("expect-line:", 1)[1])
    with pytest.raises(P4Error) as info:
        compile_file(program)
    assert expected_text in info.value.message
    assert info.value.location is not None
    assert (info.value.location.file, info.value.location.line) == (str(program), expected_line)


def test_stf_cli_reports_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = SCRIPTS / "usid_forward.stf"
    assert softswitch_main(["stf", str(PROGRAMS / "usid_forward.p4"), str(good)]) == 0
    # Corrupt one expected byte: the run must fail and show expected vs got.
    lines = good.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("expect "))
    port, data = lines[index].split(None, 2)[1:]
    flipped = ("0" if data[0] != "0" else "1") + data[1:]
    lines[index] = f"expect {port} {flipped}"
    bad = tmp_path / "bad.stf"
    bad.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert softswitch_main(["stf", str(PROGRAMS / "usid_forward.p4"), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "exp" in out and "got" in out
