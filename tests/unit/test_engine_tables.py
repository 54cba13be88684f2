"""Tables and stateful externs: lookups, the control-plane API and its validation."""

from __future__ import annotations

import pytest

from softswitch.engine.switch import Switch
from softswitch.engine.tables import (
    ExactMatch,
    LpmMatch,
    OptionalMatch,
    RangeMatch,
    TernaryMatch,
)
from softswitch.errors import ControlPlaneError
from softswitch.frontend.parser import parse_file
from softswitch.frontend.typecheck import check

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> d; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_b(bit<8> v) { hdr.h.b = v; }
    action set_cd(bit<16> c, bit<32> d) { hdr.h.c = c; hdr.h.d = d; }
    action nop() { }
    %DECLS%
    apply { sm.egress_spec = 1; %BODY% }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def build(tmp_path, decls: str, body: str) -> Switch:
    path = tmp_path / "prog.p4"
    path.write_text(PROGRAM.replace("%DECLS%", decls).replace("%BODY%", body))
    return Switch(check(parse_file(str(path)), str(path)))


def pkt(a: int, b: int = 0, c: int = 0, d: int = 0) -> bytes:
    return bytes([a, b]) + c.to_bytes(2, "big") + d.to_bytes(4, "big")


def b_of(sw: Switch, data: bytes) -> int:
    return sw.process_packet(0, data)[0].data[1]


def table(kind: str, extra: str = "") -> str:
    return f"""
    table t {{
        key = {{ hdr.h.a : {kind}; {extra} }}
        actions = {{ set_b; set_cd; nop; }}
        default_action = set_b(0xDD);
        size = 4;
    }}"""


def test_exact_hit_miss_default_and_key_fields(tmp_path):
    sw = build(tmp_path, table("exact"), "t.apply();")
    t = sw.table("t")
    assert t.name == "I.t"
    assert [(f.name, f.match_kind, f.width) for f in t.key_fields] == [("hdr.h.a", "exact", 8)]
    h = t.add_entry([ExactMatch(5)], "set_b", [7])
    assert b_of(sw, pkt(5)) == 7
    assert b_of(sw, pkt(6)) == 0xDD
    t.modify_entry(h, "I.set_b", {"v": 8})
    assert b_of(sw, pkt(5)) == 8
    t.set_default_action("set_b", [1])
    assert b_of(sw, pkt(6)) == 1
    t.delete_entry(h)
    assert b_of(sw, pkt(5)) == 1


def test_lpm_longest_prefix_wins(tmp_path):
    sw = build(tmp_path, table("lpm"), "t.apply();")
    t = sw.table("I.t")
    t.add_entry([LpmMatch(0x00, 0)], "set_b", [1])
    t.add_entry([LpmMatch(0x40, 2)], "set_b", [2])
    t.add_entry([LpmMatch(0x50, 4)], "set_b", [3])
    assert [b_of(sw, pkt(a)) for a in (0x01, 0x41, 0x5F, 0x60)] == [1, 2, 3, 2]


def test_ternary_larger_priority_wins(tmp_path):
    sw = build(tmp_path, table("ternary"), "t.apply();")
    t = sw.table("t")
    t.add_entry([TernaryMatch(0x00, 0x00)], "set_b", [1], priority=1)
    t.add_entry([TernaryMatch(0x10, 0xF0)], "set_b", [2], priority=10)
    t.add_entry([TernaryMatch(0x12, 0xFF)], "set_b", [3], priority=5)
    assert [b_of(sw, pkt(a)) for a in (0x00, 0x1F, 0x12)] == [1, 2, 2]


def test_range_and_optional_keys(tmp_path):
    sw = build(tmp_path, table("range", "hdr.h.b : optional;"), "t.apply();")
    t = sw.table("t")
    t.add_entry([RangeMatch(10, 20), OptionalMatch(None)], "set_cd", [1, 0], priority=1)
    t.add_entry([RangeMatch(15, 15), OptionalMatch(3)], "set_cd", [2, 0], priority=2)
    def c_of(data: bytes) -> int:
        return int.from_bytes(sw.process_packet(0, data)[0].data[2:4], "big")
    assert c_of(pkt(12, 3)) == 1
    assert c_of(pkt(15, 3)) == 2
    assert c_of(pkt(15, 4)) == 1
    assert c_of(pkt(21, 3)) == 0


def test_switch_on_action_run_and_hit_miss(tmp_path):
    body = """
    switch (t.apply().action_run) {
        set_b: { hdr.h.c = 1; }
        nop: { hdr.h.c = 2; }
    }
    if (t.apply().hit) { hdr.h.d = 1; } else { hdr.h.d = 2; }
    """
    sw = build(tmp_path, table("exact"), body)
    t = sw.table("t")
    t.add_entry([ExactMatch(1)], "nop")
    out = sw.process_packet(0, pkt(1))[0].data
    assert int.from_bytes(out[2:4], "big") == 2 and out[7] == 1
    out = sw.process_packet(0, pkt(2))[0].data
    assert int.from_bytes(out[2:4], "big") == 1 and out[7] == 2


@pytest.mark.parametrize(("kind", "match", "needle"), [
    ("exact", ExactMatch(0x100), "does not fit"),
    ("lpm", LpmMatch(0x41, 4), "past the /4 prefix"),
    ("lpm", LpmMatch(0x40, 9), "prefix length"),
    ("ternary", TernaryMatch(0x11, 0xF0), "outside mask"),
    ("range", RangeMatch(9, 3), "low"),
])
def test_bad_matches_are_rejected_without_change(tmp_path, kind, match, needle):
    sw = build(tmp_path, table(kind), "t.apply();")
    t = sw.table("t")
    with pytest.raises(ControlPlaneError, match=needle) as info:
        t.add_entry([match], "set_b", [1], priority=1)
    assert "I.t" in str(info.value) and "hdr.h.a" in str(info.value)
    assert t.get_entries() == []


def test_bad_actions_and_arguments(tmp_path):
    sw = build(tmp_path, table("exact"), "t.apply();")
    t = sw.table("t")
    with pytest.raises(ControlPlaneError, match="not in its actions"):
        t.add_entry([ExactMatch(1)], "NoSuchAction")
    with pytest.raises(ControlPlaneError, match="takes 1 arguments"):
        t.add_entry([ExactMatch(1)], "set_b", [1, 2])
    with pytest.raises(ControlPlaneError, match="does not fit"):
        t.add_entry([ExactMatch(1)], "set_cd", [0x10000, 1])
    with pytest.raises(ControlPlaneError, match="has 1 key fields"):
        t.add_entry([ExactMatch(1), ExactMatch(2)], "nop")
    t.add_entry([ExactMatch(1)], "nop")
    with pytest.raises(ControlPlaneError, match="duplicate"):
        t.add_entry([ExactMatch(1)], "nop")
    with pytest.raises(ControlPlaneError, match="no entry"):
        t.delete_entry(99)
    assert len(t.get_entries()) == 1


def test_size_limit_and_ternary_needs_priority(tmp_path):
    sw = build(tmp_path, table("ternary"), "t.apply();")
    t = sw.table("t")
    with pytest.raises(ControlPlaneError, match="priority"):
        t.add_entry([TernaryMatch(1, 0xFF)], "nop")
    for i in range(4):
        t.add_entry([TernaryMatch(i, 0xFF)], "nop", priority=1)
    with pytest.raises(ControlPlaneError, match="full"):
        t.add_entry([TernaryMatch(9, 0xFF)], "nop", priority=1)


def test_const_entries_and_const_default(tmp_path):
    decls = """
    table t {
        key = { hdr.h.a : ternary; }
        actions = { set_b; }
        const default_action = set_b(0x77);
        const entries = {
            0x01 &&& 0xFF : set_b(1);
            0x00 &&& 0xF0 : set_b(2);
            _ : set_b(3);
        }
    }"""
    sw = build(tmp_path, decls, "t.apply();")
    assert [b_of(sw, pkt(a)) for a in (0x01, 0x02, 0x10)] == [1, 2, 3]
    t = sw.table("t")
    with pytest.raises(ControlPlaneError, match="const"):
        t.add_entry([TernaryMatch(5, 0xFF)], "set_b", [1], priority=100)
    with pytest.raises(ControlPlaneError, match="const default"):
        t.set_default_action("set_b", [1])


def test_counters_registers_and_direct_counter(tmp_path):
    decls = """
    counter(8, CounterType.packets_and_bytes) cnt;
    register<bit<16>>(4) reg;
    direct_counter(CounterType.packets) dc;
    action count_it() { dc.count(); }
    table t { key = { hdr.h.a : exact; } actions = { count_it; } counters = dc; }
    """
    body = """
    cnt.count((bit<32>) hdr.h.a);
    bit<16> v;
    reg.read(v, 1);
    v = v + hdr.h.c;
    reg.write(1, v);
    hdr.h.c = v;
    t.apply();
    """
    sw = build(tmp_path, decls, body)
    h = sw.table("t").add_entry([ExactMatch(3)], "count_it")
    outs = [sw.process_packet(0, pkt(3, 0, 5) + b"xx")[0].data for _ in range(3)]
    assert [int.from_bytes(o[2:4], "big") for o in outs] == [5, 10, 15]
    assert sw.counter("cnt").read(3) == (3, 30)
    assert sw.register("reg").read(1) == 15
    sw.process_packet(0, pkt(9))  # miss: not counted; index 9 is out of the counter's range
    assert sw.direct_counter("dc").read(h) == (3, 30)
    sw.register("I.reg").write(1, 100)
    assert int.from_bytes(sw.process_packet(0, pkt(3, 0, 1))[0].data[2:4], "big") == 101
    with pytest.raises(ControlPlaneError):
        sw.register("reg").write(4, 1)


def test_meter_colours(tmp_path):
    decls = "meter(2, MeterType.packets) mt;"
    body = "bit<2> color; mt.execute_meter(0, color); hdr.h.b = (bit<8>) color;"
    sw = build(tmp_path, decls, body)
    assert b_of(sw, pkt(0)) == 0  # unconfigured meter: green
    # committed 0 packets, burst 1; peak burst 2 → GREEN, YELLOW, RED within one instant
    sw.meter("mt").meter(0).set_rates_per_us(0.000001, 1, 0.000001, 2)
    colours = [b_of(sw, pkt(0)) for _ in range(3)]
    assert colours == [0, 1, 2]


def test_action_selector_groups_and_members(tmp_path):
    decls = """
    action_selector(HashAlgorithm.crc16, 32w16, 32w14) sel;
    table t {
        key = { hdr.h.a : exact; hdr.h.d : selector; }
        actions = { set_b; nop; }
        implementation = sel;
    }"""
    sw = build(tmp_path, decls, "t.apply();")
    t = sw.table("t")
    prof = sw.action_profile("sel")
    m1 = prof.add_member("set_b", [1])
    m2 = prof.add_member("set_b", [2])
    g = prof.create_group()
    prof.add_member_to_group(g, m1)
    prof.add_member_to_group(g, m2)
    t.add_group_entry([ExactMatch(1)], g)
    t.add_member_entry([ExactMatch(2)], m2)
    assert b_of(sw, pkt(2)) == 2
    seen = {b_of(sw, pkt(1, 0, 0, d)) for d in range(32)}
    assert seen == {1, 2}
    # the same flow always picks the same member
    assert len({b_of(sw, pkt(1, 0, 0, 12345)) for _ in range(5)}) == 1
    with pytest.raises(ControlPlaneError, match="add_member_entry"):
        t.add_entry([ExactMatch(3)], "set_b", [1])
    with pytest.raises(ControlPlaneError, match="in group"):
        prof.delete_member(m1)
