"""The compile driver: a .p4 file (or IR JSON) to a CheckedProgram, as p4c-bm2-ss or bf-p4c see it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from softswitch.errors import P4Error
from softswitch.frontend.archs import arch_of_files, architecture
from softswitch.frontend.parser import parse
from softswitch.frontend.preprocess import PreprocessedSource, preprocess
from softswitch.frontend.typecheck import check
from softswitch.ir.checked import CheckedProgram
from softswitch.ir.serialize import load_ir
from softswitch.limits import DEFAULT_LIMITS, LimitError, Limits


def compile_file(
    path: str | Path,
    include_dirs: Sequence[str | Path] = (),
    defines: Mapping[str, str] | None = None,
    arch: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> CheckedProgram:
    """Preprocess (with the predefined macros of the architecture's compiler), parse and check
    a P4_16 program.

    `arch` ("v1model" or "tna", as ``--arch``) or, when None, the architecture file the program
    includes decides the architecture; a program including the other one's file is refused.
    Raises the P4Error for a bad program: the first syntax error, or the type errors (a P4Errors
    when there are several); a LimitError for one over `limits`."""
    return _compile_file(path, include_dirs, defines, arch, limits)[0]


def _compile_file(path: str | Path, include_dirs: Sequence[str | Path],
                  defines: Mapping[str, str] | None, arch: str | None,
                  limits: Limits) -> tuple[CheckedProgram, tuple[str, ...]]:
    """compile_file's program and every file the preprocessor read (the main one first)."""
    source, chosen = _preprocess(path, include_dirs, defines or {}, arch, limits)
    return (check(parse(source), source_file=str(path), arch=chosen, limits=limits),
            source.files)


def _preprocess(
    path: str | Path,
    include_dirs: Sequence[str | Path],
    defines: Mapping[str, str],
    arch: str | None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[PreprocessedSource, str]:
    """The preprocessed program and its architecture. Without `arch` the program is read with
    p4c-bm2-ss's macros first and, when it turns out to include tna.p4, again with bf-p4c's (as
    bf-p4c would have read it: `#if __TARGET_TOFINO__` may choose other text)."""
    wanted = architecture(arch).name if arch is not None else "v1model"
    try:
        source = preprocess(path, include_dirs, {**architecture(wanted).predefined, **defines},
                            limits)
    except P4Error as exc:
        if arch is not None or isinstance(exc, LimitError):
            raise
        # maybe text only bf-p4c's macros let through (`#ifndef __TARGET_TOFINO__ #error`)
        try:
            source = preprocess(path, include_dirs,
                                {**architecture("tna").predefined, **defines}, limits)
        except P4Error:
            source = None
        if source is None or arch_of_files(source.files) != "tna":
            raise
        return source, "tna"
    included = arch_of_files(source.files)
    if arch is None and included is not None and included != wanted:
        wanted = included
        source = preprocess(path, include_dirs, {**architecture(wanted).predefined, **defines},
                            limits)
        included = arch_of_files(source.files)
    if included is not None and included != wanted:
        raise P4Error(
            f"{path}: the program includes {architecture(included).include}, but the architecture "
            f"is {wanted} (--arch {wanted}); compile it with --arch {included}"
        )
    return source, wanted


def load_program(
    path: str | Path,
    include_dirs: Sequence[str | Path] = (),
    defines: Mapping[str, str] | None = None,
    arch: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> CheckedProgram:
    """A program from P4 source, or from the IR JSON that `softswitch compile --ir` wrote (which
    records its architecture; a different `arch` is refused)."""
    return load_program_and_files(path, include_dirs, defines, arch, limits)[0]


def load_program_and_files(
    path: str | Path,
    include_dirs: Sequence[str | Path] = (),
    defines: Mapping[str, str] | None = None,
    arch: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[CheckedProgram, tuple[str, ...]]:
    """load_program's program and the files it was read from (program_memo.py)."""
    if str(path).endswith(".json"):
        checked = load_ir(path, limits)
        if arch is not None and architecture(arch).name != checked.arch:
            raise P4Error(f"{path}: the IR is of a {checked.arch} program, not {arch}")
        return checked, (str(path),)
    return _compile_file(path, include_dirs, defines, arch, limits)


def parse_defines(items: Sequence[str]) -> dict[str, str]:
    """``-D NAME`` / ``-D NAME=VALUE`` command-line items to a defines mapping."""
    defines: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not name:
            raise P4Error(f"bad -D option '{item}': expected NAME or NAME=VALUE")
        defines[name.strip()] = value if sep else "1"
    return defines
