"""PlannedEntry → canonical form and P4Runtime Entity, fast: what a push does per entry.

The general path (reconcile.to_table_entry: a p4rt TableEntry builder, then its proto) resolves
names and checks every rule per entry, about 100 µs each in Python; a 131,072-NIC fabric pushes
hundreds of millions. `PlanCodec` resolves each table and action once and encodes plain ints
directly. It handles what plans hold (exact, LPM, ternary, range and optional fields with int
values, an action with int params, no default entries); anything else — a value too wide, a
missing exact field, a wrong priority, an action out of its scope, a name P4Info lacks — goes to
the general path, which raises the error that names the problem. tests/controller/
test_codec.py checks both paths give the same result on every entry of real plans.
"""

from __future__ import annotations

from dataclasses import dataclass

from finsy.proto import p4i, p4r

from controller.plan.entries import PlannedEntry
from p4rt.entities import make_update
from p4rt.errors import P4RuntimeClientError
from p4rt.schema import Schema

_KIND = p4i.MatchField.MatchType
# Plain ints: protobuf's enum wrapper costs a lookup per attribute access.
EXACT, LPM, TERNARY, RANGE, OPTIONAL = (_KIND.Value(k) for k in
                                        ("EXACT", "LPM", "TERNARY", "RANGE", "OPTIONAL"))
_NEEDS_PRIORITY = (TERNARY, RANGE, OPTIONAL)


def _bytes(n: int) -> bytes:
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")


@dataclass(frozen=True, slots=True)
class _Field:
    id: int
    name: str
    kind: int
    width: int


@dataclass(frozen=True, slots=True)
class _Action:
    id: int
    name: str
    params: dict[str, tuple[int, int]]  # name -> (id, bitwidth), in P4Info order


@dataclass(frozen=True, slots=True)
class _Table:
    id: int
    name: str
    fields: dict[str, _Field]
    exact: frozenset[str]
    needs_priority: bool
    actions: dict[str, _Action | None]  # planned name -> action (None: not an entry action)


class _Slow(Exception):
    """This entry takes the general path."""


class PlanCodec:
    """Canonical entries and entities for one P4Info (the general path for the rest)."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._tables: dict[str, _Table | None] = {}

    def _table(self, name: str) -> _Table:
        if name not in self._tables:
            try:
                info = self.schema.table(name)
            except P4RuntimeClientError:
                self._tables[name] = None
            else:
                fields = {f.name: _Field(f.id, f.name, f.match_type, f.bitwidth)
                          for f in info.match_fields if f.WhichOneof("match") == "match_type"}
                if len(fields) != len(info.match_fields):
                    self._tables[name] = None   # other match kinds: the general path
                else:
                    self._tables[name] = _Table(
                        info.preamble.id, info.preamble.name, fields,
                        frozenset(n for n, f in fields.items() if f.kind == EXACT),
                        any(f.kind in _NEEDS_PRIORITY for f in fields.values()), {})
        table = self._tables[name]
        if table is None:
            raise _Slow
        return table

    def _action(self, table: _Table, name: str) -> _Action:
        if name not in table.actions:
            try:
                info = self.schema.table_action(table.name, name)
                ref = self.schema.action_ref(self.schema.table(table.name), info.preamble.id)
            except P4RuntimeClientError:
                table.actions[name] = None
            else:
                usable = ref is None or ref.scope != p4i.ActionRef.DEFAULT_ONLY
                table.actions[name] = _Action(
                    info.preamble.id, info.preamble.name,
                    {p.name: (p.id, p.bitwidth) for p in info.params}) if usable else None
        action = table.actions[name]
        if action is None:
            raise _Slow
        return action

    def _fields(self, table: _Table, entry: PlannedEntry
                ) -> list[tuple[_Field, tuple[int, ...]]]:
        """(field, canonical value) per field that matters, in field-id order."""
        out: list[tuple[_Field, tuple[int, ...]]] = []
        named = set()
        for name, value in entry.match:
            f = table.fields.get(name)
            if f is None:
                raise _Slow
            named.add(name)
            limit = 1 << f.width
            if f.kind in (EXACT, OPTIONAL):
                if not isinstance(value, int) or not 0 <= value < limit:
                    raise _Slow
                out.append((f, (value,)))
            elif f.kind == LPM:
                if not isinstance(value, tuple):
                    raise _Slow
                base, plen = value
                if not 0 <= base < limit or not 0 <= plen <= f.width:
                    raise _Slow
                if plen:
                    mask = (limit - 1) ^ ((1 << (f.width - plen)) - 1)
                    out.append((f, (base & mask, plen)))
            elif f.kind == TERNARY:
                if not isinstance(value, tuple):
                    raise _Slow
                base, mask = value
                if not (0 <= base < limit and 0 <= mask < limit):
                    raise _Slow
                if mask:
                    out.append((f, (base & mask, mask)))
            else:   # RANGE
                if not isinstance(value, tuple):
                    raise _Slow
                low, high = value
                if not (0 <= low <= high < limit):
                    raise _Slow
                if low or high != limit - 1:
                    out.append((f, (low, high)))
        if not table.exact <= named:
            raise _Slow
        out.sort(key=lambda item: item[0].id)
        return out

    def _parts(self, entry: PlannedEntry) -> tuple[_Table, list, _Action, list]:
        if entry.is_default or not entry.action:
            raise _Slow
        table = self._table(entry.table)
        if table.needs_priority != (entry.priority > 0) or entry.priority < 0:
            raise _Slow
        fields = self._fields(table, entry)
        action = self._action(table, entry.action)
        if len(entry.params) != len(action.params):
            raise _Slow
        params = []
        for name, value in entry.params:
            found = action.params.get(name)
            if found is None or not isinstance(value, int) or not 0 <= value < 1 << found[1]:
                raise _Slow
            params.append((found[0], name, value))
        return table, fields, action, params

    def canonical(self, entry: PlannedEntry) -> PlannedEntry:
        """reconcile.canonical's answer."""
        try:
            table, fields, action, params = self._parts(entry)
        except _Slow:
            from controller.devices.reconcile import canonical
            return canonical(self.schema, entry)
        match = tuple(sorted((f.name, v[0] if len(v) == 1 else v) for f, v in fields))
        return PlannedEntry(table.name, match, action.name,  # type: ignore[arg-type]
                            tuple(sorted((name, value) for _, name, value in params)),
                            entry.priority, False)

    def update(self, kind: int, entry: PlannedEntry) -> p4r.Update:
        """make_update(kind, to_table_entry(schema, entry))'s answer (its checks included)."""
        try:
            return p4r.Update(type=kind, entity=self._entity(entry))  # type: ignore[arg-type]
        except _Slow:
            from controller.devices.reconcile import to_table_entry
            return make_update(kind, to_table_entry(self.schema, entry))

    def _entity(self, entry: PlannedEntry) -> p4r.Entity:
        table, fields, action, params = self._parts(entry)
        message = p4r.TableEntry(table_id=table.id, priority=entry.priority)
        for f, v in fields:
            m = message.match.add(field_id=f.id)
            if f.kind == EXACT:
                m.exact.value = _bytes(v[0])
            elif f.kind == LPM:
                m.lpm.value, m.lpm.prefix_len = _bytes(v[0]), v[1]
            elif f.kind == TERNARY:
                m.ternary.value, m.ternary.mask = _bytes(v[0]), _bytes(v[1])
            elif f.kind == RANGE:
                m.range.low, m.range.high = _bytes(v[0]), _bytes(v[1])
            else:
                m.optional.value = _bytes(v[0])
        call = message.action.action
        call.action_id = action.id
        values = {name: value for _, name, value in params}
        for name, (param_id, _) in action.params.items():   # P4Info order, as action_to_proto
            call.params.add(param_id=param_id, value=_bytes(values[name]))
        return p4r.Entity(table_entry=message)
