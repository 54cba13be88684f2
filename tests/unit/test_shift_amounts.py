"""Shift amounts as p4c's TypeInference::shift takes them: a constant amount is checked for its
value (a signed constant that is not negative shifts as its unsigned value; a negative one is
refused), a run-time amount for its type (signed is refused)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inline_programs import build_switch, ingress_program

from softswitch.compiler import compile_file
from softswitch.errors import P4Error
from softswitch.stf.runner import run_stf
from softswitch.stf.script import read_stf

PRELUDE = """\
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> l; bit<8> r; }
struct headers_t { h_t h; }
struct meta_t { int<8> s; }
"""


def test_a_signed_constant_amount_that_is_not_negative_shifts_as_unsigned(tmp_path: Path) -> None:
    source = ingress_program(PRELUDE, "hdr.h.l = hdr.h.a << 8s3; hdr.h.r = hdr.h.a >> 8s1;")
    script = tmp_path / "shift.stf"
    script.write_text("packet 0 16 00 00\nexpect 1 16 b0 0b $\n")
    result = run_stf(build_switch(tmp_path, source), read_stf(script))
    assert result.passed, "\n".join(result.problems)


@pytest.mark.parametrize(
    ("body", "message", "at"),
    [
        ("hdr.h.l = hdr.h.a << meta.s;", "meta.s: Shift amount must be an unsigned number", "meta.s"),
        ("hdr.h.l = hdr.h.a << -8s2;", "hdr.h.a << -8s2: Negative shift amount -2", "hdr.h.a <<"),
        ("hdr.h.l = hdr.h.a >> -1;", "hdr.h.a >> -1: Negative shift amount -1", "hdr.h.a >>"),
    ],
)
def test_refused_amounts_with_p4cs_reason(tmp_path: Path, body: str, message: str, at: str) -> None:
    source = ingress_program(PRELUDE, body)
    path = tmp_path / "shift.p4"
    path.write_text(source)
    with pytest.raises(P4Error) as info:
        compile_file(path)
    assert info.value.message == message
    line = next(n for n, text in enumerate(source.splitlines(), 1) if body in text)
    column = source.splitlines()[line - 1].index(at) + 1
    assert info.value.location is not None
    assert (info.value.location.line, info.value.location.column) == (line, column)
