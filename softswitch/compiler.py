"""The compile driver: a .p4 file (or IR JSON) to a CheckedProgram, as p4c-bm2-ss would see it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from softswitch.errors import P4Error
from softswitch.frontend.parser import parse
from softswitch.frontend.preprocess import BMV2_PREDEFINED, preprocess
from softswitch.frontend.typecheck import check
from softswitch.ir.checked import CheckedProgram
from softswitch.ir.serialize import load_ir


def compile_file(
    path: str | Path,
    include_dirs: Sequence[str | Path] = (),
    defines: Mapping[str, str] | None = None,
) -> CheckedProgram:
    """Preprocess (with p4c's predefined BMv2 macros), parse and check a P4_16 program.

    Raises the P4Error for a bad program: the first syntax error, or the type errors (a P4Errors
    when there are several)."""
    all_defines = dict(BMV2_PREDEFINED)
    all_defines.update(defines or {})
    source = preprocess(path, include_dirs, all_defines)
    return check(parse(source), source_file=str(path))


def load_program(
    path: str | Path,
    include_dirs: Sequence[str | Path] = (),
    defines: Mapping[str, str] | None = None,
) -> CheckedProgram:
    """A program from P4 source, or from the IR JSON that `softswitch compile --ir` wrote."""
    if str(path).endswith(".json"):
        return load_ir(path)
    return compile_file(path, include_dirs, defines)


def parse_defines(items: Sequence[str]) -> dict[str, str]:
    """``-D NAME`` / ``-D NAME=VALUE`` command-line items to a defines mapping."""
    defines: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not name:
            raise P4Error(f"bad -D option '{item}': expected NAME or NAME=VALUE")
        defines[name.strip()] = value if sep else "1"
    return defines
