"""Forms p4c-bm2-ss compiles (issue 25), seen from the control plane: the P4Info p4c writes for
them and a value set filled through the switch."""

from __future__ import annotations

from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2

from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch
from softswitch.p4info import build_p4info

PROGRAMS = Path(__file__).resolve().parent.parent / "p4"


def match_fields(table: p4info_pb2.Table) -> list[tuple[int, str, int]]:
    return [(m.id, m.name, m.bitwidth) for m in table.match_fields]


def test_one_element_list_key_is_its_element() -> None:
    (t,) = build_p4info(compile_file(PROGRAMS / "key_list_enum_index.p4")).tables
    assert match_fields(t) == [(1, "hdr.s[0].a", 8)]


def test_key_inside_a_struct_field_of_a_header() -> None:
    (t,) = build_p4info(compile_file(PROGRAMS / "header_struct_field.p4")).tables
    assert match_fields(t) == [(1, "hdr.h.row.e", 8)]


def test_selector_key_without_implementation_is_no_match_field() -> None:
    (t,) = build_p4info(compile_file(PROGRAMS / "selector_no_implementation.p4")).tables
    # the selector key keeps its id (1): the exact key after it is 2
    assert match_fields(t) == [(2, "hdr.h.a", 8)]
    assert t.implementation_id == 0


def test_value_set_of_a_one_field_struct_matches_a_bit_key() -> None:
    checked = compile_file(PROGRAMS / "value_set_struct_key.p4")
    (vs,) = build_p4info(checked).value_sets
    assert [(m.id, m.name, m.bitwidth) for m in vs.match] == [(1, "ab", 16)]
    switch = Switch(checked)
    switch.value_set("P.pvs").add([0x1234])
    # a member matches before the constant case; other values still take the default
    (out,) = switch.process_packet(0, bytes.fromhex("123400"))
    assert out.data == bytes.fromhex("123401")
    (out,) = switch.process_packet(0, bytes.fromhex("567800"))
    assert out.data == bytes.fromhex("567800")
