"""Entries declared in the program, as p4c's BMv2 back end and BMv2 treat them: initial
entries are immutable like const ones; tables with an action profile get neither entries nor a
default action; BMv2's entry priorities (``@priority`` or the position)."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.engine.switch import Switch
from softswitch.engine.tables import ExactMatch, TernaryMatch
from softswitch.errors import ControlPlaneError
from softswitch.frontend.parser import parse_file
from softswitch.frontend.typecheck import check

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_b(bit<8> v) { hdr.h.b = v; }
    %DECLS%
    apply { sm.egress_spec = 1; t.apply(); }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def build(tmp_path: Path, decls: str) -> Switch:
    path = tmp_path / "prog.p4"
    path.write_text(PROGRAM.replace("%DECLS%", decls))
    return Switch(check(parse_file(str(path)), str(path)))


def b_of(sw: Switch, a: int) -> int:
    return sw.process_packet(0, bytes([a, 0]))[0].data[1]


@pytest.mark.parametrize("const", ["const ", ""])
def test_program_entries_are_immutable(tmp_path: Path, const: str) -> None:
    sw = build(
        tmp_path,
        f"""
    table t {{
        key = {{ hdr.h.a : exact; }}
        actions = {{ set_b; }}
        {const}entries = {{ 1 : set_b(0x11); }}
    }}""",
    )
    t = sw.table("t")
    assert b_of(sw, 1) == 0x11
    word = "const entries" if const else "initial entries, which BMv2 makes immutable"
    (handle,) = t.entries
    for change in (
        lambda: t.add_entry([ExactMatch(2)], "set_b", [2]),
        lambda: t.modify_entry(handle, "set_b", [3]),
        lambda: t.delete_entry(handle),
        t.clear,
    ):
        with pytest.raises(ControlPlaneError, match=word):
            change()
    assert b_of(sw, 1) == 0x11
    t.set_default_action("set_b", [0x22])  # the default entry is not one of them
    assert b_of(sw, 2) == 0x22


def test_profile_table_starts_empty_and_mutable(tmp_path: Path) -> None:
    sw = build(
        tmp_path,
        """
    action_profile(4) prof;
    table t {
        key = { hdr.h.a : exact; }
        actions = { set_b; }
        implementation = prof;
        const entries = { 1 : set_b(0x11); }
        const default_action = set_b(0x99);
    }""",
    )
    t = sw.table("t")
    assert t.entries == {} and t.default.action == ""
    assert b_of(sw, 1) == 0 and b_of(sw, 2) == 0  # a miss runs no action
    member = sw.action_profile("prof").add_member("set_b", [0x33])
    t.add_member_entry([ExactMatch(1)], member)
    assert b_of(sw, 1) == 0x33


def test_bmv2_priorities_of_ternary_entries(tmp_path: Path) -> None:
    sw = build(
        tmp_path,
        """
    table t {
        key = { hdr.h.a : ternary; }
        actions = { set_b; }
        entries = {
            priority = 1 : 0x00 &&& 0x00 : set_b(1);
            priority = 9 : 0x05 &&& 0xff : set_b(2);
            0x05 &&& 0x0f : set_b(3) @priority(0);
        }
        largest_priority_wins = true;
    }""",
    )
    prio = {e.args[0]: e.priority for e in sw.table("t").entries.values()}
    # BMv2 priorities 1, 2 (positions), 0 (@priority): the smallest wins
    assert prio[3] > prio[1] > prio[2]
    assert b_of(sw, 5) == 3 and b_of(sw, 0x15) == 3 and b_of(sw, 6) == 1
    assert sw.table("t").find_entry([TernaryMatch(5, 0x0F)], prio[3]) is not None
