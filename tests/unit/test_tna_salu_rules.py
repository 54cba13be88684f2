"""Tofino 1 compile-time rules for TNA programs added in issue 13: shifts, multiply/divide in
control code (tofino_ops.py) and what one stateful ALU can do (tofino_salu.py). Each case is
one RegisterAction or one statement, accepted or refused with a "Tofino:" message."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.compiler import compile_file
from softswitch.errors import P4Error

PROGRAM = """
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a8; bit<8> b8; bit<16> a16; bit<16> b16; bit<16> c16;
             bit<32> a32; bit<32> b32; bit<64> w64; bit<24> a24; bit<4> n4; }
struct headers_t { h_t h; }
struct pair_t { bit<16> lo; bit<16> hi; }
struct pair32_t { bit<32> lo; bit<32> hi; }
struct md_t { bool flag; bool other; bit<32> r; bit<16> r16; bit<8> r8; }
parser IP(packet_in pkt, out headers_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h);
                  transition accept; }
}
control I(inout headers_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t prsr,
          inout ingress_intrinsic_metadata_for_deparser_t dprsr,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    Register<bit<32>, bit<16>>(64) r32;
    Register<bit<16>, bit<16>>(64) r16;
    Register<bit<8>, bit<16>>(64) r8;
    Register<pair_t, bit<16>>(64) rp;
    Register<pair32_t, bit<16>>(64) rp32;
    LOCALS
    apply { BODY }
}
control ID(packet_out pkt, inout headers_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dprsr) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out headers_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout headers_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg) { apply { } }
control ED(packet_out pkt, inout headers_t hdr, in md_t md) { apply { pkt.emit(hdr); } }
Switch(Pipeline(IP(), I(), ID(), EP(), E(), ED())) main;
"""


def compile_error(tmp_path: Path, locals_: str, body: str) -> str | None:
    """None when the program compiles, else the error text."""
    path = tmp_path / "prog.p4"
    path.write_text(PROGRAM.replace("LOCALS", locals_).replace("BODY", body))
    try:
        compile_file(path)
    except P4Error as e:
        return str(e)
    return None


def action(reg: str, cell: str, result: str, body: str, name: str = "ra") -> str:
    """A RegisterAction on `reg` with apply(inout value, out rv) = `body`."""
    return (
        f"RegisterAction<{cell}, bit<16>, {result}>({reg}) {name} = {{\n"
        f"    void apply(inout {cell} value, out {result} rv) {{\n{body}\n}}\n}};\n"
    )


def single(body: str, reg: str = "r32", width: int = 32, result: str = "") -> str:
    return action(reg, f"bit<{width}>", result or f"bit<{width}>", body)


# --- 1. shifts ------------------------------------------------------------------------------

SHIFT = "the shift amount of"


@pytest.mark.parametrize(
    ("stmt", "error"),
    [
        ("md.r = hdr.h.a32 << 3;", None),
        ("md.r = hdr.h.a32 >> 31;", None),
        ("md.r = (bit<32>)((hdr.h.a32 ++ hdr.h.b32) >> 16);", None),  # funnel shift
        ("md.r = hdr.h.a32 << (2 + 3);", None),  # folded amount
        ("md.r = hdr.h.a32 << hdr.h.n4;", SHIFT + " '<<'"),
        ("md.r = hdr.h.a32 >> hdr.h.a8;", SHIFT + " '>>'"),
        ("md.r = 32w1 << hdr.h.n4;", SHIFT),
        ("md.r = hdr.h.a32; md.r <<= hdr.h.n4;", SHIFT),  # compound assignment
        ("if ((hdr.h.a32 >> hdr.h.a8) == 0) { md.r = 1; }", SHIFT),  # in a condition
    ],
)
def test_shift_amounts(tmp_path: Path, stmt: str, error: str | None) -> None:
    got = compile_error(tmp_path, "", stmt)
    assert got is None if error is None else (got is not None and error in got), got


def test_shift_by_an_action_parameter_is_refused_in_the_action(tmp_path: Path) -> None:
    locals_ = """
    action shift(bit<4> n) { md.r = hdr.h.a32 << n; }
    table t { key = { hdr.h.a8 : exact; } actions = { shift; } }
    """
    got = compile_error(tmp_path, locals_, "t.apply();")
    text = (tmp_path / "prog.p4").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "action shift" in t)
    assert got is not None and f"prog.p4:{line}:" in got
    assert "Tofino: the shift amount of '<<'" in got


# --- 2. multiply, divide, modulo ------------------------------------------------------------


@pytest.mark.parametrize(
    ("stmt", "error"),
    [
        ("md.r = hdr.h.a32 * 8;", None),
        ("md.r = 4 * hdr.h.a32;", None),
        ("md.r = hdr.h.a32 * 1;", None),
        ("md.r = hdr.h.a32 / 4;", None),
        ("md.r = hdr.h.a32 % 16;", None),
        ("md.r = (bit<32>)(3 * 5) + hdr.h.a32;", None),  # constant-folded
        ("md.r = hdr.h.a32 * 3;", "'*' is only possible by a constant power of two"),
        ("md.r = hdr.h.a32 * hdr.h.b32;", "'*' is only possible"),
        ("md.r = 0 / hdr.h.a32;", None),  # strength reduction: 0
        ("md.r = 32w0 << hdr.h.n4;", None),
        ("md.r = hdr.h.a32 / 3;", "could not evaluate expression"),  # the checker's
        ("md.r = hdr.h.a32 % 10;", "could not evaluate expression"),
        ("bit<32> d = hdr.h.b32; md.r = hdr.h.a32 / d;", "'/' is only possible"),
        ("bit<32> d = hdr.h.b32; md.r = hdr.h.a32 % d;", "'%' is only possible"),
        ("md.r = hdr.h.a32; md.r *= 6;", "'*' is only possible"),
    ],
)
def test_multiply_divide_modulo(tmp_path: Path, stmt: str, error: str | None) -> None:
    got = compile_error(tmp_path, "", stmt)
    assert got is None if error is None else (got is not None and error in got), got


# --- 3. RegisterAction result width ---------------------------------------------------------


def test_register_action_result_of_64_bits_is_refused(tmp_path: Path) -> None:
    ra = action("rp32", "pair32_t", "bit<64>", "value.lo = value.lo + 1;")
    got = compile_error(tmp_path, ra, "ra.execute(0);")
    assert got is not None and "returns bit<64>" in got and "at most 32 bits" in got


def test_register_action_result_of_32_bits_is_accepted(tmp_path: Path) -> None:
    ra = action("rp32", "pair32_t", "bit<32>", "rv = value.hi; value.lo = value.lo + 1;")
    assert compile_error(tmp_path, ra, "md.r = ra.execute(0);") is None


# --- 4. RegisterAction bodies ---------------------------------------------------------------

ACCEPTED_BODIES = [
    # (register, cell width, body)
    ("r32", 32, "rv = value; value = value + 1;"),
    ("r32", 32, "if (value == 0) { value = 1; }"),
    ("r32", 32, "value = value | 0x8000;"),
    ("r32", 32, "value = hdr.h.a32;"),
    ("r32", 32, "value = value + (bit<32>)hdr.h.a8;"),  # a widened field
    ("r32", 32, "value = value & ~hdr.h.a32;"),  # andcb
    ("r32", 32, "rv = value + 1;"),  # computed in the high half
    ("r32", 32, "rv = 0; if (md.flag) { rv = 1; }"),  # a first rv = 0 is free
    ("r32", 32, "if (md.flag) { value = value + 1; } else { value = 0; }"),
    ("r32", 32, "value = md.flag ? value + 1 : 0;"),
    ("r32", 32, "value = value - hdr.h.a32;"),
    ("r32", 32, "value = (value + 1) | (value & 0xff);"),  # an outer | of two instructions
    ("r32", 32, "if (value >= 0x80000000) { value = 0; }"),  # constant moved left: -2^31
    ("r32", 32, "if (value + hdr.h.a32 > 10) { value = 1; }"),
    ("r16", 16, "if (value >= 0x8000 && value != 0xffff) { value = 7; rv = 1; } "
                "else { value = value | 0x8000; rv = 0; }"),
    ("r8", 8, "if (md.flag && value == hdr.h.a8) { value = 5; }"),
    ("r8", 8, "rv = value; if (value == 3) { value = 4; }"),
    ("r32", 32, "bit<32> old = value; value = old + 1; rv = old;"),  # a copy of the cell
    ("r32", 32, "value = value + 1; rv = value;"),  # rv is the new value
    ("r8", 8, "rv = (bit<8>)(bit<1>)(value == hdr.h.a8); value = 0;"),  # rv = 1 under a comparison
]


@pytest.mark.parametrize(("reg", "width", "body"), ACCEPTED_BODIES)
def test_register_action_bodies_a_stateful_alu_runs(
    tmp_path: Path, reg: str, width: int, body: str
) -> None:
    ra = single(body, reg, width)
    assert compile_error(tmp_path, ra, f"md.r{'' if width == 32 else width} = ra.execute(0);") \
        is None


def test_dual_register_bodies(tmp_path: Path) -> None:
    body = """
        rv = value.lo;
        if (value.lo == hdr.h.a16) { value.lo = value.lo + 1; }
        value.hi = value.hi | hdr.h.b16;
    """
    ra = action("rp", "pair_t", "bit<16>", body)
    assert compile_error(tmp_path, ra, "md.r16 = ra.execute(0);") is None


REFUSED_BODIES = [
    ("r32", 32, "value = value + hdr.h.a32 + hdr.h.b32;", "nested arithmetic"),
    ("r32", 32, "value = value << 1;", "cannot shift"),
    ("r32", 32, "value = value * 2;", "cannot multiply"),
    ("r32", 32, "value = (bit<32>)((bit<24>)value + 1);", "needs a mask"),
    ("r32", 32, "value = (bit<32>)(hdr.h.a24 + 1);", "computes on 24 bits"),
    ("r32", 32, "value = value + 1; value = value + 1;", "not mutually exclusive"),
    ("r32", 32, "value = 5; if (md.flag) { value = 6; }", "not mutually exclusive"),
    ("r32", 32, "if (md.flag) { value = 1; } else if (md.other) { value = 2; } "
                "else { value = 3; }", "3 different values computed in the lo half"),
    ("r32", 32, "if (value == hdr.h.a32 && value == hdr.h.b32 && md.flag) { value = 1; }",
     "3rd distinct comparison"),
    ("r32", 32, "if (value + hdr.h.a32 == hdr.h.b32) { value = 1; }",
     "at most one of each"),
    ("r32", 32, "if (value + 3 == 5) { value = 1; }", "at most one of each"),
    ("r32", 32, "value = value + 1; if (value == 5) { rv = 1; }", "read after it was written"),
    ("r32", 32, "if (value < 0x80000001) { value = 0; }", "must fit 32 signed bits"),
    ("r32", 32, "value = value + hdr.h.a32 - 1;", "nested arithmetic"),
    ("r32", 32, "value = value + value;", "at most one register value"),
    ("r32", 32, "value = hdr.h.a32 + hdr.h.b32;", "one field"),
    ("r32", 32, "rv = rv + 1;", "rv is only written"),
    ("r32", 32, "value = value + 1; rv = value + 1;", "read after it was written"),
    ("r8", 8, "value = value + hdr.h.a16[7:0] + 1;", "nested arithmetic"),
    ("r8", 8, "if (hdr.h.a16 == 3) { value = 1; }", "reads fields of at most 8 bits"),
    ("r32", 32, "bit<16> small = 1; value = value + 1;", "locals are bit<32>"),
    ("r32", 32, "bit<32> a = value + 1; bit<32> b = value + 2; value = a;",
     "too many local variables"),
    ("r32", 32, "if (md.flag) { rv = hdr.h.a32; } else { rv = value; }",
     "Incompatible outputs"),
    ("r8", 8, "if (md.flag && value == hdr.h.a8) { value = hdr.h.b8; }", "read three fields"),
    ("r32", 32, "value = hdr.h.a16 ++ hdr.h.b16;", "concatenate"),
    ("r32", 32, "if (hdr.h.isValid()) { value = 1; }", "combines comparisons"),
]


@pytest.mark.parametrize(("reg", "width", "body", "error"), REFUSED_BODIES)
def test_register_action_bodies_beyond_a_stateful_alu(
    tmp_path: Path, reg: str, width: int, body: str, error: str
) -> None:
    ra = single(body, reg, width)
    target = f"md.r{'' if width == 32 else width}"
    got = compile_error(tmp_path, ra, f"{target} = ra.execute(0);")
    assert got is not None and "error: Tofino: " in got and error in got, got


def test_narrow_result_widened_is_refused(tmp_path: Path) -> None:
    # 8-bit xor computed in a 32-bit ALU: the operation's own width is not the ALU's.
    ra = single("rv = (bit<32>)(hdr.h.a8 ^ 1);")
    got = compile_error(tmp_path, ra, "md.r = ra.execute(0);")
    assert got is not None and "computes on 8 bits" in got


def test_dual_register_outputs_one_source(tmp_path: Path) -> None:
    body = "if (md.flag) { rv = value.lo; } else { rv = value.hi; }"
    ra = action("rp", "pair_t", "bit<16>", body)
    got = compile_error(tmp_path, ra, "md.r16 = ra.execute(0);")
    assert got is not None and "Incompatible outputs" in got


def test_dual_register_cannot_compute_an_output(tmp_path: Path) -> None:
    ra = action("rp", "pair_t", "bit<16>", "rv = value.lo + 1;")
    got = compile_error(tmp_path, ra, "md.r16 = ra.execute(0);")
    assert got is not None and "no free ALU to compute an output" in got


def test_statements_a_register_action_cannot_run(tmp_path: Path) -> None:
    ra = single("if (value == 0) { return; } value = 1;")
    got = compile_error(tmp_path, ra, "md.r = ra.execute(0);")
    assert got is not None and "statement is too complex" in got


# --- 4f. per register -----------------------------------------------------------------------


def actions_on(reg: str, bodies: list[str], width: int = 16) -> str:
    cell = f"bit<{width}>"
    return "".join(action(reg, cell, cell, b, f"ra{i}") for i, b in enumerate(bodies))


def executes(n: int, width: int = 16) -> str:
    """Executes ra0..ra<n-1> on exclusive paths (if / else if ...)."""
    target = "md.r" if width == 32 else f"md.r{width}"
    return " else ".join(f"if (hdr.h.a8 == {i}) {{ {target} = ra{i}.execute(0); }}"
                         for i in range(n))


def test_four_register_actions_per_register(tmp_path: Path) -> None:
    four = actions_on("r16", [f"value = {i};" for i in range(4)])
    assert compile_error(tmp_path, four, executes(4)) is None
    five = actions_on("r16", [f"value = {i};" for i in range(5)])
    got = compile_error(tmp_path, five, executes(5))
    assert got is not None and "executed by 5 RegisterActions" in got


def test_unexecuted_register_actions_do_not_count(tmp_path: Path) -> None:
    five = actions_on("r16", [f"value = {i};" for i in range(5)])
    assert compile_error(tmp_path, five, executes(4)) is None


def test_two_field_inputs_per_register(tmp_path: Path) -> None:
    two = actions_on("r16", ["value = hdr.h.a16;", "value = value + hdr.h.b16;"])
    assert compile_error(tmp_path, two, executes(2)) is None
    three = actions_on("r16", ["value = hdr.h.a16;", "value = hdr.h.b16;",
                               "if (md.flag) { value = 1; }"])
    got = compile_error(tmp_path, three, executes(3))
    assert got is not None and "read three fields (hdr.h.a16, hdr.h.b16, md.flag)" in got


def test_two_wide_inputs_do_not_fit_a_32_bit_alu(tmp_path: Path) -> None:
    wide = actions_on("r32", ["value = hdr.h.a32;", "value = hdr.h.b32;"], 32)
    got = compile_error(tmp_path, wide, executes(2, 32))
    assert got is not None and "do not fit the 51-bit input" in got
    narrow = actions_on("r32", ["value = hdr.h.a32;", "value = value + (bit<32>)hdr.h.a16;"], 32)
    assert compile_error(tmp_path, narrow, executes(2, 32)) is None


def test_four_large_constants_per_register(tmp_path: Path) -> None:
    four = actions_on("r16", ["value = 100;", "value = 200;", "value = 300;", "value = 7;"])
    assert compile_error(tmp_path, four, executes(4)) is None
    five = actions_on("r16", ["value = 100;", "value = 200;",
                              "if (value == 300) { value = 400; }", "value = 500;"])
    got = compile_error(tmp_path, five, executes(4))
    assert got is not None and "5 constants outside [-8, 7]" in got


SUB_CONTROL = """
Register<bit<16>, bit<16>>(64) shared;
control Sub(inout md_t md) {
    RegisterAction<bit<16>, bit<16>, bit<16>>(shared) up = {
        void apply(inout bit<16> value) { value = value + 1; }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(shared) down = {
        void apply(inout bit<16> value) { value = value - 1; }
    };
    apply { if (md.flag) { up.execute(0); } else { down.execute(0); } }
}
"""


@pytest.mark.parametrize(("instances", "ok"), [(2, True), (3, False)])
def test_register_actions_count_per_control_instance(
    tmp_path: Path, instances: int, ok: bool
) -> None:
    # p4c inlines each instance of Sub: each has its own two RegisterActions on `shared`.
    locals_ = "".join(f"Sub() s{i};\n" for i in range(instances))
    body = " else ".join(f"if (hdr.h.a8 == {i}) {{ s{i}.apply(md); }}" for i in range(instances))
    path = tmp_path / "prog.p4"
    text = PROGRAM.replace("control I(", SUB_CONTROL + "control I(", 1)
    path.write_text(text.replace("LOCALS", locals_).replace("BODY", body))
    if ok:
        compile_file(path)
        return
    with pytest.raises(P4Error) as info:
        compile_file(path)
    assert "register 'shared' is executed by 6 RegisterActions" in str(info.value)
    assert "I.s2.up" in str(info.value)
