"""The IR JSON (the device config) round-trips: a program loaded from it behaves and describes
itself exactly like the program compiled from source; broken files are refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from softswitch.compiler import compile_file, load_program
from softswitch.engine.switch import Switch
from softswitch.errors import P4Error
from softswitch.ir.serialize import IrFormatError, dumps_ir, loads_ir, save_ir
from softswitch.p4info import build_p4info
from softswitch.stf.runner import run_stf
from softswitch.stf.script import read_stf

TESTS = Path(__file__).resolve().parent.parent
ROUND_TRIP = [
    "usid_forward",
    "ipv6_lpm",
    "header_stack_loop",
    "multicast",
    "ipv4_checksum",
    "generic_functions",  # specialisations are rebuilt by the re-check, not stored
    "for_loops",  # the unrolled index values are rebuilt too
    "int_cast_loop_index",  # and the body copies with `(int)i` folded
    "int_cast_after_index_write",  # folded as the body writes the index
    "direct_invocation",  # stored with the instances the checker added
    "ctor_block_params",
    "default_initializers",  # `...` is stored as the default values the checker put there
    "generic_blocks",  # generic parsers/controls: specialised again by the re-check
]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_round_trip_keeps_behaviour_and_p4info(name: str, tmp_path: Path) -> None:
    program = TESTS / "p4" / f"{name}.p4"
    if not program.exists():
        pytest.skip(f"{program} not in the corpus")
    checked = compile_file(program)
    path = tmp_path / f"{name}.json"
    save_ir(checked, path)
    loaded = load_program(path)
    assert build_p4info(loaded) == build_p4info(checked)
    assert dumps_ir(loaded) == dumps_ir(checked)
    result = run_stf(Switch(loaded), read_stf(TESTS / "stf" / f"{name}.stf"))
    assert result.passed, "\n".join(result.problems)


def test_locations_survive_round_trip() -> None:
    checked = compile_file(TESTS / "p4" / "usid_forward.p4")
    loaded = loads_ir(dumps_ir(checked))
    original = [d.loc for d in checked.program.declarations]
    assert [d.loc for d in loaded.program.declarations] == original
    assert any(loc.file.endswith("v1model.p4") for loc in original)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not valid JSON"),
        ("[]", "not a softswitch IR"),
        ('{"format": "softswitch-ir", "version": 99}', "version"),
        ('{"format": "softswitch-ir", "version": 1, "files": [], '
         '"program": {"_": "Bogus"}}', "unknown node kind"),
        ('{"format": "softswitch-ir", "version": 1, "files": [], '
         '"program": {"_": "Program", "nope": 1}}', "has no field"),
    ],
)
def test_broken_ir_is_refused(text: str, message: str) -> None:
    with pytest.raises(IrFormatError, match=message):
        loads_ir(text)


def _rename_actions(node: object) -> None:
    """Rename every action declared in a control; the tables' references then dangle."""
    if isinstance(node, dict):
        if node.get("_") == "ControlDecl":
            for local in node.get("locals", []):
                if local.get("_") == "ActionDecl":
                    local["name"] += "_renamed"
        for value in node.values():
            _rename_actions(value)
    elif isinstance(node, list):
        for value in node:
            _rename_actions(value)


def test_edited_ir_is_rechecked() -> None:
    checked = compile_file(TESTS / "p4" / "usid_forward.p4")
    data = json.loads(dumps_ir(checked))
    _rename_actions(data["program"])
    with pytest.raises(P4Error) as info:
        loads_ir(json.dumps(data))
    assert info.value.location is not None
    assert info.value.location.file.endswith("usid_forward.p4")
