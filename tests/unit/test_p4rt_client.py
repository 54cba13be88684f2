"""The p4rt client library: schema lookups, value encoding, entity builders, errors, and the
SwitchConnection against an in-memory fake server (and the real softswitch server when present)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from finsy.proto import p4d, p4r, rpc_code, rpc_status
from google.protobuf import any_pb2
from p4rt_fake_server import FakeServer  # tests/unit, on sys.path under pytest

from p4rt import (
    DELETE,
    INSERT,
    MODIFY,
    ActionProfileGroup,
    ActionProfileMember,
    CloneSessionEntry,
    CounterData,
    CounterEntry,
    DigestEntry,
    DirectCounterEntry,
    DirectMeterEntry,
    EncodeError,
    LpmMatch,
    MeterConfig,
    MeterEntry,
    MulticastGroupEntry,
    P4RuntimeConnectionError,
    P4RuntimeRpcError,
    P4RuntimeWriteError,
    RangeMatch,
    RegisterEntry,
    Replica,
    Schema,
    SchemaError,
    SwitchConnection,
    TableEntry,
    TernaryMatch,
    insert,
)
from p4rt.client import chunks
from p4rt.entities import decode_entity, describe_update, make_update
from p4rt.errors import write_error
from p4rt.packetio import decode_digest_list, decode_packet_in, packet_out_message
from p4rt.values import canonical, encode
from softswitch.compiler import compile_file
from softswitch.errors import ControlPlaneError
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import build_p4info

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; @padding bit<7> _pad; }
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header ipv6_t { bit<4> version; bit<8> tc; bit<20> fl; bit<16> plen; bit<8> nh; bit<8> hl;
                bit<128> src; bit<128> dst; }
struct H { packet_out_t cpu_out; packet_in_t cpu_in; eth_t eth; ipv6_t ipv6; }
struct learn_t { bit<48> src; bit<9> port; }
struct M { bit<16> l4; }

parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { transition select(s.ingress_port) { 255: cpu; default: eth; } }
    state cpu { pk.extract(h.cpu_out); transition eth; }
    state eth { pk.extract(h.eth); transition select(h.eth.etype) { 0x86dd: v6; default: accept; } }
    state v6 { pk.extract(h.ipv6); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    counter(64, CounterType.packets_and_bytes) port_ctr;
    meter(16, MeterType.bytes) port_meter;
    register<bit<32>>(8) regs;
    action_selector(HashAlgorithm.crc16, 32w64, 32w10) ecmp_sel;
    direct_counter(CounterType.packets) acl_ctr;
    action drop() { mark_to_drop(s); }
    action set_port(bit<9> port) { s.egress_spec = port; }
    action set_next_hop(bit<48> dmac, bit<9> port) { h.eth.dst = dmac; s.egress_spec = port; }
    action acl_drop() { acl_ctr.count(); mark_to_drop(s); }
    action acl_cpu() { acl_ctr.count(); s.egress_spec = 255; }
    action to_cpu() {
        s.egress_spec = 255; h.cpu_in.setValid(); h.cpu_in.ingress_port = s.ingress_port;
    }
    table route_v6 {
        key = { h.ipv6.dst: lpm; }
        actions = { set_next_hop; drop; @defaultonly NoAction; }
        default_action = NoAction();
    }
    table acl {
        key = { s.ingress_port: ternary; h.eth.etype: ternary; m.l4: range; h.eth.src: optional; }
        actions = { acl_drop; acl_cpu; }
        counters = acl_ctr;
    }
    table l2 {
        key = { h.eth.dst: exact; }
        actions = { set_port; drop; to_cpu; }
        size = 4096;
    }
    table ecmp {
        key = { h.eth.dst: exact; h.ipv6.dst: exact; h.ipv6.fl: selector; }
        actions = { set_next_hop; }
        implementation = ecmp_sel;
    }
    apply {
        if (h.cpu_out.isValid()) {
            s.egress_spec = h.cpu_out.egress_port; h.cpu_out.setInvalid(); return;
        }
        port_ctr.count((bit<32>)s.ingress_port);
        regs.write(0, 1);
        bit<2> color; port_meter.execute_meter((bit<32>)s.ingress_port, color);
        digest<learn_t>(1, { h.eth.src, s.ingress_port });
        l2.apply();
        if (h.ipv6.isValid()) { route_v6.apply(); ecmp.apply(); }
        acl.apply();
    }
}
control E(inout H h, inout M m, inout standard_metadata_t s) {
    action drop() { mark_to_drop(s); }
    table filter { key = { s.egress_port: exact; } actions = { drop; NoAction; } }
    apply { filter.apply(); }
}
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.cpu_in); pk.emit(h.eth); pk.emit(h.ipv6); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, bytes]:
    path = tmp_path_factory.mktemp("p4rt") / "prog.p4"
    path.write_text(PROGRAM)
    checked = compile_file(path)
    return build_p4info(checked), dumps_ir(checked).encode()


@pytest.fixture(scope="module")
def schema(compiled: tuple[Any, bytes]) -> Schema:
    return Schema(compiled[0])


def route(schema: Schema, prefix: str = "2001:db8::", length: int = 32, port: int = 3) -> TableEntry:
    return (TableEntry(schema, "route_v6").match(dst=(prefix, length))
            .action("set_next_hop", dmac="aa:bb:cc:dd:ee:ff", port=port))


# ---------------------------------------------------------------------------------------------
# values

@pytest.mark.parametrize(("value", "width", "expected"), [
    (0, 8, b"\x00"),
    (1, 9, b"\x01"),
    (0x1ff, 9, b"\x01\xff"),
    (True, 1, b"\x01"),
    (b"\x00\x00\x05", 16, b"\x05"),
    ("10.0.0.1", 32, b"\x0a\x00\x00\x01"),
    ("0.0.0.7", 32, b"\x07"),
    ("2001:db8::1", 128, bytes.fromhex("20010db8000000000000000000000001")),
    ("aa:bb:cc:dd:ee:ff", 48, bytes.fromhex("aabbccddeeff")),
    ("00-00-00-00-00-2a", 48, b"\x2a"),
    ("0x1f", 8, b"\x1f"),
    ("300", 16, b"\x01\x2c"),
])
def test_encode_gives_canonical_bytestrings(value: Any, width: int, expected: bytes) -> None:
    assert encode(value, width) == expected


@pytest.mark.parametrize(("value", "width", "message"), [
    (256, 8, "does not fit in 8 bits"),
    (-1, 8, "negative"),
    ("10.0.0.999", 32, "not an IPv4"),
    ("fe80::zz", 128, "not an IPv6"),
    ("hello", 8, "cannot read 'hello'"),
    (1.5, 8, "cannot encode float"),
    ("2001:db8::1", 64, "does not fit in 64 bits"),
])
def test_encode_rejects_bad_values(value: Any, width: int, message: str) -> None:
    with pytest.raises(EncodeError, match=message) as info:
        encode(value, width, "field x")
    assert "field x" in str(info.value)
    assert isinstance(info.value, ControlPlaneError) and info.value.code == "INVALID_ARGUMENT"


def test_canonical_strips_leading_zeros_but_keeps_one_byte() -> None:
    assert canonical(b"\x00\x00\x01\x00") == b"\x01\x00"
    assert canonical(b"\x00\x00") == b"\x00"


# ---------------------------------------------------------------------------------------------
# schema

def test_schema_finds_objects_by_name_alias_suffix_and_id(schema: Schema) -> None:
    table = schema.table("I.route_v6")
    assert schema.table("route_v6") is table
    assert schema.table(".I.route_v6") is table
    assert schema.table(table.preamble.id) is table
    assert schema.action("set_port").preamble.name == "I.set_port"
    assert schema.counter("port_ctr").size == 64
    assert schema.direct_counter("acl_ctr").direct_table_id == schema.table("acl").preamble.id
    assert schema.register("regs").size == 8
    assert schema.digest("learn_t").preamble.name == "learn_t"
    assert schema.action_profile("ecmp_sel").with_selector
    assert schema.name(table.preamble.id) == "I.route_v6"


def test_schema_rejects_ambiguous_and_unknown_names(schema: Schema) -> None:
    with pytest.raises(SchemaError, match=r"action name 'drop' is ambiguous: it could be "
                                          r"E\.drop, I\.drop") as info:
        schema.action("drop")
    assert info.value.code == "INVALID_ARGUMENT"
    with pytest.raises(SchemaError, match=r"unknown table 'routes'.*I\.route_v6") as info:
        schema.table("routes")
    assert info.value.code == "NOT_FOUND"
    with pytest.raises(SchemaError, match="unknown table id"):
        schema.table(0x02000001)
    with pytest.raises(SchemaError, match=r"match field of table I\.ecmp name 'dst' is ambiguous: "
                                          r"it could be h\.eth\.dst, h\.ipv6\.dst"):
        schema.match_field("ecmp", "dst")
    assert schema.match_field("ecmp", "ipv6.dst").id == 2


def test_schema_resolves_actions_within_a_table(schema: Schema) -> None:
    # "drop" is ambiguous globally but names one action of each table
    assert schema.table_action("l2", "drop").preamble.name == "I.drop"
    assert schema.table_action("filter", "drop").preamble.name == "E.drop"
    with pytest.raises(SchemaError, match=r"unknown action of table I\.l2 'acl_drop'"):
        schema.table_action("l2", "acl_drop")


def test_schema_load_reads_text_and_binary_p4info(schema: Schema, tmp_path: Path) -> None:
    from google.protobuf import text_format
    (tmp_path / "p.txtpb").write_text(text_format.MessageToString(schema.p4info))
    (tmp_path / "p.bin").write_bytes(schema.p4info.SerializeToString())
    assert Schema.load(tmp_path / "p.txtpb").p4info == schema.p4info
    assert Schema.load(tmp_path / "p.bin").p4info == schema.p4info
    (tmp_path / "bad.txt").write_text("tables {")
    with pytest.raises(SchemaError, match="cannot read P4Info"):
        Schema.load(tmp_path / "bad.txt")


# ---------------------------------------------------------------------------------------------
# table entries

def test_lpm_entry_message(schema: Schema) -> None:
    entity = route(schema, "2001:db8:ffff::1", 32).to_entity()
    entry = entity.table_entry
    assert entry.table_id == schema.table("route_v6").preamble.id
    (field,) = entry.match
    assert field.field_id == 1
    assert field.lpm.value == bytes.fromhex("20010db8") + bytes(12)  # host bits cleared
    assert field.lpm.prefix_len == 32
    action = entry.action.action
    assert action.action_id == schema.action("set_next_hop").preamble.id
    assert [(p.param_id, p.value) for p in action.params] == [
        (1, bytes.fromhex("aabbccddeeff")), (2, b"\x03")]
    assert entry.priority == 0


def test_match_forms_and_dont_care_fields(schema: Schema) -> None:
    entry = TableEntry(schema, "acl", priority=10).match({
        "ingress_port": (1, 0x1ff), "etype": "0x86dd&&&0xffff", "l4": "1000..2000",
        "h.eth.src": None}).action("acl_drop")
    assert entry.matches == {"s.ingress_port": TernaryMatch(1, 0x1ff),
                             "h.eth.etype": TernaryMatch(0x86DD, 0xFFFF),
                             "m.l4": RangeMatch(1000, 2000)}
    # don't-care values remove a field: mask 0, full range, prefix 0
    entry.match(ingress_port=(5, 0), l4=(0, 0xFFFF))
    assert list(entry.matches) == ["h.eth.etype"]
    assert TableEntry(schema, "route_v6").match(dst="::/0").matches == {}
    # a value alone: full prefix, full mask, one-point range
    alone = TableEntry(schema, "acl").match(etype=0x800, l4=7, src="00:00:00:00:00:01")
    assert alone.matches["h.eth.etype"] == TernaryMatch(0x800, 0xFFFF)
    assert alone.matches["m.l4"] == RangeMatch(7, 7)
    assert TableEntry(schema, "route_v6").match(dst="2001:db8::/48").matches == {
        "h.ipv6.dst": LpmMatch(0x20010DB8 << 96, 48)}
    # ternary value bits outside the mask are cleared
    assert TableEntry(schema, "acl").match(etype=(0x86DD, 0xFF00)).matches == {
        "h.eth.etype": TernaryMatch(0x8600, 0xFF00)}


def test_match_fields_are_sent_in_id_order(schema: Schema) -> None:
    one = TableEntry(schema, "ecmp").match(**{"ipv6.dst": 2}).match({"eth.dst": 1}).member(4)
    two = TableEntry(schema, "ecmp").match({"eth.dst": 1, "ipv6.dst": 2}).member(4)
    assert [m.field_id for m in one.to_entity().table_entry.match] == [1, 2]
    assert one == two


@pytest.mark.parametrize(("table", "fields", "message"), [
    ("route_v6", {"dst": ("::", 129)}, "prefix length 129 is longer than 128 bits"),
    ("route_v6", {"dst": ("::", 1, 2)}, r"expected \(value, prefix_len\)"),
    ("acl", {"l4": (9, 3)}, "range low 0x9 is above high 0x3"),
    ("acl", {"etype": (1, 0x1ffff)}, "mask: 0x1ffff does not fit in 16 bits"),
    ("l2", {"dst": "10.0.0.1/8"}, "field h.eth.dst: .10.0.0.1/8. is not an IPv4 address"),
    ("l2", {"port": 1}, "unknown match field of table I.l2 'port'"),
])
def test_bad_matches_name_the_table_and_field(schema: Schema, table: str, fields: dict[str, Any],
                                              message: str) -> None:
    with pytest.raises(ControlPlaneError, match=message):
        TableEntry(schema, table).match(fields)


def test_action_params_positional_named_and_errors(schema: Schema) -> None:
    by_name = TableEntry(schema, "ecmp").action("set_next_hop", port=2, dmac=1)
    by_position = TableEntry(schema, "ecmp").action("set_next_hop", 1, 2)
    by_mapping = TableEntry(schema, "ecmp").action("set_next_hop", {"dmac": 1, "port": 2})
    assert by_name.action_call == by_position.action_call == by_mapping.action_call
    assert list(by_name.action_call.params) == ["dmac", "port"]
    with pytest.raises(EncodeError, match=r"missing parameter\(s\) port \(it takes: dmac, port\)"):
        TableEntry(schema, "ecmp").action("set_next_hop", dmac=1)
    with pytest.raises(SchemaError, match=r"unknown parameter of action I\.set_next_hop 'mac'"):
        TableEntry(schema, "ecmp").action("set_next_hop", mac=1, port=2)
    with pytest.raises(EncodeError, match="param port: 0x200 does not fit in 9 bits"):
        TableEntry(schema, "l2").action("set_port", 512)
    with pytest.raises(EncodeError, match="given twice"):
        TableEntry(schema, "l2").action("set_port", 1, port=2)
    with pytest.raises(EncodeError, match="takes 1 parameter"):
        TableEntry(schema, "l2").action("set_port", 1, 2)


@pytest.mark.parametrize(("build", "kind", "message"), [
    (lambda s: TableEntry(s, "l2").match(dst=1), INSERT, "needs an action"),
    (lambda s: TableEntry(s, "ecmp").match({"eth.dst": 1}).member(1), INSERT,
     "exact field h.ipv6.dst needs a value"),
    (lambda s: TableEntry(s, "acl").match(etype=1).action("acl_drop"), INSERT,
     "positive priority is required"),
    (lambda s: TableEntry(s, "l2", priority=3).match(dst=1).action("drop"), INSERT,
     "priority must be 0"),
    (lambda s: TableEntry(s, "route_v6").match(dst="::1/128").action("NoAction"), INSERT,
     "action NoAction may be used as the default action only"),
    (lambda s: TableEntry(s, "route_v6").as_default().match(dst="::1/128"), MODIFY,
     "default entry takes no match fields"),
])
def test_write_checks(schema: Schema, build: Any, kind: int, message: str) -> None:
    with pytest.raises(EncodeError, match=message):
        make_update(kind, build(schema))


def test_delete_needs_no_action_and_default_entry(schema: Schema) -> None:
    update = make_update("delete", TableEntry(schema, "l2").match(dst=1))
    assert update.type == DELETE and not update.entity.table_entry.HasField("action")
    default = make_update(MODIFY, TableEntry(schema, "route_v6").as_default().action("drop"))
    assert default.entity.table_entry.is_default_action


def test_entries_round_trip_through_messages(schema: Schema) -> None:
    entries = [
        route(schema),
        TableEntry(schema, "acl", priority=7).match(ingress_port=(3, 0x1ff), l4=(1, 2),
                                                    src="00:00:00:00:00:09").action("acl_cpu"),
        TableEntry(schema, "ecmp").match({"eth.dst": 1, "ipv6.dst": "::2"}).group(9),
        TableEntry(schema, "ecmp").match({"eth.dst": 1, "ipv6.dst": "::3"}).one_shot(
            ("set_next_hop", {"dmac": 1, "port": 2}, 3),
            ("set_next_hop", {"dmac": 2, "port": 3}, 1, 7)),
        TableEntry(schema, "route_v6", counter_data=CounterData(10, 2)).as_default().action("drop"),
    ]
    for entry in entries:
        back = decode_entity(schema, entry.to_entity())
        assert isinstance(back, TableEntry)
        assert back == entry
        assert back.matches == entry.matches
        assert back.action_call == entry.action_call
    text = repr(entries[0])
    assert "I.route_v6" in text and "/32" in text and "set_next_hop(dmac=0xaabbccddeeff" in text


def test_wildcard_table_entry(schema: Schema) -> None:
    assert TableEntry(schema).to_entity() == p4r.Entity(table_entry=p4r.TableEntry())
    with pytest.raises(EncodeError, match="names no table"):
        TableEntry(schema).match(dst=1)


# ---------------------------------------------------------------------------------------------
# other entities

def test_action_profile_members_and_groups(schema: Schema) -> None:
    member = ActionProfileMember(schema, "ecmp_sel", 5).action("set_next_hop", dmac=1, port=2)
    message = member.to_entity().action_profile_member
    assert message.action_profile_id == schema.action_profile("ecmp_sel").preamble.id
    assert message.member_id == 5
    assert message.action.action_id == schema.action("set_next_hop").preamble.id
    with pytest.raises(SchemaError, match="unknown action of action profile"):
        ActionProfileMember(schema, "ecmp_sel", 5).action("set_port", port=1)
    with pytest.raises(EncodeError, match="an action is required"):
        insert(ActionProfileMember(schema, "ecmp_sel", 6))
    group = ActionProfileGroup(schema, "ecmp_sel", 9, [5, (6, 2), (7, 1, 4)], max_size=8)
    members = group.to_entity().action_profile_group.members
    assert [(m.member_id, m.weight) for m in members] == [(5, 1), (6, 2), (7, 1)]
    assert members[2].watch_port == b"\x04"
    for item in (member, group):
        assert decode_entity(schema, item.to_entity()) == item


def test_pre_entries(schema: Schema) -> None:
    group = MulticastGroupEntry(3, [1, (2, 1)]).add(300, 2)
    message = group.to_entity().packet_replication_engine_entry.multicast_group_entry
    assert message.multicast_group_id == 3
    assert [(r.port, r.instance) for r in message.replicas] == [
        (b"\x01", 0), (b"\x02", 1), (b"\x01\x2c", 2)]
    session = CloneSessionEntry(5, [Replica(255)], class_of_service=1, packet_length_bytes=64)
    back = decode_entity(schema, session.to_entity())
    assert back == session and back.replicas == [Replica(255, 0)]
    # the deprecated uint32 egress_port form is read too
    legacy = p4r.MulticastGroupEntry(multicast_group_id=1,
                                     replicas=[p4r.Replica(egress_port=7, instance=1)])
    assert MulticastGroupEntry.from_proto(legacy).replicas == [Replica(7, 1)]


def test_counter_meter_register_and_digest_entries(schema: Schema) -> None:
    counter = CounterEntry(schema, "port_ctr", 4, CounterData(100, 2))
    assert counter.to_entity().counter_entry.index.index == 4
    assert not CounterEntry(schema, "port_ctr").to_entity().counter_entry.HasField("index")
    meter = MeterEntry(schema, "port_meter", 1, MeterConfig(1000, 100, 2000, 200))
    assert meter.to_entity().meter_entry.config.pir == 2000
    acl = TableEntry(schema, "acl", priority=1).match(etype=1)
    direct = DirectCounterEntry(acl, CounterData(0, 5))
    assert direct.to_entity().direct_counter_entry.table_entry.table_id == acl.info.preamble.id
    direct_meter = DirectMeterEntry(acl, MeterConfig(1, 2, 3, 4))
    register = RegisterEntry(schema, "regs", 2, 0xDEAD)
    assert register.to_entity().register_entry.data == p4d.P4Data(bitstring=b"\xde\xad")
    with pytest.raises(EncodeError, match="does not fit in 32 bits"):
        RegisterEntry(schema, "regs", 2, 1 << 32).to_entity()
    with pytest.raises(EncodeError, match="registers are only modified"):
        insert(register)
    digest = DigestEntry(schema, "learn_t", max_list_size=4)
    assert digest.to_entity().digest_entry.config.max_list_size == 4
    for item in (counter, meter, direct, direct_meter, register, digest):
        back = decode_entity(schema, item.to_entity())
        assert type(back) is type(item) and back == item
    assert decode_entity(schema, register.to_entity()).value == 0xDEAD


def test_unknown_ids_decode_to_the_raw_message(schema: Schema) -> None:
    entity = p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02ABCDEF))
    assert decode_entity(schema, entity) is entity


def test_update_descriptions(schema: Schema) -> None:
    assert describe_update(schema, insert(route(schema))) == "INSERT table I.route_v6"
    assert describe_update(schema, make_update("modify", RegisterEntry(
        schema, "regs", 3, 1))) == "MODIFY register I.regs[3]"
    assert describe_update(schema, make_update(DELETE, MulticastGroupEntry(4))) == \
        "DELETE multicast group 4"
    assert describe_update(None, insert(ActionProfileMember(schema, "ecmp_sel", 2).action(
        "set_next_hop", 1, 2))) == f"INSERT action profile {schema.action_profile('ecmp_sel').preamble.id} member 2"
    # bare entity messages are wrapped too
    assert insert(p4r.CloneSessionEntry(session_id=2)).entity.packet_replication_engine_entry \
        .clone_session_entry.session_id == 2


# ---------------------------------------------------------------------------------------------
# stream messages

def test_packet_out_metadata_and_packet_in_decoding(schema: Schema) -> None:
    message = packet_out_message(schema, b"abc", {"egress_port": 300})
    assert [(m.metadata_id, m.value) for m in message.metadata] == [(1, b"\x01\x2c"), (2, b"\x00")]
    with pytest.raises(EncodeError, match="packet_out metadata egress_port is missing"):
        packet_out_message(schema, b"abc", {})
    with pytest.raises(SchemaError, match="unknown packet_out metadata 'port'"):
        packet_out_message(schema, b"abc", {"port": 1})
    with pytest.raises(EncodeError, match="does not fit in 9 bits"):
        packet_out_message(schema, b"abc", {"egress_port": 512})
    packet = decode_packet_in(schema, p4r.PacketIn(payload=b"x", metadata=[
        p4r.PacketMetadata(metadata_id=1, value=b"\x07"),
        p4r.PacketMetadata(metadata_id=9, value=b"\x01")]))
    assert packet.payload == b"x"
    assert packet.metadata == {"ingress_port": 7, "id:9": 1}


def test_digest_list_decoding(schema: Schema) -> None:
    digest_id = schema.digest("learn_t").preamble.id
    item = p4d.P4Data(struct=p4d.P4StructLike(members=[
        p4d.P4Data(bitstring=bytes.fromhex("0a0b0c0d0e0f")), p4d.P4Data(bitstring=b"\x02")]))
    digest = decode_digest_list(schema, p4r.DigestList(digest_id=digest_id, list_id=5,
                                                       data=[item, item], timestamp=9))
    assert digest.digest == "learn_t" and digest.list_id == 5
    assert digest.data == [{"src": 0x0A0B0C0D0E0F, "port": 2}] * 2


# ---------------------------------------------------------------------------------------------
# write errors and batching

class _FailedCall(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str,
                 trailing: tuple[tuple[str, Any], ...] = ()) -> None:
        self._code, self._details, self._trailing = code, details, trailing

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> tuple[tuple[str, Any], ...]:
        return self._trailing


def _status_trailer(*errors: tuple[int, str]) -> tuple[tuple[str, bytes], ...]:
    status = rpc_status.Status(code=rpc_code.UNKNOWN)
    for code, message in errors:
        detail = any_pb2.Any()
        detail.Pack(p4r.Error(canonical_code=code, message=message))
        status.details.append(detail)
    return (("grpc-status-details-bin", status.SerializeToString()),)


def test_write_error_decodes_per_update_errors() -> None:
    call = _FailedCall(grpc.StatusCode.UNKNOWN, "batch failed", _status_trailer(
        (rpc_code.OK, ""), (rpc_code.ALREADY_EXISTS, "entry exists"),
        (rpc_code.INVALID_ARGUMENT, "bad key")))
    error = write_error(call, ["INSERT table a", "INSERT table b", "MODIFY table c"], offset=10)
    assert error.code == "UNKNOWN"
    assert [(e.index, e.code) for e in error.errors] == [(11, "ALREADY_EXISTS"),
                                                         (12, "INVALID_ARGUMENT")]
    assert "update 11 (INSERT table b): ALREADY_EXISTS: entry exists" in str(error)
    assert "update 12 (MODIFY table c): INVALID_ARGUMENT: bad key" in str(error)
    # without details: the RPC status itself
    plain = write_error(_FailedCall(grpc.StatusCode.PERMISSION_DENIED, "not primary"), ["x"])
    assert plain.errors == [] and plain.code == "PERMISSION_DENIED"
    assert str(plain) == "Write failed: PERMISSION_DENIED: not primary"
    garbled = write_error(_FailedCall(grpc.StatusCode.UNKNOWN, "x",
                                      (("grpc-status-details-bin", b"\xff\xff"),)), ["x"])
    assert garbled.errors == []


def test_chunks_split_by_count_and_size(schema: Schema) -> None:
    updates = [insert(TableEntry(schema, "l2").match(dst=i).action("set_port", 1))
               for i in range(25)]
    assert [(offset, len(batch)) for offset, batch in chunks(updates, 10)] == [
        (0, 10), (10, 10), (20, 5)]
    size = updates[0].ByteSize() + 8
    assert [len(b) for _, b in chunks(updates, 100, max_bytes=size * 7)] == [7, 7, 7, 4]


# ---------------------------------------------------------------------------------------------
# SwitchConnection against the fake server

@pytest.fixture
def fake() -> Any:
    with FakeServer(device_id=1) as server:
        yield server


def test_connect_arbitrate_and_take_over(fake: FakeServer) -> None:
    with SwitchConnection(fake.address, 1, election_id=(0, 5)) as first:
        assert first.is_primary
        assert first.capabilities() == "1.5.0"
        backup = SwitchConnection(fake.address, 1, election_id=(0, 2))
        assert backup.connect(timeout=5) is False
        usurper = SwitchConnection(fake.address, 1, election_id=10)
        assert usurper.connect(timeout=5) is True
        # the server re-announces on every arbitration: skip to the one naming the new primary
        update = first.get_arbitration(timeout=5)
        while update is not None and update.election_id.low != 10:
            update = first.get_arbitration(timeout=5)
        assert update is not None and update.status.code == rpc_code.ALREADY_EXISTS
        assert not first.is_primary
        usurper.close()
        usurper.close()  # twice is fine
        backup.close()
    assert not first.is_primary and "closed" in repr(first)


def test_connect_errors(fake: FakeServer) -> None:
    with pytest.raises(P4RuntimeConnectionError, match="arbitration for device 7 failed: "
                                                       "NOT_FOUND: no device 7") as info:
        SwitchConnection(fake.address, 7).connect(timeout=5)
    assert info.value.code == "NOT_FOUND"
    start = time.monotonic()
    with pytest.raises(P4RuntimeConnectionError, match="cannot reach"):
        SwitchConnection("127.0.0.1:1", 1).connect(timeout=0.3)
    assert time.monotonic() - start < 5
    with pytest.raises(P4RuntimeConnectionError, match="not connected"):
        SwitchConnection(fake.address, 1).packet_out(b"x")


def test_pipeline_write_read_and_errors(fake: FakeServer, compiled: tuple[Any, bytes]) -> None:
    p4info, ir = compiled
    with SwitchConnection(fake.address, 1, election_id=(0, 5)) as sw:
        assert sw.schema is None
        sw.set_pipeline(p4info, ir, cookie=42)
        assert sw.schema is not None and sw.schema.p4info == p4info
        assert sw.get_pipeline("COOKIE_ONLY").cookie.cookie == 42
        assert not sw.get_pipeline("COOKIE_ONLY").HasField("p4info")
        s = sw.schema
        entries = [route(s, f"2001:db8:{i:x}::", 48) for i in range(3)]
        sw.insert(entries)
        assert len(fake.service.write_requests[-1].updates) == 3  # one batch
        group = MulticastGroupEntry(1, [1, 2])
        sw.write([(INSERT, group), ("insert", CloneSessionEntry(2, [3]))])
        read = list(sw.read(TableEntry(s, "route_v6")))
        assert read == entries
        assert list(sw.read([MulticastGroupEntry()])) == [group]
        assert list(sw.read(MulticastGroupEntry(9))) == []
        assert len(list(sw.read_raw([TableEntry(s), MulticastGroupEntry()]))) == 4
        with pytest.raises(P4RuntimeWriteError) as info:
            sw.write([insert(route(s, "2001:db8:9::", 48)), insert(entries[1]),
                      make_update(DELETE, MulticastGroupEntry(7))])
        error = info.value
        assert [(e.index, e.code) for e in error.errors] == [(1, "ALREADY_EXISTS"),
                                                             (2, "NOT_FOUND")]
        assert "update 1 (INSERT table I.route_v6): ALREADY_EXISTS: entry already exists" \
            in str(error)
        assert "update 2 (DELETE multicast group 7): NOT_FOUND" in str(error)
        assert isinstance(error, ControlPlaneError)
        sw.modify(route(s, "2001:db8:1::", 48, port=9))
        sw.delete([entries[0]])
        ports = {entry.action_call.params["port"] for entry in sw.read(TableEntry(s))}
        assert ports == {3, 9}
        assert sw.delete_all() == 5  # 3 table entries, 1 multicast group, 1 clone session
        assert fake.service.entities == {}
        with pytest.raises(P4RuntimeRpcError, match="UNIMPLEMENTED"):
            sw.write([insert(entries[2])], atomicity="ROLLBACK_ON_ERROR")
        with pytest.raises(EncodeError, match="unknown atomicity"):
            sw.write([insert(entries[2])], atomicity="SOMETIMES")


def test_chunked_writes_report_global_indices(fake: FakeServer, compiled: tuple[Any, bytes]) -> None:
    p4info, ir = compiled
    with SwitchConnection(fake.address, 1, batch_size=100) as sw:
        sw.set_pipeline(p4info, ir)
        s = sw.schema
        entries = [TableEntry(s, "l2").match(dst=i).action("set_port", i % 512)
                   for i in range(250)]
        sw.insert(entries[:10])
        before = len(fake.service.write_requests)
        with pytest.raises(P4RuntimeWriteError) as info:
            sw.insert([*entries[5:250], entries[240]])
        sizes = [len(r.updates) for r in fake.service.write_requests[before:]]
        assert sizes == [100, 100, 46]
        assert [e.index for e in info.value.errors] == [0, 1, 2, 3, 4, 245]
        assert len(list(sw.read(TableEntry(s, "l2")))) == 250


def test_backup_writes_are_refused(fake: FakeServer, compiled: tuple[Any, bytes]) -> None:
    with SwitchConnection(fake.address, 1, election_id=(0, 9)) as primary:
        primary.set_pipeline(*compiled)
        with SwitchConnection(fake.address, 1, election_id=(0, 1),
                              schema=primary.schema) as backup:
            assert not backup.is_primary
            with pytest.raises(P4RuntimeWriteError, match="PERMISSION_DENIED") as info:
                backup.insert(route(backup.schema))
            assert info.value.code == "PERMISSION_DENIED" and info.value.errors == []
            with pytest.raises(P4RuntimeRpcError, match="SetForwardingPipelineConfig failed: "
                                                        "PERMISSION_DENIED"):
                backup.set_pipeline(*compiled)


def test_packet_io_and_digests(fake: FakeServer, compiled: tuple[Any, bytes]) -> None:
    with SwitchConnection(fake.address, 1) as sw:
        sw.set_pipeline(*compiled)
        assert sw.get_packet_in(timeout=0.05) is None
        sw.packet_out(b"\x01\x02payload", egress_port=5)
        packet = sw.get_packet_in(timeout=5)
        assert packet is not None
        assert packet.payload == b"\x01\x02payload" and packet.metadata == {"ingress_port": 5}
        sent = fake.service.packet_outs[-1]
        assert [(m.metadata_id, m.value) for m in sent.metadata] == [(1, b"\x05"), (2, b"\x00")]
        digest_id = sw.schema.digest("learn_t").preamble.id
        data = p4d.P4Data(struct=p4d.P4StructLike(members=[
            p4d.P4Data(bitstring=b"\x0a"), p4d.P4Data(bitstring=b"\x01")]))
        fake.service.send_to_primary(p4r.StreamMessageResponse(digest=p4r.DigestList(
            digest_id=digest_id, list_id=3, data=[data])))
        digest = sw.get_digest(timeout=5)
        assert digest is not None and digest.data == [{"src": 10, "port": 1}]
        sw.ack_digest(digest)
        deadline = time.monotonic() + 5
        while not fake.service.acks and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fake.service.acks == [p4r.DigestListAck(digest_id=digest_id, list_id=3)]


def test_stream_end_is_reported(fake: FakeServer) -> None:
    sw = SwitchConnection(fake.address, 1)
    sw.connect(timeout=5)
    waiter: list[Any] = []
    thread = threading.Thread(target=lambda: waiter.append(sw.get_packet_in(timeout=10)))
    thread.start()
    fake.service.end_streams()
    thread.join(timeout=5)
    assert waiter == [None]  # woken by the end of the stream, not the timeout
    assert not sw.is_primary
    assert sw.get_digest(timeout=0.01) is None
    sw.close()


# ---------------------------------------------------------------------------------------------
# against the real softswitch server (skipped until it imports)

def _real_server() -> Any:
    try:
        from softswitch.runtime.device import Device
        from softswitch.runtime.server.server import P4RuntimeServer
    except ImportError as error:
        pytest.skip(f"softswitch P4Runtime server not importable: {error}")
    return Device, P4RuntimeServer


@pytest.fixture
def real(compiled: tuple[Any, bytes]) -> Any:
    device_class, server_class = _real_server()
    device = device_class(1, cpu_port=255)
    sent: list[tuple[int, bytes]] = []
    device.set_output(lambda port, data: sent.append((port, data)))
    server = server_class(device, "127.0.0.1:0")
    server.start()
    device.start()
    try:
        yield device, f"127.0.0.1:{server.port}", sent
    finally:
        device.stop()
        server.stop(0)


FRAME = bytes.fromhex("0000000000aa" "0a0b0c0d0e0f" "0800") + b"payload"


def test_real_server_tables_pre_and_errors(real: Any, compiled: tuple[Any, bytes]) -> None:
    _, address, _ = real
    with SwitchConnection(address, 1, election_id=(0, 3)) as sw:
        assert sw.is_primary
        sw.set_pipeline(*compiled, cookie=11)
        assert sw.get_pipeline("COOKIE_ONLY").cookie.cookie == 11
        s = sw.schema
        entries = [route(s), TableEntry(s, "l2").match(dst=0xAA).action("to_cpu"),
                   TableEntry(s, "acl", priority=5).match(etype=0x86DD, l4=(1, 9))
                   .action("acl_drop")]
        sw.insert(entries)
        read = list(sw.read(TableEntry(s)))
        assert len(read) == 3 and all(entry in read for entry in entries)
        group = MulticastGroupEntry(4, [1, (2, 1), 3])
        sw.insert([group, CloneSessionEntry(5, [6])])
        assert list(sw.read(MulticastGroupEntry(4))) == [group]
        with pytest.raises(P4RuntimeWriteError) as info:
            sw.write([insert(route(s, "2001:db8:7::", 48)), insert(entries[0]),
                      make_update(MODIFY, TableEntry(s, "l2").match(dst=0xBB).action("drop"))])
        assert [(e.index, e.code) for e in info.value.errors] == [(1, "ALREADY_EXISTS"),
                                                                  (2, "NOT_FOUND")]
        assert "update 1 (INSERT table I.route_v6): ALREADY_EXISTS" in str(info.value)
        sw.delete(entries[:2])
        assert len(list(sw.read(TableEntry(s)))) == 2
        sw.insert([ActionProfileMember(s, "ecmp_sel", 1).action("set_next_hop", 1, 2),
                   ActionProfileGroup(s, "ecmp_sel", 1, [1])])
        sw.insert(TableEntry(s, "ecmp").match({"eth.dst": 1, "ipv6.dst": 2}).group(1))
        assert sw.delete_all() == 7  # 3 table entries, group, member, multicast, clone
        assert list(sw.read_raw([TableEntry(s), MulticastGroupEntry()])) == []


def test_real_server_packet_io_digests_counters(real: Any, compiled: tuple[Any, bytes]) -> None:
    device, address, sent = real
    with SwitchConnection(address, 1) as sw:
        sw.set_pipeline(*compiled)
        s = sw.schema
        sw.insert([TableEntry(s, "l2").match(dst=0xAA).action("to_cpu"), DigestEntry(s, "learn_t")])
        device.receive(3, FRAME)
        packet = sw.get_packet_in(timeout=5)
        assert packet is not None
        assert packet.metadata == {"ingress_port": 3, "_pad": 0} and packet.payload == FRAME
        digest = sw.get_digest(timeout=5)
        assert digest is not None and digest.digest == "learn_t"
        assert digest.data == [{"src": 0x0A0B0C0D0E0F, "port": 3}]
        sw.ack_digest(digest)
        counters = list(sw.read(CounterEntry(s, "port_ctr", 3)))
        assert counters == [CounterEntry(s, "port_ctr", 3, CounterData(len(FRAME), 1))]
        sw.packet_out(FRAME, egress_port=2)
        deadline = time.monotonic() + 5
        while not sent and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sent == [(2, FRAME)]
