"""Code generation for tables: the apply function, lookup code and the table description."""

from __future__ import annotations

from typing import TYPE_CHECKING

from softswitch.engine.codegen_expr import key_text, mask
from softswitch.engine.codegen_info import ActionInfo, EntryInfo, ExternInfo, TableInfo
from softswitch.engine.codegen_types import bit_width, unwrap
from softswitch.engine.tables import (
    ExactMatch,
    KeyField,
    LpmMatch,
    Match,
    OptionalMatch,
    RangeMatch,
    TernaryMatch,
)
from softswitch.errors import UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.names import action_name, qualified_name

if TYPE_CHECKING:
    from softswitch.ir.checked import BlockInstance


def table_mode(kinds: list[str]) -> str:
    """The lookup structure for a key of these match kinds (engine/tables.py's modes)."""
    if not kinds:
        return "none"
    if all(x == "exact" for x in kinds):
        return "exact"
    if kinds.count("lpm") == 1 and all(x in ("exact", "lpm") for x in kinds):
        return "lpm"
    return "scan"


class TableGen:
    """Mixin of `codegen.Generator`."""

    # BMv2 counts and meters a direct resource on every hit of its table; TNA's generator
    # turns that off (the action's count()/execute() does it) and records the entry hit in
    # R.hit for those calls
    direct_on_hit = True
    record_hit = False

    def table_fn(self, decl: ast.TableDecl, block: BlockInstance) -> str:
        key = (id(decl), id(block))
        name = self._table_fns.get(key)
        if name is not None:
            return name
        name = self.gname("T")
        self._table_fns[key] = name
        cp_name = qualified_name(decl, block.path)
        gname = f"{name}_t"
        ctx = self.block_context(block)
        ctx.kind = "table"
        info = self.table_info(decl, block, cp_name, gname)
        self.tables.append(info)
        keys = [k for k in decl.keys if k.match_kind != "selector"]
        sel_keys = [k for k in decl.keys if k.match_kind == "selector"]
        with self.function(f"def {name}({ctx.ctx_args}):", ctx):
            self.tr(repr(f"Applying table '{cp_name}'"))
            kcodes = []
            for i, k in enumerate(keys):
                # keys are evaluated in order, once per apply; p4c moves a key reading a
                # run-time stack index into a temporary assignment (SimplifyKey)
                code = self.value_ex(k.expr, self.types.default(k.expr.type))
                if isinstance(unwrap(k.expr.type), t.BoolType):
                    code = f"int({code})"
                elif isinstance(unwrap(k.expr.type), t.BitType) and unwrap(k.expr.type).signed:
                    code = f"({code} & {mask(bit_width(k.expr.type))})"
                self.line(f"k{i} = {code}")
                kcodes.append(f"k{i}")
                if self.trace:
                    self.tr(f"'* {info.key_fields[i].name}: ' + format(k{i}, 'x')")
            self.table_lookup(info, kcodes, gname)
            self.line("if e is None:")
            with self.indent():
                self.line(f"a = {gname}.default")
                self.tr(repr(f"Table '{cp_name}': miss"))
                if info.direct_meter:
                    self.line(f"{info.direct_meter}.color = 0")
            self.line("else:")
            with self.indent():
                self.tr(f"{f'Table {cp_name!r}: hit with handle '!r} + str(e.handle)")
                if info.direct_counter and self.direct_on_hit:
                    self.line("c = e.cnt")
                    self.line("c[0] += 1")
                    self.line("c[1] += R.plen")
                if info.direct_meter and self.direct_on_hit:
                    self.line(f"{info.direct_meter}.color = e.meter.execute(R.now, R.plen)")
                if info.profile:
                    if sel_keys:
                        # BMv2 hashes the selector fields as a calculation (BufBuilder):
                        # the fields of invalid headers are left out
                        data = [self.checksum_data(k.expr) for k in sel_keys]
                        vals = " + ".join(v for v, _ in data)
                        widths = " + ".join(w for _, w in data)
                        sel = f"fields_to_bytes({vals}, {widths})"
                    else:
                        sel = "b''"
                    self.line(f"a = e.member or {info.profile}.choose(e.group, {sel}) "
                              f"or {gname}.default")
                else:
                    self.line("a = e")
            self.tr("'Action entry is ' + a.action + ' - ' + "
                    "', '.join(format(x, 'x') for x in a.args)")
            call_args = ctx.ctx_args + ", " if ctx.ctx_args else ""
            if self.record_hit:
                self.line("R.hit = e")
            self.line(f"a.fn({call_args}a.args)")
            self.line("return e is not None, a.aid")
        return name

    def table_lookup(self, info: TableInfo, k: list[str], g: str) -> None:
        if info.mode == "none":
            self.line("e = None")
        elif info.mode == "exact":
            key = k[0] if len(k) == 1 else "(" + ", ".join(k) + ")"
            self.line(f"e = {g}.exact.get({key})")
        elif info.mode == "lpm":
            li = next(i for i, f in enumerate(info.key_fields) if f.match_kind == "lpm")
            parts = [c if i != li else f"{c} & m" for i, c in enumerate(k)]
            key = parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"
            self.line("e = None")
            self.line(f"for m, d in {g}.lpm:")
            with self.indent():
                self.line(f"e = d.get({key})")
                self.line("if e is not None:")
                with self.indent():
                    self.line("break")
        else:
            names = []
            conds = []
            for i, f in enumerate(info.key_fields):
                a, b = f"a{i}", f"b{i}"
                names += [a, b]
                if f.match_kind == "range":
                    conds.append(f"{a} <= {k[i]} <= {b}")
                else:
                    conds.append(f"{k[i]} & {a} == {b}")
            self.line("e = None")
            self.line(f"for {', '.join(names)}, x in {g}.scan:")
            with self.indent():
                self.line(f"if {' and '.join(conds)}:")
                with self.indent():
                    self.line("e = x")
                    self.line("break")

    def table_info(self, decl: ast.TableDecl, block: BlockInstance, cp_name: str,
                   gname: str) -> TableInfo:
        keys = [k for k in decl.keys if k.match_kind != "selector"]
        key_fields = []
        for k in keys:
            kname = k.string_annotation("name") or key_text(k.expr)
            key_fields.append(KeyField(kname, k.match_kind, bit_width(k.expr.type)))
        mode = table_mode([f.match_kind for f in key_fields])
        actions = []
        for ref in decl.actions:
            adecl = ref.decl
            assert adecl is not None
            fn = self.table_action_fn(ref, block)
            params = tuple((p.name, bit_width(p.type)) for p in adecl.params if not p.direction)
            an = action_name(adecl, block, self.top_paths.get(id(block)))
            actions.append(ActionInfo(
                an, fn, params, self.aid(adecl),
                default_only=ref.annotation("defaultonly") is not None,
                table_only=ref.annotation("tableonly") is not None))
        default_action, default_args = "NoAction", ()
        if decl.default_action is not None and decl.default_action.decl is not None:
            ref = decl.default_action
            adecl = ref.decl
            default_action = action_name(adecl, block, self.top_paths.get(id(block)))
            default_args = self.const_action_args(ref)
        entries = []
        impl = decl.property("implementation")
        program_entries = (decl.entries or []) if impl is None else []  # profile: see below
        for ent in program_entries:
            matches = [self.const_match(kexpr, f) for kexpr, f in zip(ent.keys, key_fields)]
            adecl = ent.action.decl
            assert adecl is not None
            an = action_name(adecl, block, self.top_paths.get(id(block)))
            prio = ent.priority_value
            entries.append(EntryInfo(matches, an, self.const_action_args(ent.action), prio))
        size_prop = decl.property("size")
        size = int(size_prop.value.value) if size_prop and size_prop.value.value else 1024
        info = TableInfo(gname, cp_name, key_fields, mode, actions, default_action, default_args,
                         decl.default_action_const, entries, decl.entries_const, size)
        if impl is not None:
            info.profile = self.property_extern(impl.value, block, "implementation")
            # p4c's BMv2 back end writes neither the default action nor the entries of a table
            # with an action profile or selector ("Target does not support default_action ...
            # (due to action profiles)"): BMv2 starts it empty, and a miss runs no action
            info.default_action, info.default_args, info.const_default = "", (), False
            info.entries_const = False
        counters = decl.property("counters")
        if counters is not None:
            info.direct_counter = self.property_extern(counters.value, block, "counters")
        meters = decl.property("meters")
        if meters is not None:
            info.direct_meter = self.property_extern(meters.value, block, "meters")
        if info.entries and info.mode == "scan":
            for e in info.entries:
                if e.priority is None:
                    e.priority = 1
        return info

    def property_extern(self, value: ast.Expression, block: BlockInstance, what: str) -> str:
        if isinstance(value, ast.PathExpression) and isinstance(value.decl, ast.InstanceDecl):
            return self.extern_global(value.decl, block)
        if isinstance(value, ast.MethodCall):
            # an anonymous instance: `implementation = action_profile(32w128)`
            et = value.type
            if isinstance(et, t.ExternType):
                name = self.gname("X_")
                args = {p.name: (a.value.member if isinstance(a.value, ast.EnumValue)
                                 else a.value)
                        for p, a in zip(value.call.params if value.call else [],
                                        value.call.args if value.call else []) if a is not None}
                self.externs.append(ExternInfo(name, f"{block.path}.{what}", et.name, args))
                return name
        raise UnsupportedError(f"table property '{what}' value", value.loc)

    def const_action_args(self, ref: ast.ActionRef) -> tuple[int, ...]:
        adecl = ref.decl
        assert adecl is not None
        out = []
        for p, a in zip(adecl.params, ref.bound_args or [None] * len(adecl.params)):
            if p.direction:
                continue
            if a is None:
                out.append(0)
                continue
            v = a.value
            if isinstance(v, ast.EnumValue):
                v = v.number
            if isinstance(v, bool):
                v = int(v)
            if not isinstance(v, int):
                raise UnsupportedError("non-constant action argument in a table", a.loc)
            out.append(v & mask(bit_width(p.type)))
        return tuple(out)

    def const_match(self, e: ast.Expression, f: KeyField) -> Match:
        full = mask(f.width)

        def val(x: ast.Expression) -> int:
            v = x.value
            if isinstance(v, ast.EnumValue):
                v = v.number
            if isinstance(v, bool):
                v = int(v)
            if not isinstance(v, int):
                raise UnsupportedError("non-constant table entry key", x.loc)
            return v & full

        if isinstance(e, ast.DefaultExpression):
            return {"exact": TernaryMatch(0, 0), "lpm": LpmMatch(0, 0),
                    "ternary": TernaryMatch(0, 0), "range": RangeMatch(0, full),
                    "optional": OptionalMatch(None)}[f.match_kind]
        if isinstance(e, ast.MaskExpression):
            v, m = val(e.left), val(e.right)
            if f.match_kind == "lpm":
                plen = bin(m).count("1")
                return LpmMatch(v & m, plen)
            return TernaryMatch(v & m, m)
        if isinstance(e, ast.RangeExpression):
            return RangeMatch(val(e.left), val(e.right))
        v = val(e)
        return {"exact": ExactMatch(v), "lpm": LpmMatch(v, f.width),
                "ternary": TernaryMatch(v, full), "range": RangeMatch(v, v),
                "optional": OptionalMatch(v)}.get(f.match_kind, ExactMatch(v))

    def table_action_fn(self, ref: ast.ActionRef, block: BlockInstance) -> str:
        """The function a table calls for `ref`: the action itself, or a wrapper binding the
        directional arguments written in the actions list."""
        adecl = ref.decl
        assert adecl is not None
        fn = self.action_fn(adecl, block)
        dir_params = [p for p in adecl.params if p.direction]
        if not dir_params:
            return fn
        ctx = self.block_context(block)
        wrapper = self.gname("W")
        bound = dict(zip(adecl.params, ref.bound_args or []))
        with self.function(f"def {wrapper}({', '.join(filter(None, [ctx.ctx_args, '_a']))}):",
                           ctx):
            self.emit_call(fn, ctx.ctx_args, dir_params, [bound.get(p) for p in dir_params],
                           "_a", None)
        return wrapper

    # -- statements ---------------------------------------------------------------------------
