"""P4Info ids ⇄ engine objects, matched by name.

P4Info preamble names (p4info/collect.py, as p4c writes them) equal the engine's control-plane
names (ir/names.py) for tables, actions (a top-level action with a relative ``@name("x")`` is
``<Control>.x`` in both, ir/names.action_name), match fields, externs, value sets and digests.
An action is looked up by its full name first, then by an engine name that is a dot-suffix of
it (a P4Info written by another generator).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from finsy.proto import p4i

from softswitch.engine.switch import Switch
from softswitch.engine.tables import ActionSpec, Match, Table, dont_care
from softswitch.errors import ControlPlaneError
from softswitch.runtime.server.write_error import invalid

T = TypeVar("T")


# P4Info match type → the FieldMatch oneof name (and the engine's match kind)
MATCH_KINDS = {
    p4i.MatchField.EXACT: "exact",
    p4i.MatchField.LPM: "lpm",
    p4i.MatchField.TERNARY: "ternary",
    p4i.MatchField.RANGE: "range",
    p4i.MatchField.OPTIONAL: "optional",
}
_PRIORITY_TYPES = (p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL)
# FieldMatch's field numbers (p4runtime.proto) as tag bytes of a length-delimited field
_KIND_TAGS = {"exact": 0x12, "ternary": 0x1a, "lpm": 0x22, "range": 0x32, "optional": 0x3a}


@dataclass(frozen=True, slots=True)
class FieldDecoder:
    """How to decode one match field in the write fast path (table_entries.py)."""

    index: int  # position in the key
    kind: str  # FieldMatch oneof name, equal to the engine key field's match kind
    width: int
    full: int  # all `width` bits set
    tag: int   # the tag byte of its kind's message in a FieldMatch (table_entries.py)


# an entry action: (engine spec, param ids in order, their bitwidths,
#                   param id → (index, bitwidth))
ActionDecoder = tuple[ActionSpec, tuple[int, ...], tuple[int, ...], dict[int, tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class FastPath:
    """A table whose P4Info description agrees with its engine table in everything the
    engine validates (field kinds and widths, priority rule, action parameters), so a
    request that passes the P4Runtime checks needs no second check in the engine."""

    decoders: dict[int, FieldDecoder]  # field id → decoder
    # the engine's value for each omitted field (None: exact, a value is required)
    defaults: tuple[Match | None, ...]
    required: tuple[int, ...]  # key fields that must be given (exact)
    actions: dict[int, ActionDecoder]  # entry action id → decoder


@dataclass
class ActionInfo:
    """One P4Info action: its id, name and parameters (id → (index, name, bitwidth))."""

    id: int
    name: str
    params: dict[int, tuple[int, str, int]]
    problem: str | None = None  # why the P4Info action is unusable (a param id given twice)


@dataclass
class TableInfo:
    """One P4Info table with its engine table and per-action engine specs."""

    proto: p4i.Table
    table: Table
    fields: dict[int, tuple[int, p4i.MatchField]]  # field id → (key index, P4Info field)
    actions: dict[int, ActionSpec | None]  # action id → engine spec (None: engine lacks it)
    scopes: dict[int, int]  # action id → p4i.ActionRef scope
    action_ids: dict[str, int] = field(default_factory=dict)  # engine action name → id
    fast: FastPath | None = None  # None: every write takes the general path
    # P4Runtime's rule: a priority iff some key is ternary, range or optional
    needs_priority: bool = field(init=False)
    id: int = field(init=False)
    name: str = field(init=False)

    def __post_init__(self) -> None:
        # plain attributes, not properties: they are read on every write
        self.needs_priority = any(f.match_type in _PRIORITY_TYPES
                                  for f in self.proto.match_fields)
        self.id = self.proto.preamble.id
        self.name = self.proto.preamble.name


class P4InfoIndex:
    """Lookup tables from P4Info ids to engine objects (and back) for one pipeline."""

    def __init__(self, p4info: p4i.P4Info, switch: Switch) -> None:
        self.p4info = p4info
        self.switch = switch
        self.actions = {a.preamble.id: _action_info(a) for a in p4info.actions}
        self.tables: dict[int, TableInfo] = {}
        for t in p4info.tables:
            engine = _engine(switch.table, t.preamble.name, "table")
            self.tables[t.preamble.id] = self._table_info(t, engine)
        self.table_by_engine = {info.table.name: info for info in self.tables.values()}
        self.profiles = {
            p.preamble.id: (p, _engine(switch.action_profile, p.preamble.name, "action profile"))
            for p in p4info.action_profiles
        }
        self.counters = {c.preamble.id: (c, _engine(switch.counter, c.preamble.name, "counter"))
                         for c in p4info.counters}
        self.direct_counters = {
            c.preamble.id: (c, _engine(switch.direct_counter, c.preamble.name, "direct counter"))
            for c in p4info.direct_counters
        }
        self.meters = {m.preamble.id: (m, _engine(switch.meter, m.preamble.name, "meter"))
                       for m in p4info.meters}
        self.direct_meters = {
            m.preamble.id: (m, _engine(switch.direct_meter, m.preamble.name, "direct meter"))
            for m in p4info.direct_meters
        }
        self.registers = {
            r.preamble.id: (r, _engine(switch.register, r.preamble.name, "register"))
            for r in p4info.registers
        }
        self.value_sets = {
            v.preamble.id: (v, _engine(switch.value_set, v.preamble.name, "value set"))
            for v in p4info.value_sets
        }
        self.digests = {d.preamble.id: d for d in p4info.digests}
        self.digest_by_name = {d.preamble.name: d for d in p4info.digests}

    def _table_info(self, t: p4i.Table, engine: Table) -> TableInfo:
        fields = {f.id: (i, f) for i, f in enumerate(t.match_fields)}
        if len(t.match_fields) != len(engine.key_fields):
            raise invalid(f"P4Info table '{t.preamble.name}' has {len(t.match_fields)} match "
                          f"fields, the program's table {len(engine.key_fields)}")
        actions: dict[int, ActionSpec | None] = {}
        ids: dict[str, int] = {}
        for ref in t.action_refs:
            name = self.actions[ref.id].name
            spec = _engine_action(engine, name)
            actions[ref.id] = spec
            ids[spec.name if spec else name] = ref.id
        scopes = {r.id: r.scope for r in t.action_refs}
        info = TableInfo(t, engine, fields, actions, scopes, ids)
        info.fast = self._fast_path(info)
        return info

    def _fast_path(self, info: TableInfo) -> FastPath | None:
        """The table's FastPath, or None when P4Info and engine disagree somewhere (the
        general path then reports each problem as the engine finds it)."""
        table = info.table
        if (info.proto.is_const_table or table.immutable_entries or table.profile is not None
                or table.mode == "none" or info.needs_priority != table.needs_priority):
            return None
        decoders: dict[int, FieldDecoder] = {}
        for fid, (i, f) in info.fields.items():
            key = table.key_fields[i]
            kind = MATCH_KINDS.get(f.match_type)
            if kind is None or kind != key.match_kind or f.bitwidth != key.width:
                return None
            full = (1 << f.bitwidth) - 1
            decoders[fid] = FieldDecoder(i, kind, f.bitwidth, full, _KIND_TAGS[kind])
        defaults = [dont_care(key) for key in table.key_fields]
        actions: dict[int, ActionDecoder] = {}
        for aid, spec in info.actions.items():
            ainfo = self.actions[aid]
            if (spec is None or spec.default_only or table.actions.get(spec.name) is not spec
                    or info.scopes[aid] == p4i.ActionRef.DEFAULT_ONLY):
                continue
            widths = [w for (_i, _n, w) in sorted(ainfo.params.values())]
            if widths != [w for (_n, w) in spec.params]:
                continue
            params = {pid: (i, w) for pid, (i, _n, w) in ainfo.params.items()}
            ordered = sorted(params.items(), key=lambda item: item[1][0])
            actions[aid] = (spec, tuple(pid for pid, _ in ordered),
                            tuple(w for _, (_i, w) in ordered), params)
        required = tuple(i for i, d in enumerate(defaults) if d is None)
        return FastPath(decoders, tuple(defaults), required, actions)

    # -- lookups by P4Info id; an unknown id is INVALID_ARGUMENT, as PI answers ("Invalid P4 id")

    def table(self, table_id: int) -> TableInfo:
        return _get(self.tables, table_id, "table")

    def action(self, action_id: int) -> ActionInfo:
        return _get(self.actions, action_id, "action")

    def profile(self, profile_id: int) -> tuple[p4i.ActionProfile, Any]:
        return _get(self.profiles, profile_id, "action profile")

    def counter(self, counter_id: int) -> tuple[p4i.Counter, Any]:
        return _get(self.counters, counter_id, "counter")

    def direct_counter(self, counter_id: int) -> tuple[p4i.DirectCounter, Any]:
        return _get(self.direct_counters, counter_id, "direct counter")

    def meter(self, meter_id: int) -> tuple[p4i.Meter, Any]:
        return _get(self.meters, meter_id, "meter")

    def direct_meter(self, meter_id: int) -> tuple[p4i.DirectMeter, Any]:
        return _get(self.direct_meters, meter_id, "direct meter")

    def register(self, register_id: int) -> tuple[p4i.Register, Any]:
        return _get(self.registers, register_id, "register")

    def value_set(self, value_set_id: int) -> tuple[p4i.ValueSet, Any]:
        return _get(self.value_sets, value_set_id, "value set")

    def digest(self, digest_id: int) -> p4i.Digest:
        return _get(self.digests, digest_id, "digest")

    def profile_tables(self, profile_id: int) -> list[TableInfo]:
        return [info for info in self.tables.values()
                if info.proto.implementation_id == profile_id]


def _action_info(action: p4i.Action) -> ActionInfo:
    params = {p.id: (i, p.name, p.bitwidth) for i, p in enumerate(action.params)}
    info = ActionInfo(action.preamble.id, action.preamble.name, params)
    if len(params) != len(action.params):
        # positions past the id count would index out of range: refuse the action instead
        ids = [p.id for p in action.params]
        twice = next(pid for pid in ids if ids.count(pid) > 1)
        info.params = {}
        info.problem = (f"P4Info action '{info.name}' lists parameter id {twice} more than "
                        "once")
    return info


def _get(objects: dict[int, T], obj_id: int, kind: str) -> T:
    obj = objects.get(obj_id)
    if obj is None:
        raise invalid(f"no {kind} with id {obj_id} in the P4Info")
    return obj


def _engine(lookup: Callable[[str], T], name: str, kind: str) -> T:
    try:
        return lookup(name)
    except ControlPlaneError as exc:
        raise invalid(f"P4Info {kind} '{name}' is not in the program: {exc}") from exc


def _engine_action(table: Table, p4info_name: str) -> ActionSpec | None:
    spec = table.actions.get(p4info_name)
    if spec is not None:
        return spec
    suffixes = [s for n, s in table.actions.items() if p4info_name.endswith("." + n)]
    return suffixes[0] if len(suffixes) == 1 else None
