"""controller/devices/codec.py is an optimisation only: on every entry of real plans (switch and
NIC), and on entries it must refuse, it gives what the general path (p4rt builders) gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r

from controller.devices.codec import PlanCodec
from controller.devices.reconcile import canonical, from_entity, to_table_entry
from controller.devices.session import Program
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import EvProfile, NicConnection, NicPlanner
from controller.plan.plan import build_plan
from controller.topology.yaml_io import load
from p4rt.entities import INSERT, MODIFY, make_update
from p4rt.errors import P4RuntimeClientError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def programs() -> dict[str, Program]:
    return {"switch": Program.compile(ROOT / "p4src/switch/srv6_switch.p4"),
            "nic": Program.compile(ROOT / "p4src/nic/mrc_nic.p4"),
            "lpm": Program.compile(ROOT / "bench/p4/ipv6_lpm.p4")}


def same(codec: PlanCodec, entry: PlannedEntry) -> None:
    schema = codec.schema
    canon = codec.canonical(entry)
    assert canon == canonical(schema, entry), entry.describe()
    for kind in (INSERT, MODIFY):
        general = make_update(kind, to_table_entry(schema, entry))
        assert codec.update(kind, entry) == general, entry.describe()
        # to the byte, for the entry and for the canonical form `canonical` kept
        assert codec.encode(kind, entry) == general.SerializeToString(), entry.describe()
        assert codec.encode(kind, canon) == general.SerializeToString(), entry.describe()
    # and back: what a switch returns for it reads as the canonical entry
    assert codec.from_entity(general.entity) == from_entity(schema, general.entity) == canon


def test_every_planned_entry_encodes_as_the_general_path_does(programs) -> None:
    plan = build_plan(load(ROOT / "topologies" / "medium.yaml"))
    switch = PlanCodec(programs["switch"].schema)
    entries = [e for name in plan.switch_names for e in plan.switch(name)]
    for entry in entries:
        same(switch, entry)
    nic = PlanCodec(programs["nic"].schema)
    made = NicPlanner(plan).plan_nic("nic0", [NicConnection(i, f"nic{9 + i}", i, i)
                                              for i in range(3)], EvProfile(), all_rows=True)
    for entry in made.entries:
        same(nic, entry)
    assert len(entries) > 1000 and len(made.entries) > 100


@pytest.mark.parametrize("entry", [
    PlannedEntry.make("route_v6", {"dst_addr": (1 << 128, 64)}, "drop"),          # too wide
    PlannedEntry.make("route_v6", {"dst_addr": (0, 129)}, "drop"),                # prefix
    PlannedEntry.make("route_v6", {"dst_addr": (0, 64)}, "forward", {"port": 1}),  # params
    PlannedEntry.make("route_v6", {"dst_addr": (0, 64)}, "no_such_action"),
    PlannedEntry.make("no_such_table", {"x": 1}, "drop"),
    PlannedEntry.make("port_role", {}, "set_port_role", {"role": 1}),             # exact missing
    PlannedEntry.make("route_v6", {"dst_addr": (0, 64)}, "drop", priority=3),     # priority
])
def test_what_the_fast_path_refuses_fails_as_the_general_path_does(programs, entry) -> None:
    codec = PlanCodec(programs["switch"].schema)

    def error(fn) -> str:
        with pytest.raises(P4RuntimeClientError) as info:
            fn()
        return str(info.value)

    schema = codec.schema
    assert error(lambda: codec.update(INSERT, entry)) == error(
        lambda: make_update(INSERT, to_table_entry(schema, entry)))


ROUTE = 0x2001_0DB8 << 96 | 5 << 64


@pytest.mark.parametrize("entry", [
    # names by suffix, as the builders take them (the P4Info's: Lpm.route_v6,
    # hdr.ipv6.dst_addr, Lpm.set_nexthop)
    PlannedEntry.make("route_v6", {"dst_addr": (ROUTE, 64)}, "set_nexthop",
                      {"port": 3, "dmac": 2, "smac": 1}),
    PlannedEntry.make("Lpm.route_v6", {"hdr.ipv6.dst_addr": (ROUTE | 0xFF, 64)},
                      "Lpm.set_nexthop", {"port": 3, "dmac": 2, "smac": 1}),   # bits past /64
    PlannedEntry.make("route_v6", {"ipv6.dst_addr": (ROUTE, 128)}, "drop"),     # 2-byte /128
    PlannedEntry.make("route_v6", {"dst_addr": (ROUTE, 0)}, "drop"),   # /0: a don't care
    # two names for one field, the same name twice, params out of order: the builder decides
    PlannedEntry("route_v6", (("dst_addr", (ROUTE, 64)), ("hdr.ipv6.dst_addr", (ROUTE, 48))),
                 "drop"),
    PlannedEntry("route_v6", (("dst_addr", (ROUTE, 64)), ("dst_addr", (ROUTE, 48))), "drop"),
    PlannedEntry("route_v6", (("dst_addr", (ROUTE, 64)),), "set_nexthop",
                 (("smac", 1), ("port", 3), ("dmac", 2))),
    PlannedEntry("route_v6", (("dst_addr", (True, 64)),), "drop"),   # bool: the builder
])
def test_names_and_forms_the_builders_take(programs, entry) -> None:
    same(PlanCodec(programs["lpm"].schema), entry)


@pytest.mark.parametrize("entry", [
    PlannedEntry.make("route_v6", {"dst_addr": (ROUTE, 64)}, "set_nexthop",
                      {"port": 1 << 9, "dmac": 2, "smac": 1}),                 # port too wide
    PlannedEntry.make("route_v6", {"dst_addr": (ROUTE, 64)}, "set_nexthop", {"port": 1}),
    PlannedEntry.make("route_v6", {"src_addr": (ROUTE, 64)}, "drop"),           # no such field
])
def test_lpm_entries_the_fast_path_refuses(programs, entry) -> None:
    schema = programs["lpm"].schema
    codec = PlanCodec(schema)
    with pytest.raises(P4RuntimeClientError) as general:
        make_update(INSERT, to_table_entry(schema, entry))
    with pytest.raises(P4RuntimeClientError) as fast:
        codec.encode(INSERT, entry)
    assert str(fast.value) == str(general.value)


def test_encoding_checks_every_entry_before_it_encodes_any(programs) -> None:
    codec = PlanCodec(programs["lpm"].schema)
    good = [PlannedEntry.make("route_v6", {"dst_addr": (ROUTE | i << 64, 64)}, "drop")
            for i in range(3)]
    bad = PlannedEntry.make("route_v6", {"dst_addr": (ROUTE, 64)}, "no_such_action")
    with pytest.raises(P4RuntimeClientError):
        codec.encoding(INSERT, [*good, bad])   # before anything is iterated
    canon = [codec.canonical(e) for e in good]
    assert list(codec.encoding(INSERT, canon)) == [codec.encode(INSERT, e) for e in good]


def test_read_back_bytes_decode_as_the_parsed_entities_do(programs) -> None:
    """decode_entity (a Read's entities as bytes, Session.read_encoded) gives from_entity's
    answer; const entries and other entities are left out, as diff leaves them."""
    plan = build_plan(load(ROOT / "topologies" / "medium.yaml"))
    schema = programs["switch"].schema
    codec = PlanCodec(schema)
    entities = [to_table_entry(schema, e).to_entity()
                for name in plan.switch_names[:6] for e in plan.switch(name)]
    default = to_table_entry(schema, PlannedEntry.default("route_v6", "drop")).to_entity()
    with_metadata = p4r.Entity()
    with_metadata.CopyFrom(entities[0])
    with_metadata.table_entry.controller_metadata = 7
    for entity in [*entities, default, with_metadata]:
        got = codec.decode_entity(entity.SerializeToString())
        assert got == from_entity(schema, entity), entity
    assert codec._reader is not None
    plain = [e for e in entities if not e.table_entry.is_default_action]
    assert len(plain) > 250   # and the plan's default entries take the parsed message
    assert all(codec._reader.decode(e.SerializeToString()) is not None for e in plain)
    nic_schema = programs["nic"].schema
    nic = PlanCodec(nic_schema)
    made = NicPlanner(plan).plan_nic("nic0", [NicConnection(i, f"nic{9 + i}", i, i)
                                              for i in range(3)], EvProfile(), all_rows=True)
    for entry in made.entries:   # ternary and optional fields, priorities
        entity = to_table_entry(nic_schema, entry).to_entity()
        assert nic.decode_entity(entity.SerializeToString()) == from_entity(nic_schema, entity)
    const = p4r.Entity()
    const.CopyFrom(entities[0])
    const.table_entry.is_const = True
    assert codec.decode_entity(const.SerializeToString()) is None
    other = p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=1))
    assert codec.decode_entity(other.SerializeToString()) is None
    # lengths that end a message early make it another message for upb: so for the reader
    head = entities[0].table_entry
    short = p4r.TableEntry(table_id=head.table_id, match=head.match).SerializeToString()
    action = head.action.SerializeToString()
    crafted = (b"\x12" + bytes((len(short),)) + short
               + b"\x1a" + bytes((len(action),)) + action)   # Entity field 3: a member
    parsed = p4r.Entity.FromString(crafted)
    assert parsed.WhichOneof("entity") == "action_profile_member"
    assert codec.decode_entity(crafted) is None
