"""P4Info generation: ids, aliases and messages compared with what p4c writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from softswitch.errors import P4TypeError, UnsupportedError
from softswitch.frontend.parser import parse_file
from softswitch.frontend.typecheck import check
from softswitch.p4info import build_p4info
from softswitch.p4info.ids import (
    Prefix,
    SuffixSet,
    SymbolTable,
    allocate_field_ids,
    hashed_id,
    jenkins_one_at_a_time,
)

# ---------------------------------------------------------------------------------------------
# helpers

_SKELETON = """
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control VC(inout H h, inout M m) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

_PRELUDE = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
"""


def compile_p4info(tmp_path: Path, body: str, *, skeleton: bool = True) -> p4info_pb2.P4Info:
    source = _PRELUDE + body + (_SKELETON if skeleton else "")
    path = tmp_path / "prog.p4"
    path.write_text(source)
    return build_p4info(check(parse_file(path), str(path)))


def expect(text: str) -> p4info_pb2.P4Info:
    return text_format.Parse(text, p4info_pb2.P4Info())


def by_name(items: Any, name: str) -> Any:
    """The one entity of a repeated P4Info field with this preamble name."""
    matches = [item for item in items if item.preamble.name == name]
    assert len(matches) == 1, [item.preamble.name for item in items]
    return matches[0]


def assert_same(actual: p4info_pb2.P4Info, expected: p4info_pb2.P4Info) -> None:
    assert text_format.MessageToString(actual) == text_format.MessageToString(expected)


# ---------------------------------------------------------------------------------------------
# ids and aliases


def test_ids_reproduce_the_verified_p4c_examples() -> None:
    assert hashed_id(Prefix.TABLE, "I.fwd") == 48161625
    assert hashed_id(Prefix.ACTION, "I.set_port") == 20190073
    assert hashed_id(Prefix.DIRECT_COUNTER, "I.fwd_ctr") == 330173794


def test_jenkins_one_at_a_time_reference_values() -> None:
    assert jenkins_one_at_a_time(b"a") == 0xCA2E9442
    assert jenkins_one_at_a_time(b"The quick brown fox jumps over the lazy dog") == 0x519E91F5


def test_collision_probes_the_hash_not_the_id() -> None:
    symbols = SymbolTable()
    taken = hashed_id(Prefix.TABLE, "c.t")
    symbols.add(Prefix.TABLE, "c.other", user_id=taken)  # @id occupying t's natural id
    symbols.add(Prefix.TABLE, "c.t")
    symbols.assign_ids()
    h = jenkins_one_at_a_time(b"c.t")
    assert symbols.id(Prefix.TABLE, "c.other") == taken
    assert symbols.id(Prefix.TABLE, "c.t") == (0x02 << 24) | ((h + 1) & 0xFFFFFF)


def test_collisions_are_resolved_in_name_order() -> None:
    # Two symbols forced onto the same slot by @id: the lexically first name probes first.
    symbols = SymbolTable()
    a, b = "x.b", "x.a"
    symbols.add(Prefix.ACTION, "blocker1", user_id=hashed_id(Prefix.ACTION, a))
    symbols.add(Prefix.ACTION, a)
    symbols.add(Prefix.ACTION, b)
    symbols.assign_ids()
    ids = {symbols.id(Prefix.ACTION, n) for n in (a, b, "blocker1")}
    assert len(ids) == 3
    assert symbols.id(Prefix.ACTION, b) == hashed_id(Prefix.ACTION, b)


def test_user_id_gets_the_prefix_and_is_checked() -> None:
    symbols = SymbolTable()
    symbols.add(Prefix.TABLE, "t1", user_id=7)
    symbols.add(Prefix.TABLE, "t2", user_id=0x02000008)
    assert symbols.id(Prefix.TABLE, "t1") == 0x02000007
    assert symbols.id(Prefix.TABLE, "t2") == 0x02000008
    with pytest.raises(P4TypeError, match="wrong 8-bit prefix"):
        SymbolTable().add(Prefix.TABLE, "t", user_id=0x01000001)
    dup = SymbolTable()
    dup.add(Prefix.COUNTER, "a", user_id=3)
    with pytest.raises(P4TypeError, match="multiple declarations"):
        dup.add(Prefix.COUNTER, "b", user_id=3)


def test_alias_is_the_shortest_unique_suffix() -> None:
    suffixes = SuffixSet()
    for name in ("a.b.c", "b.c", "a.d.c", "x.y"):
        suffixes.add(name)
    assert suffixes.shortest_unique_suffix("a.b.c") == "a.b.c"
    assert suffixes.shortest_unique_suffix("b.c") == "b.c"
    assert suffixes.shortest_unique_suffix("a.d.c") == "d.c"
    assert suffixes.shortest_unique_suffix("x.y") == "y"


def test_field_ids_take_user_ids_first() -> None:
    assert allocate_field_ids([None, None, None]) == [1, 2, 3]
    assert allocate_field_ids([None, 5, None]) == [1, 5, 2]
    assert allocate_field_ids([None, 1, None]) == [2, 1, 3]
    with pytest.raises(P4TypeError):
        allocate_field_ids([2, 2])


# ---------------------------------------------------------------------------------------------
# whole programs


_FORWARDING = """
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    direct_counter(CounterType.packets_and_bytes) fwd_ctr;
    action set_port(bit<9> port) { s.egress_spec = port; }
    action drop() { mark_to_drop(s); }
    table fwd {
        key = { h.eth.dst : exact; s.ingress_port : ternary; }
        actions = { set_port; drop; }
        default_action = drop();
        counters = fwd_ctr;
    }
    apply { fwd.apply(); }
}
"""


def test_forwarding_program_matches_p4c(tmp_path: Path) -> None:
    drop = hashed_id(Prefix.ACTION, "I.drop")
    expected = expect(f"""
        pkg_info {{ arch: "v1model" }}
        tables {{
          preamble {{ id: 48161625 name: "I.fwd" alias: "fwd" }}
          match_fields {{ id: 1 name: "h.eth.dst" bitwidth: 48 match_type: EXACT }}
          match_fields {{ id: 2 name: "s.ingress_port" bitwidth: 9 match_type: TERNARY }}
          action_refs {{ id: 20190073 }}
          action_refs {{ id: {drop} }}
          initial_default_action {{ action_id: {drop} }}
          direct_resource_ids: 330173794
          size: 1024
        }}
        actions {{
          preamble {{ id: 20190073 name: "I.set_port" alias: "set_port" }}
          params {{ id: 1 name: "port" bitwidth: 9 }}
        }}
        actions {{ preamble {{ id: {drop} name: "I.drop" alias: "drop" }} }}
        direct_counters {{
          preamble {{ id: 330173794 name: "I.fwd_ctr" alias: "fwd_ctr" }}
          spec {{ unit: BOTH }}
          direct_table_id: 48161625
        }}
        type_info {{ }}
    """)
    assert_same(compile_p4info(tmp_path, _FORWARDING), expected)


# p4c's testdata/p4_16_samples/action_profile-bmv2.p4, ported; its expected P4Info is what
# p4c writes (testdata/p4_16_samples_outputs/...p4info.txtpb), minus the @corelib annotation
# that only newer p4c core.p4 files put on NoAction.
_ACTION_PROFILE = """
struct H { }
struct M { bit<32> hash1; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { transition accept; }
}
action empty() { }
control I(inout H h, inout M meta, inout standard_metadata_t smeta) {
    action drop() { mark_to_drop(smeta); }
    table indirect {
        key = { }
        actions = { drop; NoAction; }
        const default_action = NoAction();
        @name("ap") implementation = action_profile(32w128);
    }
    table indirect_ws {
        key = { meta.hash1 : selector; }
        actions = { drop; NoAction; }
        const default_action = NoAction();
        @name("ap_ws") implementation = action_selector(HashAlgorithm.identity, 32w1024, 32w10);
    }
    apply { indirect.apply(); indirect_ws.apply(); }
}
"""


def test_action_profile_sample_matches_p4c(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, _ACTION_PROFILE)
    indirect = hashed_id(Prefix.TABLE, "I.indirect")
    indirect_ws = hashed_id(Prefix.TABLE, "I.indirect_ws")
    drop = hashed_id(Prefix.ACTION, "I.drop")
    expected = expect(f"""
        pkg_info {{ arch: "v1model" }}
        tables {{
          preamble {{ id: {indirect} name: "I.indirect" alias: "indirect" }}
          action_refs {{ id: {drop} }}
          action_refs {{ id: 21257015 }}
          const_default_action_id: 21257015
          initial_default_action {{ action_id: 21257015 }}
          implementation_id: 294074782
          size: 1024
        }}
        tables {{
          preamble {{ id: {indirect_ws} name: "I.indirect_ws" alias: "indirect_ws" }}
          action_refs {{ id: {drop} }}
          action_refs {{ id: 21257015 }}
          const_default_action_id: 21257015
          initial_default_action {{ action_id: 21257015 }}
          implementation_id: 300324846
          size: 1024
        }}
        actions {{
          preamble {{ id: 21257015 name: "NoAction" alias: "NoAction"
                     annotations: "@noWarn(\\"unused\\")" }}
        }}
        actions {{ preamble {{ id: {drop} name: "I.drop" alias: "drop" }} }}
        action_profiles {{
          preamble {{ id: 294074782 name: "ap" alias: "ap" }}
          table_ids: {indirect}
          size: 128
        }}
        action_profiles {{
          preamble {{ id: 300324846 name: "ap_ws" alias: "ap_ws" }}
          table_ids: {indirect_ws}
          with_selector: true
          size: 1024
        }}
        type_info {{ }}
    """)
    assert_same(p4info, expected)


def test_shared_selector_lists_tables_by_name_and_group_size(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, """
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    @max_group_size(16) @my_note
    action_selector(HashAlgorithm.crc16, 32w256, 32w14) sel;
    action set_port(bit<9> port) { s.egress_spec = port; }
    table zeta { key = { h.eth.dst : exact; h.eth.src : selector; }
                 actions = { set_port; } implementation = sel; }
    table alpha { key = { h.eth.etype : exact; h.eth.src : selector; }
                  actions = { set_port; } implementation = sel; }
    apply { zeta.apply(); alpha.apply(); }
}
""")
    profile = by_name(p4info.action_profiles, "I.sel")
    assert profile.with_selector and profile.size == 256 and profile.max_group_size == 16
    assert list(profile.table_ids) == [hashed_id(Prefix.TABLE, "I.alpha"),
                                       hashed_id(Prefix.TABLE, "I.zeta")]
    assert list(profile.preamble.annotations) == ["@my_note"]
    for table in p4info.tables:
        assert table.implementation_id == profile.preamble.id
        assert [f.name for f in table.match_fields] in (["h.eth.dst"], ["h.eth.etype"])


def test_anonymous_in_place_implementation_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match="no @name"):
        compile_p4info(tmp_path, """
struct H { }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action a() { }
    table t { actions = { a; } implementation = action_profile(32w4); }
    apply { t.apply(); }
}
""")


_NAMES = """
struct H { eth_t eth; }
struct M { bit<16> x; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control Sub(inout H h, inout M m) {
    action set_x(bit<16> v) { m.x = v; }
    table t { key = { h.eth.dst : exact; } actions = { set_x; } }
    apply { t.apply(); }
}
action global_act(bit<8> a) { }
@name(".top_named") action renamed_global() { }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    Sub() sub;
    Sub() never_applied;
    @name("renamed") action foo(@id(4) bit<8> a, bool b) { }
    @hidden action hid() { }
    action unused() { }
    action called_directly() { m.x = 1; }
    @id(7) @my_anno(1, "two") @brief("tagged table")
    table tagged {
        key = { h.eth.src : exact @name("mac"); h.eth.isValid() : exact; h.eth.etype[15:8] : lpm; }
        actions = { foo; global_act; renamed_global; }
        const default_action = foo(8w3, true);
    }
    table unused_table { key = { m.x : exact; } actions = { unused; } }
    @hidden table hidden_t { actions = { hid; } default_action = hid(); }
    apply {
        sub.apply(h, m);
        tagged.apply();
        hidden_t.apply();
        called_directly();
    }
}
"""


def test_names_ids_hidden_and_removed_objects(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, _NAMES)
    assert [t.preamble.name for t in p4info.tables] == ["I.sub.t", "I.tagged"]
    # localized top-level actions first (first use order), then the control's own, in place;
    # an action the apply block calls is listed too (p4c lists every unhidden action the
    # frontend keeps)
    assert [a.preamble.name for a in p4info.actions] == [
        "NoAction", "global_act", "top_named", "I.sub.set_x", "I.renamed", "I.called_directly"]
    tagged = by_name(p4info.tables, "I.tagged")
    assert tagged.preamble.id == 0x02000007
    assert list(tagged.preamble.annotations) == ['@my_anno(1 , "two")']
    assert tagged.preamble.doc.brief == "tagged table"
    assert [(f.id, f.name, f.bitwidth, f.match_type) for f in tagged.match_fields] == [
        (1, "mac", 48, p4info_pb2.MatchField.EXACT),
        (2, "h.eth.$valid$", 1, p4info_pb2.MatchField.EXACT),
        (3, "h.eth.etype[15:8]", 8, p4info_pb2.MatchField.LPM),
    ]
    foo = by_name(p4info.actions, "I.renamed")
    assert [(p.id, p.name, p.bitwidth) for p in foo.params] == [(4, "a", 8), (2, "b", 1)]
    assert tagged.const_default_action_id == foo.preamble.id
    args = tagged.initial_default_action.arguments
    assert [(a.param_id, a.value) for a in args] == [(4, b"\x03"), (2, b"\x01")]
    sub_t = by_name(p4info.tables, "I.sub.t")
    assert sub_t.preamble.alias == "t"
    noaction = sub_t.action_refs[-1]
    assert noaction.id == 21257015 and noaction.scope == p4info_pb2.ActionRef.DEFAULT_ONLY
    assert list(noaction.annotations) == ["@defaultonly"]
    assert sub_t.initial_default_action.action_id == 21257015


def test_complex_key_without_name_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(P4TypeError, match="@name"):
        compile_p4info(tmp_path, """
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action a() { }
    table t { key = { h.eth.etype + 1 : exact; } actions = { a; } }
    apply { t.apply(); }
}
""")


_PACKET_IO = """
@p4runtime_translation("p4.org/psa/v1/PortId_t", 32)
type bit<9> port_id_t;
@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; @id(5) bit<7> _pad; }
@controller_header("packet_out")
header packet_out_t { port_id_t egress_port; @hidden bit<7> _pad; }
struct H { packet_in_t pin; packet_out_t pout; eth_t eth; }
struct M { }
struct learn_t { bit<48> src; bit<9> port; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action learn() { digest<learn_t>(1, {h.eth.src, s.ingress_port}); }
    action to_port(port_id_t port) { s.egress_spec = (bit<9>)port; }
    table t { key = { h.eth.src : exact; } actions = { learn; to_port; } }
    apply {
        t.apply();
        digest<learn_t>(1, {h.eth.dst, s.ingress_port});
    }
}
"""


def test_controller_headers_digests_and_new_types(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, _PACKET_IO)
    expected = expect(f"""
        controller_packet_metadata {{
          preamble {{ id: {hashed_id(Prefix.CONTROLLER_HEADER, "packet_in_t")}
                     name: "packet_in" alias: "packet_in"
                     annotations: "@controller_header(\\"packet_in\\")" }}
          metadata {{ id: 1 name: "ingress_port" bitwidth: 9 }}
          metadata {{ id: 5 name: "_pad" bitwidth: 7 }}
        }}
        controller_packet_metadata {{
          preamble {{ id: {hashed_id(Prefix.CONTROLLER_HEADER, "packet_out_t")}
                     name: "packet_out" alias: "packet_out"
                     annotations: "@controller_header(\\"packet_out\\")" }}
          metadata {{ id: 1 name: "egress_port" bitwidth: 32 type_name {{ name: "port_id_t" }} }}
        }}
        digests {{
          preamble {{ id: {hashed_id(Prefix.DIGEST, "learn_t")} name: "learn_t"
                     alias: "learn_t" }}
          type_spec {{ struct {{ name: "learn_t" }} }}
        }}
        type_info {{
          structs {{
            key: "learn_t"
            value {{
              members {{ name: "src" type_spec {{ bitstring {{ bit {{ bitwidth: 48 }} }} }} }}
              members {{ name: "port" type_spec {{ bitstring {{ bit {{ bitwidth: 9 }} }} }} }}
            }}
          }}
          new_types {{
            key: "port_id_t"
            value {{ translated_type {{ uri: "p4.org/psa/v1/PortId_t" sdn_bitwidth: 32 }} }}
          }}
        }}
    """)
    got = p4info_pb2.P4Info()
    got.controller_packet_metadata.extend(p4info.controller_packet_metadata)
    got.digests.extend(p4info.digests)
    got.type_info.CopyFrom(p4info.type_info)
    assert_same(got, expected)
    to_port = by_name(p4info.actions, "I.to_port")
    assert to_port.params[0].bitwidth == 32 and to_port.params[0].type_name.name == "port_id_t"


def test_externs_value_sets_and_table_properties(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, """
enum bit<8> Color { RED = 1, GREEN = 2 }
struct H { eth_t eth; }
struct M { bit<32> idx; }
struct pvs_t { bit<16> etype; @match(ternary) bit<8> b; }
counter(32w4, CounterType.packets) global_ctr;
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    value_set<bit<16>>(4) pvs;
    value_set<pvs_t>(8) pvs2;
    value_set<bit<8>>(2) unused_pvs;
    state start {
        pk.extract(h.eth);
        transition select(h.eth.etype) { pvs: next; default: accept; }
    }
    state next {
        transition select(h.eth.etype, h.eth.src[7:0]) { pvs2: accept; default: accept; }
    }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    counter(32w64, CounterType.packets_and_bytes) pkt_ctr;
    @id(0x12000007) counter(8, CounterType.bytes) byte_ctr;
    meter(16, MeterType.bytes) mtr;
    direct_meter<bit<2>>(MeterType.packets) dm;
    register<bit<32>>(128) reg;
    register<Color>(2) colors;
    action paint(Color c) { }
    table t {
        key = { m.idx : range; h.eth.etype : optional; }
        actions = { paint; }
        meters = dm;
        size = 0;
        support_timeout = true;
        const entries = { (1 .. 2, 0x800) : paint(Color.RED); }
    }
    apply { t.apply(); pkt_ctr.count(0); }
}
""")
    assert [c.preamble.name for c in p4info.counters] == ["global_ctr", "I.pkt_ctr", "I.byte_ctr"]
    units = [c.spec.unit for c in p4info.counters]
    assert units == [p4info_pb2.CounterSpec.PACKETS, p4info_pb2.CounterSpec.BOTH,
                     p4info_pb2.CounterSpec.BYTES]
    assert by_name(p4info.counters, "I.byte_ctr").preamble.id == 0x12000007
    meter = by_name(p4info.meters, "I.mtr")
    assert meter.spec.unit == p4info_pb2.MeterSpec.BYTES and meter.size == 16
    table = by_name(p4info.tables, "I.t")
    assert table.size == 1024 and table.is_const_table and table.has_initial_entries
    assert table.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL
    assert [f.match_type for f in table.match_fields] == [
        p4info_pb2.MatchField.RANGE, p4info_pb2.MatchField.OPTIONAL]
    direct = by_name(p4info.direct_meters, "I.dm")
    assert list(table.direct_resource_ids) == [direct.preamble.id]
    assert direct.direct_table_id == table.preamble.id
    reg = by_name(p4info.registers, "I.colors")
    assert reg.size == 2 and reg.type_spec.serializable_enum.name == "Color"
    assert p4info.type_info.serializable_enums["Color"].members[0].value == b"\x01"
    assert [v.preamble.name for v in p4info.value_sets] == ["P.pvs", "P.pvs2"]
    pvs2 = by_name(p4info.value_sets, "P.pvs2")
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in pvs2.match] == [
        (1, "etype", 16, p4info_pb2.MatchField.EXACT),
        (2, "b", 8, p4info_pb2.MatchField.TERNARY),
    ]
    assert by_name(p4info.value_sets, "P.pvs").match[0].bitwidth == 16


def test_type_info_for_headers_enums_and_errors(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, """
error { MyErr }
enum Mode { A, B }
struct H { eth_t eth; }
struct M { }
struct dig_t { eth_t e; bool flag; int<4> s; error err; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action a(Mode md) { }
    action b() { digest<dig_t>(0, {h.eth, true, 4s1, error.NoError}); }
    table t { key = { s.parser_error : exact; } actions = { a; b; } }
    apply { t.apply(); }
}
""")
    table = by_name(p4info.tables, "I.t")
    assert table.match_fields[0].name == "s.parser_error"
    assert table.match_fields[0].bitwidth == 0  # p4c treats error keys like strings
    param = by_name(p4info.actions, "I.a").params[0]
    assert param.type_name.name == "Mode" and param.bitwidth == 0
    info = p4info.type_info
    assert [m.name for m in info.enums["Mode"].members] == ["A", "B"]
    assert list(info.error.members)[-2:] == ["ParserInvalidArgument", "MyErr"]
    assert [m.name for m in info.headers["eth_t"].members] == ["dst", "src", "etype"]
    members = {m.name: m.type_spec for m in info.structs["dig_t"].members}
    assert members["e"].header.name == "eth_t"
    assert members["flag"].HasField("bool")
    assert members["s"].bitstring.int.bitwidth == 4
    assert members["err"].HasField("error")


# ---------------------------------------------------------------------------------------------
# which actions p4c lists (issue 12): everything its frontend keeps, apply-block calls included

_ACTIONS = """
struct H { eth_t eth; }
struct M { bit<8> x; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
@name("shared") action shared_rel(inout bit<8> x) { x = 1; }
action top_direct() { }
action top_helper() { }
action top_caller() { top_helper(); }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action set_x(bit<8> v) { m.x = v; }
    action helper() { m.x = 2; }
    action calls_helper() { helper(); }
    action dead_only() { m.x = 3; }
    @hidden action hidden_direct() { m.x = 4; }
    action direct(bit<8> v) { m.x = v; }
    table t {
        key = { h.eth.etype : exact; }
        actions = { set_x; calls_helper; shared_rel(m.x); top_caller; }
    }
    apply {
        direct(7);
        t.apply();
        top_direct();
        hidden_direct();
        if (false) { dead_only(); }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t s) {
    table te { key = { m.x : exact; } actions = { shared_rel(m.x); } }
    apply { te.apply(); }
}
control VC(inout H h, inout M m) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_actions_called_from_apply_blocks_are_listed(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, _ACTIONS, skeleton=False)
    # Top-level actions first, in order of first use (the table, then the apply block); then
    # I's own kept locals in declaration order. Not listed: helper and top_helper (only called
    # from actions, which p4c inlines), dead_only (only in an if(false) branch), hidden_direct
    # (@hidden). The relative @name("shared") is per control: I.shared and E.shared.
    names = ["I.shared", "top_caller", "NoAction", "top_direct", "I.set_x", "I.calls_helper",
             "I.direct", "E.shared"]
    assert [a.preamble.name for a in p4info.actions] == names
    assert [a.preamble.id for a in p4info.actions] == [hashed_id(Prefix.ACTION, n)
                                                      for n in names]
    assert [a.preamble.alias for a in p4info.actions] == [
        "I.shared", "top_caller", "NoAction", "top_direct", "set_x", "calls_helper", "direct",
        "E.shared"]
    # called only from the apply block: p4c binds its arguments at the call, no parameters
    direct = by_name(p4info.actions, "I.direct")
    assert not direct.params
    assert [(p.id, p.name) for p in by_name(p4info.actions, "I.set_x").params] == [(1, "v")]
    t, te = p4info.tables
    assert [r.id for r in t.action_refs] == [hashed_id(Prefix.ACTION, n) for n in (
        "I.set_x", "I.calls_helper", "I.shared", "top_caller", "NoAction")]
    assert [r.id for r in te.action_refs] == [hashed_id(Prefix.ACTION, n) for n in (
        "E.shared", "NoAction")]


def test_fabric_switch_lists_its_apply_block_actions() -> None:
    root = Path(__file__).resolve().parents[2]
    source = root / "p4src" / "switch" / "srv6_switch.p4"
    p4info = build_p4info(check(parse_file(source), str(source)))
    names = [a.preamble.name for a in p4info.actions]
    behaviours = [n for n in names if n.startswith("SwitchIngress.srv6_behaviors.")]
    assert behaviours == ["SwitchIngress.srv6_behaviors.shift_usid_16",
                          "SwitchIngress.srv6_behaviors.shift_usid_32",
                          "SwitchIngress.srv6_behaviors.decap"]
    decap = by_name(p4info.actions, "SwitchIngress.srv6_behaviors.decap")
    assert decap.preamble.id == hashed_id(Prefix.ACTION, decap.preamble.name)
    assert decap.preamble.alias == "decap" and not decap.params


_INLINING = """
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { bit<8> x; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.h); transition accept; }
}
control Leaf(inout H h) {
    action set_b(bit<8> v) { h.h.b = v; }
    table leaf_t { key = { h.h.a : exact; } actions = { set_b; } }
    apply { leaf_t.apply(); }
}
control LeafT(inout H h);
control Wrap(inout H h)(LeafT inner) {
    action w() { }
    table wrap_t { key = { h.h.b : exact; } actions = { w; } }
    apply { inner.apply(h); wrap_t.apply(); }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    Leaf() existing;
    Wrap(existing) uses_existing;
    Wrap(Leaf()) builds_one;
    @name("renamed") Leaf() named_leaf;
    Leaf() never_applied;
    apply {
        Leaf.apply(h);
        uses_existing.apply(h);
        builds_one.apply(h);
        named_leaf.apply(h);
    }
}
"""


def test_tables_of_inlined_controls_are_named_and_ordered_as_p4c(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, _INLINING)
    # inlined where declared: an instance passed as a constructor argument where it is
    # declared; one constructed in the argument first in the specialised control; a direct
    # invocation Leaf.apply() as an instance @name("Leaf") appended to I's locals
    tables = ["I.existing.leaf_t", "I.uses_existing.wrap_t", "I.builds_one.inner.leaf_t",
              "I.builds_one.wrap_t", "I.renamed.leaf_t", "I.Leaf.leaf_t"]
    assert [t.preamble.name for t in p4info.tables] == tables
    assert [t.preamble.id for t in p4info.tables] == [hashed_id(Prefix.TABLE, n) for n in tables]
    actions = ["NoAction", "I.existing.set_b", "I.uses_existing.w", "I.builds_one.inner.set_b",
               "I.builds_one.w", "I.renamed.set_b", "I.Leaf.set_b"]
    assert [a.preamble.name for a in p4info.actions] == actions
    for table in p4info.tables:
        prefix = table.preamble.name.rsplit(".", 1)[0]
        own = hashed_id(Prefix.ACTION, prefix + (".set_b" if "leaf" in table.preamble.name
                                                 else ".w"))
        assert [r.id for r in table.action_refs] == [own, 21257015]


def test_engine_p4info_and_server_agree_on_action_names(tmp_path: Path) -> None:
    from softswitch.engine.switch import Switch

    path = tmp_path / "prog.p4"
    path.write_text(_PRELUDE + _ACTIONS)
    checked = check(parse_file(path), str(path))
    p4info = build_p4info(checked)
    switch = Switch(checked)
    names = {a.preamble.id: a.preamble.name for a in p4info.actions}
    for table in p4info.tables:
        engine = switch.table(table.preamble.name)
        listed = [names[r.id] for r in table.action_refs if names[r.id] != "NoAction"]
        assert [n for n in listed if n not in engine.actions] == []
    assert "I.shared" in switch.table("I.t").actions
    assert "E.shared" in switch.table("E.te").actions


_KEYS = """
header h_t { bit<8> a; bit<8> b; @name("renamed_c") bit<16> c; }
struct H { h_t h; h_t[2] s; }
struct M { bit<16> x; bit<8> i; }
const bit<16> MASK = 0x00FF;
typedef bit<16> T16;
const T16 TMASK = 0xF0;
const int W = 8;
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.h); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action a() { }
    action_selector(HashAlgorithm.crc16, 32w8, 32w4) sel;
    table t {
        key = {
            h.h.a[7:4] : exact;
            h.h.a[W-1:0x4] : exact;
            h.h.isValid() : exact;
            m.x & 0xFF : ternary;
            m.x & MASK : ternary;
            m.x & TMASK : ternary;
            m.x & 16w0b1010 : ternary;
            m.x & (bit<16>)0xF : ternary;
            h.s[1].b : exact;
            h.s[m.i].c : exact;
            h.h.a ++ h.h.b : exact @name("cat");
            (bit<16>)h.h.a : exact @name("cast");
            h.s[0].isValid() : exact;
            m.i : selector;
        }
        actions = { a; }
        implementation = sel;
    }
    apply { t.apply(); }
}
"""


def test_key_names_are_p4c_s_after_its_constant_folding(tmp_path: Path) -> None:
    table = compile_p4info(tmp_path, _KEYS).tables[0]
    assert [(f.id, f.name, f.bitwidth) for f in table.match_fields] == [
        (1, "h.h.a[7:4]", 4),
        (2, "h.h.a[7:0x4]", 4),      # W - 1 folded, written in W's base
        (3, "h.h.$valid$", 1),
        (4, "m.x & 0xff", 16),       # lowercase hex, as p4c prints constants
        (5, "m.x & 0xff", 16),       # a bit<16> constant is folded into its literal
        (6, "m.x & TMASK", 16),      # ... one of a typedef'd type is not (not typed yet)
        (7, "m.x & 0b1010", 16),     # the width is not printed
        (8, "m.x & 0xf", 16),        # a cast of a constant folds too
        (9, "h.s[1].b", 8),
        (10, "h.s[m.i].renamed_c", 16),
        (11, "cat", 16),
        (12, "cast", 16),
        (13, "h.s[0].$valid$", 1),
    ]                                # the selector key (14) is the selector's, not a field


def test_structured_annotations_and_initial_entries(tmp_path: Path) -> None:
    p4info = compile_p4info(tmp_path, """
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    @plain(1) @list[1, "two", true] @kv[size = 8w16, label = "x", on = false] @empty[]
    action a(@fld["p"] bit<8> v) { }
    table none { key = { h.eth.etype : exact; } actions = { a; } entries = { } }
    table one { key = { h.eth.etype : exact; } actions = { a; } entries = { 1 : a(2); } }
    table fixed { key = { h.eth.etype : exact; } actions = { a; } const entries = { } }
    apply { none.apply(); one.apply(); fixed.apply(); }
}
""")
    action = by_name(p4info.actions, "I.a")
    expected = expect("""
        actions {
          preamble {
            id: 1 name: "I.a" alias: "a" annotations: "@plain(1)"
            structured_annotations {
              name: "list"
              expression_list { expressions { int64_value: 1 }
                                expressions { string_value: "two" }
                                expressions { bool_value: true } }
            }
            structured_annotations {
              name: "kv"
              kv_pair_list {
                kv_pairs { key: "size" value { int64_value: 16 } }
                kv_pairs { key: "label" value { string_value: "x" } }
                kv_pairs { key: "on" value { bool_value: false } }
              }
            }
            structured_annotations { name: "empty" }
          }
          params {
            id: 1 name: "v" bitwidth: 8
            structured_annotations {
              name: "fld" expression_list { expressions { string_value: "p" } }
            }
          }
        }
    """).actions[0]
    expected.preamble.id = action.preamble.id
    assert text_format.MessageToString(action) == text_format.MessageToString(expected)
    flags = {t.preamble.name: (t.is_const_table, t.has_initial_entries) for t in p4info.tables}
    assert flags == {"I.none": (False, False), "I.one": (False, True),
                     "I.fixed": (True, False)}
