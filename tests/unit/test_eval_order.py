"""Evaluation order and side effects in generated code: what STF cannot show (no temporaries on
the common path, the side-effect predicate, compound assignments through the IR JSON) and an
exit while an argument is evaluated."""

from __future__ import annotations

import re

from inline_programs import build_switch, ingress_program

from softswitch.engine.codegen_expr import has_side_effects
from softswitch.frontend import ast
from softswitch.ir.serialize import dumps_ir, loads_ir

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }
"""

TOP = """
bit<8> inc(inout bit<8> x) { x = x + 1; return x; }
"""

# temporaries the generator adds only for side effects or run-time stack indices
ORDER_TEMPS = re.compile(r"\b_(?:o|b|q|ix|e)\d+\b")


def ingress_source(sw) -> str:
    src = sw.generated_source
    # the ingress block is the control applying sm.egress_spec = 1
    return next(f for f in src.split("\ndef ") if "egress_spec = 1" in f)


def statements(checked) -> list[ast.AssignmentStatement]:
    """The test body's assignments (after the pipeline's `sm.egress_spec = 1`)."""
    ingress = checked.blocks["ingress"].decl
    return [s for s in ingress.body.statements if isinstance(s, ast.AssignmentStatement)][1:]


def test_no_temporaries_without_side_effects(tmp_path):
    body = """
    hdr.h.a = hdr.h.b + hdr.h.c * 2;
    hdr.h.b = (hdr.h.a == 1 && hdr.h.c != 2) ? hdr.h.c : hdr.h.d;
    hdr.h.c += hdr.h.d;
    if (hdr.h.isValid() || hdr.h.d == 0) { hdr.h.d = 7; }
    """
    sw = build_switch(tmp_path, ingress_program(PROGRAM, body))
    assert not ORDER_TEMPS.search(ingress_source(sw))
    out = sw.process_packet(0, bytes([0, 2, 3, 4]))
    # a = 2 + 6; a != 1 so b = d; c = 3 + 4; isValid: d = 7
    assert out[0].data == bytes([8, 4, 7, 7])


def test_side_effect_predicate(tmp_path):
    body = """
    hdr.h.a = hdr.h.b + 1;
    hdr.h.b = inc(hdr.h.c);
    hdr.h.c = hdr.h.isValid() ? 8w1 : 8w0;
    hdr.h.d = (hdr.h.a == 0 && inc(meta.m) == 1) ? 8w1 : 8w0;
    """
    sw = build_switch(tmp_path, ingress_program(PROGRAM, body, top=TOP))
    rhs = [s.rhs for s in statements(sw.program)]
    assert [has_side_effects(e) for e in rhs] == [False, True, False, True]


def test_compound_assignment_kept_through_ir_json(tmp_path):
    body = "hdr.h.a |+|= 200; hdr.h.b >>= 1; hdr.h.c = 1;"
    sw = build_switch(tmp_path, ingress_program(PROGRAM, body))
    ops = [s.compound for s in statements(sw.program)]
    assert ops == ["|+|", ">>", ""]
    again = loads_ir(dumps_ir(sw.program))
    assert [s.compound for s in statements(again)] == ops


def test_exit_while_evaluating_an_argument_skips_the_call(tmp_path):
    decls = """
    action bye() { exit; }
    action set_b(bit<8> v) { hdr.h.b = v; }
    table t { key = { } actions = { bye; } default_action = bye(); }
    """
    body = "hdr.h.a = 5; set_b(t.apply().hit ? 8w1 : 8w2); hdr.h.c = 9;"
    sw = build_switch(tmp_path, ingress_program(PROGRAM, body, decls))
    out = sw.process_packet(0, bytes([0, 0, 0, 0]))
    # the table's action exits: set_b never runs, nor does anything after it
    assert out[0].data == bytes([5, 0, 0, 0])
