"""P4Runtime entities ⇄ engine: writes take effect on packets, reads return what was written,
and each bad request gets its precise gRPC code with the state unchanged."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest
from finsy.proto import p4r

from softswitch.compiler import compile_file
from softswitch.engine.externs import Digest
from softswitch.engine.switch import Switch
from softswitch.p4info import build_p4info
from softswitch.runtime.server import bytestrings
from softswitch.runtime.server.entities import EntityStore, P4RuntimeWriteError

P4_DIR = Path(__file__).resolve().parents[1] / "p4" / "runtime"
_CHECKED: dict[str, object] = {}

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
C = grpc.StatusCode


class Rig:
    """A fresh Switch + EntityStore for one program, with name → id helpers."""

    def __init__(self, program: str) -> None:
        if program not in _CHECKED:
            _CHECKED[program] = compile_file(P4_DIR / program)
        checked = _CHECKED[program]
        self.switch = Switch(checked)  # type: ignore[arg-type]
        self.p4info = build_p4info(checked)  # type: ignore[arg-type]
        self.store = EntityStore(SimpleNamespace(p4info=self.p4info, switch=self.switch))

    def id(self, kind: str, name: str) -> int:
        for obj in getattr(self.p4info, kind):
            if name in (obj.preamble.name, obj.preamble.alias):
                return int(obj.preamble.id)
        raise KeyError(name)

    def write(self, kind: int, **entity: object) -> None:
        update = p4r.Update(type=kind)
        for field, value in entity.items():
            getattr(update.entity, field).CopyFrom(value)
        self.store.write(update)

    def read(self, **entity: object) -> list[p4r.Entity]:
        e = p4r.Entity()
        for field, value in entity.items():
            getattr(e, field).CopyFrom(value)
        return list(self.store.read(e))

    def action(self, name: str, *values: int) -> p4r.Action:
        a = p4r.Action(action_id=self.id("actions", name))
        for i, v in enumerate(values, 1):
            a.params.add(param_id=i, value=bytestrings.encode(v))
        return a

    def entry(self, table: str, matches: list[p4r.FieldMatch] = (),  # type: ignore[assignment]
              action: p4r.Action | None = None, **fields: object) -> p4r.TableEntry:
        te = p4r.TableEntry(table_id=self.id("tables", table), **fields)  # type: ignore[arg-type]
        te.match.extend(matches)
        if action is not None:
            te.action.action.CopyFrom(action)
        return te

    def packet(self, a: int, b: int = 0, c: int = 0, d: int = 0, port: int = 0) -> list:
        data = bytes([a, b]) + c.to_bytes(2, "big") + d.to_bytes(4, "big")
        return self.switch.process_packet(port, data)


def exact(fid: int, v: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, exact=p4r.FieldMatch.Exact(value=bytestrings.encode(v)))


def lpm(fid: int, v: int, plen: int, width: int = 32) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, lpm=p4r.FieldMatch.LPM(
        value=v.to_bytes((width + 7) // 8, "big"), prefix_len=plen))


def ternary(fid: int, v: int, m: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, ternary=p4r.FieldMatch.Ternary(
        value=bytestrings.encode(v), mask=bytestrings.encode(m)))


def rng(fid: int, lo: int, hi: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, range=p4r.FieldMatch.Range(
        low=bytestrings.encode(lo), high=bytestrings.encode(hi)))


def optional(fid: int, v: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, optional=p4r.FieldMatch.Optional(
        value=bytestrings.encode(v)))


def fails(code: grpc.StatusCode, fn, *args, match: str | None = None, **kwargs) -> P4RuntimeWriteError:
    with pytest.raises(P4RuntimeWriteError, match=match) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, info.value
    return info.value


@pytest.fixture
def tables() -> Rig:
    return Rig("p4rt_tables.p4")


@pytest.fixture
def profiles() -> Rig:
    return Rig("p4rt_profiles.p4")


@pytest.fixture
def externs() -> Rig:
    return Rig("p4rt_externs.p4")


# -- bytestrings ---------------------------------------------------------------------------------

def test_bytestrings_canonical_and_padded() -> None:
    assert bytestrings.decode(b"\x00\x00\x01\x02", 9, "x") == 0x102
    assert bytestrings.decode(b"\x01\x02", 9, "x") == 0x102
    assert bytestrings.encode(0x102) == b"\x01\x02"
    assert bytestrings.encode(0) == b"\x00"
    assert bytestrings.encode(-1, 16) == b"\xff\xff"
    assert bytestrings.decode_signed(b"\xff\xfe", 16, "x") == -2
    fails(C.INVALID_ARGUMENT, bytestrings.decode, b"\x02\x00", 9, "x", match="9 bits")
    fails(C.INVALID_ARGUMENT, bytestrings.decode, b"", 8, "x", match="empty")


# -- table entries -------------------------------------------------------------------------------

def test_exact_entry_takes_effect_and_reads_back_canonical(tables: Rig) -> None:
    te = tables.entry("ex", [exact(1, 5)], tables.action("set_b_counted", 0x42),
                      controller_metadata=7, metadata=b"cookie")
    te.match[0].exact.value = b"\x00\x05"  # padded on the way in
    tables.write(INSERT, table_entry=te)
    assert tables.packet(5, b=1)[0].data[1] == 0x42
    assert tables.packet(6, b=1)[0].data[1] == 1
    (got,) = tables.read(table_entry=p4r.TableEntry(table_id=te.table_id))
    assert got.table_entry.match[0].exact.value == b"\x05"
    assert got.table_entry.action.action.params[0].value == b"\x42"
    assert got.table_entry.controller_metadata == 7
    assert got.table_entry.metadata == b"cookie"
    assert not got.table_entry.is_const
    # MODIFY changes the action, DELETE removes the entry
    te2 = tables.entry("ex", [exact(1, 5)], tables.action("set_b_counted", 0x43))
    tables.write(MODIFY, table_entry=te2)
    assert tables.packet(5)[0].data[1] == 0x43
    tables.write(DELETE, table_entry=tables.entry("ex", [exact(1, 5)]))
    assert tables.packet(5, b=9)[0].data[1] == 9
    assert tables.read(table_entry=p4r.TableEntry(table_id=te.table_id)) == []


def test_direct_counter_in_entry_and_direct_counter_entity(tables: Rig) -> None:
    te = tables.entry("ex", [exact(1, 5)], tables.action("set_b_counted", 1))
    te.counter_data.packet_count = 10
    tables.write(INSERT, table_entry=te)
    tables.packet(5)
    req = p4r.TableEntry(table_id=te.table_id)
    req.counter_data.SetInParent()
    (got,) = tables.read(table_entry=req)
    assert got.table_entry.counter_data.packet_count == 11
    assert got.table_entry.counter_data.byte_count == 8
    # DirectCounterEntry: write sets, read returns
    dce = p4r.DirectCounterEntry(table_entry=tables.entry("ex", [exact(1, 5)]))
    dce.data.packet_count, dce.data.byte_count = 100, 200
    tables.write(MODIFY, direct_counter_entry=dce)
    tables.packet(5)
    (got,) = tables.read(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=te.table_id)))
    assert got.direct_counter_entry.data.packet_count == 101
    assert got.direct_counter_entry.data.byte_count == 208
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, direct_counter_entry=dce)
    fails(C.NOT_FOUND, tables.write, MODIFY, direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=tables.entry("ex", [exact(1, 6)])))
    fails(C.INVALID_ARGUMENT, tables.read, direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=tables.id("tables", "tern"))))


def test_lpm_entries_and_direct_meter(tables: Rig) -> None:
    tables.write(INSERT, table_entry=tables.entry(
        "lpm", [lpm(1, 0x0A000000, 8)], tables.action("set_c_metered", 0x0808)))
    tables.write(INSERT, table_entry=tables.entry(
        "lpm", [lpm(1, 0x0A010000, 16)], tables.action("set_c_metered", 0x1616)))
    assert tables.packet(1, d=0x0A010203)[0].data[2:4] == b"\x16\x16"
    assert tables.packet(1, d=0x0A020203)[0].data[2:4] == b"\x08\x08"
    assert tables.packet(1, d=0x0B000000)[0].data[2:4] == b"\x00\x00"
    # direct meter: 1 packet burst, tiny rate → the second packet is RED (colour 2) in meta
    dme = p4r.DirectMeterEntry(table_entry=tables.entry("lpm", [lpm(1, 0x0A000000, 8)]))
    dme.config.cir, dme.config.cburst, dme.config.pir, dme.config.pburst = 1, 1, 1, 1
    tables.write(MODIFY, direct_meter_entry=dme)
    (got,) = tables.read(direct_meter_entry=p4r.DirectMeterEntry(
        table_entry=tables.entry("lpm", [lpm(1, 0x0A000000, 8)])))
    assert (got.direct_meter_entry.config.cir, got.direct_meter_entry.config.pburst) == (1, 1)
    req = p4r.TableEntry(table_id=tables.id("tables", "lpm"))
    req.meter_config.SetInParent()
    configured = [e for e in tables.read(table_entry=req) if e.table_entry.HasField("meter_config")]
    assert len(configured) == 1
    # meter config rejected: cir > pir; nothing changes
    bad = tables.entry("lpm", [lpm(1, 0x0C000000, 8)], tables.action("set_c_metered", 1))
    bad.meter_config.cir, bad.meter_config.pir = 10, 5
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=bad, match="peak")
    assert len(tables.read(table_entry=p4r.TableEntry(table_id=req.table_id))) == 2


def test_lpm_errors(tables: Rig) -> None:
    act = tables.action("set_c_metered", 1)
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=tables.entry("lpm", [lpm(1, 0x0A000001, 8)], act), match="past the /8")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=tables.entry("lpm", [lpm(1, 0, 0)], act), match="omit")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=tables.entry("lpm", [lpm(1, 0, 33)], act), match="prefix length")
    # an omitted LPM field is the /0 default route
    tables.write(INSERT, table_entry=tables.entry("lpm", [], act))
    assert tables.packet(1, d=0x01020304)[0].data[2:4] == b"\x00\x01"
    (got,) = tables.read(table_entry=p4r.TableEntry(table_id=tables.id("tables", "lpm")))
    assert len(got.table_entry.match) == 0


def test_ternary_priority_and_errors(tables: Rig) -> None:
    lo = tables.entry("tern", [ternary(1, 0x10, 0xF0), exact(2, 0)], tables.action("set_port", 3),
                      priority=10)
    hi = tables.entry("tern", [ternary(1, 0x12, 0xFF), exact(2, 0)], tables.action("set_port", 4),
                      priority=20)
    tables.write(INSERT, table_entry=lo)
    tables.write(INSERT, table_entry=hi)
    assert tables.packet(0x12)[0].port == 4
    assert tables.packet(0x13)[0].port == 3
    assert tables.packet(0x23)[0].port == 1  # default set_port(1)
    # same key, same priority → ALREADY_EXISTS; same key other priority is a new entry
    fails(C.ALREADY_EXISTS, tables.write, INSERT, table_entry=lo)
    # priority rules
    no_prio = tables.entry("tern", [ternary(1, 1, 1), exact(2, 0)], tables.action("drop"))
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=no_prio, match="priority > 0")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "ex", [exact(1, 1)], tables.action("set_b_counted", 1), priority=3),
        match="priority must be 0")
    # mask 0 is a don't care that must be omitted; value outside mask
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "tern", [ternary(1, 0, 0), exact(2, 0)], tables.action("drop"), priority=1), match="omit")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "tern", [ternary(1, 0x11, 0x10), exact(2, 0)], tables.action("drop"), priority=1),
        match="outside mask")
    # missing exact field; unknown field id; duplicate field; wrong match kind
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "tern", [ternary(1, 1, 1)], tables.action("drop"), priority=1), match="needs a value")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "tern", [exact(2, 0), exact(9, 0)], tables.action("drop"), priority=1),
        match="id 9")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "tern", [exact(2, 0), exact(2, 1)], tables.action("drop"), priority=1), match="twice")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "tern", [exact(1, 0), exact(2, 0)], tables.action("drop"), priority=1),
        match="ternary field")
    # read one entry by key + priority; an omitted ternary field is a wildcard
    (got,) = tables.read(table_entry=tables.entry("tern", [ternary(1, 0x12, 0xFF), exact(2, 0)],
                                                  priority=20))
    assert got.table_entry.action.action.params[0].value == b"\x04"
    assert got.table_entry.priority == 20
    tables.write(INSERT, table_entry=tables.entry("tern", [exact(2, 0)], tables.action("drop"),
                                                  priority=1))
    assert tables.packet(0x99) == []
    # MODIFY / DELETE of a missing entry
    missing = tables.entry("tern", [ternary(1, 0x55, 0xFF), exact(2, 0)], tables.action("drop"),
                           priority=5)
    fails(C.NOT_FOUND, tables.write, MODIFY, table_entry=missing)
    fails(C.NOT_FOUND, tables.write, DELETE, table_entry=missing)


def test_range_and_optional_tables(tables: Rig) -> None:
    tables.write(INSERT, table_entry=tables.entry("rng", [rng(1, 0x100, 0x1FF)],
                                                  tables.action("set_b", 0x77), priority=1))
    assert tables.packet(1, c=0x180)[0].data[1] == 0x77
    assert tables.packet(1, c=0x200)[0].data[1] == 0
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "rng", [rng(1, 5, 4)], tables.action("set_b", 1), priority=1), match="low")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "rng", [rng(1, 0, 0xFFFF)], tables.action("set_b", 1), priority=1), match="omit")
    tables.write(INSERT, table_entry=tables.entry("opt", [optional(2, 0x33)],
                                                  tables.action("set_b", 0x66), priority=1))
    assert tables.packet(0x01, b=0x33)[0].data[1] == 0x66
    (got,) = tables.read(table_entry=p4r.TableEntry(table_id=tables.id("tables", "opt")))
    assert [m.field_id for m in got.table_entry.match] == [2]


def test_action_errors(tables: Rig) -> None:
    key = [exact(1, 1)]
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=tables.entry("ex", key, tables.action("set_c", 1)), match="not one of")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=tables.entry("ex", key, tables.action("NoAction")), match="defaultonly")
    # an id the P4Info does not have: INVALID_ARGUMENT, as PI answers ("Invalid P4 id")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "ex", key, p4r.Action(action_id=0x01FFFFFF)))
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=tables.entry("ex", key, tables.action("set_b_counted")), match="needs")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=tables.entry("ex", key, tables.action("set_b_counted", 0x100)),
          match="8 bits")
    bad_param = tables.action("set_b_counted", 1)
    bad_param.params[0].param_id = 7
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry("ex", key, bad_param))
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry("ex", key),
          match="needs an action")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT,
          table_entry=p4r.TableEntry(table_id=0x02FFFFFF))
    fails(C.INVALID_ARGUMENT, tables.store.write, p4r.Update(type=p4r.Update.UNSPECIFIED))
    assert tables.read(table_entry=p4r.TableEntry(table_id=tables.id("tables", "ex"))) == []


def test_table_full_is_resource_exhausted(tables: Rig) -> None:
    for k in range(4):
        tables.write(INSERT, table_entry=tables.entry("ex", [exact(1, k)],
                                                      tables.action("set_b_counted", k)))
    fails(C.RESOURCE_EXHAUSTED, tables.write, INSERT, table_entry=tables.entry(
        "ex", [exact(1, 9)], tables.action("set_b_counted", 9)))
    fails(C.ALREADY_EXISTS, tables.write, INSERT, table_entry=tables.entry(
        "ex", [exact(1, 0)], tables.action("set_b_counted", 9)))


def test_const_table_and_const_default(tables: Rig) -> None:
    te = tables.entry("fixed", [exact(1, 1)], tables.action("set_c", 1))
    for kind in (INSERT, MODIFY, DELETE):
        fails(C.PERMISSION_DENIED, tables.write, kind, table_entry=te, match="const")
    (got,) = tables.read(table_entry=p4r.TableEntry(table_id=te.table_id))
    assert got.table_entry.is_const
    assert got.table_entry.match[0].exact.value == b"\x07"
    cdef = tables.entry("cdef", action=tables.action("set_c", 5), is_default_action=True)
    fails(C.PERMISSION_DENIED, tables.write, MODIFY, table_entry=cdef, match="const")


def test_default_entry(tables: Rig) -> None:
    tid = tables.id("tables", "tern")
    (got,) = tables.read(table_entry=p4r.TableEntry(table_id=tid, is_default_action=True))
    assert got.table_entry.is_default_action
    assert got.table_entry.action.action.action_id == tables.id("actions", "set_port")
    assert tables.packet(0x23)[0].port == 1
    default = tables.entry("tern", action=tables.action("set_port", 6), is_default_action=True)
    tables.write(MODIFY, table_entry=default)
    assert tables.packet(0x23)[0].port == 6
    (got,) = tables.read(table_entry=p4r.TableEntry(table_id=tid, is_default_action=True))
    assert got.table_entry.action.action.params[0].value == b"\x06"
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=default)
    fails(C.INVALID_ARGUMENT, tables.write, DELETE, table_entry=default)
    with_match = tables.entry("tern", [exact(2, 0)], tables.action("drop"),
                              is_default_action=True)
    fails(C.INVALID_ARGUMENT, tables.write, MODIFY, table_entry=with_match)
    # MODIFY with no action resets to the program's default
    tables.write(MODIFY, table_entry=tables.entry("tern", is_default_action=True))
    assert tables.packet(0x23)[0].port == 1
    # @defaultonly NoAction is fine as a default, not as an entry
    tables.write(MODIFY, table_entry=tables.entry("rng", action=tables.action("NoAction"),
                                                  is_default_action=True))
    # a keyless table: only its default action, which may be the renamed top-level action
    tables.write(MODIFY, table_entry=tables.entry(
        "keyless", action=tables.action("set_d_top", 9), is_default_action=True))
    (got,) = tables.read(table_entry=p4r.TableEntry(table_id=tables.id("tables", "keyless"),
                                                    is_default_action=True))
    assert got.table_entry.action.action.action_id == tables.id("actions", "set_d_top")
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "keyless", action=tables.action("set_c", 1)))


def test_read_all_tables_and_idle_timeout(tables: Rig) -> None:
    tables.write(INSERT, table_entry=tables.entry("ex", [exact(1, 1)],
                                                  tables.action("set_b_counted", 1)))
    got = tables.read(table_entry=p4r.TableEntry())
    assert {e.table_entry.table_id for e in got} == {tables.id("tables", "ex"),
                                                      tables.id("tables", "fixed")}
    fails(C.INVALID_ARGUMENT, tables.write, INSERT, table_entry=tables.entry(
        "ex", [exact(1, 2)], tables.action("set_b_counted", 1), idle_timeout_ns=1000),
        match="idle timeout")


# -- action profiles -----------------------------------------------------------------------------

def _member(rig: Rig, profile: str, mid: int, action: p4r.Action) -> p4r.ActionProfileMember:
    return p4r.ActionProfileMember(action_profile_id=rig.id("action_profiles", profile),
                                   member_id=mid, action=action)


def test_action_profile_members(profiles: Rig) -> None:
    profiles.write(INSERT, action_profile_member=_member(profiles, "prof", 1,
                                                         profiles.action("set_b", 0x11)))
    fails(C.ALREADY_EXISTS, profiles.write, INSERT, action_profile_member=_member(
        profiles, "prof", 1, profiles.action("set_b", 0x11)))
    te = profiles.entry("indirect", [exact(1, 3)])
    te.action.action_profile_member_id = 1
    profiles.write(INSERT, table_entry=te)
    assert profiles.packet(3)[0].data[1] == 0x11
    profiles.write(MODIFY, action_profile_member=_member(profiles, "prof", 1,
                                                         profiles.action("set_b", 0x22)))
    assert profiles.packet(3)[0].data[1] == 0x22
    (got,) = profiles.read(table_entry=p4r.TableEntry(table_id=te.table_id))
    assert got.table_entry.action.action_profile_member_id == 1
    (m,) = profiles.read(action_profile_member=p4r.ActionProfileMember())
    assert m.action_profile_member.action.params[0].value == b"\x22"
    # in use → cannot delete; unknown member in entry; direct action in indirect table
    fails(C.FAILED_PRECONDITION, profiles.write, DELETE,
          action_profile_member=_member(profiles, "prof", 1, p4r.Action()))
    te2 = profiles.entry("indirect", [exact(1, 4)])
    te2.action.action_profile_member_id = 99
    fails(C.NOT_FOUND, profiles.write, INSERT, table_entry=te2)
    fails(C.INVALID_ARGUMENT, profiles.write, INSERT, table_entry=profiles.entry(
        "indirect", [exact(1, 4)], profiles.action("set_b", 1)), match="action profile")
    fails(C.NOT_FOUND, profiles.write, MODIFY, action_profile_member=_member(
        profiles, "prof", 5, profiles.action("set_b", 1)))
    profiles.write(DELETE, table_entry=profiles.entry("indirect", [exact(1, 3)]))
    profiles.write(DELETE, action_profile_member=_member(profiles, "prof", 1, p4r.Action()))
    assert profiles.read(action_profile_member=p4r.ActionProfileMember()) == []
    # a profile without selector has no groups
    fails(C.INVALID_ARGUMENT, profiles.write, INSERT, action_profile_group=p4r.ActionProfileGroup(
        action_profile_id=profiles.id("action_profiles", "prof"), group_id=1))


def test_selector_groups_with_weights(profiles: Rig) -> None:
    sel = profiles.id("action_profiles", "sel")
    for mid, port in ((1, 4), (2, 5)):
        profiles.write(INSERT, action_profile_member=_member(profiles, "sel", mid,
                                                             profiles.action("set_port", port)))
    group = p4r.ActionProfileGroup(action_profile_id=sel, group_id=10, max_size=4)
    group.members.add(member_id=1, weight=1)
    group.members.add(member_id=2, weight=3, watch_port=b"\x07")
    profiles.write(INSERT, action_profile_group=group)
    te = profiles.entry("ecmp", [exact(1, 1)])
    te.action.action_profile_group_id = 10
    profiles.write(INSERT, table_entry=te)
    # identity hash on c: the 4 slots are member 1 once and member 2 three times
    ports = [profiles.packet(1, c=c)[0].port for c in range(4)]
    assert sorted(ports) == [4, 5, 5, 5]
    (got,) = profiles.read(action_profile_group=p4r.ActionProfileGroup(action_profile_id=sel))
    assert [(m.member_id, m.weight) for m in got.action_profile_group.members] == [(1, 1), (2, 3)]
    assert got.action_profile_group.members[1].watch_port == b"\x07"
    # MODIFY to member 1 only
    group2 = p4r.ActionProfileGroup(action_profile_id=sel, group_id=10)
    group2.members.add(member_id=1, weight=1)
    profiles.write(MODIFY, action_profile_group=group2)
    assert {profiles.packet(1, c=c)[0].port for c in range(4)} == {4}
    # too many members, unknown member, duplicates, existing group
    big = p4r.ActionProfileGroup(action_profile_id=sel, group_id=11, max_size=2)
    big.members.add(member_id=1, weight=2)
    big.members.add(member_id=2, weight=1)
    fails(C.RESOURCE_EXHAUSTED, profiles.write, INSERT, action_profile_group=big)
    unknown = p4r.ActionProfileGroup(action_profile_id=sel, group_id=11)
    unknown.members.add(member_id=42, weight=1)
    fails(C.NOT_FOUND, profiles.write, INSERT, action_profile_group=unknown)
    fails(C.ALREADY_EXISTS, profiles.write, INSERT, action_profile_group=group)
    fails(C.FAILED_PRECONDITION, profiles.write, DELETE, action_profile_group=group)
    assert len(profiles.read(action_profile_group=p4r.ActionProfileGroup())) == 1
    profiles.write(DELETE, table_entry=profiles.entry("ecmp", [exact(1, 1)]))
    profiles.write(DELETE, action_profile_group=group)
    fails(C.NOT_FOUND, profiles.write, DELETE, action_profile_group=group)


def test_one_shot_action_set(profiles: Rig) -> None:
    te = profiles.entry("ecmp", [exact(1, 2)])
    aset = te.action.action_profile_action_set
    aset.action_profile_actions.add(action=profiles.action("set_port", 6), weight=1)
    aset.action_profile_actions.add(action=profiles.action("set_port", 7), weight=1)
    profiles.write(INSERT, table_entry=te)
    assert {profiles.packet(2, c=c)[0].port for c in range(2)} == {6, 7}
    (got,) = profiles.read(table_entry=p4r.TableEntry(table_id=te.table_id))
    assert got.table_entry.action.action_profile_action_set == aset
    # members cannot be added while the profile is in one-shot mode
    fails(C.INVALID_ARGUMENT, profiles.write, INSERT, action_profile_member=_member(
        profiles, "sel", 1, profiles.action("set_port", 1)), match="one-shot")
    assert profiles.read(action_profile_member=p4r.ActionProfileMember()) == []
    profiles.write(DELETE, table_entry=profiles.entry("ecmp", [exact(1, 2)]))
    profiles.write(INSERT, action_profile_member=_member(profiles, "sel", 1,
                                                         profiles.action("set_port", 1)))


# -- counters, meters, registers -----------------------------------------------------------------

def test_indexed_counter(externs: Rig) -> None:
    cid = externs.id("counters", "pkt_ctr")
    externs.packet(3)
    externs.packet(3)
    (got,) = externs.read(counter_entry=p4r.CounterEntry(counter_id=cid,
                                                         index=p4r.Index(index=3)))
    assert (got.counter_entry.data.packet_count, got.counter_entry.data.byte_count) == (2, 16)
    assert len(externs.read(counter_entry=p4r.CounterEntry(counter_id=cid))) == 8
    write = p4r.CounterEntry(counter_id=cid, index=p4r.Index(index=3))
    write.data.packet_count = 50
    externs.write(MODIFY, counter_entry=write)
    externs.packet(3)
    (got,) = externs.read(counter_entry=p4r.CounterEntry(counter_id=cid,
                                                         index=p4r.Index(index=3)))
    assert got.counter_entry.data.packet_count == 51
    fails(C.OUT_OF_RANGE, externs.read, counter_entry=p4r.CounterEntry(
        counter_id=cid, index=p4r.Index(index=8)))
    fails(C.INVALID_ARGUMENT, externs.write, INSERT, counter_entry=write)
    wildcard = p4r.CounterEntry(counter_id=cid)  # unset index: every index
    externs.write(MODIFY, counter_entry=wildcard)
    assert all(e.counter_entry.data.packet_count == 0
               for e in externs.read(counter_entry=p4r.CounterEntry()))


def test_indexed_meter(externs: Rig) -> None:
    mid = externs.id("meters", "pkt_meter")
    me = p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=0))
    me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = 1, 1, 1, 1
    externs.write(MODIFY, meter_entry=me)
    colours = [externs.packet(1)[0].data[7] for _ in range(3)]
    assert colours[0] == 0 and colours[-1] == 2
    got = externs.read(meter_entry=p4r.MeterEntry(meter_id=mid))
    assert got[0].meter_entry.config == me.config
    assert not got[1].meter_entry.HasField("config")
    bad = p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))
    bad.config.cir, bad.config.pir = 5, 1
    fails(C.INVALID_ARGUMENT, externs.write, MODIFY, meter_entry=bad)
    externs.write(MODIFY, meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=0)))
    assert externs.packet(1)[0].data[7] == 0  # reset: unconfigured → GREEN


def test_register_read_write(externs: Rig) -> None:
    rid = externs.id("registers", "regs")
    externs.packet(2)
    (got,) = externs.read(register_entry=p4r.RegisterEntry(register_id=rid,
                                                           index=p4r.Index(index=2)))
    assert got.register_entry.data.bitstring == b"\x01"
    entry = p4r.RegisterEntry(register_id=rid, index=p4r.Index(index=2))
    entry.data.bitstring = b"\x00\x00\x12\x34"  # padded is accepted
    externs.write(MODIFY, register_entry=entry)
    assert externs.packet(2)[0].data[2:4] == b"\x12\x34"
    entry.data.bitstring = b"\x01\x00\x00"
    fails(C.INVALID_ARGUMENT, externs.write, MODIFY, register_entry=entry, match="16 bits")
    fails(C.OUT_OF_RANGE, externs.write, MODIFY, register_entry=p4r.RegisterEntry(
        register_id=rid, index=p4r.Index(index=99)))
    assert len(externs.read(register_entry=p4r.RegisterEntry())) == 8


# -- PRE, digests, value sets --------------------------------------------------------------------

def test_multicast_group(externs: Rig) -> None:
    pre = p4r.PacketReplicationEngineEntry()
    g = pre.multicast_group_entry
    g.multicast_group_id = 5
    g.replicas.add(port=b"\x03", instance=1)
    g.replicas.add(port=b"\x00\x04", instance=1)
    externs.write(INSERT, packet_replication_engine_entry=pre)
    assert sorted(p for p, _ in externs.packet(0xCC)) == [3, 4]
    fails(C.ALREADY_EXISTS, externs.write, INSERT, packet_replication_engine_entry=pre)
    (got,) = externs.read(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=p4r.MulticastGroupEntry()))
    assert [(r.port, r.instance) for r in
            got.packet_replication_engine_entry.multicast_group_entry.replicas] == \
        [(b"\x03", 1), (b"\x04", 1)]
    g.ClearField("replicas")
    g.replicas.add(egress_port=6, instance=2)
    externs.write(MODIFY, packet_replication_engine_entry=pre)
    assert [p for p, _ in externs.packet(0xCC)] == [6]
    externs.write(DELETE, packet_replication_engine_entry=pre)
    fails(C.NOT_FOUND, externs.write, DELETE, packet_replication_engine_entry=pre)
    fails(C.NOT_FOUND, externs.write, MODIFY, packet_replication_engine_entry=pre)
    g.multicast_group_id = 0
    fails(C.INVALID_ARGUMENT, externs.write, INSERT, packet_replication_engine_entry=pre)
    g.multicast_group_id = 9
    g.replicas[0].backup_replicas.add(port=b"\x01")
    fails(C.UNIMPLEMENTED, externs.write, INSERT, packet_replication_engine_entry=pre)


def test_clone_session(externs: Rig) -> None:
    pre = p4r.PacketReplicationEngineEntry()
    s = pre.clone_session_entry
    s.session_id = 7
    s.replicas.add(egress_port=8, instance=0)
    s.packet_length_bytes = 4
    externs.write(INSERT, packet_replication_engine_entry=pre)
    out = externs.packet(0xC1)
    assert (8, 4) in [(p, len(d)) for p, d in out]
    (got,) = externs.read(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        clone_session_entry=p4r.CloneSessionEntry()))
    assert got.packet_replication_engine_entry.clone_session_entry == s
    fails(C.ALREADY_EXISTS, externs.write, INSERT, packet_replication_engine_entry=pre)
    s.session_id = 0
    fails(C.INVALID_ARGUMENT, externs.write, INSERT, packet_replication_engine_entry=pre)


def test_a_v1model_clone_session_keeps_bmv2_s_cos_and_length_rules(externs: Rig) -> None:
    """As PI serves simple_switch_grpc: no class of service on INSERT, and a MODIFY moves the
    replicas only (the length stays the inserted one)."""
    pre = p4r.PacketReplicationEngineEntry()
    s = pre.clone_session_entry
    s.session_id = 7
    s.replicas.add(egress_port=8, instance=0)
    s.class_of_service = 3
    fails(C.UNIMPLEMENTED, externs.write, INSERT, packet_replication_engine_entry=pre)
    assert not externs.store.replication.pre.has_clone_session(7)
    s.class_of_service = 0
    s.packet_length_bytes = 4
    externs.write(INSERT, packet_replication_engine_entry=pre)
    s.ClearField("replicas")
    s.replicas.add(egress_port=9, instance=0)
    s.packet_length_bytes = 0
    s.class_of_service = 2
    externs.write(MODIFY, packet_replication_engine_entry=pre)
    assert (9, 4) in [(p, len(d)) for p, d in externs.packet(0xC1)]
    (got,) = externs.read(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        clone_session_entry=p4r.CloneSessionEntry()))
    read = got.packet_replication_engine_entry.clone_session_entry
    assert (read.class_of_service, read.packet_length_bytes) == (0, 4)


def test_digest_config_and_p4data(externs: Rig) -> None:
    did = externs.id("digests", "learn_t")
    assert externs.store.digest_config(did) is None
    entry = p4r.DigestEntry(digest_id=did)
    entry.config.max_list_size = 1
    externs.write(INSERT, digest_entry=entry)
    assert externs.store.digest_config(did).max_list_size == 1  # type: ignore[union-attr]
    fails(C.ALREADY_EXISTS, externs.write, INSERT, digest_entry=entry)
    (got,) = externs.read(digest_entry=p4r.DigestEntry())
    assert got.digest_entry == entry
    externs.packet(0xD1, c=0x0102, port=3)
    (digest,) = externs.switch.digests
    got_id, data = externs.store.digest_to_p4data(digest)
    assert got_id == did
    assert [m.bitstring for m in data.struct.members] == [b"\xd1", b"\x03", b"\x01\x02"]
    externs.write(DELETE, digest_entry=entry)
    fails(C.NOT_FOUND, externs.write, MODIFY, digest_entry=entry)
    fails(C.INVALID_ARGUMENT, externs.write, INSERT, digest_entry=p4r.DigestEntry(digest_id=123))
    fails(C.NOT_FOUND, externs.store.digest_to_p4data, Digest("nope", 1, (1,)))


def test_value_set(externs: Rig) -> None:
    vid = externs.id("value_sets", "special")
    vse = p4r.ValueSetEntry(value_set_id=vid)
    vse.members.add().match.add(field_id=1, exact=p4r.FieldMatch.Exact(value=b"\x42"))
    externs.write(MODIFY, value_set_entry=vse)
    assert externs.packet(0x42)[0].data[1] == 0x55
    assert externs.packet(0x43)[0].data[1] == 0
    (got,) = externs.read(value_set_entry=p4r.ValueSetEntry(value_set_id=vid))
    assert got.value_set_entry == vse
    fails(C.INVALID_ARGUMENT, externs.write, INSERT, value_set_entry=vse)
    for _ in range(4):
        vse.members.add().match.add(field_id=1, exact=p4r.FieldMatch.Exact(value=b"\x01"))
    fails(C.RESOURCE_EXHAUSTED, externs.write, MODIFY, value_set_entry=vse)
    assert externs.packet(0x42)[0].data[1] == 0x55  # unchanged


def test_unsupported_entity(externs: Rig) -> None:
    fails(C.UNIMPLEMENTED, externs.write, MODIFY, extern_entry=p4r.ExternEntry())
    fails(C.INVALID_ARGUMENT, externs.store.write, p4r.Update(type=MODIFY))


def test_read_results_insert_back_unchanged(profiles: Rig) -> None:
    """What a read returns is a valid INSERT (the pipeline-reconcile path replays it)."""
    sel = profiles.id("action_profiles", "sel")
    profiles.write(INSERT, action_profile_member=_member(profiles, "sel", 1,
                                                         profiles.action("set_port", 4)))
    profiles.write(INSERT, action_profile_member=_member(profiles, "prof", 2,
                                                         profiles.action("set_b", 9)))
    group = p4r.ActionProfileGroup(action_profile_id=sel, group_id=3, max_size=4)
    group.members.add(member_id=1, weight=2)
    profiles.write(INSERT, action_profile_group=group)
    te = profiles.entry("ecmp", [exact(1, 1)])
    te.action.action_profile_group_id = 3
    profiles.write(INSERT, table_entry=te)
    te2 = profiles.entry("indirect", [exact(1, 1)])
    te2.action.action_profile_member_id = 2
    profiles.write(INSERT, table_entry=te2)
    queries = [dict(action_profile_member=p4r.ActionProfileMember()),
               dict(action_profile_group=p4r.ActionProfileGroup()),
               dict(table_entry=p4r.TableEntry())]
    before = [profiles.read(**q) for q in queries]
    fresh = Rig("p4rt_profiles.p4")
    for entities in before:
        for entity in entities:
            fresh.store.write(p4r.Update(type=INSERT, entity=entity))
    assert [fresh.read(**q) for q in queries] == before
    assert [fresh.packet(1, c=c) for c in range(4)] == [profiles.packet(1, c=c) for c in range(4)]
