"""P4Info ids ⇄ engine objects, matched by name.

P4Info preamble names (p4info/collect.py, as p4c writes them) equal the engine's control-plane
names (ir/names.py) for tables, match fields, externs, value sets and digests. Actions differ in
one case (DESIGN.md, "Known naming difference"): a top-level action with a relative ``@name("x")``
is ``<Control>.x`` in P4Info but ``x`` in the engine, so an action is looked up by its full
name first, then by the engine name that is a dot-suffix of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from finsy.proto import p4i

from softswitch.engine.switch import Switch
from softswitch.engine.tables import ActionSpec, Table
from softswitch.errors import ControlPlaneError
from softswitch.runtime.p4rt.write_error import invalid

T = TypeVar("T")


@dataclass
class ActionInfo:
    """One P4Info action: its id, name and parameters (id → (index, name, bitwidth))."""

    id: int
    name: str
    params: dict[int, tuple[int, str, int]]


@dataclass
class TableInfo:
    """One P4Info table with its engine table and per-action engine specs."""

    proto: p4i.Table
    table: Table
    fields: dict[int, tuple[int, p4i.MatchField]]  # field id → (key index, P4Info field)
    actions: dict[int, ActionSpec | None]  # action id → engine spec (None: engine lacks it)
    scopes: dict[int, int]  # action id → p4i.ActionRef scope
    action_ids: dict[str, int] = field(default_factory=dict)  # engine action name → id

    @property
    def id(self) -> int:
        return self.proto.preamble.id

    @property
    def name(self) -> str:
        return self.proto.preamble.name

    @property
    def needs_priority(self) -> bool:
        """P4Runtime's rule: a priority iff some key is ternary, range or optional."""
        kinds = (p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL)
        return any(f.match_type in kinds for f in self.proto.match_fields)


class P4InfoIndex:
    """Lookup tables from P4Info ids to engine objects (and back) for one pipeline."""

    def __init__(self, p4info: p4i.P4Info, switch: Switch) -> None:
        self.p4info = p4info
        self.switch = switch
        self.actions = {
            a.preamble.id: ActionInfo(
                a.preamble.id, a.preamble.name,
                {p.id: (i, p.name, p.bitwidth) for i, p in enumerate(a.params)},
            )
            for a in p4info.actions
        }
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
        return TableInfo(t, engine, fields, actions, {r.id: r.scope for r in t.action_refs}, ids)

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
