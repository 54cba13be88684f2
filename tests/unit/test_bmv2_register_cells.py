"""v1model registers as p4c-bm2-ss takes them: cells of bit<W>/int<W>, also through a typedef, a
`type` or a serializable enum (p4c's midend replaces both by their underlying type before the
BMv2 back end); a struct or bool cell is refused at the declaration."""

from __future__ import annotations

from pathlib import Path

import pytest
from inline_programs import build_switch, ingress_program

from softswitch.compiler import compile_file
from softswitch.errors import P4Error

PRELUDE = """\
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t { }
struct pair_t { bit<8> x; bit<8> y; }
typedef bit<8> b8_t;
type bit<8> n8_t;
enum bit<8> color_t { RED = 1 }
"""


@pytest.mark.parametrize("cell", ["bit<8>", "int<8>", "b8_t", "n8_t", "color_t"])
def test_cells_p4c_makes_bits_compile(tmp_path: Path, cell: str) -> None:
    build_switch(tmp_path, ingress_program(PRELUDE, "", decls=f"register<{cell}>(4) r;"))


@pytest.mark.parametrize("cell", ["pair_t", "bool"])
def test_other_cells_are_refused_at_the_declaration(tmp_path: Path, cell: str) -> None:
    source = ingress_program(PRELUDE, "", decls=f"register<{cell}>(4) r;")
    path = tmp_path / "prog.p4"
    path.write_text(source)
    with pytest.raises(P4Error) as info:
        compile_file(path)
    assert info.value.message == (
        f"r: Only registers with bit or int types are currently supported (got {cell})"
    )
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "register<" in text)
    assert info.value.location is not None and info.value.location.line == line
