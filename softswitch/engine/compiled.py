"""The Python engine's generated code of a checked program, made once per program and tracing.

Every Switch runs its program as Python source generated from the checked IR (codegen.py,
codegen_tna.py) and compiled to a code object. Both depend only on the program and on whether
the Switch traces, and neither is changed by a Switch: each one executes the code object in a
namespace of its own, which holds its state (tables, externs, R). So Switches of one program
(the NICs of a fabric, devices a P4Runtime push gave the same program: runtime/program_cache.py)
share them. Kept per program object, weakly, as native/program.py keeps the C library: a
program's code lives as long as the program, with no cache to bound or reset.
"""

from __future__ import annotations

import threading
import weakref
from types import CodeType
from typing import NamedTuple

from softswitch.engine import codegen, codegen_tna
from softswitch.errors import UnsupportedError
from softswitch.ir.checked import CheckedProgram


class CompiledProgram(NamedTuple):
    """The generated program (its source and run-time object descriptions) and its code."""

    gen: codegen.GeneratedProgram
    code: CodeType


_compiled: weakref.WeakKeyDictionary[CheckedProgram, dict[bool, CompiledProgram]] = \
    weakref.WeakKeyDictionary()
_lock = threading.Lock()


def compiled_program(program: CheckedProgram, trace: bool) -> CompiledProgram:
    """`program`'s generated Python and its code object (with trace calls if `trace`).

    Raises what code generation raises (UnsupportedError, P4Error); nothing is kept then."""
    with _lock:
        found = _compiled.get(program, {}).get(trace)
    if found is not None:
        return found
    generator = codegen_tna if program.arch == "tna" else codegen
    gen: codegen.GeneratedProgram = generator.generate(program, trace=trace)
    try:
        code = compile(gen.source, f"<softswitch:{program.source_file or 'program'}>", "exec")
    except SyntaxError as exc:  # a code generator bug, reported with the offending line
        raise UnsupportedError(f"internal code generation error: {exc}") from exc
    made = CompiledProgram(gen, code)
    with _lock:
        return _compiled.setdefault(program, {}).setdefault(trace, made)
