"""PlannedEntry ⇄ canonical form, P4Runtime wire bytes and Entity, fast: what a push does per
entry.

The general path (reconcile.to_table_entry: a p4rt TableEntry builder, then its proto) resolves
names and checks every rule per entry, about 110 µs each in Python (canonical form and the
update's bytes); a 131,072-NIC fabric pushes hundreds of millions. `PlanCodec` resolves each
table, field, action and parameter name once (full P4Info names or unique dot-suffixes, as the
builders take them) and checks and encodes plain ints straight into protobuf wire bytes
(`encode`, `encoding`): about 9 µs on medium.yaml's 2,448 entries. It handles what plans hold
(exact, LPM, ternary, range and optional fields with int values, an action with int params, no
default entries); anything else — a value too wide, a missing exact field, a wrong priority,
an action out of its scope, a name P4Info lacks or two planned names for one field — goes to
the general path, which raises the error that names the problem. Read-back entities are decoded
the same way (`from_entity`, and `decode_entity` straight from a Read's bytes).
tests/controller/test_codec.py checks both paths give the same result, to the byte, on every
entry of real plans and on entries they must refuse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from finsy.proto import p4i, p4r

from controller.plan.entries import MatchValue, PlannedEntry
from p4rt.entities import make_update
from p4rt.errors import P4RuntimeClientError
from p4rt.protowire import SMALL as _SMALL
from p4rt.protowire import VarintTooLong, decode_varint
from p4rt.protowire import encode_varint as _varint
from p4rt.schema import Schema

_KIND = p4i.MatchField.MatchType
# Plain ints: protobuf's enum wrapper costs a lookup per attribute access.
EXACT, LPM, TERNARY, RANGE, OPTIONAL = (_KIND.Value(k) for k in
                                        ("EXACT", "LPM", "TERNARY", "RANGE", "OPTIONAL"))
_NEEDS_PRIORITY = (TERNARY, RANGE, OPTIONAL)

# -- protobuf wire format (developers.google.com/protocol-buffers/docs/encoding) ---------------
# Field tags of p4/v1/p4runtime.proto as one byte each: (number << 3) | wire type, 0 = varint,
# 2 = length-delimited. Fields are written in field-number order and zero values left out,
# as protobuf itself serialises them, so `encode` equals SerializeToString to the byte.
# Fields and parameters up to this width take the fast path: their encodings are then shorter
# than 128 bytes, so their lengths are one byte.
_WIDE = 256


def _bytes(n: int) -> bytes:
    """The canonical bytestring of `n` (P4Runtime spec 8.4: shortest, at least one byte)."""
    return n.to_bytes((n.bit_length() + 7) // 8 or 1, "big")


def _value(tag: bytes, n: int) -> bytes:
    """A bytes field (`tag`, length, data) holding canonical `n`."""
    data = n.to_bytes((n.bit_length() + 7) // 8 or 1, "big")
    size = len(data)
    return tag + (_SMALL[size] if size < 128 else _varint(size)) + data


def _varint_field(tag: int, n: int) -> bytes:
    """A varint field, or nothing for zero (proto3 leaves default values out)."""
    return _SMALL[tag] + _varint(n) if n else b""


def encode_update(kind: int, table_entry: bytes) -> bytes:
    """An Update (type, entity.table_entry) around an encoded TableEntry."""
    size = len(table_entry)
    entity = b"\x12" + (_SMALL[size] if size < 128 else _varint(size)) + table_entry
    size = len(entity)   # Entity.table_entry = 2, then Update.type = 1, entity = 2
    return _varint_field(0x08, kind) + b"\x12" + (_SMALL[size] if size < 128
                                                   else _varint(size)) + entity


@dataclass(frozen=True, slots=True)
class _Field:
    id: int
    name: str
    kind: int
    width: int
    head: bytes   # FieldMatch.field_id (1) and the tag of its kind's message
    bit: int      # 1 << its position in the table's key
    full: int     # all `width` bits set
    prefixes: tuple[int, ...]   # LPM: the mask of each prefix length


def _field_id(item: tuple[_Field, MatchValue]) -> int:
    return item[0].id


@dataclass(frozen=True, slots=True)
class _Param:
    id: int
    name: str
    width: int
    head: bytes   # Param.param_id (2) and the tag of Param.value (3)
    index: int    # position in P4Info order
    full: int     # all `width` bits set


@dataclass(frozen=True, slots=True)
class _Action:
    id: int
    name: str
    order: tuple[_Param, ...]           # P4Info order, as action_to_proto writes them
    params: dict[str, _Param | None]    # planned name -> param (None: the general path)
    by_id: dict[int, _Param]
    head: bytes                         # Action.action_id (1)


@dataclass(slots=True)
class _Table:
    id: int
    name: str
    info: p4i.Table
    fields: dict[str, _Field | None]     # planned name -> field (None: the general path)
    by_id: dict[int, _Field]
    exact: int                           # how many exact fields (each must be given)
    needs_priority: bool
    head: bytes                          # TableEntry.table_id (1)
    actions: dict[str, _Action | None] = field(default_factory=dict)  # planned name -> action


# FieldMatch: exact = 2, ternary = 3, lpm = 4, range = 6, optional = 7
_KIND_TAG = {EXACT: b"\x12", TERNARY: b"\x1a", LPM: b"\x22", RANGE: b"\x32", OPTIONAL: b"\x3a"}
_Parts = tuple[_Table, list[tuple[_Field, MatchValue]], _Action, list[int], bool]


def _prefix_masks(field: p4i.MatchField) -> tuple[int, ...]:
    """For an LPM field, the mask of each prefix length 0 .. width."""
    if field.match_type != LPM:
        return ()
    full = (1 << field.bitwidth) - 1
    return tuple(full ^ ((1 << (field.bitwidth - n)) - 1) for n in range(field.bitwidth + 1))


# `canonical` keeps the checked form of at most this many entries for `encode` (a push of one
# switch's plan encodes what it canonicalised; this bounds a codec that lives longer).
_CHECKED_LIMIT = 1 << 18


class _Slow(Exception):
    """This entry takes the general path."""


class PlanCodec:
    """Canonical entries, wire bytes and entities for one P4Info (the general path for the
    rest)."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._tables: dict[str, _Table | None] = {}
        self._by_id: dict[int, _Table | None] = {}
        self._actions: dict[int, _Action | None] = {}   # by id, for decoding
        # canonical entries by id, with their checked form (the entry is kept, so its id
        # stays its own)
        self._checked: dict[int, tuple[PlannedEntry, _Parts]] = {}
        self._reader: _EntityReader | None = None

    # -- names, resolved once ------------------------------------------------------------------
    def _table(self, name: str) -> _Table:
        table = self._tables.get(name)
        if table is None:
            if name in self._tables:
                raise _Slow
            try:
                info = self.schema.table(name)
            except P4RuntimeClientError:
                table = None
            else:
                table = self._table_by_id(info.preamble.id)
            self._tables[name] = table
            if table is None:
                raise _Slow
        return table

    def _table_by_id(self, table_id: int) -> _Table | None:
        if table_id in self._by_id:
            return self._by_id[table_id]
        table: _Table | None = None
        try:
            info = self.schema.table(table_id)
        except P4RuntimeClientError:
            info = None
        # other match kinds, or fields without a width: the general path
        if info is not None and info.preamble.id and all(
                f.WhichOneof("match") == "match_type" and f.match_type in _KIND_TAG
                and 0 < f.bitwidth <= _WIDE for f in info.match_fields):
            by_id = {f.id: _Field(f.id, f.name, f.match_type, f.bitwidth,
                                  _varint_field(0x08, f.id) + _KIND_TAG[f.match_type],
                                  1 << k, (1 << f.bitwidth) - 1, _prefix_masks(f))
                     for k, f in enumerate(info.match_fields)}
            if len(by_id) == len(info.match_fields):   # ids unique, or nothing is fast
                table = _Table(info.preamble.id, info.preamble.name, info,
                               {f.name: f for f in by_id.values()}, by_id,
                               sum(f.kind == EXACT for f in by_id.values()),
                               any(f.kind in _NEEDS_PRIORITY for f in by_id.values()),
                               _varint_field(0x08, info.preamble.id))
        self._by_id[table_id] = table
        return table

    def _field(self, table: _Table, name: str) -> _Field:
        f = table.fields.get(name)
        if f is None:
            if name not in table.fields:
                try:
                    info = self.schema.match_field(table.info, name)
                except P4RuntimeClientError:
                    f = None
                else:
                    f = table.by_id.get(info.id)
                table.fields[name] = f
            if f is None:
                raise _Slow
        return f

    def _action(self, table: _Table, name: str) -> _Action:
        action = table.actions.get(name)
        if action is None:
            if name not in table.actions:
                try:
                    info = self.schema.table_action(table.info, name)
                    ref = self.schema.action_ref(table.info, info.preamble.id)
                except P4RuntimeClientError:
                    action = None
                else:
                    usable = ref is None or ref.scope != p4i.ActionRef.DEFAULT_ONLY
                    action = self._action_by_id(info.preamble.id) if usable else None
                table.actions[name] = action
            if action is None:
                raise _Slow
        return action

    def _action_by_id(self, action_id: int) -> _Action | None:
        if action_id in self._actions:
            return self._actions[action_id]
        action: _Action | None = None
        try:
            info = self.schema.action(action_id)
        except P4RuntimeClientError:
            info = None
        if info is not None and info.preamble.id and all(0 < p.bitwidth <= _WIDE and p.id
                                                         for p in info.params):
            order = tuple(_Param(p.id, p.name, p.bitwidth, _varint_field(0x10, p.id) + b"\x1a",
                                 k, (1 << p.bitwidth) - 1) for k, p in enumerate(info.params))
            by_id = {p.id: p for p in order}
            if len(by_id) == len(order) and len({p.name for p in order}) == len(order):
                action = _Action(info.preamble.id, info.preamble.name, order,
                                 {p.name: p for p in order}, by_id,
                                 _varint_field(0x08, info.preamble.id))
        self._actions[action_id] = action
        return action

    def _param(self, action: _Action, name: str) -> _Param:
        p = action.params.get(name)
        if p is None:
            if name not in action.params:
                try:
                    info = self.schema.param(action.name, name)
                except P4RuntimeClientError:
                    p = None
                else:
                    p = action.by_id.get(info.id)
                action.params[name] = p
            if p is None:
                raise _Slow
        return p

    # -- planned entries -----------------------------------------------------------------------
    def _parts(self, entry: PlannedEntry) -> _Parts:
        """(table, [(field, canonical value)] by field id, action, param values in P4Info
        order, whether `entry` is already canonical); _Slow for anything unusual."""
        if entry.is_default or not entry.action:
            raise _Slow
        table = self._tables.get(entry.table) or self._table(entry.table)
        priority = entry.priority
        if type(priority) is not int or priority < 0 or table.needs_priority != (priority > 0):
            raise _Slow
        same = entry.table == table.name
        fields: list[tuple[_Field, MatchValue]] = []
        exact = 0
        seen = 0   # a bit per field: two planned names for one field go to the builder
        previous = ""
        known = table.fields
        for name, value in entry.match:
            f = known.get(name) or self._field(table, name)
            if seen & f.bit:
                raise _Slow
            seen |= f.bit
            if name != f.name or name <= previous:
                same = False  # a suffix name, or not in canonical (sorted) order
            previous = name
            kind = f.kind
            if kind in (EXACT, OPTIONAL):
                if type(value) is not int or not 0 <= value <= f.full:
                    raise _Slow
                exact += kind == EXACT
                fields.append((f, value))
                continue
            if type(value) is not tuple or len(value) != 2:
                raise _Slow
            a, b = value
            if type(a) is not int or type(b) is not int or not 0 <= a <= f.full:
                raise _Slow
            if kind == LPM:
                if not 0 <= b <= f.width:
                    raise _Slow
                if b:
                    masked = a & f.prefixes[b]
                    if masked != a:
                        same = False
                        value = (masked, b)
                    fields.append((f, value))
                else:
                    same = False   # /0 is a don't care: left out
            elif kind == TERNARY:
                if not 0 <= b <= f.full:
                    raise _Slow
                if b:
                    if a & b != a:
                        same = False
                        value = (a & b, b)
                    fields.append((f, value))
                else:
                    same = False
            else:   # RANGE
                if not a <= b <= f.full:
                    raise _Slow
                if a or b != f.full:
                    fields.append((f, value))
                else:
                    same = False
        if exact != table.exact:
            raise _Slow
        action = table.actions.get(entry.action) or self._action(table, entry.action)
        order = action.order
        if len(entry.params) != len(order):
            raise _Slow
        if entry.action != action.name:
            same = False
        values: list[int] = [-1] * len(order)
        previous = ""
        params = action.params
        for name, value in entry.params:
            p = params.get(name) or self._param(action, name)
            if type(value) is not int or not 0 <= value <= p.full or values[p.index] >= 0:
                raise _Slow
            values[p.index] = value
            if name != p.name or name <= previous:
                same = False
            previous = name
        if len(fields) > 1:
            fields.sort(key=_field_id)
        return table, fields, action, values, same

    @staticmethod
    def _canonical_of(parts: _Parts, priority: int) -> PlannedEntry:
        table, fields, action, values, _ = parts
        match = tuple(sorted((f.name, v) for f, v in fields))
        params = tuple(sorted((action.order[k].name, values[k]) for k in range(len(values))))
        return PlannedEntry(table.name, match, action.name, params, priority, False)

    def canonical(self, entry: PlannedEntry) -> PlannedEntry:
        """reconcile.canonical's answer (`entry` itself when it is canonical already)."""
        try:
            parts = self._parts(entry)
        except _Slow:
            from controller.devices.reconcile import canonical
            return canonical(self.schema, entry)
        canon = entry if parts[4] else self._canonical_of(parts, entry.priority)
        # a push encodes what it canonicalised (reconcile.diff): keep the work for `encode`
        if len(self._checked) < _CHECKED_LIMIT:
            self._checked[id(canon)] = (canon, parts)
        return canon

    def canonical_update(self, kind: int, entry: PlannedEntry) -> tuple[PlannedEntry, bytes]:
        """`canonical(entry)` and the wire bytes of its `update(kind, ...)`, with nothing kept
        for later (a stream of them makes no long-lived objects for the collector)."""
        try:
            parts = self._parts(entry)
        except _Slow:
            canon = self.canonical(entry)
            return canon, self.encode(kind, canon)
        canon = entry if parts[4] else self._canonical_of(parts, entry.priority)
        return canon, encode_update(kind, self._table_entry(parts, entry.priority))

    def _checked_parts(self, entry: PlannedEntry) -> _Parts:
        """`_parts(entry)`, from what `canonical` kept when it made `entry`."""
        kept = self._checked.get(id(entry))
        if kept is not None and kept[0] is entry:
            return kept[1]
        return self._parts(entry)

    def encode(self, kind: int, entry: PlannedEntry) -> bytes:
        """The wire bytes of `update(kind, entry)` (its checks and errors included)."""
        try:
            parts = self._checked_parts(entry)
        except _Slow:
            return self.update(kind, entry).SerializeToString()
        return encode_update(kind, self._table_entry(parts, entry.priority))

    def encoding(self, kind: int, entries: Sequence[PlannedEntry]) -> Iterator[bytes]:
        """`encode` of each entry, lazily: every entry is checked now (raising as `encode`
        would, before anything is sent), each is encoded when the iterator reaches it."""
        ready: list[_Parts | bytes] = []
        for entry in entries:
            try:
                ready.append(self._checked_parts(entry))
            except _Slow:
                ready.append(self.update(kind, entry).SerializeToString())
        return self._encoded(kind, entries, ready)

    def _encoded(self, kind: int, entries: Sequence[PlannedEntry],
                 ready: list[_Parts | bytes]) -> Iterator[bytes]:
        table_entry = self._table_entry
        for k in range(len(ready)):
            parts = ready[k]
            yield parts if type(parts) is bytes else encode_update(
                kind, table_entry(parts, entries[k].priority))  # type: ignore[arg-type]

    def update(self, kind: int, entry: PlannedEntry) -> p4r.Update:
        """make_update(kind, to_table_entry(schema, entry))'s answer (its checks included)."""
        try:
            parts = self._checked_parts(entry)
        except _Slow:
            from controller.devices.reconcile import to_table_entry
            return make_update(kind, to_table_entry(self.schema, entry))
        return p4r.Update.FromString(encode_update(kind, self._table_entry(parts,
                                                                           entry.priority)))

    @staticmethod
    def _table_entry(parts: _Parts, priority: int) -> bytes:
        """The TableEntry's wire bytes."""
        table, fields, action, values, _ = parts
        small = _SMALL   # every length inside a field or a parameter is below 128 (_WIDE)
        te = table.head
        for f, v in fields:
            if type(v) is int:   # exact, optional: Exact/Optional.value = 1
                data = v.to_bytes((v.bit_length() + 7) // 8 or 1, "big")
                inner = b"\x0a" + small[len(data)] + data
            else:
                a, b = v
                data = a.to_bytes((a.bit_length() + 7) // 8 or 1, "big")
                if f.kind == LPM:  # LPM.value = 1, prefix_len = 2
                    inner = b"\x0a" + small[len(data)] + data + (
                        b"\x10" + small[b] if b < 128 else b"\x10" + _varint(b))
                else:              # Ternary.value, mask / Range.low, high = 1, 2
                    other = b.to_bytes((b.bit_length() + 7) // 8 or 1, "big")
                    inner = (b"\x0a" + small[len(data)] + data + b"\x12" + small[len(other)]
                             + other)
            fm = f.head + small[len(inner)] + inner
            te += b"\x12" + small[len(fm)] + fm                   # TableEntry.match = 2
        body = action.head
        order = action.order
        for k in range(len(order)):
            v = values[k]
            data = v.to_bytes((v.bit_length() + 7) // 8 or 1, "big")
            param = order[k].head + small[len(data)] + data        # Param.param_id, value
            body += b"\x22" + small[len(param)] + param           # Action.params = 4
        size = len(body)
        call = b"\x0a" + (small[size] if size < 128 else _varint(size)) + body
        size = len(call)   # TableAction.action = 1, TableEntry.action = 3
        te += b"\x1a" + (small[size] if size < 128 else _varint(size)) + call
        if priority:
            te += b"\x20" + _varint(priority)                      # TableEntry.priority = 4
        return te

    # -- read-back entities --------------------------------------------------------------------
    def decode_entity(self, data: bytes) -> PlannedEntry | None:
        """What `diff` compares of a read-back Entity given as its wire bytes
        (Session.read_encoded): `from_entity`'s answer for a table entry, None for what the
        diff leaves alone (a const entry, another kind of entity). Plain entries are read
        off the bytes (`_EntityReader`), the rest through the parsed message."""
        if self._reader is None:
            self._reader = _EntityReader(self)
        entry = self._reader.decode(data)
        if entry is not None:
            return entry
        entity = p4r.Entity.FromString(data)
        if entity.WhichOneof("entity") != "table_entry" or entity.table_entry.is_const:
            return None
        return self.from_entity(entity)

    def from_entity(self, entity: p4r.Entity) -> PlannedEntry:
        """reconcile.from_entity's answer: a switch's table entry as a canonical PlannedEntry."""
        try:
            return self._decode(entity.table_entry)
        except _Slow:
            from controller.devices.reconcile import from_entity
            return from_entity(self.schema, entity)

    def _decode(self, te: p4r.TableEntry) -> PlannedEntry:
        table = self._table_by_id(te.table_id)
        if table is None:
            raise _Slow
        by_id = table.by_id
        match: list[tuple[str, MatchValue]] = []
        fields = te.match
        for k in range(len(fields)):   # indexing is faster than upb's iterator
            fm = fields[k]
            f = by_id.get(fm.field_id)
            if f is None:
                raise _Slow
            which = fm.WhichOneof("field_match_type")   # as read, whatever the P4Info says
            value: MatchValue
            if which == "exact":
                value = int.from_bytes(fm.exact.value, "big")
            elif which == "lpm":
                value = (int.from_bytes(fm.lpm.value, "big"), fm.lpm.prefix_len)
            elif which == "ternary":
                t = fm.ternary
                value = (int.from_bytes(t.value, "big"), int.from_bytes(t.mask, "big"))
            elif which == "range":
                r = fm.range
                value = (int.from_bytes(r.low, "big"), int.from_bytes(r.high, "big"))
            elif which == "optional":
                value = int.from_bytes(fm.optional.value, "big")
            else:
                raise _Slow
            match.append((f.name, value))
        if len({name for name, _ in match}) != len(match):
            raise _Slow   # a field twice: the general path keeps the last
        call = te.action
        which = call.WhichOneof("type")
        name = ""
        params: list[tuple[str, int]] = []
        if which == "action":
            a = call.action
            action = self._action_by_id(a.action_id)
            if action is None:
                raise _Slow
            name = action.name
            items = a.params
            for k in range(len(items)):
                item = items[k]
                p = action.by_id.get(item.param_id)
                if p is None:
                    raise _Slow
                params.append((p.name, int.from_bytes(item.value, "big")))
            if len({n for n, _ in params}) != len(params):
                raise _Slow
        elif which is not None:
            raise _Slow   # members, groups, action sets
        match.sort()
        params.sort()
        return PlannedEntry(table.name, tuple(match), name, tuple(params), te.priority,
                            te.is_default_action)


# -- read-back entities off the wire ------------------------------------------------------------
# A Read's entities decoded through upb's Python objects cost a wrapper object per sub-message,
# about 20 µs an entry; one compiled expression over their bytes (the `re` engine is C) reads a
# plain entry (direct action, no extras) in a few. Only the layout servers send is accepted —
# fields in number order within each message, lengths pinned by the expression or checked
# against what they enclose — and anything else goes to the parsed message, so the bytes are
# never read differently from upb.

_LEN = rb"([\x00-\x7f]|[\x80-\xff][\x01-\x7f])"   # a length below 16,384, one or two bytes


def _sizes(width: int) -> range:
    """A `width`-bit value's possible bytestring sizes, full size first (the usual one)."""
    return range((width + 7) // 8, 0, -1)


def _value_group(width: int) -> bytes:
    """One group: a length byte and a value of that many bytes."""
    return b"(" + b"|".join(re.escape(bytes((n,))) + b"." * n for n in _sizes(width)) + b")"


def _length(data: bytes) -> int:
    return data[0] if len(data) == 1 else (data[0] & 0x7F) | data[1] << 7


@dataclass(frozen=True, slots=True)
class _ReadSlot:
    """One (table, action) alternative of `_EntityReader`'s expression."""

    table: str
    # per field, P4Info order: (name, first group, value offset | head size, kind)
    fields: tuple[tuple[str, int, int, int], ...]
    lengths: int                                # group of TableEntry.action's length
    action: str
    params: tuple[tuple[str, int, int], ...]    # (name, group, value offset)
    sort_fields: bool                           # P4Info order is not name order
    sort_params: bool


class _EntityReader:
    """Table entries of one P4Info read off the wire (PlanCodec.decode_entity)."""

    def __init__(self, codec: PlanCodec) -> None:
        self.slots: dict[int, _ReadSlot] = {}
        group = 1   # Entity.table_entry's length is group 0
        alternatives = []
        for info in codec.schema.p4info.tables:
            table = codec._table_by_id(info.preamble.id)
            if table is None:
                continue
            pattern = re.escape(_varint(table.id))          # TableEntry.table_id = 1
            fields = []
            for f in (table.by_id[m.id] for m in info.match_fields):
                head = _varint_field(0x08, f.id) + _KIND_TAG[f.kind]   # FieldMatch.field_id
                if f.kind in (TERNARY, RANGE):   # value, mask / low, high: checked lengths
                    part = (b"\x12([\x00-\x7f])" + re.escape(head) + b"([\x00-\x7f])\x0a"
                            + _value_group(f.width) + b"\x12" + _value_group(f.width))
                    fields.append((f.name, group, len(head), f.kind))
                    group += 4
                else:                            # value (and LPM prefix_len): pinned lengths
                    alternatives_f = []
                    for n in _sizes(f.width):
                        tails = ((1, rb"\x10[\x01-\x7f]"), (2, rb"\x10[\x80-\xff][\x01-\x7f]")
                                 ) if f.kind == LPM else ((0, b""),)
                        for extra, tail in tails:
                            inner = 2 + n + (1 + extra if extra else 0)
                            alternatives_f.append(re.escape(bytes((len(head) + 1 + inner,)) + head
                                                            + bytes((inner, 0x0A, n)))
                                                  + b"." * n + tail)
                    part = b"\x12(" + b"|".join(alternatives_f) + b")"
                    fields.append((f.name, group, 1 + len(head) + 3, f.kind))
                    group += 1
                pattern += b"(?:" + part + b")?"   # TableEntry.match = 2, don't cares left out
            pattern += rb"\x1a" + _LEN + rb"\x0a" + _LEN + rb"\x08(?:"
            lengths = group
            group += 2
            actions = []
            names = [name for name, *_ in fields]
            for ref in info.action_refs:
                action = codec._action_by_id(ref.id)
                if action is None:
                    continue
                part = b""
                params = []
                for p in action.order:   # Action.params = 4: param_id = 2, value = 3
                    head = _varint_field(0x10, p.id) + b"\x1a"
                    part += b"\x22(" + b"|".join(
                        re.escape(bytes((len(head) + 1 + n,)) + head + bytes((n,))) + b"." * n
                        for n in _sizes(p.width)) + b")"
                    params.append((p.name, group, 1 + len(head) + 1))
                    group += 1
                actions.append(re.escape(_varint(action.id)) + part + b"()")
                group += 1
                pnames = [p.name for p in action.order]
                self.slots[group] = _ReadSlot(table.name, tuple(fields), lengths, action.name,
                                              tuple(params), names != sorted(names),
                                              pnames != sorted(pnames))
            if actions:
                alternatives.append(pattern + b"|".join(actions) + b")")
        # Entity.table_entry = 2, then TableEntry.table_id = 1 (the id: each table's own)
        self.pattern = (re.compile(b"\x12" + _LEN + b"\x08(?:" + b"|".join(alternatives) + b")",
                                   re.DOTALL) if alternatives else None)

    def decode(self, b: bytes) -> PlannedEntry | None:
        """The canonical PlannedEntry of a plain table entry's Entity bytes, else None."""
        if self.pattern is None:
            return None
        m = self.pattern.match(b)
        if m is None:
            return None
        slot = self.slots[m.lastindex]  # type: ignore[index]
        groups = m.groups()
        end = len(b)
        i = m.end()
        g = slot.lengths
        if (_length(groups[0]) != end - m.end(1) or _length(groups[g]) != i - m.end(g + 1)
                or _length(groups[g + 1]) != i - m.end(g + 2)):
            return None
        priority = 0
        if i < end:
            if b[i] != 0x20:   # TableEntry.priority = 4; anything else: the parsed message
                return None
            try:
                priority, i = decode_varint(b, i + 1)
            except (IndexError, VarintTooLong):
                return None
            if i != end or priority >> 31:   # negative, or past int32
                return None
        from_bytes = int.from_bytes
        match: list[tuple[str, MatchValue]] = []
        for name, group, offset, kind in slot.fields:
            v = groups[group]
            if v is None:
                continue
            if kind == LPM:
                if v[-2] == 0x10:   # prefix_len in one byte (the value tag precedes it)
                    match.append((name, (from_bytes(v[offset:-2], "big"), v[-1])))
                else:
                    match.append((name, (from_bytes(v[offset:-3], "big"),
                                         (v[-2] & 0x7F) | v[-1] << 7)))
            elif kind in (TERNARY, RANGE):
                size, inner, first, second = groups[group:group + 4]
                if size[0] != offset + 1 + inner[0] or inner[0] != len(first) + len(second) + 2:
                    return None
                match.append((name, (from_bytes(first[1:], "big"), from_bytes(second[1:], "big"))))
            else:
                match.append((name, from_bytes(v[offset:], "big")))
        params = [(name, from_bytes(groups[group][offset:], "big"))
                  for name, group, offset in slot.params]
        if slot.sort_fields:
            match.sort()
        if slot.sort_params:
            params.sort()
        return PlannedEntry(slot.table, tuple(match), slot.action, tuple(params), priority, False)
