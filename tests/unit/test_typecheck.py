"""Tests of the type checker: the corpora, annotations it fills in, and its error messages."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from softswitch.errors import P4Error, P4TypeError, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.archs import TNA
from softswitch.frontend.blocks import ROLES, TNA_ROLES
from softswitch.frontend.parser import parse_file
from softswitch.frontend.typecheck import Checker, check
from softswitch.frontend.types import (
    ApplyResultType,
    BitType,
    BoolType,
    EnumType,
    ErrorType,
    ExternType,
    HeaderType,
    IntType,
    TupleType,
)
from softswitch.ir.checked import CheckedProgram

P4_DIR = Path(__file__).resolve().parents[1] / "p4"

TEMPLATE = """\
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> d; }
header v_t { bit<8> len; varbit<64> opt; }
struct headers_t { h_t h; h_t[4] s; v_t v; }
struct meta_t { bit<8> m8; bit<16> m16; bit<32> m32; int<8> s8; bool flag; bit<1> b1; }
@@TOP@@
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @@PLOCALS@@
    @@STATES@@
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
@@MAIN@@
"""

DEFAULT_STATES = "state start { pkt.extract(hdr.h); transition accept; }"
DEFAULT_MAIN = "V1Switch(P(), VC(), I(), E(), CC(), D()) main;"


def source(
    apply: str = "",
    locals_: str = "",
    top: str = "",
    states: str = DEFAULT_STATES,
    plocals: str = "",
    main: str = DEFAULT_MAIN,
) -> str:
    text = TEMPLATE
    for marker, value in (
        ("@@TOP@@", top),
        ("@@PLOCALS@@", plocals),
        ("@@STATES@@", states),
        ("@@LOCALS@@", locals_),
        ("@@APPLY@@", apply),
        ("@@MAIN@@", main),
    ):
        text = text.replace(marker, value)
    return text


@pytest.fixture
def checker(tmp_path: Path):
    """check_src(text) -> CheckedProgram; the file is named prog.p4 so errors carry its lines."""

    def check_src(text: str) -> CheckedProgram:
        path = tmp_path / "prog.p4"
        path.write_text(text)
        return check(parse_file(path), str(path))

    return check_src


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in program")


def expect_error(checker, text: str, message: str, needle: str, cls: type = P4TypeError) -> P4Error:
    """Assert the program fails with `message` on the line containing `needle`."""
    with pytest.raises(cls) as info:
        checker(text)
    err = info.value
    assert message in err.message, err.message
    assert err.location is not None
    assert err.location.file.endswith("prog.p4"), err.location
    assert err.location.line == line_of(text, needle), (str(err), needle)
    return err


def ingress(cp: CheckedProgram) -> ast.ControlDecl:
    decl = cp.blocks["ingress"].decl
    assert isinstance(decl, ast.ControlDecl)
    return decl


def apply_stmts(cp: CheckedProgram) -> list[ast.Statement | ast.Declaration]:
    return ingress(cp).body.statements


def local(cp: CheckedProgram, name: str) -> ast.Declaration:
    for d in ingress(cp).locals:
        if d.name == name:
            return d
    raise AssertionError(name)


def top_decl(cp: CheckedProgram, name: str) -> ast.Declaration:
    for d in cp.program.declarations:
        if d.name == name:
            return d
    raise AssertionError(name)


# ---------------------------------------------------------------------------------------------
# Corpora


def _annotation_gaps(node: ast.Node, seen: set[int], out: list[str]) -> None:
    """Collect nodes of a checked tree whose documented annotations are missing."""
    if id(node) in seen:
        return
    seen.add(id(node))
    where = f"{type(node).__name__} at {node.loc}"
    if isinstance(node, ast.Expression) and node.type is None:
        out.append("untyped " + where)
    implicit = ("accept", "reject", "error")  # names with no declaration node
    if isinstance(node, ast.PathExpression) and node.decl is None and node.name not in implicit:
        out.append("no decl " + where)
    if isinstance(node, ast.Member) and node.kind is None:
        out.append("no kind " + where)
    if isinstance(node, ast.MethodCall) and node.call is None:
        out.append("no call " + where)
    if isinstance(node, ast.TypeRef) and node.resolved is None:
        out.append("unresolved " + where)
    if isinstance(node, ast.ActionRef) and node.decl is None:
        out.append("no action " + where)
    if isinstance(node, ast.Slice) and (node.high is None or node.low is None):
        out.append("no bounds " + where)
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        if f.name in ("decl", "state_decl", "next_state", "type_decl", "call", "default"):
            continue
        value = getattr(node, f.name)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.Node):
                _annotation_gaps(child, seen, out)


GOOD = sorted(P4_DIR.glob("*.p4"))


@pytest.mark.parametrize("path", GOOD, ids=[p.name for p in GOOD])
def test_corpus_program_checks_with_full_annotations(path: Path) -> None:
    tna = "#include <tna.p4>" in path.read_text()
    cp = check(
        parse_file(path, defines=TNA.predefined if tna else {}),
        str(path),
        arch="tna" if tna else "v1model",
    )
    assert set(cp.blocks) == set(TNA_ROLES if tna else ROLES)
    gaps: list[str] = []
    for d in cp.program.declarations:
        # a generic parser/control is a template: its checked copies are the blocks' decls
        generic = isinstance(d, ast.ParserDecl | ast.ControlDecl) and d.type_params
        if d.loc.file == str(path) and not generic:
            _annotation_gaps(d, set(), gaps)
    for block in _all_blocks(cp.blocks.values()):
        _annotation_gaps(block.decl, set(), gaps)
    assert gaps == []


def _all_blocks(blocks):
    for b in blocks:
        yield b
        yield from _all_blocks(b.children.values())


BAD = sorted((P4_DIR / "bad").glob("*.p4"))


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_corpus_program_fails_where_expected(path: Path) -> None:
    head = path.read_text().splitlines()[:5]
    expected = next(m.group(1) for h in head if (m := re.search(r"expect-error:\s*(.*\S)", h)))
    expected_line = next(
        int(m.group(1)) for h in head if (m := re.search(r"expect-line:\s*(\d+)", h))
    )
    tna = "#include <tna.p4>" in path.read_text()
    with pytest.raises(P4Error) as info:
        check(
            parse_file(path, defines=TNA.predefined if tna else {}),
            str(path),
            arch="tna" if tna else "v1model",
        )
    assert expected in info.value.message
    assert info.value.location is not None
    assert info.value.location.line == expected_line


# ---------------------------------------------------------------------------------------------
# Program-level results


def test_errors_and_match_kinds_in_declaration_order(checker) -> None:
    cp = checker(source(top="error { Mine, Other }"))
    assert cp.errors[:4] == ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds"]
    assert cp.errors[-2:] == ["Mine", "Other"]
    assert cp.error_code("NoError") == 0
    assert cp.match_kinds == ["exact", "ternary", "lpm", "range", "optional", "selector"]


def test_error_member_value_uses_the_error_code(checker) -> None:
    cp = checker(source(top="error { Mine }", apply="sm.parser_error = error.Mine;"))
    rhs = apply_stmts(cp)[0].rhs  # type: ignore[union-attr]
    assert isinstance(rhs, ast.Member) and rhs.kind == "error_member"
    assert rhs.type == ErrorType()
    assert rhs.value.enum == "error" and rhs.value.number == cp.error_code("Mine")


def test_block_tree_paths_and_ctor_args(checker) -> None:
    top = """
control Sub(inout bit<8> v)(bit<8> step) {
    table t { key = { v : exact; } actions = { NoAction; } }
    apply { v = v + step; t.apply(); }
}
"""
    cp = checker(
        source(
            top=top,
            locals_="Sub(3) s1; Sub(step = 8w5) s2;",
            apply="s1.apply(meta.m8); s2.apply(meta.m8);",
        )
    )
    ing = cp.blocks["ingress"]
    assert ing.path == "I"
    assert set(ing.children) == {"s1", "s2"}
    assert ing.children["s1"].path == "I.s1"
    assert ing.children["s1"].ctor_args == {"step": 3}
    assert ing.children["s2"].ctor_args == {"step": 5}
    assert cp.blocks["parser"].path == "P" and cp.blocks["deparser"].path == "D"
    call = apply_stmts(cp)[0].call  # type: ignore[union-attr]
    assert call.call.kind == "apply" and call.call.decl is local(cp, "s1")
    s1 = local(cp, "s1")
    assert isinstance(s1, ast.InstanceDecl) and s1.type_decl is top_decl(cp, "Sub")
    assert [a.value for a in s1.ctor_args if a is not None] == [3]


def test_main_binds_blocks_in_package_order(checker) -> None:
    cp = checker(source())
    assert [b.decl.name for b in cp.blocks.values()] == ["P", "VC", "I", "E", "CC", "D"]
    assert cp.main.name == "main" and cp.main.type_decl.name == "V1Switch"  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------
# Expressions: types and constants


def test_unsized_literal_takes_the_other_operands_type(checker) -> None:
    cp = checker(source(apply="meta.m8 = meta.m8 + 1;"))
    rhs = apply_stmts(cp)[0].rhs  # type: ignore[union-attr]
    assert rhs.type == BitType(8)
    assert rhs.right.type == BitType(8) and rhs.right.value == 1
    assert rhs.value is None


def test_constants_fold_and_wrap(checker) -> None:
    top = """
const bit<8> KA = 250 + 10;
const int<8> KB = -3;
const bit<8> KC = (bit<8>)KB;
const bit<4> KD = 8w0xAB[7:4];
const bit<12> KE = 4w0xA ++ 8w0x5C;
const bit<8> KF = 8w1 << 9;
const bit<8> KG = 8w200 |+| 8w100;
const int KH = 7 / 2 + (1 << 40);
const bool KJ = KA == 4 && !(KB > 0);
const bit<16> KK = (bit<16>)-1;
"""
    cp = checker(source(top=top))
    values = {n: top_decl(cp, "K" + n).init.value for n in "ABCDEFGHJK"}  # type: ignore[union-attr]
    assert values == {
        "A": 4,
        "B": -3,
        "C": 253,
        "D": 0xA,
        "E": 0xA5C,
        "F": 0,
        "G": 255,
        "H": 3 + (1 << 40),
        "J": True,
        "K": 0xFFFF,
    }
    assert top_decl(cp, "KE").init.type == BitType(12)  # type: ignore[union-attr]


def test_width_from_constant(checker) -> None:
    cp = checker(source(top="const int W = 12; typedef bit<W> w_t; const w_t X = 5000;"))
    x = top_decl(cp, "X")
    assert x.init.type == BitType(12) and x.init.value == 5000 % 4096  # type: ignore[union-attr]


def test_slice_annotations(checker) -> None:
    cp = checker(source(apply="meta.m8 = hdr.h.d[11:4];"))
    rhs = apply_stmts(cp)[0].rhs  # type: ignore[union-attr]
    assert isinstance(rhs, ast.Slice)
    assert (rhs.high, rhs.low, rhs.type) == (11, 4, BitType(8))


def test_enum_members_and_serializable_enums(checker) -> None:
    top = "enum bit<8> Color { RED = 1, GREEN = 7 } enum Plain { X, Y }"
    cp = checker(
        source(
            top=top,
            locals_="Color c = Color.GREEN; Plain p = Plain.Y;",
            apply="meta.m8 = (bit<8>)c; if (p == Plain.X) { meta.m8 = 0; }",
        )
    )
    c_init = local(cp, "c").init  # type: ignore[union-attr]
    assert c_init.kind == "enum_member"
    assert c_init.value.member == "GREEN" and c_init.value.number == 7
    assert isinstance(c_init.type, EnumType) and c_init.type.underlying == BitType(8)
    assert local(cp, "p").init.value.number == 1  # type: ignore[union-attr]
    cond = apply_stmts(cp)[1].cond  # type: ignore[union-attr]
    assert cond.type == BoolType()


def test_struct_and_list_expressions_typed_by_context(checker) -> None:
    top = "struct pair_t { bit<8> x; bit<16> y; }"
    cp = checker(
        source(
            top=top,
            locals_="pair_t p1 = {1, 2}; pair_t p2 = {y = 3, x = 4};",
            apply="hdr.h = {1, 2, 3, 4}; hdr.h = {#};",
        )
    )
    p1 = local(cp, "p1").init
    assert p1.type.name == "pair_t" and p1.elements[1].type == BitType(16)  # type: ignore[union-attr]
    assert p1.value == (1, 2)
    assert local(cp, "p2").init.type.name == "pair_t"  # type: ignore[union-attr]
    assign = apply_stmts(cp)[0]
    assert isinstance(assign.rhs.type, HeaderType)  # type: ignore[union-attr]
    assert apply_stmts(cp)[1].rhs.type.name == "h_t"  # type: ignore[union-attr]


def test_stack_members_and_table_apply_result(checker) -> None:
    locals_ = "table t { key = { hdr.h.a : exact; } actions = { NoAction; } }"
    apply = """
        meta.m32 = hdr.s.lastIndex;
        hdr.s[1].a = hdr.s.last.a;
        if (t.apply().hit) { meta.flag = true; }
    """
    cp = checker(source(locals_=locals_, apply=apply))
    s = apply_stmts(cp)
    assert s[0].rhs.kind == "stack_last_index"  # type: ignore[union-attr]
    assert s[1].lhs.expr.expr.type.size == 4  # type: ignore[union-attr]
    hit = s[2].cond  # type: ignore[union-attr]
    assert hit.kind == "apply_hit" and hit.type == BoolType()
    assert hit.expr.type == ApplyResultType("t")
    assert hit.expr.call.kind == "table_apply" and hit.expr.call.decl is local(cp, "t")


# ---------------------------------------------------------------------------------------------
# Calls


def test_generic_extern_function_inference(checker) -> None:
    apply = "hash(meta.m16, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.c }, 32w1024);"
    cp = checker(source(apply=apply))
    call = apply_stmts(cp)[0].call.call  # type: ignore[union-attr]
    assert call.kind == "extern_function" and call.name == "hash"
    assert call.type_bindings == {
        "O": BitType(16),
        "T": BitType(16),
        "D": TupleType((BitType(8), BitType(16))),
        "M": BitType(32),
    }
    assert [p.name for p in call.params] == ["result", "algo", "base", "data", "max"]
    assert len(call.args) == 5


def test_generic_infers_literal_from_sibling(checker) -> None:
    cp = checker(source(apply="random(meta.m16, 0, 1000);"))
    call = apply_stmts(cp)[0].call.call  # type: ignore[union-attr]
    assert call.type_bindings == {"T": BitType(16)}
    assert call.args[2].type == BitType(16) and call.args[2].value == 1000


def test_extern_method_bindings_from_instance_type(checker) -> None:
    locals_ = "register<bit<32>>(64) r; counter(8, CounterType.packets) ctr;"
    apply = "r.read(meta.m32, 5); r.write(1, meta.m32 + 1); ctr.count(2);"
    cp = checker(source(locals_=locals_, apply=apply))
    r = local(cp, "r")
    assert isinstance(r, ast.InstanceDecl)
    assert r.resolved == ExternType("register", (BitType(32),))
    assert r.type_decl.name == "register"  # type: ignore[union-attr]
    assert [p.name for p in r.ctor_params] == ["size"] and r.ctor_args[0].value == 64  # type: ignore[union-attr]
    read = apply_stmts(cp)[0].call.call  # type: ignore[union-attr]
    assert read.kind == "extern_method" and read.name == "read"
    assert read.type_bindings == {"T": BitType(32)}
    assert read.receiver.decl is r
    assert read.args[1].type == BitType(32)
    ctr = local(cp, "ctr")
    assert ctr.ctor_args[1].value.member == "packets"  # type: ignore[union-attr]


def test_packet_calls(checker) -> None:
    states = """
    state start {
        bit<8> peek = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.v, (bit<32>)hdr.v.len);
        pkt.advance(16);
        verify(peek != 0, error.NoMatch);
        transition select(hdr.h.a, hdr.h.c) {
            (1, 0x800 &&& 0xF00): accept;
            (2 .. 5, _): next;
            default: reject;
        }
    }
    state next { transition accept; }
    """
    cp = checker(source(states=states))
    st = cp.blocks["parser"].decl.states[0]  # type: ignore[union-attr]
    look = st.statements[0].init
    assert look.call.kind == "packet" and look.call.type_bindings == {"T": BitType(8)}
    extract = st.statements[1].call.call
    assert extract.kind == "packet" and extract.type_bindings["T"].name == "h_t"
    assert st.statements[1].call.args[0].expr.kind == "stack_next"
    assert st.statements[3].call.call.args[0].type == BitType(32)
    assert st.statements[4].call.call.kind == "extern_function"
    sel = st.transition
    assert sel.cases[0].keyset.elements[1].type == BitType(16)
    assert sel.cases[1].state_decl is cp.blocks["parser"].decl.states[1]  # type: ignore[union-attr]
    assert sel.cases[2].state_decl is None


def test_action_call_named_and_default_arguments(checker) -> None:
    locals_ = """
    action a(inout bit<8> x, in bit<8> y = 7) { x = x + y; }
    """
    cp = checker(source(locals_=locals_, apply="a(y = 2, x = meta.m8); a(meta.m8);"))
    first, second = (s.call.call for s in apply_stmts(cp))  # type: ignore[union-attr]
    assert first.kind == "action" and first.decl is local(cp, "a")
    assert [a.value for a in first.args] == [None, 2]
    assert first.args[0].member == "m8"
    assert second.args[1].value == 7


def test_builtin_calls(checker) -> None:
    apply = "hdr.h.setValid(); if (hdr.h.isValid()) { hdr.s.push_front(1); } meta.m32 = hdr.h.minSizeInBytes();"
    cp = checker(source(apply=apply))
    s = apply_stmts(cp)
    assert s[0].call.call.kind == "builtin" and s[0].call.call.name == "setValid"  # type: ignore[union-attr]
    assert s[1].cond.type == BoolType()  # type: ignore[union-attr]
    assert s[2].rhs.value == 8 and s[2].rhs.type == BitType(32)  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------
# Tables


TERNARY_TABLE = """
    action set(bit<8> v) { meta.m8 = v; }
    table t {
        key = { hdr.h.a : ternary; hdr.h.c : exact; }
        actions = { set; NoAction; }
        default_action = set(9);
        @@PROPS@@
        const entries = {
            @@ENTRIES@@
        }
    }
"""


def _entries(
    checker, entries: str, props: str = "", const: bool = True
) -> list[ast.TableEntryDecl]:
    locals_ = TERNARY_TABLE.replace("@@PROPS@@", props).replace("@@ENTRIES@@", entries)
    if not const:
        locals_ = locals_.replace("const entries", "entries")
    cp = checker(source(locals_=locals_, apply="t.apply();"))
    t = local(cp, "t")
    assert isinstance(t, ast.TableDecl) and t.entries is not None
    return t.entries


THREE = """
    (1 &&& 0xF, 1) : set(1);
    (2, 2) : set(2);
    (_, 3) : NoAction();
"""


def test_implicit_priorities_first_entry_wins(checker) -> None:
    entries = _entries(checker, THREE)
    assert [e.priority_value for e in entries] == [3, 2, 1]
    assert entries[0].keys[0].type == BitType(8) and entries[0].keys[1].value == 1
    assert entries[0].action.bound_args[0].value == 1
    assert entries[2].keys[0].type == BitType(8)


def test_bmv2_matches_by_position_whatever_delta_and_largest_wins_say(checker) -> None:
    # p4c's BMv2 back end numbers entries by position (1 = first, the smallest wins on BMv2);
    # priority_delta and largest_priority_wins only change P4Runtime's numbers
    entries = _entries(checker, THREE, "priority_delta = 10;", const=False)
    assert [e.priority_value for e in entries] == [3, 2, 1]
    entries = _entries(
        checker, THREE, "largest_priority_wins = false; priority_delta = 5;", const=False
    )
    assert [e.priority_value for e in entries] == [3, 2, 1]


def test_explicit_priorities_are_checked_but_bmv2_uses_position_or_at_priority(checker) -> None:
    entries = _entries(
        checker,
        """
        priority = 100 : (1, 1) : set(1);
        (2, 2) : set(2);
        (3, 3) : set(3) @priority(50);
        (4, 4) : set(4);
    """,
        const=False,
    )
    # BMv2 priorities 1, 2, 50, 4 (smallest wins) -> larger-wins 50, 49, 1, 47
    assert [e.priority_value for e in entries] == [50, 49, 1, 47]


def test_at_priority_in_const_entries_smallest_wins(checker) -> None:
    entries = _entries(
        checker,
        """
        (1, 1) : set(1) @priority(2);
        (2, 2) : set(2);
        (3, 3) : set(3) @priority(1);
    """,
    )
    # BMv2 priorities 2, 2, 1: the third entry wins, the first two tie (the earlier wins)
    assert [e.priority_value for e in entries] == [1, 1, 2]


@pytest.mark.parametrize(
    ("entries", "props", "const", "message", "needle"),
    [
        (
            "(1, 1) : set(1);\n priority = 5 : (2, 2) : set(2);",
            "",
            True,
            "Table with 'const' entries cannot have priorities",
            "priority = 5",
        ),
        (
            "(1, 1) : set(1);\n priority = 5 : (2, 2) : set(2);",
            "",
            False,
            "entry must have a priority",
            "(1, 1) : set(1);",
        ),
        (
            "priority = 1 : (1, 1) : set(1);\n (2, 2) : set(2);",
            "priority_delta = 2;",
            False,
            "Overflow in priority computation",
            "priority = 1",
        ),
    ],
)
def test_entry_priority_errors(checker, entries, props, const, message, needle) -> None:
    locals_ = TERNARY_TABLE.replace("@@PROPS@@", props).replace("@@ENTRIES@@", entries)
    if not const:
        locals_ = locals_.replace("const entries", "entries")
    expect_error(checker, source(locals_=locals_, apply="t.apply();"), message, needle)


def test_action_refs_and_properties(checker) -> None:
    locals_ = """
    direct_counter(CounterType.packets) dc;
    action fwd(inout bit<8> x, bit<9> port) { sm.egress_spec = port; x = 1; }
    table t {
        key = { hdr.h.a : lpm; }
        actions = { fwd(meta.m8); @defaultonly NoAction; }
        default_action = fwd(meta.m8, 3);
        size = 1024;
        counters = dc;
        implementation = action_profile(32w128);
    }
    """
    cp = checker(source(locals_=locals_, apply="t.apply();"))
    t = local(cp, "t")
    assert isinstance(t, ast.TableDecl)
    ref = t.actions[0]
    assert ref.decl is local(cp, "fwd")
    assert ref.bound_args[0].member == "m8" and ref.bound_args[1] is None  # type: ignore[union-attr]
    assert t.default_action is not None
    assert [a.value for a in t.default_action.bound_args][1] == 3
    assert t.default_action.bound_args[1].type == BitType(9)  # type: ignore[union-attr]
    assert t.property("size").value.value == 1024  # type: ignore[union-attr]
    impl = t.property("implementation").value  # type: ignore[union-attr]
    assert impl.call.kind == "constructor" and impl.type == ExternType("action_profile")


def test_switch_on_action_run(checker) -> None:
    locals_ = """
    action a1() { } action a2() { }
    table t { key = { hdr.h.a : exact; } actions = { a1; a2; } }
    """
    apply = "switch (t.apply().action_run) { a1: { meta.m8 = 1; } default: { } }"
    cp = checker(source(locals_=locals_, apply=apply))
    sw = apply_stmts(cp)[0]
    assert isinstance(sw, ast.SwitchStatement)
    assert sw.expr.kind == "apply_action_run"  # type: ignore[attr-defined]
    assert sw.cases[0].labels[0].decl is local(cp, "a1")  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# Errors: message and location


ERROR_CASES = [
    # (name, source kwargs, message substring, text on the offending line)
    ("undeclared", dict(apply="meta.m8 = nope;"), "undeclared name 'nope'", "nope;"),
    (
        "duplicate",
        dict(locals_="bit<8> x; bit<16> x;"),
        "duplicate declaration of 'x'",
        "bit<16> x;",
    ),
    (
        "duplicate_error",
        dict(top="error { NoMatch }"),
        "duplicate declaration of 'error.NoMatch'",
        "error { NoMatch }",
    ),
    (
        "width",
        dict(apply="meta.m8 = meta.m8 + meta.m16;"),
        "width mismatch: bit<8> + bit<16>",
        "meta.m8 + meta.m16",
    ),
    (
        "sign",
        dict(apply="meta.m8 = meta.m8 + meta.s8;"),
        "signedness mismatch",
        "meta.m8 + meta.s8",
    ),
    ("assign_type", dict(apply="meta.m8 = meta.m16;"), "type mismatch", "meta.m8 = meta.m16"),
    ("bool_cond", dict(apply="if (meta.m8) { }"), "if condition must be bool", "if (meta.m8)"),
    (
        "signed_shift",
        dict(apply="meta.m8 = meta.m8 << meta.s8;"),
        "Shift amount must be an unsigned number",
        "<< meta.s8",
    ),
    (
        "bad_cast",
        dict(apply="meta.m16 = (bit<16>)meta.flag;"),
        "cannot cast bool to bit<16>",
        "(bit<16>)meta.flag",
    ),
    (
        "slice_range",
        dict(apply="meta.m8 = hdr.h.d[40:33];"),
        "slice [40:33] out of range",
        "[40:33]",
    ),
    (
        "slice_const",
        dict(apply="meta.m8 = hdr.h.d[meta.m8:0];"),
        "must be a compile-time constant",
        "hdr.h.d[meta.m8:0]",
    ),
    ("no_field", dict(apply="meta.m8 = hdr.h.zz;"), "header 'h_t' has no field 'zz'", "hdr.h.zz"),
    (
        "in_param",
        dict(locals_="action a(in bit<8> x) { x = 1; }"),
        "cannot assign to in parameter 'x'",
        "x = 1;",
    ),
    (
        "directionless_param",
        dict(locals_="action a(bit<8> x) { x = 1; }"),
        "cannot assign to in parameter 'x'",
        "x = 1;",
    ),
    (
        "const_assign",
        dict(top="const bit<8> K = 1;", apply="K = 2;"),
        "cannot assign to constant 'K'",
        "K = 2;",
    ),
    (
        "action_args",
        dict(locals_="action a(in bit<8> x, in bit<8> y) { }", apply="a(meta.m8);"),
        "action 'a' expects 2 arguments, got 1",
        "a(meta.m8);",
    ),
    ("out_not_lvalue", dict(apply="random(meta.m8 + 1, 0, 1);"), "must be a variable", "random("),
    (
        "match_kind",
        dict(locals_="table t { key = { hdr.h.a : foo; } actions = { NoAction; } }"),
        "table 't' key uses unknown match_kind 'foo'",
        "foo;",
    ),
    (
        "default_not_listed",
        dict(
            locals_="action b() { } table t { key = { hdr.h.a : exact; } "
            "actions = { NoAction; }\n default_action = b(); }"
        ),
        "default action 'b' is not in the actions list of table 't'",
        "default_action = b();",
    ),
    (
        "not_action",
        dict(locals_="bit<8> v; table t { key = { hdr.h.a : exact; } actions = { v; } }"),
        "'v' in table 't' is not an action",
        "actions = { v; }",
    ),
    (
        "unbound_directional",
        dict(
            locals_="action a(in bit<8> x) { }\ntable t { key = { hdr.h.a : exact; } "
            "actions = { a; } }"
        ),
        "parameter 'x' of action 'a' must be bound",
        "actions = { a; }",
    ),
    (
        "entry_key_type",
        dict(
            locals_="table t { key = { hdr.h.a : exact; } actions = { NoAction; }\n"
            "const entries = { (true) : NoAction(); } }"
        ),
        "type mismatch",
        "(true) : NoAction();",
    ),
    (
        "exact_priority",
        dict(
            locals_="table t { key = { hdr.h.a : exact; } actions = { NoAction; }\n"
            "entries = { priority = 3 : (1) : NoAction(); } }"
        ),
        "does not require priorities",
        "hdr.h.a : exact",
    ),
    (
        "switch_label",
        dict(
            locals_="action a1() { } action a2() { }\n"
            "table t { key = { hdr.h.a : exact; } actions = { a1; } }",
            apply="switch (t.apply().action_run) {\n a2: { } }",
        ),
        "'a2' is not an action of table 't'",
        "a2: { }",
    ),
    (
        "no_start",
        dict(states="state begin { transition accept; }"),
        "parser 'P' has no 'start' state",
        "parser P(",
    ),
    (
        "undeclared_state",
        dict(states="state start { transition nowhere; }"),
        "undeclared parser state 'nowhere'",
        "transition nowhere",
    ),
    (
        "select_type",
        dict(
            states="state start { pkt.extract(hdr.h); transition select(hdr.h.a) {\n"
            "true: accept; default: reject; } }"
        ),
        "type mismatch",
        "true: accept;",
    ),
    (
        "extract_non_header",
        dict(states="state start { pkt.extract(meta.m8); transition accept; }"),
        "extract needs a header",
        "pkt.extract(meta.m8)",
    ),
    (
        "verify_args",
        dict(states="state start { verify(true); transition accept; }"),
        "expects 2 arguments, got 1",
        "verify(true)",
    ),
    (
        "undeclared_error",
        dict(apply="sm.parser_error = error.Nope;"),
        "error member 'error.Nope' is not declared",
        "error.Nope",
    ),
    ("stack_index", dict(apply="hdr.s[4].a = 1;"), "index 4 out of bounds", "hdr.s[4]"),
    (
        "table_in_action",
        dict(
            locals_="table t { key = { hdr.h.a : exact; } actions = { NoAction; } }\n"
            "action a() { t.apply(); }"
        ),
        "cannot be applied inside an action",
        "t.apply(); }",
    ),
    (
        "logic_needs_bool",
        dict(apply="meta.flag = meta.flag && meta.b1;"),
        "needs bool operands",
        "meta.flag && meta.b1",
    ),
    (
        "main_signature",
        dict(main="V1Switch(P(), VC(), I(), E(), CC(), VC()) main;"),
        "parameter 'hdr' must have no direction",
        "control VC(",
    ),
    (
        "main_kind",
        dict(main="V1Switch(P(), VC(), P(), E(), CC(), D()) main;"),
        "'P' must be a control",
        "V1Switch(",
    ),
    ("no_main", dict(main=""), "no 'main' package instance", "control D("),
    (
        "missing_return",
        dict(top="bit<8> f(in bit<8> x) { if (x == 0) { return 1; } }"),
        "does not return a value on every path",
        "bit<8> f(",
    ),
    (
        "ctor_not_const",
        dict(locals_="register<bit<8>>(meta.m32) r;"),
        "must be a compile-time constant",
        "register<bit<8>>(meta.m32) r;",
    ),
    (
        "extern_no_method",
        dict(locals_="counter(4, CounterType.packets) c;", apply="c.reset();"),
        "extern 'counter' has no method 'reset'",
        "c.reset();",
    ),
    (
        "div_signed",
        dict(apply="meta.s8 = meta.s8 / 2;"),
        "not defined for signed type int<8>",
        "meta.s8 / 2",
    ),
    (
        "header_bad_field",
        dict(top="header bad_t { bool b; int x; }"),
        "field 'x' cannot have type int",
        "header bad_t",
    ),
    (
        "generic_control_never_applied",
        dict(top="control G<T>(inout T x) { apply { } }", locals_="G() g;"),
        "cannot infer the type arguments of 'G'",
        "G() g;",
    ),
    (
        "generic_control_int_literal",
        dict(top="control G<T>(in T x) { apply { } }", locals_="G() g;", apply="g.apply(1);"),
        "cannot infer type parameter 'T' of 'G'",
        "g.apply(1);",
    ),
    (
        "generic_control_body",
        dict(
            top="control G<T>(inout T x) { apply { x = x + true; } }",
            locals_="G<bit<8>>() g;",
        ),
        "operator + needs integer operands",
        "x + true",
    ),
    (
        "named_mixed",
        dict(locals_="action a(in bit<8> x, in bit<8> y) { }", apply="a(meta.m8, y = 1);"),
        "all positional or all named",
        "a(meta.m8, y = 1);",
    ),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_message_and_location(checker, case) -> None:
    _, kwargs, message, needle = case
    expect_error(checker, source(**kwargs), message, needle)


UNSUPPORTED_CASES = [
    ("this", dict(apply="meta.m8 = this;"), "'this'", "this;"),
]


@pytest.mark.parametrize("case", UNSUPPORTED_CASES, ids=[c[0] for c in UNSUPPORTED_CASES])
def test_unsupported_constructs(checker, case) -> None:
    _, kwargs, message, needle = case
    expect_error(checker, source(**kwargs), message, needle, UnsupportedError)


def test_internal_failure_is_reported_with_location(checker, monkeypatch) -> None:
    def boom(self, d, scope):
        raise ValueError("boom")

    monkeypatch.setattr(Checker, "table", boom)
    text = source(locals_="table t { key = { hdr.h.a : exact; } actions = { NoAction; } }")
    with pytest.raises(P4Error) as info:
        checker(text)
    assert "internal error" in info.value.message and "'t'" in info.value.message
    assert info.value.location is not None and info.value.location.line == line_of(text, "table t")


def test_shadowing_in_nested_scope_is_allowed(checker) -> None:
    cp = checker(
        source(locals_="bit<8> x = 1;", apply="{ bit<16> x = 2; meta.m16 = x; } meta.m8 = x;")
    )
    inner = apply_stmts(cp)[0].statements[1].rhs  # type: ignore[union-attr]
    assert inner.type == BitType(16)
    assert apply_stmts(cp)[1].rhs.type == BitType(8)  # type: ignore[union-attr]


def test_global_name_lookup(checker) -> None:
    cp = checker(source(top="const bit<8> x = 5;", locals_="bit<8> x = 1;", apply="meta.m8 = .x;"))
    rhs = apply_stmts(cp)[0].rhs  # type: ignore[union-attr]
    assert rhs.value == 5 and isinstance(rhs.decl, ast.ConstantDecl)


def test_int_typed_constant_stays_int(checker) -> None:
    cp = checker(source(top="const int BIG = 1 << 70;"))
    init = top_decl(cp, "BIG").init  # type: ignore[union-attr]
    assert init.type == IntType() and init.value == 1 << 70


# ---------------------------------------------------------------------------------------------
# A broad v1model program: externs, sub-parsers, value sets, selectors, digests, casts


IDIOMS = """\
#include <core.p4>
#include <v1model.p4>
typedef bit<48> mac_t;
type bit<32> Ip4_t;
header eth_t { mac_t dst; mac_t src; bit<16> type; }
struct inner_t { bit<4> x; bit<4> y; }
header n_t { inner_t i; bit<8> z; }
header a_t { bit<8> v; }
header b_t { bit<16> w; }
header_union u_t { a_t a; b_t b; }
struct pair<T> { T first; T second; }
struct digest_t { bit<48> mac; bit<9> port; }
struct headers_t { eth_t eth; n_t n; a_t[3] st; u_t u; }
struct meta_t { bit<8> m8; bit<16> m16; bit<32> m32; bit<2> color; Ip4_t ip; pair<bit<8>> pp; bit<14> sel; }
const bit<16> TYPE_N = 0x1234;
bit<16> f(in bit<16> a, in bit<16> b) { return a |+| b; }
parser Sub(packet_in pkt, inout headers_t hdr)(bit<8> lim) {
    state start { pkt.extract(hdr.st.next); transition select(hdr.st.last.v) { 0: accept; default: start; } }
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) pvs;
    Sub(8w3) sub;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { TYPE_N: parse_n; pvs: parse_sub; 0x0800 &&& 0xFF00: parse_u; default: accept; }
    }
    state parse_n { pkt.extract(hdr.n); transition select(pkt.lookahead<bit<8>>()) { 1 .. 5: accept; _: reject; } }
    state parse_sub { sub.apply(pkt, hdr); transition accept; }
    state parse_u { pkt.extract(hdr.u.a); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) {
    apply { verify_checksum(hdr.n.isValid(), { hdr.n.i.x, hdr.n.z }, hdr.eth.type, HashAlgorithm.csum16); }
}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter(32w16, MeterType.bytes) mtr;
    direct_meter<bit<2>>(MeterType.packets) dm;
    counter(32w16, CounterType.packets_and_bytes) ctr;
    action_selector(HashAlgorithm.crc16, 32w64, 32w14) as;
    bit<8> tmp;
    action drop() { mark_to_drop(sm); }
    action fwd(bit<9> port, mac_t mac) { sm.egress_spec = port; hdr.eth.dst = mac; dm.read(meta.color); }
    action with_ret() { if (meta.m8 == 0) { return; } meta.m8 = 1; exit; }
    table sel_t {
        key = { hdr.eth.dst : exact; meta.m16 : selector; }
        actions = { fwd; drop; }
        implementation = as;
        const default_action = drop();
    }
    table mt { key = { hdr.eth.src : ternary; meta.ip : exact; } actions = { fwd; NoAction; } meters = dm; size = 64; }
    apply {
        tuple<bit<8>, bit<16>> tp = { 1, 2 };
        meta.m8 = meta.m8 == 0 ? 8w1 : 8w2;
        meta.m8 = meta.pp.first + hdr.st.size[7:0];
        switch (meta.m8) { 0: { drop(); } 1: 2: { tmp = 3; } default: { } }
        mtr.execute_meter<bit<2>>(32w1, meta.color);
        mtr.execute_meter(2, meta.color);
        ctr.count((bit<32>)meta.m8);
        hash(meta.sel, HashAlgorithm.crc32, (bit<14>)0, { hdr.eth.src, hdr.eth.dst }, (bit<28>)16384);
        digest<digest_t>(1, { hdr.eth.src, sm.ingress_port });
        digest(1, (digest_t){ mac = hdr.eth.src, port = sm.ingress_port });
        clone3(CloneType.I2E, 100, { meta.m8 });
        clone(CloneType.E2E, 32w5);
        log_msg("m8={}", { meta.m8 });
        log_msg("plain");
        resubmit_preserving_field_list(1);
        meta.m16 = f(meta.m16, 3);
        meta.ip = (Ip4_t)32w5;
        meta.m32 = (bit<32>)meta.ip;
        if (hdr.u.isValid()) { hdr.u.a.setInvalid(); }
        hdr.st.pop_front(1);
        hdr.st.push_front(2);
        random<bit<8>>(meta.m8, 0, 255);
        if (sel_t.apply().miss) { mt.apply(); }
        mark_to_drop();
        bit<32> shifted = 32w1 << meta.m8;
        meta.m16 = hdr.eth.type & ~TYPE_N;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { truncate(64); recirculate_preserving_field_list(0); }
}
control CC(inout headers_t hdr, inout meta_t meta) {
    apply { update_checksum(true, { hdr.n.z }, hdr.eth.type, HashAlgorithm.csum16); }
}
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.st); pkt.emit(hdr.u); pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_v1model_idioms(checker) -> None:
    cp = checker(IDIOMS)
    parser_block = cp.blocks["parser"]
    assert parser_block.children["sub"].path == "P.sub"
    assert parser_block.children["sub"].ctor_args == {"lim": 3}
    start = parser_block.decl.states[0]
    pvs_case = start.transition.cases[1]  # type: ignore[union-attr]
    assert isinstance(pvs_case.keyset.decl, ast.ValueSetDecl)
    ing = ingress(cp)
    stmts = {
        s.call.call.name: s.call.call  # type: ignore[union-attr]
        for s in ing.body.statements
        if isinstance(s, ast.MethodCallStatement) and s.call.call is not None
    }
    digest = stmts["digest"]
    assert digest.type_bindings["T"].name == "digest_t"
    assert digest.args[1].type.name == "digest_t"
    assert stmts["execute_meter"].type_bindings == {"T": BitType(2)}
    assert stmts["clone3"].type_bindings["T"] == TupleType((BitType(8),))
    f_call = next(
        s.rhs
        for s in ing.body.statements
        if isinstance(s, ast.AssignmentStatement) and isinstance(s.rhs, ast.MethodCall)
    )
    assert f_call.call.kind == "function" and f_call.call.args[1].type == BitType(16)
    sel_t = next(d for d in ing.locals if d.name == "sel_t")
    assert [k.match_kind for k in sel_t.keys] == ["exact", "selector"]  # type: ignore[attr-defined]
    assert cp.blocks["compute_checksum"].decl.body.statements[0].call.call.type_bindings == {  # type: ignore[union-attr]
        "T": TupleType((BitType(8),)),
        "O": BitType(16),
    }


def test_serializable_enum_converts_implicitly_to_its_type(checker) -> None:
    top = "enum bit<8> Op { ADD = 3, SUB = 4 }"
    cp = checker(source(top=top, apply="meta.m8 = Op.SUB; meta.flag = Op.ADD == 8w3;"))
    s = apply_stmts(cp)
    assert s[0].rhs.value.number == 4  # type: ignore[union-attr]
    assert s[1].rhs.value is True  # type: ignore[union-attr]


def test_block_ctor_args_flow_into_nested_instances(checker) -> None:
    top = "control Sub(inout bit<8> v)(bit<8> step) { apply { v = v + step; } }"
    text = (
        source(top=top, apply="s.apply(meta.m8);", locals_="Sub(k) s;")
        .replace(
            "inout standard_metadata_t sm) {\n    Sub",
            "inout standard_metadata_t sm)(bit<8> k) {\n    Sub",
        )
        .replace("I(), E()", "I(8w9), E()")
    )
    cp = checker(text)
    assert cp.blocks["ingress"].ctor_args == {"k": 9}
    assert cp.blocks["ingress"].children["s"].ctor_args == {"step": 9}


MORE_ERRORS = [
    (
        "shift_unsized",
        dict(apply="meta.m32 = 1 << meta.m8;"),
        "width of the left operand of <<",
        "1 << meta.m8",
    ),
    (
        "complement_unsized",
        dict(apply="meta.m8 = ~0;"),
        "operator ~ needs a value of known width",
        "~0",
    ),
    (
        "verify_in_control",
        dict(apply="verify(true, error.NoMatch);"),
        "verify can only be called from a parser",
        "verify(true",
    ),
    (
        "action_in_parser",
        dict(top="action pa() { }", states="state start { pa(); transition accept; }"),
        "cannot be called from a parser",
        "pa(); transition",
    ),
    (
        "lpm_mask",
        dict(
            locals_="table t { key = { hdr.h.a : lpm; } actions = { NoAction; }\n"
            "const entries = { 0x10 &&& 0x0F : NoAction(); } }"
        ),
        "lpm mask must be a prefix",
        "0x10 &&& 0x0F",
    ),
    (
        "exact_mask",
        dict(
            locals_="table t { key = { hdr.h.a : exact; } actions = { NoAction; }\n"
            "const entries = { 0x10 &&& 0xF0 : NoAction(); } }"
        ),
        "not allowed for a exact key",
        "0x10 &&& 0xF0",
    ),
    (
        "entry_arity",
        dict(
            locals_="table t { key = { hdr.h.a : exact; hdr.h.b : exact; } "
            "actions = { NoAction; }\nconst entries = { (1) : NoAction(); } }"
        ),
        "has 1 keys, the table has 2",
        "(1) : NoAction();",
    ),
    (
        "default_args_const",
        dict(
            locals_="action a(bit<8> v) { }\ntable t { key = { hdr.h.a : exact; } "
            "actions = { a; }\n default_action = a(meta.m8); }"
        ),
        "must be a compile-time constant",
        "default_action = a(meta.m8);",
    ),
    (
        "out_arg_type",
        dict(locals_="register<bit<16>>(4) r;", apply="r.read(meta.m8, 0);"),
        "expected bit<16>, got bit<8>",
        "r.read(meta.m8, 0);",
    ),
    ("dontcare_in", dict(apply="hdr.s.push_front(_);"), "'_' is only allowed", "push_front(_)"),
    (
        "header_union_set_valid",
        dict(top="header_union hu_t { h_t x; }", locals_="hu_t hu;", apply="hu.setValid();"),
        "header union has no method 'setValid'",
        "hu.setValid();",
    ),
    (
        "in_param_method",
        dict(top="control X(in h_t hh) { apply { hh.setInvalid(); } }"),
        "cannot assign to in parameter 'hh'",
        "hh.setInvalid();",
    ),
    (
        "ternary_types",
        dict(apply="meta.m8 = meta.flag ? meta.m8 : meta.m16;"),
        "?: branches are bit<8> and bit<16>",
        "meta.flag ?",
    ),
    (
        "duplicate_action_in_table",
        dict(locals_="table t { key = { hdr.h.a : exact; } actions = { NoAction; NoAction; } }"),
        "appears twice in table 't'",
        "actions = { NoAction; NoAction; }",
    ),
]


@pytest.mark.parametrize("case", MORE_ERRORS, ids=[c[0] for c in MORE_ERRORS])
def test_more_error_messages(checker, case) -> None:
    _, kwargs, message, needle = case
    expect_error(checker, source(**kwargs), message, needle)


def test_optional_parameters_and_static_assert(checker, tmp_path: Path) -> None:
    top = """
extern void ext_opt(in bit<8> a, @optional in bit<8> b);
const bool CHECKED = static_assert(true, "fine");
"""
    cp = checker(source(top=top))
    assert top_decl(cp, "CHECKED").init.value is True  # type: ignore[union-attr]
    # a program's own extern functions cannot be called (p4c-bm2-ss has no BMv2 primitive for
    # them), so the binding of @optional parameters is checked on the declaration directly
    decl = top_decl(cp, "ext_opt")
    assert isinstance(decl, ast.ExternFunctionDecl)

    def args(**named: int) -> list[ast.Argument]:
        return [ast.Argument(expr=ast.IntLiteral(number=v), name=n) for n, v in named.items()]

    bind = Checker().bind_arguments
    first = bind(decl.params, [ast.Argument(expr=ast.IntLiteral(number=1))], decl.loc, "ext_opt")
    assert first[1] is None and first[0].number == 1  # type: ignore[union-attr]
    second = bind(decl.params, args(b=2, a=3), decl.loc, "ext_opt")
    assert [a.number for a in second] == [3, 2]  # type: ignore[union-attr]
    expect_error(
        checker,
        source(top=top, apply="ext_opt(1);"),
        "unknown extern function 'ext_opt'",
        "ext_opt(1)",
    )
    expect_error(
        checker, source(top='const bool NO = static_assert(false, "too big");'), "too big", "NO ="
    )


def test_typedef_enum_and_tuple_select(checker) -> None:
    top = "enum Col { R, G } typedef Col Col2;"
    states = """state start {
        transition select(sm.parser_error, sm.ingress_port) {
            (error.NoMatch, 1): accept;
            (_, _): reject;
        }
    }"""
    cp = checker(source(top=top, states=states, locals_="Col c = Col2.G;"))
    assert local(cp, "c").init.value.number == 1  # type: ignore[union-attr]
    sel = cp.blocks["parser"].decl.states[0].transition  # type: ignore[union-attr]
    first = sel.cases[0].keyset
    assert first.elements[0].value.member == "NoMatch"
    assert first.elements[1].type == BitType(9)
    assert isinstance(sel.type, TupleType)
