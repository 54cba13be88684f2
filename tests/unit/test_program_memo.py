"""A program file is compiled once per process while none of the files it was read from changes
(softswitch/program_memo.py); fabrics built one after another share the program object and
what is made per program (P4Info, IR bytes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from softswitch.errors import P4Error
from softswitch.fabric import Fabric
from softswitch.frontend.ast import HeaderDecl
from softswitch.ir.checked import CheckedProgram
from softswitch.program_memo import ProgramMemo

HEADER = "header h_t { bit<8> a; }\n"
MAIN = """#include <core.p4>
#include <v1model.p4>
#include "h.p4"
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 2; }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    (tmp_path / "h.p4").write_text(HEADER)
    main = tmp_path / "main.p4"
    main.write_text(MAIN)
    return main


def fields_of(program: CheckedProgram, header: str) -> list[str]:
    decl = next(d for d in program.program.declarations
                if isinstance(d, HeaderDecl) and d.name == header)
    return [f.name for f in decl.fields]


def rewrite(path: Path, text: str) -> None:
    """New content with an mtime that differs even on a coarse clock."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_file_is_compiled_once_while_unchanged(program: Path) -> None:
    memo = ProgramMemo()
    first = memo.load(program)
    assert memo.load(str(program)) is first
    assert memo.compiled == 1


def test_an_included_file_changed_compiles_it_again(program: Path) -> None:
    memo = ProgramMemo()
    first = memo.load(program)
    rewrite(program.parent / "h.p4", "header h_t { bit<8> a; bit<8> b; }\n")
    second = memo.load(program)
    assert second is not first and memo.compiled == 2
    assert fields_of(second, "h_t") == ["a", "b"]   # the new header read
    assert memo.load(program) is second and memo.compiled == 2


def test_the_main_file_changed_or_gone_is_seen(program: Path) -> None:
    memo = ProgramMemo()
    first = memo.load(program)
    rewrite(program, MAIN.replace("egress_spec = 2", "egress_spec = 3"))
    assert memo.load(program) is not first
    program.unlink()
    with pytest.raises(P4Error, match="no such file"):
        memo.load(program)


def test_a_program_that_fails_is_not_remembered(program: Path) -> None:
    memo = ProgramMemo()
    rewrite(program, MAIN.replace("transition accept;", "transition nowhere;"))
    for _ in range(2):
        with pytest.raises(P4Error):
            memo.load(program)
    assert memo.compiled == 0
    rewrite(program, MAIN)
    memo.load(program)
    assert memo.compiled == 1


def test_other_defines_are_another_program(program: Path) -> None:
    memo = ProgramMemo()
    plain = memo.load(program)
    defined = memo.load(program, defines={"X": "1"})
    assert defined is not plain and memo.load(program, defines={"X": "1"}) is defined


def test_the_least_recently_used_is_forgotten_past_the_limit(program: Path) -> None:
    memo = ProgramMemo(limit=2)
    a = memo.load(program, defines={"A": "1"})
    memo.load(program, defines={"B": "1"})
    assert memo.load(program, defines={"A": "1"}) is a   # A used last: B goes next
    memo.load(program, defines={"C": "1"})
    assert memo.load(program, defines={"A": "1"}) is a and memo.compiled == 3
    memo.load(program, defines={"B": "1"})
    assert memo.compiled == 4


def test_fabrics_one_after_another_share_the_program_and_its_p4info(program: Path) -> None:
    first, second = Fabric(), Fabric()
    a = first.add_switch("A", program)
    b = second.add_switch("B", str(program))
    assert a.device.pipeline.program is b.device.pipeline.program
    assert a.device.pipeline.p4info is b.device.pipeline.p4info
