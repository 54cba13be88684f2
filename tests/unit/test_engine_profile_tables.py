"""Tables with an action profile or selector, where STF cannot reach: the selector's hash input
and switch (t.apply().action_run) on hits and misses, as BMv2 runs them."""

from __future__ import annotations

from pathlib import Path

from softswitch.engine.switch import Switch
from softswitch.engine.tables import ExactMatch
from tests.unit.inline_programs import build_switch, ingress_program

PRELUDE = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> x; }
header opt_t { bit<8> x; }
struct headers_t { h_t h; opt_t opt; }
struct meta_t { }
"""

# a group's members in order: the hash value modulo their number picks one
DECLS = """
action_selector(HashAlgorithm.identity, 16, 16) sel;
action set_b(bit<8> v) { hdr.h.b = v; }
table t {
    key = { hdr.h.a : exact; hdr.h.c : selector; hdr.opt.x : selector; }
    actions = { set_b; }
    implementation = sel;
}
"""


def _selector_switch(tmp_path: Path) -> Switch:
    # hdr.opt is valid when hdr.h.x is 1: its x is set to 1 then
    body = "if (hdr.h.x == 1) { hdr.opt.setValid(); hdr.opt.x = 1; } t.apply();"
    sw = build_switch(tmp_path, ingress_program(PRELUDE, body, DECLS))
    prof = sw.action_profile("sel")
    group = prof.create_group()
    for v in (0x10, 0x11):
        prof.add_member_to_group(group, prof.add_member("set_b", [v]))
    sw.table("t").add_group_entry([ExactMatch(7)], group)
    return sw


def test_selector_hash_leaves_out_fields_of_invalid_headers(tmp_path: Path) -> None:
    """BMv2 hashes the selector fields as a calculation: an invalid header's field is absent
    (not a zero byte), so identity over {c, opt.x} is c alone when opt is invalid."""
    sw = _selector_switch(tmp_path)
    for c in range(6):
        # opt invalid: identity(c) % 2 picks the member (a zero byte would make it c << 8)
        out = sw.process_packet(0, bytes([7, 0, c, 0]))[0].data
        assert out[1] == 0x10 + c % 2
        # opt valid with x = 1: identity(c 01) = (c << 8) + 1, odd
        out = sw.process_packet(0, bytes([7, 0, c, 1]))[0].data
        assert out[1] == 0x11


SWITCH_BODY = """
switch (t.apply().action_run) {
    set_b: { hdr.h.c = 1; }
    default: { hdr.h.c = 2; }
}
"""

PROFILE_DECLS = """
action_profile(4) prof;
action set_b(bit<8> v) { hdr.h.b = v; }
action other() { hdr.h.b = 0x77; }
table t {
    key = { hdr.h.a : exact; }
    actions = { set_b; other; }
    implementation = prof;
}
"""


def test_action_run_switch_on_profile_table(tmp_path: Path) -> None:
    """A hit runs the member's action and its case (or default:); a miss runs no action and no
    case at all (BMv2 goes to the table's base_default_next)."""
    sw = build_switch(tmp_path, ingress_program(PRELUDE, SWITCH_BODY, PROFILE_DECLS))
    prof = sw.action_profile("prof")
    t = sw.table("t")
    t.add_member_entry([ExactMatch(1)], prof.add_member("set_b", [0x42]))
    t.add_member_entry([ExactMatch(2)], prof.add_member("other"))
    assert sw.process_packet(0, bytes([1, 0, 0, 0]))[0].data == bytes([1, 0x42, 1, 0])
    assert sw.process_packet(0, bytes([2, 0, 0, 0]))[0].data == bytes([2, 0x77, 2, 0])
    assert sw.process_packet(0, bytes([3, 0, 0, 0]))[0].data == bytes([3, 0, 0, 0])
