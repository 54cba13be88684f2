"""CheckedProgram → ``p4.config.v1.P4Info``, field for field as p4c (v1model) writes it.

collect.py decides which objects exist and in which order; this module registers their names
(ids.py assigns ids and aliases) and fills in the messages. Behaviour follows p4c's
``p4RuntimeSerializer.cpp`` and ``p4RuntimeArchStandard.cpp``.
"""

from __future__ import annotations

from collections.abc import Sequence

from finsy.proto.p4.config.v1 import p4info_pb2

from softswitch.errors import P4TypeError, SourceLocation, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.types import (
    BitType,
    BoolType,
    EnumType,
    ErrorType,
    NewType,
    StructLikeType,
    Type,
)
from softswitch.ir.checked import CheckedProgram
from softswitch.p4info.annotations import (
    add_annotations,
    format_annotation,
    int_arg,
    set_documentation,
    string_arg,
    user_id,
)
from softswitch.p4info.collect import (
    ActionObj,
    ExternObj,
    ProgramModel,
    TableObj,
    collect,
    ctor_arg,
    digest_type,
)
from softswitch.p4info.ids import Prefix, SymbolTable, allocate_field_ids
from softswitch.p4info.keynames import key_name
from softswitch.p4info.typeinfo import TypeSpecs, to_bytes

_EXTERN_PREFIX = {
    "counter": Prefix.COUNTER,
    "direct_counter": Prefix.DIRECT_COUNTER,
    "meter": Prefix.METER,
    "direct_meter": Prefix.DIRECT_METER,
    "register": Prefix.REGISTER,
    "action_profile": Prefix.ACTION_PROFILE,
    "action_selector": Prefix.ACTION_PROFILE,
}
_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
_COUNTER_UNITS = {
    "packets": p4info_pb2.CounterSpec.PACKETS,
    "bytes": p4info_pb2.CounterSpec.BYTES,
    "packets_and_bytes": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}
_SELECTOR_ANNOTATIONS = ("max_group_size", "selector_size_semantics", "max_member_weight")


def _hidden(node: ast.Annotated) -> bool:
    return node.annotation("hidden") is not None


def _enum_member(expr: ast.Expression | None) -> str | None:
    if expr is None:
        return None
    if isinstance(expr.value, ast.EnumValue):
        return expr.value.member
    if isinstance(expr, ast.Member):
        return expr.member
    return None


def _const_int(expr: ast.Expression | None) -> int | None:
    if expr is None:
        return None
    if isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.IntLiteral):
        return expr.number
    return None


class _Builder:
    def __init__(self, checked: CheckedProgram) -> None:
        self.checked = checked
        self.model: ProgramModel = collect(checked)
        self.p4info = p4info_pb2.P4Info()
        self.p4info.type_info.SetInParent()  # p4c always writes type_info, even empty
        self.specs = TypeSpecs(checked.program, checked.errors, self.p4info.type_info)
        self.symbols = SymbolTable()
        self.instance_by_decl = {
            id(e.annotated): e for e in self.model.externs if e.prop is None
        }
        self.digest_names: dict[int, str] = {}

    # --- symbols ------------------------------------------------------------------------

    def _register(self) -> None:
        add = self.symbols.add
        for ext in self.model.externs:
            prefix = _EXTERN_PREFIX.get(ext.kind)
            if prefix is not None:
                uid = None if ext.prop is not None else user_id(ext.annotated)
                add(prefix, ext.name, uid, ext.annotated.loc)
        for control in self.model.controls:
            for action in control.actions:
                add(Prefix.ACTION, action.name, user_id(action.decl), action.decl.loc)
            for call in control.digests:
                add(Prefix.DIGEST, self._digest_name(call))
        for table in self.model.tables:
            add(Prefix.TABLE, table.name, user_id(table.decl), table.decl.loc)
        for name, vs in self.model.value_sets:
            add(Prefix.VALUE_SET, name, user_id(vs), vs.loc)
        for header in self.model.controller_headers:
            add(Prefix.CONTROLLER_HEADER, self.specs.type_name(header.name), user_id(header),
                header.loc)
        self.symbols.assign_ids()

    def _digest_name(self, call: ast.MethodCall) -> str:
        if id(call) not in self.digest_names:
            t = digest_type(call)
            if isinstance(t, StructLikeType):
                name = self.specs.type_name(t.name)
            else:
                # p4c: no good name for a digest of an unnamed type; it numbers them
                name = f"digest_{len(set(self.digest_names.values()))}"
            self.digest_names[id(call)] = name
        return self.digest_names[id(call)]

    def _preamble(self, preamble: p4info_pb2.Preamble, prefix: Prefix, name: str,
                  annotated: ast.Annotated | None, skip: Sequence[str] = ()) -> None:
        preamble.id = self.symbols.id(prefix, name)
        preamble.name = name
        preamble.alias = self.symbols.alias(name)
        add_annotations(preamble, annotated, skip)
        set_documentation(preamble.doc, annotated)
        if not preamble.doc.brief and not preamble.doc.description:
            preamble.ClearField("doc")

    # --- build --------------------------------------------------------------------------

    def build(self) -> p4info_pb2.P4Info:
        self._register()
        self.p4info.pkg_info.arch = "v1model"
        for ext in self.model.top_externs:
            self._add_extern(ext)
        seen_actions: set[int] = set()
        seen_digests: set[str] = set()
        for control in self.model.controls:
            for action in control.actions:
                self._add_action(action, seen_actions)
            for call in control.digests:
                self._add_digest(call, seen_digests)
        for name, vs in self.model.value_sets:
            self._add_value_set(name, vs)
        for item in self.model.block_items:
            if isinstance(item, TableObj):
                self._add_table(item)
            elif item.prop is None:
                self._add_extern(item)
        for header in self.model.controller_headers:
            self._add_controller_header(header)
        self._add_pkg_info()
        return self.p4info

    # --- actions ------------------------------------------------------------------------

    def _param_width(self, t: Type | None, loc: SourceLocation) -> int | None:
        """P4Info bitwidth of an action parameter / metadata field (None for plain enums)."""
        if isinstance(t, EnumType) and t.underlying is None:
            return None
        if not isinstance(t, BitType | BoolType | NewType | EnumType):
            raise P4TypeError(
                f"type {t} is not bit<>, int<>, bool, type or serializable enum, as "
                "P4Runtime requires here", loc)
        return self.specs.width(t)

    def _record_type(self, t: Type | None) -> str | None:
        """Describe `t` in type_info if it is a named type; its P4Info type_name if any."""
        if isinstance(t, NewType | EnumType | ErrorType):
            self.specs.convert(t)
        if isinstance(t, NewType):
            return self.specs.type_name(t.name)
        if isinstance(t, EnumType) and t.underlying is None:
            return self.specs.type_name(t.name)
        return None

    def _add_action(self, action: ActionObj, seen: set[int]) -> None:
        if _hidden(action.decl):
            return
        aid = self.symbols.id(Prefix.ACTION, action.name)
        if aid in seen:
            return
        seen.add(aid)
        msg = self.p4info.actions.add()
        self._preamble(msg.preamble, Prefix.ACTION, action.name, action.decl)
        params = [p for p in action.decl.params if not p.direction] if action.with_params else []
        ids = allocate_field_ids([user_id(p) for p in params], [p.name for p in params],
                                 action.decl.loc)
        for param, pid in zip(params, ids):
            pm = msg.params.add()
            pm.id = pid
            pm.name = param.control_plane_name() or param.name
            add_annotations(pm, param)
            set_documentation(pm.doc, param)
            if not pm.doc.brief and not pm.doc.description:
                pm.ClearField("doc")
            width = self._param_width(param.type, param.loc)
            if width is not None:
                pm.bitwidth = width
            type_name = self._record_type(param.type)
            if type_name is not None:
                pm.type_name.name = type_name

    def _add_digest(self, call: ast.MethodCall, seen: set[str]) -> None:
        name = self._digest_name(call)
        if name in seen:
            return
        seen.add(name)
        t = digest_type(call)
        if t is None:
            raise P4TypeError("cannot tell the type of this digest", call.loc)
        msg = self.p4info.digests.add()
        self._preamble(msg.preamble, Prefix.DIGEST, name, None)
        msg.type_spec.CopyFrom(self.specs.convert(t))

    # --- tables -------------------------------------------------------------------------

    def _add_table(self, table: TableObj) -> None:
        decl = table.decl
        if _hidden(decl):
            return
        msg = self.p4info.tables.add()
        self._preamble(msg.preamble, Prefix.TABLE, table.name, decl)
        self._match_fields(msg, decl)
        names = table.action_names
        for ref, name in zip(table.action_refs, names):
            ar = msg.action_refs.add()
            ar.id = self.symbols.id(Prefix.ACTION, name)
            add_annotations(ar, ref)
            table_only = ref.annotation("tableonly") is not None
            default_only = ref.annotation("defaultonly") is not None
            if table_only and default_only:
                raise P4TypeError(
                    f"table '{table.name}' has an action reference ('{name}') annotated with "
                    "both @tableonly and @defaultonly", ref.loc)
            ar.scope = (p4info_pb2.ActionRef.TABLE_ONLY if table_only
                        else p4info_pb2.ActionRef.DEFAULT_ONLY if default_only
                        else p4info_pb2.ActionRef.TABLE_AND_DEFAULT)
        self._default_action(msg, table, names)
        self._table_resources(msg, table)
        size = decl.property("size")
        size_value = _const_int(size.value) if size is not None else None
        msg.size = size_value if size_value else 1024
        timeout = decl.property("support_timeout")
        if timeout is not None and timeout.value.value is True:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if decl.entries is not None:
            # p4c: const-ness from the property, initial entries only if there is one
            msg.is_const_table = decl.entries_const
            msg.has_initial_entries = len(decl.entries) > 0

    def _match_fields(self, msg: p4info_pb2.Table, decl: ast.TableDecl) -> None:
        ids = allocate_field_ids([user_id(k) for k in decl.keys], (), decl.loc)
        for key, fid in zip(decl.keys, ids):
            if key.match_kind == "selector":
                continue  # consumed by the action selector, not a match field
            t = key.expr.type
            mf = msg.match_fields.add()
            mf.id = fid
            mf.name = key_name(key, self.specs)
            add_annotations(mf, key)
            set_documentation(mf.doc, key)
            if not mf.doc.brief and not mf.doc.description:
                mf.ClearField("doc")
            mf.bitwidth = self.specs.width(t) if t is not None else 0
            if key.match_kind in _MATCH_TYPES:
                mf.match_type = _MATCH_TYPES[key.match_kind]
            else:
                mf.other_match_type = key.match_kind
            if isinstance(t, NewType | EnumType | ErrorType):
                self.specs.convert(t)
            if isinstance(t, NewType):
                mf.type_name.name = self.specs.type_name(t.name)

    def _default_action(self, msg: p4info_pb2.Table, table: TableObj, names: list[str]) -> None:
        decl = table.decl
        ref = decl.default_action
        if ref is None:
            # the implicit NoAction p4c adds is always last in action_refs
            msg.initial_default_action.action_id = self.symbols.id(Prefix.ACTION, names[-1])
            return
        name = next((n for r, n in zip(table.action_refs, names) if r.decl is ref.decl), None)
        if name is None:
            raise P4TypeError(
                f"default action '{ref.name}' of table '{table.name}' is not in its actions",
                ref.loc)
        action_id = self.symbols.id(Prefix.ACTION, name)
        if decl.default_action_const:
            msg.const_default_action_id = action_id
        call = msg.initial_default_action
        call.action_id = action_id
        if ref.decl is None:
            return
        params = ref.decl.params
        bound = ref.bound_args if len(ref.bound_args) == len(params) else [
            a.expr for a in ref.args] + [None] * (len(params) - len(ref.args))
        cp = [(p, a) for p, a in zip(params, bound) if not p.direction]
        ids = allocate_field_ids([user_id(p) for p, _ in cp], [p.name for p, _ in cp], ref.loc)
        for (param, arg), pid in zip(cp, ids):
            value = self._arg_bytes(param, arg)
            if value is not None:
                argument = call.arguments.add()
                argument.param_id = pid
                argument.value = value

    def _arg_bytes(self, param: ast.Parameter, arg: ast.Expression | None) -> bytes | None:
        if arg is None:
            return None
        value = arg.value
        if isinstance(value, ast.EnumValue):
            value = value.number
        if isinstance(value, bool):
            return to_bytes(int(value), 1)
        if not isinstance(value, int):
            return None
        width = self.specs.width(param.type) if param.type is not None else 0
        return to_bytes(value, width)

    # The architecture's extern type names, prefixes and units (TnaBuilder has its own).
    DIRECT_COUNTER = "direct_counter"
    DIRECT_METER = "direct_meter"
    extern_prefix = _EXTERN_PREFIX
    counter_units = _COUNTER_UNITS
    meter_units = _METER_UNITS

    def _profile_of(self, impl: ExternObj) -> ExternObj:
        """The action profile (standard P4Info) a table implementation stands for."""
        if impl.kind not in ("action_profile", "action_selector"):
            raise P4TypeError("expected an action profile or action selector",
                              impl.annotated.loc)
        return impl

    def _table_resources(self, msg: p4info_pb2.Table, table: TableObj) -> None:
        impl = self._property_extern(table, "implementation")
        if impl is not None:
            profile = self._profile_of(impl)
            msg.implementation_id = self.symbols.id(Prefix.ACTION_PROFILE, profile.name)
            if impl.prop is not None:
                self._add_action_profile(impl)
        for prop_name, kind in (("counters", self.DIRECT_COUNTER),
                                ("meters", self.DIRECT_METER)):
            ext = self._property_extern(table, prop_name)
            if ext is None:
                continue
            if ext.kind != kind:
                raise P4TypeError(f"expected a {kind.replace('_', ' ')}", table.decl.loc)
            prefix = self.extern_prefix[kind]
            msg.direct_resource_ids.append(self.symbols.id(prefix, ext.name))
            if kind == self.DIRECT_COUNTER:
                dc = self.p4info.direct_counters.add()
                self._preamble(dc.preamble, prefix, ext.name, ext.annotated)
                dc.spec.unit = self._unit(ext, self.counter_units)
                dc.direct_table_id = msg.preamble.id
            else:
                dm = self.p4info.direct_meters.add()
                self._preamble(dm.preamble, prefix, ext.name, ext.annotated)
                dm.spec.unit = self._unit(ext, self.meter_units)
                dm.direct_table_id = msg.preamble.id

    def _property_extern(self, table: TableObj, prop_name: str) -> ExternObj | None:
        prop = table.decl.property(prop_name)
        if prop is None:
            return None
        for item in self.model.block_items:
            if isinstance(item, ExternObj) and item.prop is prop:
                return item
        value = prop.value
        if isinstance(value, ast.PathExpression) and value.decl is not None:
            ext = self.instance_by_decl.get(id(value.decl))
            if ext is not None:
                return ext
        raise P4TypeError(
            f"'{prop_name}' of table '{table.name}' must be an extern instance", prop.loc)

    # --- externs ------------------------------------------------------------------------

    @staticmethod
    def _unit(ext: ExternObj, units: dict[str, int]) -> int:
        member = _enum_member(ctor_arg(ext.args, "type", len(ext.args) - 1))
        return units.get(member or "", 0)

    def _add_extern(self, ext: ExternObj) -> None:
        if ext.kind == "counter":
            msg = self.p4info.counters.add()
            self._preamble(msg.preamble, Prefix.COUNTER, ext.name, ext.annotated)
            msg.spec.unit = self._unit(ext, _COUNTER_UNITS)
            msg.size = _const_int(ctor_arg(ext.args, "size", 0)) or 0
            self._index_type(msg, ext)
        elif ext.kind == "meter":
            msg = self.p4info.meters.add()
            self._preamble(msg.preamble, Prefix.METER, ext.name, ext.annotated)
            msg.spec.unit = self._unit(ext, _METER_UNITS)
            msg.size = _const_int(ctor_arg(ext.args, "size", 0)) or 0
            self._index_type(msg, ext)
        elif ext.kind == "register":
            msg = self.p4info.registers.add()
            self._preamble(msg.preamble, Prefix.REGISTER, ext.name, ext.annotated)
            if not ext.type.type_args:
                raise P4TypeError("register needs its element type", ext.annotated.loc)
            msg.type_spec.CopyFrom(self.specs.convert(ext.type.type_args[0]))
            msg.size = _const_int(ctor_arg(ext.args, "size", 0)) or 0
            self._index_type(msg, ext, 1)  # register<T, I>
        elif ext.kind in ("action_profile", "action_selector"):
            self._add_action_profile(ext)

    def _index_type(self, msg: p4info_pb2.Counter | p4info_pb2.Meter | p4info_pb2.Register,
                    ext: ExternObj, position: int = 0) -> None:
        """index_type_name of a counter<I>, meter<I> or register<T, I> whose I is a ``type``;
        like p4c, a named index type is also described in type_info."""
        if len(ext.type.type_args) <= position:
            return
        index = ext.type.type_args[position]
        if isinstance(index, NewType | EnumType):
            self.specs.convert(index)
        if isinstance(index, NewType):
            msg.index_type_name.name = self.specs.type_name(index.name)

    def _add_action_profile(self, ext: ExternObj) -> None:
        msg = self.p4info.action_profiles.add()
        self._preamble(msg.preamble, Prefix.ACTION_PROFILE, ext.name, ext.annotated,
                       skip=_SELECTOR_ANNOTATIONS)
        users = sorted(t.name for t in self.model.tables
                       if self._implementation_name(t) == ext.name)
        msg.table_ids.extend(self.symbols.id(Prefix.TABLE, n) for n in users)
        selector = ext.kind == "action_selector"
        msg.with_selector = selector
        size_index = 1 if selector else 0
        size = _const_int(ctor_arg(ext.args, "size", size_index))
        if size is None:
            raise P4TypeError(f"action profile '{ext.name}' has a non-constant size",
                              ext.annotated.loc)
        msg.size = size
        if not selector:
            return
        anno = ext.annotated.annotation("max_group_size")
        if anno is not None and (n := int_arg(anno)) is not None:
            msg.max_group_size = n
        semantics = ext.annotated.annotation("selector_size_semantics")
        weight_anno = ext.annotated.annotation("max_member_weight")
        weight = int_arg(weight_anno) if weight_anno is not None else None
        if semantics is not None:
            kind = (string_arg(semantics) or "").lower()
            if kind == "sum_of_members":
                msg.sum_of_members.SetInParent()
                if weight is not None:
                    msg.sum_of_members.max_member_weight = weight
            elif kind == "sum_of_weights":
                msg.sum_of_weights.SetInParent()
            else:
                raise P4TypeError(f"unknown selector size semantics in "
                                  f"{format_annotation(semantics)}", semantics.loc)

    def _implementation_name(self, table: TableObj) -> str | None:
        prop = table.decl.property("implementation")
        if prop is None:
            return None
        impl = self._property_extern(table, "implementation")
        return impl.name if impl is not None else None

    # --- parsers, packet I/O, package ---------------------------------------------------

    def _value_set_message(self, name: str, vs: ast.ValueSetDecl) -> p4info_pb2.ValueSet:
        """The value set's message with its preamble and size (no match fields yet)."""
        msg = self.p4info.value_sets.add()
        self._preamble(msg.preamble, Prefix.VALUE_SET, name, vs)
        size = _const_int(vs.size)
        if size is None or size < 0:
            raise P4TypeError(f"value set '{name}' needs a non-negative constant size", vs.loc)
        msg.size = size
        return msg

    def _add_value_set(self, name: str, vs: ast.ValueSetDecl) -> None:
        msg = self._value_set_message(name, vs)
        et = vs.element_type.resolved
        if isinstance(et, BitType):
            m = msg.match.add()
            m.id = 1
            m.bitwidth = et.width
            m.match_type = p4info_pb2.MatchField.EXACT
        elif isinstance(et, StructLikeType):
            decl = self.specs.decl(et.name)
            fields = decl.fields if isinstance(decl, ast.StructLikeDecl) else []
            ids = allocate_field_ids([user_id(f) for f in fields], [f.name for f in fields],
                                     vs.loc)
            for f, fid in zip(fields, ids):
                ftype = et.field_type(f.name)
                if not isinstance(ftype, BitType):
                    raise UnsupportedError(
                        f"value set field '{f.name}' that is not bit<W> (P4Runtime)", f.loc)
                m = msg.match.add()
                m.id = fid
                m.name = f.string_annotation("name") or f.name
                m.bitwidth = ftype.width
                match = f.annotation("match")
                kind = match.body.strip() if match is not None else "exact"
                if kind in _MATCH_TYPES:
                    m.match_type = _MATCH_TYPES[kind]
                else:
                    m.other_match_type = kind
                add_annotations(m, f, skip=("match",))
        elif isinstance(et, EnumType) and et.underlying is not None:
            for index, member in enumerate(et.members, start=1):
                m = msg.match.add()
                m.id = index
                m.name = member
                m.bitwidth = et.underlying.width
                m.match_type = p4info_pb2.MatchField.EXACT
        else:
            raise UnsupportedError(
                "value set element type other than bit<W>, a struct of bit<W> or a "
                "serializable enum (P4Runtime)", vs.loc)

    def _add_controller_header(self, header: ast.HeaderDecl) -> None:
        if _hidden(header):
            return
        anno = header.annotation("controller_header")
        assert anno is not None
        label = string_arg(anno)
        if label is None:
            raise P4TypeError("@controller_header needs a string argument", anno.loc)
        t = header.resolved
        if not isinstance(t, StructLikeType):
            raise P4TypeError(f"header {header.name} was not type checked", header.loc)
        type_name = self.specs.type_name(header.name)
        msg = self.p4info.controller_packet_metadata.add()
        # P4Info names packet metadata after the annotation, but the id hashes the type name
        msg.preamble.id = self.symbols.id(Prefix.CONTROLLER_HEADER, type_name)
        msg.preamble.name = label
        msg.preamble.alias = label
        add_annotations(msg.preamble, header)
        set_documentation(msg.preamble.doc, header)
        if not msg.preamble.doc.brief and not msg.preamble.doc.description:
            msg.preamble.ClearField("doc")
        ids = allocate_field_ids([user_id(f) for f in header.fields],
                                 [f.name for f in header.fields], header.loc)
        for f, fid in zip(header.fields, ids):
            if _hidden(f):
                continue
            ftype = t.field_type(f.name)
            md = msg.metadata.add()
            md.id = fid
            md.name = f.string_annotation("name") or f.name
            add_annotations(md, f)
            width = self._param_width(ftype, f.loc)
            md.bitwidth = width or 0
            type_name_ = self._record_type(ftype)
            if type_name_ is not None:
                md.type_name.name = type_name_

    def _add_pkg_info(self) -> None:
        main = self.checked.main
        pkg = self.p4info.pkg_info
        pkginfo = main.annotation("pkginfo")
        if pkginfo is not None:
            for part in pkginfo.body.split(","):
                key, _, raw = part.partition("=")
                key, raw = key.strip(), raw.strip()
                if key in ("name", "version", "organization", "contact", "url", "arch") and \
                        raw.startswith('"') and raw.endswith('"'):
                    setattr(pkg, key, raw[1:-1])
        add_annotations(pkg, main, skip=("pkginfo",))
        set_documentation(pkg.doc, main)
        if not pkg.doc.brief and not pkg.doc.description:
            pkg.ClearField("doc")


def build_p4info(checked: CheckedProgram) -> p4info_pb2.P4Info:
    """The P4Info p4c would generate for `checked`: p4c-bm2-ss's for v1model, bf-p4c's with
    ``--p4runtime-force-std-externs`` for TNA (p4info/tna.py)."""
    if checked.arch == "tna":
        from softswitch.p4info.tna import TnaBuilder  # it extends _Builder

        return TnaBuilder(checked).build()
    return _Builder(checked).build()
