"""The TableEntry INSERT fast path (table_entries.py, FastPath in p4info_index.py) is an
optimisation only: for any request, valid or not, it must leave the same state and raise the
same error (code and message) as the general path. Checked differentially, on random
requests, against a store whose fast paths are switched off."""

from __future__ import annotations

import gc
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from finsy.proto import p4i, p4r

from p4rt.protowire import collections_deferred, decode_varint
from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch
from softswitch.engine.tables import ExactMatch, LpmMatch, TernaryMatch
from softswitch.errors import ControlPlaneError
from softswitch.p4info import build_p4info
from softswitch.runtime.server.entities import EntityStore, P4RuntimeWriteError
from softswitch.runtime.server.p4info_index import MATCH_KINDS
from softswitch.runtime.server.table_entries import TableEntries
from softswitch.runtime.server.wire import update_spans

P4_DIR = Path(__file__).resolve().parents[1] / "p4" / "runtime"
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@pytest.fixture(scope="module")
def checked() -> Any:
    return compile_file(P4_DIR / "p4rt_tables.p4")


def _store(checked: Any, *, fast: bool) -> EntityStore:
    store = EntityStore(SimpleNamespace(p4info=build_p4info(checked), switch=Switch(checked)))
    if not fast:
        for info in store.index.tables.values():
            info.fast = None
    return store


def _outcome(store: EntityStore, update: p4r.Update) -> tuple[str, str] | None:
    try:
        store.write(update)
    except P4RuntimeWriteError as exc:
        return exc.code.name, exc.message
    except Exception as exc:  # a bug either way; the two paths must still agree on it
        return type(exc).__name__, str(exc)
    return None


def _state(store: EntityStore) -> list[Any]:
    """Everything observable: the P4Runtime read-back and the engine's lookup structures."""
    out: list[Any] = []
    for info in store.index.tables.values():
        entities = store.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=info.id)))
        out.append(sorted(e.SerializeToString(deterministic=True) for e in entities))
        t = info.table
        out.append([(e.handle, e.matches, e.priority, e.action, e.args, e.meter is not None)
                    for e in t.entries.values()])
        out.append((sorted(t.exact, key=repr), [(mask, sorted(d)) for mask, d in t.lpm],
                    [(*r[:-1], r[-1].handle) for r in t.scan]))
    return out


def _bytes(rng: random.Random, width: int) -> bytes:
    """A bytestring for a `width`-bit field: mostly valid, sometimes empty, padded or too big."""
    roll = rng.random()
    if roll < 0.04:
        return b""
    if roll < 0.10:
        value = 1 << width  # one bit too many
    elif roll < 0.5:
        value = rng.randrange(4)
    else:
        value = rng.getrandbits(width)
    data = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
    if rng.random() < 0.1:
        data = b"\x00" + data  # padded: valid
    return data


def _field(rng: random.Random, f: p4i.MatchField) -> p4r.FieldMatch:
    fm = p4r.FieldMatch(field_id=f.id if rng.random() > 0.03 else 77)
    kinds = ["exact", "lpm", "ternary", "range", "optional"]
    kind = MATCH_KINDS[f.match_type] if rng.random() > 0.05 else rng.choice(kinds)
    w = f.bitwidth
    if kind == "exact":
        fm.exact.value = _bytes(rng, w)
    elif kind == "lpm":
        plen = rng.choice([0, 1, w // 2, w, w + 1, rng.randrange(w + 1)])
        value = rng.getrandbits(w)
        if rng.random() < 0.8:
            value &= ~((1 << (w - min(plen, w))) - 1)  # nothing past the prefix
        fm.lpm.prefix_len = plen
        fm.lpm.value = value.to_bytes((w + 7) // 8, "big") if rng.random() > 0.05 else b""
    elif kind == "ternary":
        fm.ternary.value, fm.ternary.mask = _bytes(rng, w), _bytes(rng, w)
        if rng.random() < 0.5:  # make value ⊆ mask most of the time
            v = int.from_bytes(fm.ternary.value or b"\x00", "big")
            m = int.from_bytes(fm.ternary.mask or b"\x00", "big")
            fm.ternary.value = (v & m).to_bytes(max(1, ((v & m).bit_length() + 7) // 8), "big")
    elif kind == "range":
        lo, hi = sorted(rng.getrandbits(w) for _ in range(2))
        if rng.random() < 0.1:
            lo, hi = hi, lo
        if rng.random() < 0.05:
            lo, hi = 0, (1 << w) - 1
        fm.range.low = lo.to_bytes((w + 7) // 8, "big")
        fm.range.high = hi.to_bytes((w + 7) // 8, "big") if rng.random() > 0.03 else b""
    else:
        fm.optional.value = _bytes(rng, w)
    return fm


def _entry(rng: random.Random, p4info: p4i.P4Info, table: p4i.Table) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=table.preamble.id)
    fields = list(table.match_fields)
    rng.shuffle(fields)
    for f in fields:
        if rng.random() < 0.85 or (f.match_type == p4i.MatchField.EXACT and rng.random() < 0.9):
            te.match.append(_field(rng, f))
    if te.match and rng.random() < 0.03:
        te.match.append(te.match[0])  # a field given twice
    needs = any(f.match_type in (p4i.MatchField.TERNARY, p4i.MatchField.RANGE,
                                 p4i.MatchField.OPTIONAL) for f in table.match_fields)
    if rng.random() < 0.1:
        te.priority = rng.choice([0, 1, 5, -1])
    else:
        te.priority = rng.choice([1, 5, 1000]) if needs else 0
    if rng.random() < 0.05:
        te.is_default_action = True
    actions = {a.preamble.id: a for a in p4info.actions}
    refs = [r.id for r in table.action_refs]
    roll = rng.random()
    if roll < 0.04:
        pass  # no action
    elif roll < 0.07:
        te.action.action_profile_member_id = 1
    else:
        aid = rng.choice(refs) if rng.random() > 0.1 else rng.choice([*actions, 0x01FFFFFF])
        te.action.action.action_id = aid
        params = list(actions[aid].params) if aid in actions else []
        rng.shuffle(params) if rng.random() < 0.2 else None
        for p in params:
            if rng.random() < 0.97:
                te.action.action.params.add(
                    param_id=p.id if rng.random() > 0.03 else 99, value=_bytes(rng, p.bitwidth))
    extra = rng.random()
    if extra < 0.03:
        te.counter_data.packet_count = 3
    elif extra < 0.06:
        te.meter_config.cir, te.meter_config.pir = 5, 10
    elif extra < 0.08:
        te.idle_timeout_ns = 1000
    elif extra < 0.12:
        te.controller_metadata, te.metadata = 7, b"cookie"
    return te


def test_fast_path_agrees_with_general_path(checked: Any) -> None:
    rng = random.Random(1234)
    fast, general = _store(checked, fast=True), _store(checked, fast=False)
    assert any(info.fast is not None for info in fast.index.tables.values())
    p4info = fast.index.p4info
    tables = list(p4info.tables)
    outcomes: list[tuple[str, str] | None] = []
    inserted: list[p4r.TableEntry] = []
    for _ in range(2500):
        kind = rng.choice([INSERT, INSERT, INSERT, MODIFY, DELETE])
        if kind != INSERT and inserted and rng.random() < 0.5:
            te = rng.choice(inserted)  # an entry that exists (or did)
        else:
            te = _entry(rng, p4info, rng.choice(tables))
        update = p4r.Update(type=kind)
        update.entity.table_entry.CopyFrom(te)
        got, want = _outcome(fast, update), _outcome(general, update)
        assert got == want, te
        outcomes.append(got)
        if kind == INSERT and got is None:
            inserted.append(te)
    assert _state(fast) == _state(general)
    # the random requests exercise both sides: many accepted, many refused for many reasons
    assert outcomes.count(None) > 250
    assert len({o[1].split(":")[-1] for o in outcomes if o is not None}) > 20
    assert sum(len(info.table.entries) for info in fast.index.tables.values()) > 100


def test_plain_inserts_take_the_fast_path(checked: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(checked, fast=True)

    def general(*args: object, **kwargs: object) -> None:
        raise AssertionError("the general insert path ran")

    monkeypatch.setattr(TableEntries, "_insert", general)
    index = store.index
    info = next(i for i in index.tables.values() if i.name.endswith(".lpm"))
    aid = next(a for a, s in info.actions.items() if s is not None and "metered" in s.name)
    for i in range(50):
        te = p4r.TableEntry(table_id=info.id)
        fm = te.match.add(field_id=1)
        fm.lpm.value, fm.lpm.prefix_len = (i << 24).to_bytes(4, "big"), 8
        te.action.action.action_id = aid
        te.action.action.params.add(param_id=1, value=bytes([i]))
        store.write(p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=te)))
    assert len(info.table.entries) == 50
    (read,) = store.read(p4r.Entity(table_entry=te))
    assert read.table_entry.action.action.params[0].value == b"\x31"
    # a duplicate falls back to the general path, which words the error
    with pytest.raises(P4RuntimeWriteError, match="with this match key exists") as dup:
        store.write(p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=te)))
    assert dup.value.code == grpc.StatusCode.ALREADY_EXISTS


def test_no_fast_path_where_p4info_and_engine_differ(checked: Any) -> None:
    store = _store(checked, fast=True)
    by_name = {info.name.rsplit(".", 1)[-1]: info for info in store.index.tables.values()}
    assert by_name["fixed"].fast is None      # const entries
    assert by_name["keyless"].fast is None    # no key
    assert by_name["lpm"].fast is not None
    tern = by_name["tern"].fast
    assert tern is not None and tern.required == (1,)  # the exact field
    # @defaultonly NoAction is no entry action
    noaction = [a for a, s in by_name["ex"].actions.items() if s is None or s.default_only]
    assert noaction and not set(noaction) & set(by_name["ex"].fast.actions)  # type: ignore[union-attr]


def test_engine_checked_entries(checked: Any) -> None:
    switch = Switch(checked)
    ex = switch.table("ex")  # size 4, exact
    spec = ex.actions[ex.action_names[0]]
    handles = [ex.add_checked_entry((ExactMatch(i),), spec, (i,), 0) for i in range(4)]
    assert ex.find_checked_entry((ExactMatch(2),), 0) is ex.entry(handles[2])
    assert ex.find_entry([ExactMatch(2)]) is ex.entry(handles[2])
    with pytest.raises(ControlPlaneError) as full:
        ex.add_checked_entry((ExactMatch(9),), spec, (9,), 0)
    assert full.value.code == "RESOURCE_EXHAUSTED"
    ex.delete_entry(handles[0])
    with pytest.raises(ControlPlaneError) as dup:
        ex.add_checked_entry((ExactMatch(1),), spec, (1,), 0)
    assert dup.value.code == "ALREADY_EXISTS"
    assert len(ex.entries) == 3 and ex.find_checked_entry((ExactMatch(1),), 0) is not None
    lpm = switch.table("lpm")
    lspec = lpm.actions[lpm.action_names[0]]
    h = lpm.add_checked_entry((LpmMatch(0x0A000000, 8),), lspec, (5,), 0)
    assert lpm.entry(h).meter is not None  # direct meter, as add_entry makes it
    assert lpm.find_checked_entry((LpmMatch(0x0A000000, 8),), 0) is lpm.entry(h)
    assert lpm.find_checked_entry((LpmMatch(0x0A000000, 8),), 3) is None  # no priorities here
    assert lpm.find_checked_entry((LpmMatch(0x0A000000, 16),), 0) is None
    lpm.delete_entry(h)
    assert lpm.find_entry([LpmMatch(0x0A000000, 8)]) is None and lpm.lpm == []
    with pytest.raises(ControlPlaneError, match="const entries"):
        switch.table("fixed").add_checked_entry((ExactMatch(1),), spec, (1,), 0)
    tern = switch.table("tern")
    tspec = tern.actions[tern.action_names[0]]
    h = tern.add_checked_entry((TernaryMatch(1, 1), ExactMatch(0)), tspec, (3,), 7)
    assert tern.find_entry([TernaryMatch(1, 1), ExactMatch(0)], 7) is tern.entry(h)


def test_collection_is_deferred_and_restored() -> None:
    assert gc.isenabled()
    with collections_deferred():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collections_deferred():
        raise RuntimeError
    assert gc.isenabled()
    gc.disable()
    try:  # collection managed by someone else: left alone
        with collections_deferred():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_error_codes_unchanged_for_fallbacks(checked: Any) -> None:
    store = _store(checked, fast=True)
    info = next(i for i in store.index.tables.values() if i.name.endswith(".lpm"))
    te = p4r.TableEntry(table_id=info.id)
    fm = te.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = b"\x0a\x00\x00\x01", 8
    te.action.action.action_id = next(a for a, s in info.actions.items()
                                      if s is not None and "metered" in s.name)
    te.action.action.params.add(param_id=1, value=b"\x01")
    with pytest.raises(P4RuntimeWriteError, match="past the /8") as bad:
        store.write(p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=te)))
    assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert not info.table.entries


# -- the fast path on the request's bytes (wire.py) ---------------------------------------------
# `write_encoded` reads plain table entry updates straight off a WriteRequest's bytes and must,
# like the parsed-message fast path, leave the same state and give the same error as the
# general path; on anything it does not read it changes nothing and the parsed update goes on.


def _encoded_outcome(store: EntityStore, data: bytes) -> tuple[str, str] | None:
    """A one-update WriteRequest's bytes through the server's order: bytes first, then the
    parsed update when the bytes path declines."""
    request = p4r.WriteRequest.FromString(data)
    spans = update_spans(data)
    assert spans is not None and len(spans) == len(request.updates) == 1
    try:
        if not store.write_encoded(data, *spans[0]):
            store.write(request.updates[0])
    except P4RuntimeWriteError as exc:
        return exc.code.name, exc.message
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None


def _request(update: p4r.Update) -> bytes:
    return p4r.WriteRequest(device_id=1, updates=[update]).SerializeToString()


def test_bytes_fast_path_agrees_with_general_path(checked: Any) -> None:
    rng = random.Random(4321)
    wire, general = _store(checked, fast=True), _store(checked, fast=False)
    p4info = wire.index.p4info
    tables = list(p4info.tables)
    outcomes: list[tuple[str, str] | None] = []
    inserted: list[p4r.TableEntry] = []
    taken = 0
    for _ in range(2500):
        kind = rng.choice([INSERT, INSERT, INSERT, MODIFY, DELETE])
        if kind != INSERT and inserted and rng.random() < 0.5:
            te = rng.choice(inserted)
        else:
            te = _entry(rng, p4info, rng.choice(tables))
        update = p4r.Update(type=kind)
        update.entity.table_entry.CopyFrom(te)
        data = _request(update)
        spans = update_spans(data)
        assert spans is not None
        if rng.random() < 0.02:   # declining changes nothing (on a copy of no state)
            probe = _store(checked, fast=True)
            if not probe.write_encoded(data, *spans[0]):
                assert _state(probe) == _state(_store(checked, fast=True))
        got, want = _encoded_outcome(wire, data), _outcome(general, update)
        assert got == want, te
        outcomes.append(got)
        if kind == INSERT and got is None:
            inserted.append(te)
    assert _state(wire) == _state(general)
    assert outcomes.count(None) > 250
    # the bytes path took a good share of them (plain entries are most of the accepted ones)
    plain = _store(checked, fast=True)
    for te in inserted:
        update = p4r.Update(type=INSERT)
        update.entity.table_entry.CopyFrom(te)
        data = _request(update)
        taken += plain.write_encoded(data, *update_spans(data)[0])  # type: ignore[index]
    assert taken > len(inserted) // 3


# A protobuf message as a list of (field number, wire type, value): int for varints, bytes or
# a nested list for length-delimited fields; enough to rewrite a request in ways that keep it
# valid protobuf but unusual (field order, repeats, unknown fields, long varints).
Tree = list[tuple[int, int, Any]]
# the length-delimited fields of an Update that are messages (the rest are bytes)
_MESSAGES = {"Update": {2: "Entity"}, "Entity": {2: "TableEntry"},
             "TableEntry": {2: "FieldMatch", 3: "TableAction", 6: "Meter", 7: "Counter"},
             "FieldMatch": {2: "Value", 3: "Value", 4: "Value", 6: "Value", 7: "Value"},
             "TableAction": {1: "Action"}, "Action": {4: "Param"}}


def _parse(data: bytes, kind: str) -> Tree:
    out: Tree = []
    i = 0
    while i < len(data):
        key, i = decode_varint(data, i)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, i = decode_varint(data, i)
            out.append((number, 0, value))
        else:
            assert wire_type == 2
            size, i = decode_varint(data, i)
            body = data[i:i + size]
            i += size
            inner = _MESSAGES.get(kind, {}).get(number)
            out.append((number, 2, _parse(body, inner) if inner else body))
    return out


def _varint_bytes(n: int, pad: int = 0) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    if pad:   # a longer, non-minimal encoding of the same number
        out.append(n | 0x80)
        out.extend(b"\x80" * (pad - 1))
        out.append(0)
    else:
        out.append(n)
    return bytes(out)


def _serialize(tree: Tree, pads: set[int], counter: list[int]) -> bytes:
    out = b""
    for number, wire_type, value in tree:
        counter[0] += 1
        pad = 1 if counter[0] in pads else 0
        out += _varint_bytes(number << 3 | wire_type)
        if wire_type == 0:
            out += _varint_bytes(value, pad)
        else:
            body = value if isinstance(value, bytes) else _serialize(value, pads, counter)
            out += _varint_bytes(len(body), pad) + body
    return out


def _messages(tree: Tree) -> list[Tree]:
    found = [tree]
    for _, _, value in tree:
        if isinstance(value, list):
            found.extend(_messages(value))
    return found


def _mutate(rng: random.Random, data: bytes) -> bytes:
    tree = _parse(data, "Update")
    for _ in range(rng.randint(1, 2)):
        message = rng.choice(_messages(tree))
        roll = rng.random()
        if not message:
            continue
        k = rng.randrange(len(message))
        if roll < 0.25:   # a field twice (a scalar: the last wins; a message: merged)
            message.insert(k, message[k])
        elif roll < 0.45 and len(message) > 1:   # out of order
            j = rng.randrange(len(message))
            message[k], message[j] = message[j], message[k]
        elif roll < 0.6:   # an unknown field
            message.insert(k, (rng.choice([14, 15, 99, 1000]), 0, rng.randrange(300)))
        elif roll < 0.75:   # a field dropped
            del message[k]
        elif roll < 0.9 and message[k][1] == 0:   # a nearby number
            number, wire_type, value = message[k]
            message[k] = (number, wire_type, max(0, value + rng.choice([-1, 1, 128, 1 << 32])))
    count = [0]
    _serialize(tree, set(), count)
    pads = {rng.randint(1, count[0])} if count[0] and rng.random() < 0.3 else set()
    return _serialize(tree, pads, [0])


def test_bytes_fast_path_on_unusual_encodings(checked: Any) -> None:
    """Valid protobuf that is not the plain layout — fields repeated (merged), reordered,
    unknown, dropped, varints padded — gives the general path's answer: the bytes are never
    read differently from upb."""
    rng = random.Random(99)
    wire, general = _store(checked, fast=True), _store(checked, fast=False)
    p4info = wire.index.p4info
    tables = [t for t in p4info.tables if wire.index.tables[t.preamble.id].fast is not None]
    compared = 0
    for _ in range(3000):
        te = _entry(rng, p4info, rng.choice(tables))
        update = p4r.Update(type=rng.choice([INSERT, INSERT, MODIFY, DELETE]))
        update.entity.table_entry.CopyFrom(te)
        body = _mutate(rng, update.SerializeToString())
        data = b"\x08\x01\x22" + _varint_bytes(len(body)) + body   # device_id 1, updates
        try:
            parsed = p4r.WriteRequest.FromString(data)
        except Exception:   # not protobuf any more: the server refuses the request whole
            continue
        got = _encoded_outcome(wire, data)
        assert got == _outcome(general, parsed.updates[0]), parsed.updates[0]
        compared += 1
    assert compared > 2000
    assert _state(wire) == _state(general)


def test_update_spans() -> None:
    update = p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=p4r.TableEntry(table_id=5)))
    request = p4r.WriteRequest(device_id=1, role="r", updates=[update, update],
                               election_id=p4r.Uint128(high=1, low=2))
    data = request.SerializeToString()
    spans = update_spans(data)
    assert spans is not None
    assert [p4r.Update.FromString(data[a:b]) for a, b in spans] == [update, update]
    assert update_spans(data + b"\x78\x01") is None   # an unknown field: no spans
    assert update_spans(data[:-1]) is None             # cut short
    assert update_spans(b"") == []


def _plain_update(store: EntityStore) -> p4r.Update:
    """An INSERT the bytes path takes: table `lpm`, its metered action with one param."""
    info = next(i for i in store.index.tables.values() if i.name.endswith(".lpm"))
    te = p4r.TableEntry(table_id=info.id)
    fm = te.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = b"\x0a\x00\x00\x00", 8
    te.action.action.action_id = next(a for a, s in info.actions.items()
                                      if s is not None and "metered" in s.name)
    te.action.action.params.add(param_id=1, value=b"\x07")
    return p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=te))


def test_bytes_fast_path_checks_every_length(checked: Any) -> None:
    """Lengths that end a message early leave the rest to its parent, where the same bytes
    are other fields: upb then reads another entity (here an action profile member, or a
    one-shot action set), and so must the server. A reader that trusted the layout over the
    lengths would insert the table entry instead."""
    plain = _plain_update(_store(checked, fast=True))
    body = plain.SerializeToString()
    assert _store(checked, fast=True).write_encoded(*_spans_of(_request(plain)))
    te = plain.entity.table_entry
    head = p4r.TableEntry(table_id=te.table_id, match=te.match).SerializeToString()
    action = te.action.SerializeToString()
    # Entity.table_entry ends before its action: the action's bytes are Entity field 3,
    # action_profile_member (the oneof's last member wins)
    entity = b"\x12" + bytes((len(head),)) + head + b"\x1a" + bytes((len(action),)) + action
    early_entry = b"\x08\x01\x12" + bytes((len(entity),)) + entity
    # TableAction.action ends after the action id: the params are TableAction field 4,
    # action_profile_action_set
    call = te.action.action
    aid = p4r.Action(action_id=call.action_id).SerializeToString()
    params = b"".join(b"\x22" + bytes((len(p),)) + p
                      for p in (q.SerializeToString() for q in call.params))
    table_action = b"\x0a" + bytes((len(aid),)) + aid + params
    entry = head + b"\x1a" + bytes((len(table_action),)) + table_action
    entity = b"\x12" + bytes((len(entry),)) + entry
    early_action = b"\x08\x01\x12" + bytes((len(entity),)) + entity
    for crafted in (early_entry, early_action):
        assert crafted != body
        data = b"\x08\x01\x22" + bytes((len(crafted),)) + crafted
        parsed = p4r.WriteRequest.FromString(data).updates[0]
        assert parsed != plain   # upb reads another update than the plain one
        wire, general = _store(checked, fast=True), _store(checked, fast=False)
        assert not wire.write_encoded(*_spans_of(data))
        assert _encoded_outcome(wire, data) == _outcome(general, parsed)
        assert _state(wire) == _state(general)


def _spans_of(data: bytes) -> tuple[bytes, int, int]:
    spans = update_spans(data)
    assert spans is not None and len(spans) == 1
    return data, spans[0][0], spans[0][1]


def test_encoded_read_gives_the_bytes_of_read(checked: Any) -> None:
    """`read_encoded` (what the server answers a controller's reconciling read with) gives,
    entity by entity, the bytes of `read`'s answer: for plain entries it encodes them itself,
    for the rest (extras, meters asked for...) it serialises `read`'s entity."""
    rng = random.Random(7)
    store = _store(checked, fast=True)
    p4info = store.index.p4info
    tables = list(p4info.tables)
    written = 0
    for _ in range(1500):
        te = _entry(rng, p4info, rng.choice(tables))
        for kind in (INSERT, MODIFY):
            update = p4r.Update(type=kind)
            update.entity.table_entry.CopyFrom(te)
            written += _outcome(store, update) is None
            te.controller_metadata = rng.choice([0, 0, 9])
    assert written > 300
    wildcards = [p4r.TableEntry()] + [p4r.TableEntry(table_id=t.preamble.id) for t in tables]
    for wildcard in wildcards:
        entity = p4r.Entity(table_entry=wildcard)
        encoded = store.read_encoded(entity)
        assert encoded is not None
        got = [data for _, data in encoded]
        assert got == [e.SerializeToString() for e in store.read(entity)]
    for declined in (p4r.TableEntry(is_default_action=True), p4r.TableEntry(priority=3),
                     p4r.TableEntry(counter_data=p4r.CounterData())):
        assert store.read_encoded(p4r.Entity(table_entry=declined)) is None
    assert store.read_encoded(p4r.Entity(counter_entry=p4r.CounterEntry())) is None
