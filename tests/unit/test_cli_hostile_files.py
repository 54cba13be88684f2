"""Every file a `softswitch` subcommand reads, given as binary garbage or in another encoding:
one error line naming the file (and the line where it has lines), exit status 1, no traceback.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from softswitch.cli import main
from softswitch.compiler import compile_file
from softswitch.errors import P4Error
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import read_p4info

TESTS = Path(__file__).resolve().parents[1]
PROGRAM = TESTS / "p4" / "drop.p4"
STF = TESTS / "stf" / "drop.stf"
GARBAGE = b"\xff" + random.Random(24).randbytes(4095)   # not UTF-8 from its first byte


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_binary_stf_file_is_one_error_naming_it(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    stf = tmp_path / "garbage.stf"
    stf.write_bytes(GARBAGE)
    assert main(["stf", str(PROGRAM), str(stf)]) == 1
    assert one_error(capsys) == (f"{stf}:1: not an STF script: byte 0x{GARBAGE[0]:02x} is not "
                                 "UTF-8 text")


def test_a_latin1_stf_file_names_the_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    stf = tmp_path / "latin1.stf"
    stf.write_bytes(STF.read_bytes() + "# café\n".encode("latin-1"))
    lines = STF.read_bytes().count(b"\n")
    assert main(["stf", str(PROGRAM), str(stf)]) == 1
    assert one_error(capsys) == f"{stf}:{lines + 1}: not an STF script: byte 0xe9 is not UTF-8 text"


def test_an_unknown_binary_command_is_shown_short(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    stf = tmp_path / "nul.stf"
    stf.write_bytes(b"\x00" * 100_000 + b"\n")  # UTF-8, but no STF command
    assert main(["stf", str(PROGRAM), str(stf)]) == 1
    line = one_error(capsys)
    assert line.startswith(f"{stf}:1: unknown STF command ") and len(line) < len(str(stf)) + 250


@pytest.mark.parametrize("command", ["stf", "compile"])
def test_a_binary_ir_file_is_one_error_naming_it(command: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    ir = tmp_path / "garbage.json"
    ir.write_bytes(GARBAGE)
    args = [str(STF)] if command == "stf" else []
    assert main([command, str(ir), *args]) == 1
    assert one_error(capsys) == (f"error: {ir}: IR JSON is not UTF-8 text: byte "
                                 f"0x{GARBAGE[0]:02x} at offset 0")


def _first(node: object, kind: str) -> dict[str, object]:
    """The first IR node of `kind` (depth first)."""
    if isinstance(node, dict):
        if node.get("_") == kind:
            return node
        children: list[object] = list(node.values())
    else:
        children = list(node) if isinstance(node, list) else []
    for child in children:
        if isinstance(child, dict | list):
            found = _first(child, kind)
            if found:
                return found
    return {}


@pytest.mark.parametrize(("field", "value", "message"), [
    ("name", ["x"], "must be str"),           # a list where a name belongs
    ("name", 7, "must be str"),
    ("annotations", {"_": "Annotation", "name": "x"}, "must be list[Annotation]"),
])
def test_an_ir_with_wrong_typed_fields_is_refused(field: str, value: object, message: str,
                                                  tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """An IR JSON edited by hand is re-checked; a field of the wrong JSON type is refused by
    name (it used to reach the checker and end in a TypeError or AttributeError)."""
    data = json.loads(dumps_ir(compile_file(PROGRAM)))
    _first(data["program"], "ControlDecl")[field] = value
    ir = tmp_path / "edited.json"
    ir.write_text(json.dumps(data))
    assert main(["stf", str(ir), str(STF)]) == 1
    line = one_error(capsys)
    assert line.startswith(f"error: {ir}: IR JSON: ControlDecl.{field} {message}, not ")


def test_an_unhashable_node_kind_is_refused(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    ir = tmp_path / "kind.json"
    ir.write_text(json.dumps({"format": "softswitch-ir", "version": 1, "files": [],
                              "program": {"_": ["Program"]}}))
    assert main(["compile", str(ir)]) == 1
    assert one_error(capsys) == f"error: {ir}: IR JSON: unknown node kind ['Program']"


@pytest.mark.parametrize("suffix", [".bin", ".txt", ".json"])
def test_a_garbage_p4info_is_a_p4_error_naming_it(suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f"p4info{suffix}"
    path.write_bytes(GARBAGE)
    with pytest.raises(P4Error) as info:
        read_p4info(path)
    assert info.value.message.startswith(f"{path}: not a ")


def test_run_refuses_tls_files_that_are_not_pem(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_bytes(GARBAGE)
    key.write_bytes(GARBAGE)
    assert main(["run", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0",
                 "--grpc-server-ssl", "--grpc-server-cert", str(cert),
                 "--grpc-server-key", str(key)]) == 1
    assert one_error(capsys) == (f"softswitch run: error: {key}: not a PEM file (no "
                                 "'-----BEGIN' line)")


@pytest.mark.parametrize("command", ["compile", "stf", "run"])
def test_a_binary_p4_source_is_one_error_in_every_subcommand(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "garbage.p4"
    source.write_bytes(GARBAGE)
    args = {"compile": [], "stf": [str(STF)], "run": ["--", "--grpc-server-addr", "127.0.0.1:0"]}
    assert main([command, str(source), *args[command]]) == 1
    assert one_error(capsys) == (f"{source}:1:1: error: the file is not UTF-8 text: byte 0xff "
                                 "cannot be decoded")


def test_a_reader_that_goes_away_is_no_traceback() -> None:
    """`softswitch compile TNA.p4 | head -1`: the stage report's second line meets a closed
    pipe (a BrokenPipeError traceback before)."""
    program = TESTS.parent / "p4src" / "switch" / "tna" / "srv6_switch.p4"
    proc = subprocess.Popen([sys.executable, "-m", "softswitch.cli", "compile", str(program)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=TESTS.parent)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()   # before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == ""
