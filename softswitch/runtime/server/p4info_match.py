"""Does a client's P4Info describe the program of its device config?

SetForwardingPipelineConfig takes both from the client, and they can disagree (the P4Info of
another build of the program, or one edited by hand). p4info_index.py maps P4Info objects onto
the engine by name and trusts the rest of what the P4Info says: with a match-field bitwidth of
2**31-1, say, every insert would then take half a second and hundreds of MB. So the client's
P4Info is compared with the one generated for the program (p4info/builder.py, as p4c writes it)
and the first difference is refused with INVALID_ARGUMENT.

Objects are paired by name. Ids are not compared (the client may pick its own, and they have
been checked to be self-consistent): a reference is compared through the name of what it points
to. Controller packet metadata ids are the exception, since packet I/O encodes metadata by id.
Documentation, annotations, pkg_info and type_info are ignored, except for the shape of the
types digests and registers use.

Actions no table refers to (p4c lists those an apply block calls) are compared leniently, since
p4c versions have differed on which of them they keep: one only the client lists is accepted
when the program declares an action of that name with the same parameters, and one only the
generated P4Info lists may be missing. p4c lists such an action without parameters (they are
bound at the call); one listed with the program's own parameters (older generators) is accepted too.
An action a table uses is checked through the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NoReturn, TypeVar

import grpc
from finsy.proto import p4i
from finsy.proto.p4.config.v1 import p4types_pb2

from softswitch.frontend import ast
from softswitch.frontend.types import EnumType
from softswitch.ir.checked import CheckedProgram
from softswitch.ir.names import control_plane_objects, qualified_name
from softswitch.p4info.typeinfo import TypeSpecs
from softswitch.runtime.server.status import RpcError

T = TypeVar("T")

# an action's parameters as the control plane sees them: (name, bitwidth) in order; a width of
# None when the type has none (p4c would not describe such an action)
Params = tuple[tuple[str, int | None], ...]

# Meter types: p4c leaves the field unset for v1model, whose meters are two-rate three-color.
_DEFAULT_METER_TYPE = p4i.MeterSpec.TWO_RATE_THREE_COLOR


def check_p4info_matches(p4info: p4i.P4Info, generated: p4i.P4Info,
                         program: CheckedProgram) -> None:
    """Raise RpcError(INVALID_ARGUMENT) naming the first difference between the client's
    `p4info` and `generated` (``build_p4info(program)``); see the module docstring."""
    _Matcher(p4info, generated, program).run()


def program_actions(program: CheckedProgram) -> dict[str, Params]:
    """Every action of `program` by each name p4c may give it in P4Info."""
    specs = TypeSpecs(program.program, program.errors, p4types_pb2.P4TypeInfo())
    controls = [b.path for b in program.blocks.values() if isinstance(b.decl, ast.ControlDecl)]
    found: dict[str, Params] = {}
    for obj in control_plane_objects(program).actions:
        assert isinstance(obj.decl, ast.ActionDecl)
        params = tuple((p.control_plane_name() or p.name, _param_width(specs, p))
                       for p in obj.decl.params if not p.direction)
        found.setdefault(obj.name, params)
        annotated = obj.decl.control_plane_name()
        if obj.block is None and annotated is not None and not annotated.startswith("."):
            # p4c copies a top-level action into each control using it, and a relative
            # @name("x") then becomes <Control>.x (DESIGN.md, "Known naming difference")
            for path in controls:
                found.setdefault(qualified_name(obj.decl, path), params)
    return found


def _param_width(specs: TypeSpecs, param: ast.Parameter) -> int | None:
    t = param.type
    if isinstance(t, EnumType) and t.underlying is None:
        return 0  # p4c writes no bitwidth for a plain enum (it names the type instead)
    if t is None:
        return None
    try:
        return specs.width(t)
    except TypeError:
        return None


def _fail(problem: str) -> NoReturn:
    raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                   f"P4Info does not match the program: {problem}")


def _same(where: str, what: str, theirs: object, ours: object) -> None:
    if theirs != ours:
        _fail(f"{where} has {what} {_text(theirs)}, the program's is {_text(ours)}")


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _quoted(name: str | None) -> str:
    return "none" if name is None else f"'{name}'"


def _names(items: Iterable[str]) -> str:
    return "[" + ", ".join(f"'{n}'" for n in sorted(items)) + "]"


def _sequence(where: str, what: str, theirs: Sequence[T], ours: Sequence[T],
              name: Callable[[T], str]) -> Iterator[tuple[str, T, T]]:
    """Pair two ordered lists (match fields, parameters...) by position, refusing a missing,
    extra or renamed item; yields (description, client item, program item)."""
    def label(item: T, i: int) -> str:
        return f"'{name(item)}'" if name(item) else f"#{i + 1}"  # unnamed: by position

    for i in range(max(len(theirs), len(ours))):
        if i >= len(theirs):
            _fail(f"{where} lacks the program's {what} {label(ours[i], i)}")
        if i >= len(ours):
            _fail(f"{where} has {what} {label(theirs[i], i)}, which the program's lacks")
        if name(theirs[i]) != name(ours[i]):
            _fail(f"{where} has {what} '{name(theirs[i])}' at position {i + 1}, "
                  f"the program's has '{name(ours[i])}'")
        yield f"{where} {what} {label(ours[i], i)}", theirs[i], ours[i]


def _match_kind(field: Any) -> str:
    """A match field's match type: exact, lpm... or its other_match_type."""
    if field.WhichOneof("match") == "other_match_type":
        return str(field.other_match_type)
    return _enum_name(p4i.MatchField.MatchType, field.match_type).lower()


def _enum_name(enum: Any, value: int) -> str:
    try:
        return str(enum.Name(value))
    except ValueError:  # a number outside the enum
        return str(value)


class _Side:
    """One P4Info with its object names by id and its type_info."""

    def __init__(self, p4info: p4i.P4Info) -> None:
        self.p4info = p4info
        self.names: dict[int, str] = {}
        for field in p4info.DESCRIPTOR.fields:
            if field.message_type is not None and "preamble" in field.message_type.fields_by_name:
                for obj in getattr(p4info, field.name):
                    self.names[obj.preamble.id] = obj.preamble.name

    def name(self, obj_id: int) -> str | None:
        """The name of the object `obj_id` refers to (None for 0; a dangling id as text)."""
        if not obj_id:
            return None
        return self.names.get(obj_id, f"<unknown id {obj_id}>")

    def shape(self, spec: p4types_pb2.P4DataTypeSpec, expanding: frozenset[str] = frozenset(),
              ) -> str:
        """A type spec with the named types it refers to spelled out from type_info (names,
        widths and structure only), comparable across P4Infos."""
        info = self.p4info.type_info
        kind = spec.WhichOneof("type_spec")
        if kind == "bitstring":
            return _bitstring(spec.bitstring)
        if kind == "bool":
            return "bool"
        if kind == "tuple":
            return "tuple<" + ", ".join(self.shape(m, expanding) for m in spec.tuple.members) + ">"
        if kind in ("struct", "header", "header_union"):
            name = getattr(spec, kind).name
            table = {"struct": info.structs, "header": info.headers,
                     "header_union": info.header_unions}[kind]
            if name in expanding or name not in table:
                return f"{kind} {name}"  # a cycle or an undescribed type: the name alone
            inner = expanding | {name}
            members: list[str] = []
            for m in table[name].members:
                if kind == "struct":
                    members.append(f"{m.name}: {self.shape(m.type_spec, inner)}")
                elif kind == "header":
                    members.append(f"{m.name}: {_bitstring(m.type_spec)}")
                else:
                    members.append(f"{m.name}: header {m.header.name}")
            return f"{kind} {name} {{{', '.join(members)}}}"
        if kind == "header_stack":
            return f"header {spec.header_stack.header.name}[{spec.header_stack.size}]"
        if kind == "header_union_stack":
            stack = spec.header_union_stack
            return f"header_union {stack.header_union.name}[{stack.size}]"
        if kind in ("enum", "serializable_enum", "new_type"):
            return f"{kind} {getattr(spec, kind).name}"
        return kind or "no type"


def _bitstring(spec: p4types_pb2.P4BitstringLikeTypeSpec) -> str:
    kind = spec.WhichOneof("type_spec")
    if kind is None:
        return "no type"
    if kind == "varbit":
        return f"varbit<{spec.varbit.max_bitwidth}>"
    return f"{kind}<{getattr(spec, kind).bitwidth}>"


class _Matcher:
    def __init__(self, p4info: p4i.P4Info, generated: p4i.P4Info,
                 program: CheckedProgram) -> None:
        self.theirs = _Side(p4info)
        self.ours = _Side(generated)
        self.program = program

    def run(self) -> None:
        # actions first: a renamed action is then named as such, not as a table's bad ref
        self._actions()
        for t, o in self._pairs("table", "tables"):
            self._table(t, o)
        for t, o in self._pairs("action profile", "action_profiles"):
            self._profile(t, o)
        for t, o in self._pairs("counter", "counters"):
            where = f"counter '{o.preamble.name}'"
            self._counter_unit(where, t.spec, o.spec)
            _same(where, "size", t.size, o.size)
        for t, o in self._pairs("direct counter", "direct_counters"):
            where = f"direct counter '{o.preamble.name}'"
            self._counter_unit(where, t.spec, o.spec)
            self._direct_table(where, t, o)
        for t, o in self._pairs("meter", "meters"):
            where = f"meter '{o.preamble.name}'"
            self._meter_spec(where, t.spec, o.spec)
            _same(where, "size", t.size, o.size)
        for t, o in self._pairs("direct meter", "direct_meters"):
            where = f"direct meter '{o.preamble.name}'"
            self._meter_spec(where, t.spec, o.spec)
            self._direct_table(where, t, o)
        for t, o in self._pairs("register", "registers"):
            where = f"register '{o.preamble.name}'"
            _same(where, "size", t.size, o.size)
            _same(where, "type", self.theirs.shape(t.type_spec), self.ours.shape(o.type_spec))
        for t, o in self._pairs("digest", "digests"):
            _same(f"digest '{o.preamble.name}'", "type", self.theirs.shape(t.type_spec),
                  self.ours.shape(o.type_spec))
        for t, o in self._pairs("value set", "value_sets"):
            self._value_set(t, o)
        for t, o in self._pairs("controller header", "controller_packet_metadata"):
            where = f"controller header '{o.preamble.name}'"
            for what, tm, om in _sequence(where, "metadata", t.metadata, o.metadata,
                                          lambda m: str(m.name)):
                _same(what, "id", tm.id, om.id)
                _same(what, "bitwidth", tm.bitwidth, om.bitwidth)
        self._externs()

    def _pairs(self, what: str, field: str) -> Iterator[tuple[Any, Any]]:
        """Same-named objects of one kind; refuses a name listed twice or on one side only."""
        ours = {o.preamble.name: o for o in getattr(self.ours.p4info, field)}
        seen: set[str] = set()
        for obj in getattr(self.theirs.p4info, field):
            name = obj.preamble.name
            if name in seen:
                _fail(f"{what} '{name}' is listed twice")
            seen.add(name)
            if name not in ours:
                _fail(f"{what} '{name}' is not in the program")
            yield obj, ours[name]
        for name in ours:
            if name not in seen:
                _fail(f"the program's {what} '{name}' is missing")

    # -- actions -------------------------------------------------------------------------

    def _actions(self) -> None:
        ours = {a.preamble.name: a for a in self.ours.p4info.actions}
        in_tables = {self.ours.name(r.id) for t in self.ours.p4info.tables
                     for r in t.action_refs}
        declared: dict[str, Params] | None = None   # computed only when needed
        seen: set[str] = set()
        for action in self.theirs.p4info.actions:
            name = action.preamble.name
            if name in seen:
                _fail(f"action '{name}' is listed twice")
            seen.add(name)
            theirs = tuple((str(p.name), int(p.bitwidth)) for p in action.params)
            if name in ours:
                expected: Params = tuple((str(p.name), int(p.bitwidth))
                                         for p in ours[name].params)
                if theirs and name not in in_tables:
                    # an apply-block action listed with its parameters (module docstring)
                    if declared is None:
                        declared = program_actions(self.program)
                    expected = declared.get(name, expected)
            else:
                # an action no table uses, listed by another generator (module docstring)
                if declared is None:
                    declared = program_actions(self.program)
                if name not in declared:
                    _fail(f"action '{name}' is not in the program")
                expected = declared[name]
            where = f"action '{name}'"
            for what, tp, op in _sequence(where, "parameter", theirs, expected, lambda p: p[0]):
                _same(what, "bitwidth", tp[1], "none" if op[1] is None else op[1])
        for name in ours:
            if name not in seen and name in in_tables:
                _fail(f"the program's action '{name}' is missing")

    # -- tables --------------------------------------------------------------------------

    def _table(self, t: p4i.Table, o: p4i.Table) -> None:
        where = f"table '{o.preamble.name}'"
        for what, tf, of in _sequence(where, "match field", t.match_fields, o.match_fields,
                                      lambda f: str(f.name)):
            _same(what, "bitwidth", tf.bitwidth, of.bitwidth)
            _same(what, "match type", _match_kind(tf), _match_kind(of))
        theirs = {self.theirs.name(r.id): r.scope for r in t.action_refs}
        ours = {self.ours.name(r.id): r.scope for r in o.action_refs}
        for name, scope in theirs.items():
            if name not in ours:
                _fail(f"{where} refers to action {_quoted(name)}, which the program's table "
                      "does not have")
            _same(f"{where} action {_quoted(name)}", "scope",
                  _enum_name(p4i.ActionRef.Scope, scope),
                  _enum_name(p4i.ActionRef.Scope, ours[name]))
        for name in ours:
            if name not in theirs:
                _fail(f"{where} lacks the program's action {_quoted(name)}")
        _same(where, "const default action", _quoted(self.theirs.name(t.const_default_action_id)),
              _quoted(self.ours.name(o.const_default_action_id)))
        _same(where, "implementation", _quoted(self.theirs.name(t.implementation_id)),
              _quoted(self.ours.name(o.implementation_id)))
        _same(where, "direct resources",
              _names(str(self.theirs.name(i)) for i in t.direct_resource_ids),
              _names(str(self.ours.name(i)) for i in o.direct_resource_ids))
        _same(where, "size", t.size, o.size)
        _same(where, "is_const_table", t.is_const_table, o.is_const_table)
        _same(where, "idle_timeout_behavior",
              _enum_name(p4i.Table.IdleTimeoutBehavior, t.idle_timeout_behavior),
              _enum_name(p4i.Table.IdleTimeoutBehavior, o.idle_timeout_behavior))

    # -- profiles and externs ------------------------------------------------------------

    def _profile(self, t: p4i.ActionProfile, o: p4i.ActionProfile) -> None:
        where = f"action profile '{o.preamble.name}'"
        _same(where, "tables", _names(str(self.theirs.name(i)) for i in t.table_ids),
              _names(str(self.ours.name(i)) for i in o.table_ids))
        _same(where, "with_selector", t.with_selector, o.with_selector)
        _same(where, "size", t.size, o.size)
        _same(where, "max_group_size", t.max_group_size, o.max_group_size)

    def _direct_table(self, where: str, t: Any, o: Any) -> None:
        _same(where, "direct table", _quoted(self.theirs.name(t.direct_table_id)),
              _quoted(self.ours.name(o.direct_table_id)))

    @staticmethod
    def _counter_unit(where: str, t: p4i.CounterSpec, o: p4i.CounterSpec) -> None:
        _same(where, "unit", _enum_name(p4i.CounterSpec.Unit, t.unit),
              _enum_name(p4i.CounterSpec.Unit, o.unit))

    @staticmethod
    def _meter_spec(where: str, t: p4i.MeterSpec, o: p4i.MeterSpec) -> None:
        _same(where, "unit", _enum_name(p4i.MeterSpec.Unit, t.unit),
              _enum_name(p4i.MeterSpec.Unit, o.unit))
        _same(where, "type", _enum_name(p4i.MeterSpec.Type, t.type or _DEFAULT_METER_TYPE),
              _enum_name(p4i.MeterSpec.Type, o.type or _DEFAULT_METER_TYPE))

    def _value_set(self, t: p4i.ValueSet, o: p4i.ValueSet) -> None:
        where = f"value set '{o.preamble.name}'"
        for what, tm, om in _sequence(where, "match field", t.match, o.match,
                                      lambda m: str(m.name)):
            _same(what, "bitwidth", tm.bitwidth, om.bitwidth)
            _same(what, "match type", _match_kind(tm), _match_kind(om))
        _same(where, "size", t.size, o.size)

    def _externs(self) -> None:
        """Architecture-specific externs: v1model has none, so any the client lists is one
        the program lacks (compared by type and instance name all the same)."""
        def instances(p4info: p4i.P4Info) -> set[tuple[str, str]]:
            return {(e.extern_type_name, i.preamble.name)
                    for e in p4info.externs for i in e.instances}
        theirs, ours = instances(self.theirs.p4info), instances(self.ours.p4info)
        for kind, name in sorted(theirs - ours):
            _fail(f"{kind} extern '{name}' is not in the program")
        for kind, name in sorted(ours - theirs):
            _fail(f"the program's {kind} extern '{name}' is missing")
