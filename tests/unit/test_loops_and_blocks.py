"""Loops (which ones p4c unrolls for BMv2, the rest refused), direct invocation of parsers and
controls, and parsers/controls as constructor arguments: checker rules and what they build.

The STF corpus (for_loops, parser_conditionals, direct_invocation, ctor_block_params) covers the
packet behaviour; these tests cover the decisions behind it and the error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.engine.switch import Switch
from softswitch.errors import P4Error, P4SyntaxError
from softswitch.frontend import ast
from softswitch.frontend.parser import parse_file
from softswitch.frontend.typecheck import check
from softswitch.ir.checked import CheckedProgram

TEMPLATE = """\
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; h_t[3] s; }
struct meta_t { bit<8> m; }
@@TOP@@
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); @@STATE@@ transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @@LOCALS@@
    apply {
        @@APPLY@@
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def program(apply: str = "", locals_: str = "", top: str = "", state: str = "") -> str:
    text = TEMPLATE.replace("@@APPLY@@", apply).replace("@@LOCALS@@", locals_)
    return text.replace("@@TOP@@", top).replace("@@STATE@@", state)


@pytest.fixture
def compile_text(tmp_path: Path):
    def run(text: str) -> CheckedProgram:
        path = tmp_path / "prog.p4"
        path.write_text(text)
        return check(parse_file(path), str(path))

    return run


def fails(compile_text, text: str, message: str, needle: str) -> P4Error:
    """The program is refused with `message` on the line holding `needle`."""
    with pytest.raises(P4Error) as info:
        compile_text(text)
    err = info.value
    assert message in err.message, err.message
    line = next(i for i, s in enumerate(text.splitlines(), 1) if needle in s)
    assert err.location is not None and err.location.line == line, str(err)
    return err


def loops(cp: CheckedProgram) -> list[ast.ForStatement]:
    decl = cp.blocks["ingress"].decl
    assert isinstance(decl, ast.ControlDecl)
    return [s for s in decl.body.statements if isinstance(s, ast.ForStatement)]


# -- loops p4c unrolls ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("loop", "values"),
    [
        ("for (bit<8> i = 0; i < 4; i = i + 1) { }", [0, 1, 2, 3]),
        ("for (bit<8> i = 1; i <= 16; i = i * 2) { }", [1, 2, 4, 8, 16]),
        ("for (bit<8> i = 9; i > 0; i = i - 3) { }", [9, 6, 3]),
        ("for (bit<8> i = 0; i != 6; i += 2) { }", [0, 2, 4]),
        ("for (bit<8> i = 0; 3 > i; i = i + 1) { }", [0, 1, 2]),  # the constant on the left
        ("for (bit<8> i = 5; i < 5; i = i + 1) { }", []),
        ("for (int<8> i = -2; i < 1; i = i + 1) { }", [-2, -1, 0]),
        # p4c's evalLoop reduces each value to its type (since p4c issue 4965): `i + 1` wraps
        ("for (bit<8> i = 250; i != 2; i = i + 1) { }", [250, 251, 252, 253, 254, 255, 0, 1]),
        # a body write of the index that a break always follows does not reach the condition
        ("for (bit<8> i = 0; i < 4; i = i + 1) { if (hdr.h.a == i) { i = 9; break; } }",
         [0, 1, 2, 3]),
        # the index may start from a statement before the loop, and change in the body
        ("bit<8> j = 2; for (; j < 5; ) { j = j + 1; }", [2, 3, 4]),
        ("bit<8> k; for (bit<8> i = 0, k = 1; i < 2; i = i + 1, k = k + 1) { }", [0, 1]),
    ],
)
def test_unrolled_index_values(compile_text, loop: str, values: list[int]) -> None:
    (checked_loop,) = loops(compile_text(program(apply=loop)))
    assert checked_loop.index_values == values
    assert checked_loop.index is not None


def test_loop_from_a_control_variable_initializer(compile_text) -> None:
    cp = compile_text(program(locals_="bit<8> n = 1;", apply="for (; n < 3; n = n + 1) { }"))
    assert loops(cp)[0].index_values == [1, 2]


def test_the_loop_that_p4c_unrolls_ends(compile_text) -> None:
    """The 250 .. 1 loop above runs exactly its 8 unrolled iterations, as on BMv2."""
    cp = compile_text(
        program(
            apply="hdr.h.b = 0; for (bit<8> i = 250; i != 2; i = i + 1) "
            "{ hdr.h.b = hdr.h.b + 1; } sm.egress_spec = 1;"
        )
    )
    assert Switch(cp).process_packet(0, b"\x01\x02") == [(1, b"\x01\x08")]


@pytest.mark.parametrize(
    ("loop", "reason"),
    [
        ("for (bit<8> i = 0; i < hdr.h.a; i = i + 1) { }", "compare the index with a constant"),
        ("for (bit<8> i = 0; i < 4 && hdr.h.a == 1; i = i + 1) { }", "compare the index"),
        ("for (hdr.h.a = 0; hdr.h.a < 4; hdr.h.a = hdr.h.a + 1) { }", "not a local variable"),
        ("for (bit<8> i = hdr.h.a; i < 4; i = i + 1) { }", "does not start from a constant"),
        ("for (bit<8> i = 0; i < 4; ) { }", "never changed"),
        ("for (bit<8> i = 0; i < 4; i = i + hdr.h.a) { }", "not computed from the index"),
        ("for (bit<8> i = 0; i < 4; i = i + 1) { i = 3; }", "more than one place"),
        ("for (bit<16> i = 0; i < 2000; i = i + 1) { }", "more than 1000 times"),
        # in bit<8> `i <= 255` never becomes false
        ("for (bit<8> i = 250; i <= 255; i = i + 1) { }", "more than 1000 times"),
        ("for (bit<8> i = 0; i < 4; ) { if (hdr.h.a == 1) { i = i + 1; } }", "unconditionally"),
        # the write in the body reaches the increment's read
        ("for (bit<8> i = 0; i < 4; i = i + 1) { if (hdr.h.a == i) { i = 9; } }",
         "more than one place"),
        ("@nounroll for (bit<8> i = 0; i < 4; i = i + 1) { }", "@nounroll"),
        ("@nounroll for (bit<8> i in 0 .. 3) { }", "@nounroll"),
        ("for (bit<8> i in 0 .. hdr.h.a) { }", "not compile-time constants"),
    ],
)
def test_loops_p4c_cannot_unroll_are_refused(compile_text, loop: str, reason: str) -> None:
    err = fails(compile_text, program(apply=loop), "BMV2 does not support loops", loop)
    assert reason in err.message


@pytest.mark.parametrize(
    ("apply", "message", "needle"),
    [
        ("for (bit<8> i = 0; i; i = i + 1) { }", "for condition must be bool", "for ("),
        ("for (bit<16> x in hdr.s) { }", "does not match the stack elements", "for ("),
        ("for (bit<8> x in hdr.h) { }", "iterates over a range, a list or a header stack", "for ("),
        ("for (bool x in 0 .. 3) { }", "needs a bit<W> or int<W> variable", "for ("),
        ("for (bit<8> x in {1, true}) { }", "list element", "for ("),
        ("continue;", "'continue' is only allowed inside a loop", "continue"),
        ("for (bit<8> i = 0; i < 2; i = i + 1) { } i = 1;", "undeclared name 'i'", "for ("),
    ],
)
def test_loop_errors(compile_text, apply: str, message: str, needle: str) -> None:
    fails(compile_text, program(apply=apply), message, needle)


def test_break_and_continue_in_a_switch_belong_to_the_loop(compile_text) -> None:
    cp = compile_text(
        program(
            apply="""
            hdr.h.b = 0;
            for (bit<8> i in 1 .. 6) {
                switch (i) {
                    2: { continue; }
                    5: { break; }
                }
                hdr.h.b = hdr.h.b + i;
            }
            sm.egress_spec = 1;"""
        )
    )
    assert Switch(cp).process_packet(0, b"\x00\x00") == [(1, b"\x00\x08")]  # 1 + 3 + 4


def test_for_is_not_a_parser_state_statement(tmp_path: Path) -> None:
    path = tmp_path / "prog.p4"
    path.write_text(program(state="for (bit<8> i in 0 .. 1) { }"))
    with pytest.raises(P4SyntaxError, match="parser state"):
        parse_file(path)


# -- direct invocation ----------------------------------------------------------------------

SUB_CONTROLS = """
control WithTable(inout h_t x) {
    action set(bit<8> v) { x.b = v; }
    table t { key = { x.a : exact; } actions = { set; NoAction; } default_action = NoAction(); }
    apply { t.apply(); }
}
control Plain(inout h_t x) { apply { x.b = x.b + 1; } }
"""


def test_direct_invocation_names_the_instance_after_the_type(compile_text) -> None:
    cp = compile_text(
        program(top=SUB_CONTROLS, apply="WithTable.apply(hdr.h); Plain.apply(hdr.h);")
    )
    ingress = cp.blocks["ingress"]
    paths = sorted(child.path for child in ingress.children.values())
    assert paths == ["I.Plain", "I.WithTable"]
    assert Switch(cp).table_names() == ["I.WithTable.t"]


def test_a_table_less_control_may_be_invoked_directly_twice(compile_text) -> None:
    cp = compile_text(program(top=SUB_CONTROLS, apply="Plain.apply(hdr.h); Plain.apply(hdr.h);"))
    assert len(cp.blocks["ingress"].children) == 2


@pytest.mark.parametrize(
    ("top", "locals_", "apply", "state", "message", "needle"),
    [
        (
            SUB_CONTROLS,
            "",
            "WithTable.apply(hdr.h); WithTable.apply(hdr.h);",
            "",
            "conflicting control plane name",
            "WithTable.apply(hdr.h); WithTable",
        ),
        (
            SUB_CONTROLS,
            "action a() { Plain.apply(hdr.h); }",
            "a();",
            "",
            "can only be invoked in a parser state or a control",
            "action a()",
        ),
        (SUB_CONTROLS, "", "", "Plain.apply(hdr.h);", "cannot be applied here", "state start"),
        (SUB_CONTROLS, "", "Plain.apply(hdr.h, 1);", "", "expects 1 arguments", "Plain.apply"),
    ],
)
def test_direct_invocation_errors(compile_text, top, locals_, apply, state, message, needle):
    text = program(top=top, locals_=locals_, apply=apply, state=state)
    fails(compile_text, text, message, needle)


# -- parsers and controls as constructor arguments ------------------------------------------

CTOR_TYPES = """
control Step(inout h_t x);
parser SubP(packet_in pkt, out h_t x);
control AddOne(inout h_t x) { apply { x.b = x.b + 1; } }
control TakesByte(inout bit<8> y) { apply { } }
parser OneP(packet_in pkt, out h_t x) { state start { pkt.extract(x); transition accept; } }
control Twice(inout h_t x)(Step s) { apply { s.apply(x); s.apply(x); } }
"""


def test_constructor_argument_blocks_are_named_after_the_parameter(compile_text) -> None:
    cp = compile_text(
        program(
            top=CTOR_TYPES,
            locals_="AddOne() one; Twice(AddOne()) a; Twice(one) b;",
            apply="a.apply(hdr.h); b.apply(hdr.h);",
        )
    )
    ingress = cp.blocks["ingress"]
    assert ingress.children["a"].children["s"].path == "I.a.s"
    # an existing instance passed as the argument is that instance
    assert ingress.children["b"].children["s"] is ingress.children["one"]


@pytest.mark.parametrize(
    ("locals_", "message"),
    [
        ("Twice(TakesByte()) t;", "parameter 'y' has type bit<8>, expected h_t"),
        ("Twice(OneP()) t;", "must be a control to be passed as 's'"),
        ("Twice(3) t;", "type mismatch"),
    ],
)
def test_constructor_argument_signature_errors(compile_text, locals_: str, message: str) -> None:
    text = program(top=CTOR_TYPES, locals_=locals_, apply="t.apply(hdr.h);")
    with pytest.raises(P4Error, match=message):
        compile_text(text)


def test_a_control_invoking_itself_is_refused(compile_text) -> None:
    top = "control Loop(inout h_t x) { apply { Loop.apply(x); } }"
    fails(compile_text, program(top=top, apply="Loop.apply(hdr.h);"), "instantiates itself", top)


@pytest.mark.parametrize(
    ("top", "message", "needle"),
    [
        # as p4c: a control declaration is not a type (its type declaration is)
        ("control Bad(inout h_t x)(AddOne a) { apply { a.apply(x); } }",
         "parameter 'a' cannot have type control AddOne", "control Bad"),
        ("control Bad(inout h_t x, Step s) { apply { s.apply(x); } }",
         "can only be applied as a constructor parameter", "control Bad"),
    ],
)  # fmt: skip
def test_block_typed_parameter_errors(compile_text, top: str, message: str, needle: str) -> None:
    fails(compile_text, program(top=CTOR_TYPES + top), message, needle)
