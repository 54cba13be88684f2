"""Compile a checked v1model program into Python source, once, for the engine to ``exec``.

One Python function per block instance (parser, controls, deparser), per action (per block that
uses it), per table (its ``apply``) and per P4 function. Run-time objects (tables, externs) are
module globals the Switch binds after exec; their descriptions (`TableInfo`, `ExternInfo`) come
out of generation together with the source.

Calling conventions:
- a control ``B(params...)``: headers/structs by reference, scalars by value; returns the tuple
  of its scalar out/inout parameters (or None). Control-level variables live in a per-apply
  frame object ``F`` so that actions can share them.
- an action ``A(ctx..., directional args..., _a)``: `ctx` is the control's composite
  parameters plus ``F``; `_a` the tuple of control-plane (directionless) arguments.
- a table ``T(ctx...)`` → ``(hit, action id)``.
- a parser ``P(_pkt, _nb, _pos, params...)`` → the new bit position (or a tuple with scalar
  outs); errors raise `ParserErrorSignal`.
- a deparser ``D(_ap, params...)``: `_ap` appends the emitted bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from softswitch.engine.codegen_expr import ExprGen, FnContext, key_text, literal, mask, wrap
from softswitch.engine.codegen_types import TypeClasses, bit_width, is_composite, unwrap
from softswitch.engine.tables import (
    ExactMatch,
    KeyField,
    LpmMatch,
    Match,
    OptionalMatch,
    RangeMatch,
    TernaryMatch,
)
from softswitch.errors import P4Error, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.checked import BlockInstance, CheckedProgram
from softswitch.ir.names import control_plane_objects, qualified_name

# ---------------------------------------------------------------------------------------------
# What generation produces besides the source


@dataclass
class ActionInfo:
    name: str
    fn: str  # global function name, called as fn(*ctx, _a)
    params: tuple[tuple[str, int], ...]
    aid: int
    default_only: bool = False
    table_only: bool = False


@dataclass
class EntryInfo:
    matches: list[Match]
    action: str
    args: tuple[int, ...]
    priority: int | None


@dataclass
class TableInfo:
    gname: str
    name: str
    key_fields: list[KeyField]
    mode: str
    actions: list[ActionInfo]
    default_action: str
    default_args: tuple[int, ...]
    const_default: bool
    entries: list[EntryInfo]
    entries_const: bool
    size: int
    profile: str | None = None  # gname of an action_profile/action_selector
    direct_counter: str | None = None
    direct_meter: str | None = None


@dataclass
class ExternInfo:
    gname: str
    name: str
    kind: str  # the extern type name: counter, register, meter, action_selector...
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class GeneratedProgram:
    source: str
    tables: list[TableInfo]
    externs: list[ExternInfo]
    value_sets: list[ExternInfo]
    block_fns: dict[str, str]  # v1model role → function name
    header_cls: str
    meta_cls: str
    sm_cls: str
    field_lists: dict[int, str]  # @field_list index → copier function
    hash_fns: dict[str, str]  # global name → HashAlgorithm member


_CONTROL_ROLES = ("verify_checksum", "ingress", "egress", "compute_checksum")


class Generator(ExprGen):
    """Walks a CheckedProgram once and writes the Python module source."""

    def __init__(self, checked: CheckedProgram, trace: bool = False) -> None:
        self.checked = checked
        self.trace = trace
        self.types = TypeClasses()
        self.cpo = control_plane_objects(checked)
        self.funcs: list[str] = []
        self.out: list[str] = []
        self.ind = 1
        self.fn = FnContext("module", None)
        self.tables: list[TableInfo] = []
        self.externs: list[ExternInfo] = []
        self.value_sets: list[ExternInfo] = []
        self.hash_fns: dict[str, str] = {}
        self._extern_names: dict[tuple[int, int], str] = {}
        self._table_fns: dict[tuple[int, int], str] = {}
        self._action_fns: dict[tuple[int, int], str] = {}
        self._aids: dict[int, int] = {}
        self._block_fns: dict[int, str] = {}
        self._function_fns: dict[int, str] = {}
        self._const_globals: dict[int, str] = {}
        self._frame_of: dict[int, str] = {}
        self._ctx_of: dict[int, str] = {}
        self._counter = 0
        self.errors = checked.errors
        self.sm_param_names: dict[int, str] = {}

    # -- small utilities ---------------------------------------------------------------------

    def gname(self, base: str) -> str:
        self._counter += 1
        return f"{base}{self._counter}"

    def error_code(self, name: str) -> int:
        return self.errors.index(name) if name in self.errors else 0

    def line(self, text: str) -> None:
        self.out.append("    " * self.ind + text)

    @contextmanager
    def function(self, header: str, ctx: FnContext) -> Iterator[None]:
        saved = (self.out, self.ind, self.fn)
        self.out, self.ind, self.fn = [header], 1, ctx
        try:
            yield
            if len(self.out) == 1:
                self.line("pass")
            self.funcs.append("\n".join(self.out) + "\n")
        finally:
            self.out, self.ind, self.fn = saved

    @contextmanager
    def indent(self) -> Iterator[None]:
        self.ind += 1
        start = len(self.out)
        yield
        if len(self.out) == start:
            self.line("pass")
        self.ind -= 1

    def tr(self, text_code: str) -> None:
        """Emit a trace call (only when tracing is compiled in)."""
        if self.trace:
            self.line(f"_T({text_code})")

    # -- entry point --------------------------------------------------------------------------

    def generate(self) -> GeneratedProgram:
        blocks = self.checked.blocks
        fns: dict[str, str] = {}
        try:
            for role in ("parser", *_CONTROL_ROLES, "deparser"):
                block = blocks[role]
                if role == "parser":
                    fns[role] = self.parser_fn(block)
                else:
                    fns[role] = self.control_fn(block, top=True)
            ingress = blocks["ingress"].decl
            hdr_t = ingress.params[0].type
            meta_t = ingress.params[1].type
            sm_t = ingress.params[2].type
            field_lists = self.preserving_field_lists(meta_t)
            hdr_cls = self.types.class_name(hdr_t)
            meta_cls = self.types.class_name(meta_t)
            sm_cls = self.types.class_name(sm_t)
        except P4Error:
            raise
        except (KeyError, IndexError, AttributeError, AssertionError, TypeError) as exc:
            raise UnsupportedError(f"code generation failed ({type(exc).__name__}: {exc})") \
                from exc
        header = [
            '"""Generated by softswitch.engine.codegen — do not edit."""',
            "from softswitch.engine.support import (ExitSignal, ParserErrorSignal, "
            "AssertSignal, Stack, stack_elem, read_bits, set_bits, to_signed, mk, look)",
            "from softswitch.engine.hashes import (fields_to_bytes, v1model_hash, "
            "update_checksum, verify_checksum, checksum16_get)",
            "from softswitch.engine.externs import Digest",
            "",
        ]
        source = "\n".join(header) + "\n".join(self.types.lines) + "\n" + "\n".join(self.funcs)
        return GeneratedProgram(
            source=source, tables=self.tables, externs=self.externs,
            value_sets=self.value_sets, block_fns=fns, header_cls=hdr_cls, meta_cls=meta_cls,
            sm_cls=sm_cls, field_lists=field_lists, hash_fns=self.hash_fns,
        )

    # -- names of run-time objects ---------------------------------------------------------

    def extern_global(self, decl: ast.InstanceDecl, block: BlockInstance | None) -> str:
        key = (id(decl), id(block) if block is not None and decl in block.decl.locals else 0)
        name = self._extern_names.get(key)
        if name is not None:
            return name
        in_block = block if block is not None and decl in block.decl.locals else None
        cp_name = qualified_name(decl, in_block.path if in_block else None)
        et = decl.resolved
        assert isinstance(et, t.ExternType)
        name = self.gname("X_")
        self._extern_names[key] = name
        info = ExternInfo(name, cp_name, et.name, self.ctor_args(decl, in_block))
        if et.type_args:
            info.args["type_args"] = et.type_args
        self.externs.append(info)
        return name

    def ctor_args(self, decl: ast.InstanceDecl, block: BlockInstance | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, a in zip(decl.ctor_params, decl.ctor_args):
            if a is None:
                continue
            v = a.value
            if v is None and isinstance(a, ast.PathExpression) and block is not None:
                v = block.ctor_args.get(a.name)
            if isinstance(v, ast.EnumValue):
                v = v.member
            out[p.name] = v
        return out

    def constant_code(self, decl: ast.ConstantDecl) -> str:
        v = decl.init.value
        if v is not None and not is_composite(decl.type_ref.resolved):
            return literal(v, decl.type_ref.resolved)
        name = self._const_globals.get(id(decl))
        if name is None:
            name = self.gname("K_")
            self._const_globals[id(decl)] = name
            saved = self.fn
            self.fn = FnContext("function", None)
            code = self.ex(decl.init)
            self.fn = saved
            self.funcs.insert(0, f"{name} = {code}\n")
        return name

    def name_fallback(self, e: ast.PathExpression) -> str:
        decl = e.decl
        if isinstance(decl, ast.InstanceDecl) and isinstance(decl.resolved, t.ExternType):
            return self.extern_global(decl, self.fn.block)
        if isinstance(decl, ast.ValueSetDecl):
            return self.value_set_global(decl, self.fn.block)
        raise UnsupportedError(f"name '{e.name}' here", e.loc)

    def value_set_global(self, decl: ast.ValueSetDecl, block: BlockInstance | None) -> str:
        key = (id(decl), id(block))
        name = self._extern_names.get(key)
        if name is None:
            name = self.gname("VS_")
            self._extern_names[key] = name
            et = unwrap(decl.element_type.resolved)
            if isinstance(et, t.StructLikeType):
                widths = [bit_width(ft) for _, ft in et.fields]
            else:
                widths = [bit_width(et)]
            self.value_sets.append(ExternInfo(
                name, qualified_name(decl, block.path if block else None), "value_set",
                {"size": int(decl.size.value or 0), "widths": widths}))
        return name

    def aid(self, decl: ast.ActionDecl) -> int:
        return self._aids.setdefault(id(decl), len(self._aids))

    # -- controls -----------------------------------------------------------------------------

    def control_fn(self, block: BlockInstance, top: bool = False) -> str:
        name = self._block_fns.get(id(block))
        if name is not None:
            return name
        decl = block.decl
        assert isinstance(decl, ast.ControlDecl)
        name = self.gname("B")
        self._block_fns[id(block)] = name
        ctx = FnContext("control", block)
        params: list[str] = []
        ctx_params: list[str] = []
        scalar_params: list[ast.Parameter] = []
        for p in decl.params:
            pt = unwrap(p.type)
            if isinstance(pt, t.ExternType) and pt.name == "packet_out":
                ctx.env[p] = "_ap"
                ctx.packet = p
                params.append("_ap")
                ctx_params.append("_ap")
            elif is_composite(pt):
                pname = f"p_{p.name}"
                ctx.env[p] = pname
                params.append(pname)
                ctx_params.append(pname)
            else:
                params.append(f"p_{p.name}")
                scalar_params.append(p)
        frame_vars = [v for v in decl.locals if isinstance(v, ast.VariableDecl)]
        frame_slots = [f"x_{p.name}" for p in scalar_params] + [f"v_{v.name}" for v in frame_vars]
        for p in scalar_params:
            ctx.env[p] = f"F.x_{p.name}"
        for v in frame_vars:
            ctx.env[v] = f"F.v_{v.name}"
        frame_cls = None
        if frame_slots:
            frame_cls = self.gname("FR")
            self.funcs.insert(0, f"class {frame_cls}:\n    __slots__ = {tuple(frame_slots)!r}\n")
            ctx_params.append("F")
        ctx.ctx_args = ", ".join(ctx_params)
        outs = [f"F.x_{p.name}" for p in scalar_params if p.direction in ("out", "inout")]
        ctx.ret_expr = ("(" + ", ".join(outs) + ",)") if outs else "None"
        for local in decl.locals:
            if isinstance(local, ast.ConstantDecl):
                ctx.env[local] = self.constant_code_in(local, ctx)
        with self.function(f"def {name}({', '.join(params)}):", ctx):
            if frame_cls:
                self.line(f"F = {frame_cls}()")
            for p in scalar_params:
                self.line(f"F.x_{p.name} = p_{p.name}")
            for v in frame_vars:
                self.var_init(f"F.v_{v.name}", v)
            if top:
                self.tr(repr(f"Pipeline '{block.path}': start"))
                self.line("try:")
                with self.indent():
                    self.block(decl.body)
                self.line("except ExitSignal:")
                with self.indent():
                    self.tr(repr("Exit"))
                self.tr(repr(f"Pipeline '{block.path}': end"))
            else:
                self.block(decl.body)
            if ctx.ret_expr != "None":
                self.line(f"return {ctx.ret_expr}")
        return name

    def constant_code_in(self, decl: ast.ConstantDecl, ctx: FnContext) -> str:
        saved = self.fn
        self.fn = ctx
        try:
            return self.constant_code(decl)
        finally:
            self.fn = saved

    def var_init(self, target: str, v: ast.VariableDecl) -> None:
        ty = v.type_ref.resolved
        if v.init is None:
            self.line(f"{target} = {self.types.default(ty)}")
        elif is_composite(ty):
            code = self.ex(v.init)
            if self.is_fresh(v.init):
                self.line(f"{target} = {code}")
            else:
                self.line(f"{target} = {code}._copy()")
        else:
            self.line(f"{target} = {self.ex(v.init)}")

    @staticmethod
    def is_fresh(e: ast.Expression) -> bool:
        if isinstance(e, ast.MethodCall):
            return e.call is not None and e.call.kind == "function"
        return isinstance(e, ast.ListExpression | ast.StructExpression |
                          ast.InvalidHeaderExpression)

    # -- actions ------------------------------------------------------------------------------

    def action_fn(self, decl: ast.ActionDecl, block: BlockInstance) -> str:
        key = (id(decl), id(block))
        name = self._action_fns.get(key)
        if name is not None:
            return name
        name = self.gname("A")
        self._action_fns[key] = name
        block_ctx = self.block_context(block)
        ctx = FnContext("action", block, ctx_args=block_ctx.ctx_args)
        if decl in block.decl.locals:
            ctx.env.update(block_ctx.env)
        dir_params = [p for p in decl.params if p.direction]
        cp_params = [p for p in decl.params if not p.direction]
        args = [a for a in block_ctx.ctx_args.split(", ") if a]
        for p in dir_params:
            ctx.env[p] = f"a_{p.name}"
            args.append(f"a_{p.name}")
        outs = [f"a_{p.name}" for p in dir_params
                if p.direction in ("out", "inout") and not is_composite(p.type)]
        ctx.ret_expr = ("(" + ", ".join(outs) + ",)") if outs else "None"
        cp_name = qualified_name(decl, block.path if decl in block.decl.locals else None)
        with self.function(f"def {name}({', '.join([*args, '_a'])}):", ctx):
            for p in cp_params:
                ctx.env[p] = f"a_{p.name}"
            if len(cp_params) == 1:
                self.line(f"a_{cp_params[0].name} = _a[0]")
            elif cp_params:
                self.line(", ".join(f"a_{p.name}" for p in cp_params) + " = _a")
            for p in dir_params:
                if p.direction == "out":
                    if is_composite(p.type):
                        self.line(f"a_{p.name}._reset()")
                    else:
                        self.line(f"a_{p.name} = {self.types.default(p.type)}")
            if self.trace and cp_params:
                args_fmt = ", ".join(f"{{a_{p.name}:#x}}" for p in cp_params)
                self.tr(f"f'Action {cp_name}({args_fmt})'")
            self.block(decl.body)
            if outs:
                self.line(f"return {ctx.ret_expr}")
        return name

    def block_context(self, block: BlockInstance) -> FnContext:
        """A control's context (env for its params/locals, ctx args) without emitting it."""
        decl = block.decl
        ctx = FnContext("control", block)
        params = []
        has_frame = False
        for p in decl.params:
            pt = unwrap(p.type)
            if isinstance(pt, t.ExternType) and pt.name == "packet_out":
                ctx.env[p] = "_ap"
                params.append("_ap")
            elif is_composite(pt):
                ctx.env[p] = f"p_{p.name}"
                params.append(f"p_{p.name}")
            else:
                ctx.env[p] = f"F.x_{p.name}"
                has_frame = True
        for v in decl.locals:
            if isinstance(v, ast.VariableDecl):
                ctx.env[v] = f"F.v_{v.name}"
                has_frame = True
            elif isinstance(v, ast.ConstantDecl):
                ctx.env[v] = self.constant_code_in(v, ctx)
        if has_frame:
            params.append("F")
        ctx.ctx_args = ", ".join(params)
        return ctx

    # -- tables -------------------------------------------------------------------------------

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
                code = self.ex(k.expr)
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
                self.tr(f"'Table {cp_name}: miss'")
                if info.direct_meter:
                    self.line(f"{info.direct_meter}.color = 0")
            self.line("else:")
            with self.indent():
                self.tr(f"'Table {cp_name}: hit with handle ' + str(e.handle)")
                if info.direct_counter:
                    self.line("c = e.cnt")
                    self.line("c[0] += 1")
                    self.line("c[1] += R.plen")
                if info.direct_meter:
                    self.line(f"{info.direct_meter}.color = e.meter.execute(R.now, R.plen)")
                if info.profile:
                    if sel_keys:
                        fields = []
                        for k in sel_keys:
                            fields += self.flatten(k.expr)
                        vals = "(" + "".join(c + ", " for c, _, _ in fields) + ")"
                        widths = "(" + "".join(f"{w}, " for _, w, _ in fields) + ")"
                        sel = f"fields_to_bytes({vals}, {widths})"
                    else:
                        sel = "b''"
                    self.line(f"a = e.member or {info.profile}.choose(e.group, {sel}) "
                              f"or {gname}.default")
                else:
                    self.line("a = e")
            self.tr(f"'Action entry is ' + a.action + ' - ' + "
                    f"', '.join(format(x, 'x') for x in a.args)")
            call_args = ctx.ctx_args + ", " if ctx.ctx_args else ""
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
        kinds = [f.match_kind for f in key_fields]
        if not kinds:
            mode = "none"
        elif all(x == "exact" for x in kinds):
            mode = "exact"
        elif kinds.count("lpm") == 1 and all(x in ("exact", "lpm") for x in kinds):
            mode = "lpm"
        else:
            mode = "scan"
        actions = []
        for ref in decl.actions:
            adecl = ref.decl
            assert adecl is not None
            fn = self.table_action_fn(ref, block)
            params = tuple((p.name, bit_width(p.type)) for p in adecl.params if not p.direction)
            an = qualified_name(adecl, block.path if adecl in block.decl.locals else None)
            actions.append(ActionInfo(
                an, fn, params, self.aid(adecl),
                default_only=ref.annotation("defaultonly") is not None,
                table_only=ref.annotation("tableonly") is not None))
        default_action, default_args = "NoAction", ()
        if decl.default_action is not None and decl.default_action.decl is not None:
            ref = decl.default_action
            adecl = ref.decl
            default_action = qualified_name(
                adecl, block.path if adecl in block.decl.locals else None)
            default_args = self.const_action_args(ref)
        entries = []
        for ent in decl.entries or []:
            matches = [self.const_match(kexpr, f) for kexpr, f in zip(ent.keys, key_fields)]
            adecl = ent.action.decl
            assert adecl is not None
            an = qualified_name(adecl, block.path if adecl in block.decl.locals else None)
            prio = ent.priority_value
            entries.append(EntryInfo(matches, an, self.const_action_args(ent.action), prio))
        size_prop = decl.property("size")
        size = int(size_prop.value.value) if size_prop and size_prop.value.value else 1024
        info = TableInfo(gname, cp_name, key_fields, mode, actions, default_action, default_args,
                         decl.default_action_const, entries, decl.entries_const, size)
        impl = decl.property("implementation")
        if impl is not None:
            info.profile = self.property_extern(impl.value, block, "implementation")
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

    def block(self, b: ast.BlockStatement) -> None:
        for s in b.statements:
            self.stmt(s)

    def stmt(self, s: ast.Statement | ast.Declaration) -> None:
        if isinstance(s, ast.BlockStatement):
            self.block(s)
        elif isinstance(s, ast.AssignmentStatement):
            self.assign(s.lhs, self.ex(s.rhs), fresh=self.is_fresh(s.rhs), rhs_expr=s.rhs)
        elif isinstance(s, ast.MethodCallStatement):
            self.call_stmt(s.call)
        elif isinstance(s, ast.IfStatement):
            self.line(f"if {self.ex(s.cond)}:")
            with self.indent():
                self.stmt(s.then)
            if s.otherwise is not None:
                self.line("else:")
                with self.indent():
                    self.stmt(s.otherwise)
        elif isinstance(s, ast.SwitchStatement):
            self.switch(s)
        elif isinstance(s, ast.ExitStatement):
            self.line("raise ExitSignal()")
        elif isinstance(s, ast.ReturnStatement):
            self.ret(s)
        elif isinstance(s, ast.EmptyStatement):
            pass
        elif isinstance(s, ast.VariableDecl):
            name = self.fn.fresh(f"v_{s.name}_")
            self.var_init(name, s)
            self.fn.env[s] = name
        elif isinstance(s, ast.ConstantDecl):
            self.fn.env[s] = self.constant_code(s)
        else:
            raise UnsupportedError(f"statement {type(s).__name__}", s.loc)

    def ret(self, s: ast.ReturnStatement) -> None:
        if self.fn.kind == "function":
            value = self.ex(s.value) if s.value is not None else "None"
            if s.value is not None and is_composite(s.value.type) and not self.is_fresh(s.value):
                value = f"{value}._copy()"
            outs = self.fn.ret_expr
            self.line(f"return {value}" if not outs else f"return ({value}, {outs})")
        else:
            self.line(f"return {self.fn.ret_expr}" if self.fn.ret_expr != "None" else "return")

    def switch(self, s: ast.SwitchStatement) -> None:
        var = self.fn.fresh("sw")
        self.line(f"{var} = {self.ex(s.expr)}")
        first = True
        default_body: ast.BlockStatement | None = None
        has_default = False
        for case in s.cases:
            vals = []
            for label in case.labels:
                if isinstance(label, ast.DefaultExpression):
                    has_default = True
                    default_body = case.body
                    continue
                if isinstance(label, ast.PathExpression) and isinstance(label.decl, ast.ActionDecl):
                    vals.append(str(self.aid(label.decl)))
                else:
                    vals.append(self.ex(label))
            if not vals:
                continue
            cond = " or ".join(f"{var} == {v}" for v in vals)
            self.line(f"{'if' if first else 'elif'} {cond}:")
            first = False
            with self.indent():
                if case.body is not None:
                    self.block(case.body)
        if has_default:
            if first:
                if default_body is not None:
                    self.block(default_body)
            else:
                self.line("else:")
                with self.indent():
                    if default_body is not None:
                        self.block(default_body)

    def assign(self, lhs: ast.Expression, rhs: str, fresh: bool = False,
               rhs_expr: ast.Expression | None = None) -> None:
        ty = unwrap(lhs.type)
        if isinstance(lhs, ast.Slice):
            assert lhs.high is not None and lhs.low is not None
            base_t = unwrap(lhs.expr.type)
            base = self.ex(lhs.expr)
            new = f"set_bits({base}, {rhs}, {lhs.high}, {lhs.low})"
            if isinstance(base_t, t.BitType) and base_t.signed:
                new = wrap(new, base_t)
            self.assign(lhs.expr, new)
            return
        target = self.ex(lhs)
        if is_composite(ty):
            self.line(f"{target}._set({rhs})")
            if isinstance(lhs, ast.Member) and lhs.kind == "field" and isinstance(
                    unwrap(lhs.expr.type), t.HeaderUnionType):
                self.line(f"if {target}._v: {self.ex(lhs.expr)}._only({lhs.member!r})")
            return
        self.line(f"{target} = {rhs}")
        if isinstance(ty, t.VarbitType) and rhs_expr is not None:
            self.line(f"{target}__w = {self.ex(rhs_expr)}__w")

    # -- calls --------------------------------------------------------------------------------

    def emit_call(self, fn: str, ctx_args: str, params: list[ast.Parameter],
                  args: list[ast.Expression | None], cp_args: str | None,
                  result: str | None) -> None:
        """Call `fn` with copy-in/copy-out of scalar out/inout arguments."""
        codes = [ctx_args] if ctx_args else []
        outs: list[tuple[int, ast.Expression]] = []
        for p, a in zip(params, args):
            composite = is_composite(p.type)
            if a is None or isinstance(a, ast.DontCareExpression):
                codes.append(self.types.default(p.type))
                if p.direction in ("out", "inout") and not composite:
                    outs.append((len(outs), None))  # type: ignore[arg-type]
                continue
            if p.direction == "out" and not composite:
                codes.append(self.types.default(p.type))
            else:
                code = self.ex(a)
                if p.direction in ("", "in") and composite and self.fn.kind != "control" \
                        and not self.is_fresh(a):
                    code = f"{code}._copy()"
                codes.append(code)
            if p.direction in ("out", "inout") and not composite:
                outs.append((len(outs), a))
        if cp_args is not None:
            codes.append(cp_args)
        call = f"{fn}({', '.join(codes)})"
        if not outs:
            self.line(f"{result} = {call}" if result else call)
            return
        r = self.fn.fresh("r")
        self.line(f"{r} = {call}")
        offset = 0
        if result:
            self.line(f"{result} = {r}[0]")
            offset = 1
        for i, a in outs:
            if a is not None:
                self.assign(a, f"{r}[{i + offset}]")

    def call_stmt(self, e: ast.MethodCall) -> None:
        c = e.call
        if c is None:
            raise UnsupportedError("unresolved call", e.loc)
        kind = c.kind
        if kind == "builtin":
            self.builtin_stmt(e, c)
        elif kind == "packet":
            self.packet_call(e, c, None)
        elif kind == "extern_method":
            self.extern_method(e, c, None)
        elif kind == "extern_function":
            self.extern_function(e, c)
        elif kind == "action":
            self.direct_action(e, c)
        elif kind == "function":
            self.function_call(e, c, None)
        elif kind == "table_apply":
            self.line(self.call_expr(e))
        elif kind == "apply":
            self.sub_block_call(e, c)
        else:
            raise UnsupportedError(f"call of kind '{kind}'", e.loc)

    def call_expr(self, e: ast.MethodCall) -> str:
        c = e.call
        if c is None:
            raise UnsupportedError("unresolved call", e.loc)
        if e.value is not None:
            return literal(e.value, e.type)
        kind = c.kind
        if kind == "table_apply":
            assert isinstance(c.decl, ast.TableDecl)
            block = self.fn.block
            assert block is not None
            fn = self.table_fn(c.decl, block)
            return f"{fn}({self.fn.ctx_args})"
        if kind == "builtin":
            recv = self.ex(c.receiver)
            rt = unwrap(c.receiver.type)
            if c.name == "isValid":
                if isinstance(rt, t.HeaderUnionType):
                    return f"{recv}._valid()"
                return f"{recv}._v"
            raise UnsupportedError(f"builtin '{c.name}' as a value", e.loc)
        if kind == "packet":
            tmp = self.fn.fresh("t")
            self.packet_call(e, c, tmp)
            return tmp
        if kind == "extern_method":
            tmp = self.fn.fresh("t")
            self.extern_method(e, c, tmp)
            return tmp
        if kind == "function":
            tmp = self.fn.fresh("t")
            self.function_call(e, c, tmp)
            return tmp
        if kind == "extern_function":
            self.extern_function(e, c)
            return "None"
        raise UnsupportedError(f"call of kind '{kind}' as a value", e.loc)

    def builtin_stmt(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        recv = self.ex(c.receiver)
        name = c.name
        if name == "setValid":
            self.line(f"{recv}._setvalid()")
            self.union_only(c.receiver)
        elif name == "setInvalid":
            self.line(f"{recv}._v = False")
        elif name in ("push_front", "pop_front"):
            self.line(f"{recv}.{name}({self.ex(c.args[0])})")
        elif name == "isValid":
            pass
        else:
            raise UnsupportedError(f"builtin method '{name}'", e.loc)

    def union_only(self, target: ast.Expression) -> None:
        if isinstance(target, ast.Member) and target.kind == "field" and isinstance(
                unwrap(target.expr.type), t.HeaderUnionType):
            self.line(f"{self.ex(target.expr)}._only({target.member!r})")

    def direct_action(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        adecl = c.decl
        assert isinstance(adecl, ast.ActionDecl)
        block = self.fn.block
        assert block is not None
        fn = self.action_fn(adecl, block)
        dir_params = [p for p in adecl.params if p.direction]
        bound = dict(zip(c.params, c.args))
        cps = [bound.get(p) for p in adecl.params if not p.direction]
        cp_codes = []
        for a in cps:
            cp_codes.append(self.ex(a) if a is not None else "0")
        cp_args = "(" + "".join(x + ", " for x in cp_codes) + ")"
        ctx_args = self.block_context(block).ctx_args
        self.emit_call(fn, ctx_args, dir_params, [bound.get(p) for p in dir_params], cp_args,
                       None)

    def function_call(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        fdecl = c.decl
        assert isinstance(fdecl, ast.FunctionDecl)
        fn = self.p4_function(fdecl)
        self.emit_call(fn, "", list(fdecl.params), list(c.args), None, result or "_")

    def p4_function(self, decl: ast.FunctionDecl) -> str:
        name = self._function_fns.get(id(decl))
        if name is not None:
            return name
        name = self.gname("FN")
        self._function_fns[id(decl)] = name
        ctx = FnContext("function", None)
        args = []
        outs = []
        for p in decl.params:
            ctx.env[p] = f"a_{p.name}"
            args.append(f"a_{p.name}")
            if p.direction in ("out", "inout") and not is_composite(p.type):
                outs.append(f"a_{p.name}")
        ctx.ret_expr = ", ".join(outs)
        with self.function(f"def {name}({', '.join(args)}):", ctx):
            for p in decl.params:
                if p.direction == "out" and is_composite(p.type):
                    self.line(f"a_{p.name}._reset()")
            self.block(decl.body)
            self.line("return None" if not outs else f"return (None, {ctx.ret_expr})")
        return name

    def sub_block_call(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        inst = c.decl
        assert isinstance(inst, ast.InstanceDecl)
        block = self.fn.block
        assert block is not None
        child = block.children.get(inst.name)
        if child is None:
            raise UnsupportedError(f"instance '{inst.name}' has no block", e.loc)
        if isinstance(child.decl, ast.ParserDecl):
            fn = self.parser_fn(child)
            params = [p for p in child.decl.params
                      if not (isinstance(unwrap(p.type), t.ExternType))]
            args = [a for p, a in zip(c.params, c.args)
                    if not isinstance(unwrap(p.type), t.ExternType)]
            self.emit_call(fn, "_pkt, _nb, _pos", params, args, None, "_pos")
            return
        fn = self.control_fn(child)
        params = list(child.decl.params)
        args = list(c.args)
        pk = [i for i, p in enumerate(params) if isinstance(unwrap(p.type), t.ExternType)]
        codes_ctx = ""
        if pk:
            # a deparser-like sub-control receiving packet_out: pass the appender through
            params = [p for i, p in enumerate(params) if i not in pk]
            args = [a for i, a in enumerate(args) if i not in pk]
            codes_ctx = "_ap"
        self.emit_call(fn, codes_ctx, params, args, None, None)

    # -- packet_in / packet_out ---------------------------------------------------------------

    def packet_call(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        name = c.name
        too_short = self.error_code("PacketTooShort")
        if name == "extract":
            target = c.args[0]
            assert target is not None
            varlen = c.args[1] if len(c.args) > 1 else None
            self.extract(target, varlen)
        elif name == "lookahead":
            ty = unwrap(c.type_bindings.get("T") or e.type)
            if isinstance(ty, t.HeaderType):
                w = ty.bit_width()
                tmp = self.fn.fresh("lk")
                self.line(f"{tmp} = look(_pkt, _nb, _pos, {w}, {too_short})")
                obj = result or self.fn.fresh("h")
                self.line(f"{obj} = {self.types.class_name(ty)}()")
                self.unpack_fields(obj, ty, tmp, w)
                self.line(f"{obj}._v = True")
            else:
                w = bit_width(ty)
                code = f"look(_pkt, _nb, _pos, {w}, {too_short})"
                if isinstance(ty, t.BoolType):
                    code = f"({code} != 0)"
                elif isinstance(ty, t.BitType) and ty.signed:
                    code = wrap(code, ty)
                self.line(f"{result or '_'} = {code}")
        elif name == "advance":
            amount = self.ex(c.args[0])
            self.line(f"if _pos + {amount} > _nb: raise ParserErrorSignal({too_short}, _pos)")
            self.line(f"_pos += {amount}")
        elif name == "length":
            self.line(f"{result or '_'} = _nb >> 3")
        elif name == "emit":
            arg = c.args[0]
            assert arg is not None
            self.emit_value(self.ex(arg), unwrap(arg.type))
        else:
            raise UnsupportedError(f"packet method '{name}'", e.loc)

    def extract(self, target: ast.Expression, varlen: ast.Expression | None) -> None:
        ty = unwrap(target.type)
        assert isinstance(ty, t.HeaderType)
        too_short = self.error_code("PacketTooShort")
        is_next = isinstance(target, ast.Member) and target.kind == "stack_next"
        if is_next:
            stack = self.ex(target.expr)  # type: ignore[attr-defined]
            st = unwrap(target.expr.type)  # type: ignore[attr-defined]
            assert isinstance(st, t.HeaderStackType)
            oob = self.error_code("StackOutOfBounds")
            self.line(f"if {stack}.nxt >= {st.size}: raise ParserErrorSignal({oob}, _pos)")
            h = self.fn.fresh("h")
            self.line(f"{h} = {stack}.h[{stack}.nxt]")
        else:
            h = self.fn.fresh("h")
            self.line(f"{h} = {self.ex(target)}")
        fixed = ty.bit_width()
        if varlen is None:
            self.line(f"if _pos + {fixed} > _nb: raise ParserErrorSignal({too_short}, _pos)")
            v = self.fn.fresh("x")
            self.line(f"{v} = int.from_bytes(_pkt[_pos >> 3:(_pos + {fixed + 7}) >> 3], 'big')"
                      f" >> (-(_pos + {fixed}) & 7)")
            self.unpack_fields(h, ty, v, fixed)
            self.line(f"_pos += {fixed}")
        else:
            vw = self.fn.fresh("vw")
            self.line(f"{vw} = {self.ex(varlen)}")
            vmax = next(unwrap(ft).max_width for _, ft in ty.fields
                        if isinstance(unwrap(ft), t.VarbitType))
            too_long = self.error_code("HeaderTooShort")
            self.line(f"if {vw} > {vmax}: raise ParserErrorSignal({too_long}, _pos)")
            total = self.fn.fresh("tw")
            self.line(f"{total} = {fixed} + {vw}")
            self.line(f"if _pos + {total} > _nb: raise ParserErrorSignal({too_short}, _pos)")
            v = self.fn.fresh("x")
            self.line(f"{v} = read_bits(_pkt, _pos, {total})")
            self.unpack_varbit(h, ty, v, vw)
            self.line(f"_pos += {total}")
        self.line(f"{h}._v = True")
        if is_next:
            self.line(f"{stack}.nxt += 1")
        else:
            self.union_only(target)
        self.tr(repr(f"Extracting header '{key_text(target)}'"))

    def unpack_fields(self, h: str, ty: t.HeaderType, v: str, total: int) -> None:
        shift = total
        for fname, ftype, w in self.types.header_layout(ty):
            shift -= w
            code = f"({v} >> {shift}) & {mask(w)}" if shift else f"{v} & {mask(w)}"
            if isinstance(ftype, t.BitType) and ftype.signed:
                code = wrap(code, ftype)
            elif isinstance(ftype, t.BoolType):
                code = f"({code}) != 0"
            self.line(f"{h}.{fname} = {code}")

    def unpack_varbit(self, h: str, ty: t.HeaderType, v: str, vw: str) -> None:
        layout = self.types.header_layout(ty)
        vi = next(i for i, (_, ft, _) in enumerate(layout) if isinstance(ft, t.VarbitType))
        after = sum(w for _, _, w in layout[vi + 1:])
        # fields before the varbit: shift = after + vw + (widths after them, before varbit)
        for i, (fname, ftype, w) in enumerate(layout):
            if i < vi:
                rest = sum(x for _, _, x in layout[i + 1:vi]) + after
                shift = f"({vw} + {rest})"
                self.line(f"{h}.{fname} = ({v} >> {shift}) & {mask(w)}")
            elif i == vi:
                self.line(f"{h}.{fname} = ({v} >> {after}) & ((1 << {vw}) - 1)")
                self.line(f"{h}.{fname}__w = {vw}")
            else:
                rest = sum(x for _, _, x in layout[i + 1:])
                self.line(f"{h}.{fname} = ({v} >> {rest}) & {mask(w)}")

    def emit_value(self, code: str, ty: t.Type) -> None:
        if isinstance(ty, t.HeaderType):
            layout = self.types.header_layout(ty)
            has_varbit = any(isinstance(ft, t.VarbitType) for _, ft, _ in layout)
            h = self.fn.fresh("h")
            self.line(f"{h} = {code}")
            self.line(f"if {h}._v:")
            with self.indent():
                if not has_varbit:
                    total = ty.bit_width()
                    parts = []
                    shift = total
                    for fname, ftype, w in layout:
                        shift -= w
                        f = f"{h}.{fname}"
                        if isinstance(ftype, t.BitType) and ftype.signed:
                            f = f"({f} & {mask(w)})"
                        elif isinstance(ftype, t.BoolType):
                            f = f"int({f})"
                        parts.append(f"({f} << {shift})" if shift else f)
                    self.line(f"_ap(({' | '.join(parts) or '0'}).to_bytes({total // 8}, 'big'))")
                else:
                    acc = self.fn.fresh("acc")
                    self.line(f"{acc} = 0")
                    bits = self.fn.fresh("n")
                    self.line(f"{bits} = 0")
                    for fname, ftype, w in layout:
                        if isinstance(ftype, t.VarbitType):
                            self.line(f"{acc} = ({acc} << {h}.{fname}__w) | {h}.{fname}")
                            self.line(f"{bits} += {h}.{fname}__w")
                        else:
                            self.line(f"{acc} = ({acc} << {w}) | ({h}.{fname} & {mask(w)})")
                            self.line(f"{bits} += {w}")
                    self.line(f"_ap({acc}.to_bytes({bits} >> 3, 'big'))")
                self.tr(repr("Deparsing header"))
        elif isinstance(ty, t.HeaderStackType):
            for i in range(ty.size):
                self.emit_value(f"{code}.h[{i}]", unwrap(ty.element))
        elif isinstance(ty, t.StructLikeType):
            for fname, ftype in ty.fields:
                self.emit_value(f"{code}.{fname}", unwrap(ftype))
        else:
            raise UnsupportedError(f"emit of {ty}")

    # -- parsers ------------------------------------------------------------------------------

    def parser_fn(self, block: BlockInstance) -> str:
        name = self._block_fns.get(id(block))
        if name is not None:
            return name
        decl = block.decl
        assert isinstance(decl, ast.ParserDecl)
        name = self.gname("P")
        self._block_fns[id(block)] = name
        ctx = FnContext("parser", block)
        params = ["_pkt", "_nb", "_pos"]
        outs = []
        for p in decl.params:
            pt = unwrap(p.type)
            if isinstance(pt, t.ExternType):
                ctx.env[p] = "_pkt"
                ctx.packet = p
                continue
            pname = f"p_{p.name}"
            ctx.env[p] = pname
            params.append(pname)
            if p.direction in ("out", "inout") and not is_composite(pt):
                outs.append(pname)
        ctx.ret_expr = "_pos" if not outs else "(_pos, " + ", ".join(outs) + ")"
        states = {s.name: i for i, s in enumerate(decl.states)}
        start = states.get("start", 0)
        with self.function(f"def {name}({', '.join(params)}):", ctx):
            for p in decl.params:
                if p.direction == "out" and is_composite(p.type):
                    self.line(f"{ctx.env[p]}._reset()")
            for local in decl.locals:
                if isinstance(local, ast.VariableDecl):
                    lname = f"v_{local.name}"
                    ctx.env[local] = lname
                    self.var_init(lname, local)
                elif isinstance(local, ast.ConstantDecl):
                    ctx.env[local] = self.constant_code(local)
            self.line(f"_st = {start}")
            self.line("while True:")
            with self.indent():
                for i, s in enumerate(decl.states):
                    self.line(f"{'if' if i == 0 else 'elif'} _st == {i}:")
                    with self.indent():
                        self.parser_state(s, states)
                self.line("else:")
                with self.indent():
                    self.line("break")
            self.line(f"return {ctx.ret_expr}")
        return name

    def parser_state(self, s: ast.ParserState, states: dict[str, int]) -> None:
        self.tr(repr(f"Parser state '{s.name}'"))
        for st in s.statements:
            self.stmt(st)
        tr = s.transition
        if tr is None:
            self.goto("reject", states)
        elif isinstance(tr, ast.PathExpression):
            self.goto(tr.name, states)
        elif isinstance(tr, ast.SelectExpression):
            self.select(tr, states)
        else:
            raise UnsupportedError("transition", tr.loc)

    def goto(self, target: str, states: dict[str, int]) -> None:
        if target == "accept":
            self.line("break")
        elif target == "reject":
            self.line("raise ParserErrorSignal(-1, _pos)")
        else:
            self.line(f"_st = {states[target]}")

    def select(self, sel: ast.SelectExpression, states: dict[str, int]) -> None:
        keys = []
        widths = []
        for i, k in enumerate(sel.selectors):
            kv = f"_k{i}"
            code = self.ex(k)
            kt = unwrap(k.type)
            if isinstance(kt, t.BoolType):
                code = f"int({code})"
            elif isinstance(kt, t.BitType) and kt.signed:
                code = f"({code} & {mask(kt.width)})"
            self.line(f"{kv} = {code}")
            keys.append(kv)
            widths.append(bit_width(kt) if not isinstance(kt, t.IntType) else 64)
        if self.trace:
            self.tr("'key is ' + ' '.join(format(x, 'x') for x in (" + ", ".join(keys) + ",))")
        first = True
        for case in sel.cases:
            elems = case.keyset.elements if isinstance(case.keyset, ast.ListExpression) and len(
                keys) > 1 else [case.keyset]
            conds = []
            if len(elems) == 1 and isinstance(elems[0], ast.DefaultExpression):
                conds = []
            elif len(elems) == 1 and isinstance(elems[0], ast.PathExpression) and isinstance(
                    elems[0].decl, ast.ValueSetDecl):
                vs = self.value_set_global(elems[0].decl, self.fn.block)
                conds.append(f"{vs}.match(({', '.join(keys)},))")
            else:
                for kv, w, el in zip(keys, widths, elems):
                    c = self.keyset_cond(kv, w, el)
                    if c:
                        conds.append(c)
            cond = " and ".join(conds) if conds else "True"
            self.line(f"{'if' if first else 'elif'} {cond}:")
            first = False
            with self.indent():
                self.goto(case.state, states)
        if first:
            self.line(f"raise ParserErrorSignal({self.error_code('NoMatch')}, _pos)")
        else:
            self.line("else:")
            with self.indent():
                self.line(f"raise ParserErrorSignal({self.error_code('NoMatch')}, _pos)")

    def keyset_cond(self, kv: str, width: int, el: ast.Expression) -> str:
        full = mask(width)
        if isinstance(el, ast.DefaultExpression):
            return ""
        if isinstance(el, ast.MaskExpression):
            return f"({kv} & {self.ex(el.right)}) == ({self.ex(el.left)} & {self.ex(el.right)})"
        if isinstance(el, ast.RangeExpression):
            return f"{self.ex(el.left)} <= {kv} <= {self.ex(el.right)}"
        if isinstance(el, ast.PathExpression) and isinstance(el.decl, ast.ValueSetDecl):
            vs = self.value_set_global(el.decl, self.fn.block)
            return f"{vs}.match(({kv},))"
        code = self.ex(el)
        if isinstance(unwrap(el.type), t.BoolType):
            code = f"int({code})"
        elif el.value is not None and isinstance(el.value, int) and el.value < 0:
            code = str(el.value & full)
        return f"{kv} == {code}"

    # -- externs ------------------------------------------------------------------------------

    def receiver_global(self, c: ast.CallInfo) -> tuple[str, ExternInfo]:
        recv = c.receiver
        decl = recv.decl if isinstance(recv, ast.PathExpression) else None
        if not isinstance(decl, ast.InstanceDecl):
            raise UnsupportedError("extern method on a non-instance receiver", recv.loc
                                   if recv is not None else None)
        g = self.extern_global(decl, self.fn.block)
        info = next(x for x in self.externs if x.gname == g)
        return g, info

    def extern_method(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        g, info = self.receiver_global(c)
        kind, m = info.kind, c.name
        args = c.args
        if kind == "counter" and m == "count":
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(args[0])}")
            self.line(f"if 0 <= {i} < {info.args.get('size', 0)}:")
            with self.indent():
                self.line(f"{g}.packets[{i}] += 1")
                self.line(f"{g}.bytes[{i}] += R.plen")
        elif kind == "direct_counter" and m == "count":
            pass  # BMv2 counts every hit of the owning table; count() itself does nothing
        elif kind == "meter" and m == "execute_meter":
            col = self.fn.fresh("c")
            self.line(f"{col} = {g}.execute({self.ex(args[0])}, R.now, R.plen)")
            self.line(f"if {col} is not None:")
            with self.indent():
                self.assign(args[1], col)
        elif kind == "direct_meter" and m == "read":
            self.assign(args[0], f"{g}.color")
        elif kind == "register" and m == "read":
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(args[1])}")
            self.assign(args[0], f"({g}.values[{i}] if 0 <= {i} < {info.args.get('size', 0)}"
                                 " else 0)")
        elif kind == "register" and m == "write":
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(args[0])}")
            self.line(f"if 0 <= {i} < {info.args.get('size', 0)}:")
            with self.indent():
                self.line(f"{g}.values[{i}] = {self.ex(args[1])}")
        elif kind == "Checksum16" and m == "get":
            fields = self.flatten(args[0])
            self.line(f"{result or '_'} = checksum16_get({self.tuple_of(fields, 0)}, "
                      f"{self.tuple_of(fields, 1)})")
        else:
            raise UnsupportedError(f"extern method {kind}.{m}", e.loc)

    @staticmethod
    def tuple_of(fields: list[tuple[str, int, str]], i: int) -> str:
        return "(" + "".join(f"{f[i]}, " for f in fields) + ")"

    def hash_global(self, algo: ast.Expression | None) -> str:
        v = algo.value if algo is not None else None
        if not isinstance(v, ast.EnumValue):
            raise UnsupportedError("a non-constant hash algorithm", algo.loc if algo else None)
        name = f"HF_{v.member}"
        self.hash_fns[name] = v.member
        return name

    def extern_function(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        name = c.name
        args = c.args
        sm = "R.sm"
        if name == "mark_to_drop":
            target = self.ex(args[0]) if args and args[0] is not None else sm
            self.line(f"{target}.egress_spec = R.drop_port")
            self.line(f"{target}.mcast_grp = 0")
            self.tr(repr("Primitive mark_to_drop"))
        elif name == "hash":
            fields = self.flatten(args[3])
            out_w = bit_width(args[0].type)
            fn = self.hash_global(args[1])
            code = (f"v1model_hash({fn}, {self.ex(args[2])}, {self.tuple_of(fields, 0)}, "
                    f"{self.tuple_of(fields, 1)}, {self.ex(args[4])}, {out_w})")
            self.assign(args[0], code)
        elif name in ("verify_checksum", "verify_checksum_with_payload"):
            fields = self.flatten(args[1])
            fn = self.hash_global(args[3])
            payload = ", R.payload" if name.endswith("payload") else ""
            self.line(f"if {self.ex(args[0])} and not verify_checksum({fn}, "
                      f"{self.tuple_of(fields, 0)}, {self.tuple_of(fields, 1)}, "
                      f"{self.ex(args[2])}{payload}):")
            with self.indent():
                self.line(f"{sm}.checksum_error = 1")
                self.tr(repr("Checksum verification failed"))
        elif name in ("update_checksum", "update_checksum_with_payload"):
            fields = self.flatten(args[1])
            fn = self.hash_global(args[3])
            w = bit_width(args[2].type)
            payload = ", R.payload" if name.endswith("payload") else ""
            self.line(f"if {self.ex(args[0])}:")
            with self.indent():
                self.assign(args[2], f"update_checksum({fn}, {self.tuple_of(fields, 0)}, "
                                     f"{self.tuple_of(fields, 1)}, {w}{payload})")
        elif name == "random":
            lo, hi = self.ex(args[1]), self.ex(args[2])
            self.assign(args[0], f"R.rng.randint({lo}, max({lo}, {hi}))")
        elif name == "digest":
            data = args[1]
            fields = self.flatten(data)
            tname = str(unwrap(data.type)) if data.type is not None else "digest"
            names = tuple(f[2].split(".")[-1] for f in fields)
            self.line(f"R.digests.append(Digest({tname!r}, {self.ex(args[0])}, "
                      f"{self.tuple_of(fields, 0)}, {names!r}))")
        elif name in ("clone", "clone3", "clone_preserving_field_list"):
            ctype = args[0].value if args[0] is not None else None
            ctype_name = ctype.member if isinstance(ctype, ast.EnumValue) else "I2E"
            fl = self.field_list_arg(name, args[2] if len(args) > 2 else None)
            self.line(f"R.clone = ({ctype_name!r}, {self.ex(args[1])}, {fl})")
        elif name in ("resubmit", "resubmit_preserving_field_list"):
            self.line(f"R.resubmit = {self.field_list_arg(name, args[0] if args else None)}")
        elif name in ("recirculate", "recirculate_preserving_field_list"):
            self.line(f"R.recirculate = {self.field_list_arg(name, args[0] if args else None)}")
        elif name == "truncate":
            self.line(f"R.truncate = {self.ex(args[0])}")
        elif name in ("assert", "assume"):
            self.line(f"if not {self.ex(args[0])}: raise AssertSignal({name!r})")
        elif name == "log_msg":
            if self.trace:
                msg = self.ex(args[0])
                if len(args) > 1 and args[1] is not None:
                    fields = self.flatten(args[1])
                    self.line(f"_T(log_format({msg}, {self.tuple_of(fields, 0)}))")
                else:
                    self.line(f"_T({msg})")
        elif name == "verify":
            self.line(f"if not {self.ex(args[0])}: raise ParserErrorSignal({self.ex(args[1])}, "
                      "_pos)")
        elif name == "static_assert":
            pass
        else:
            raise UnsupportedError(f"extern function '{name}'", e.loc)

    def field_list_arg(self, name: str, arg: ast.Expression | None) -> str:
        """The copier preserving metadata into the new packet instance ('None': nothing)."""
        if arg is None:
            return "None"
        if name.endswith("preserving_field_list"):
            v = arg.value
            return f"R.field_lists.get({int(v) if isinstance(v, int) else 0})"
        # deprecated form: copy the listed lvalues of the block's parameters
        block = self.fn.block
        if block is None or not isinstance(block.decl, ast.ControlDecl):
            return "None"
        params = block.decl.params
        fn = self.gname("FL")
        elems = arg.elements if isinstance(arg, ast.ListExpression) else [arg]
        src = FnContext("function", block)
        dst = FnContext("function", block)
        for p in params:
            src.env[p] = f"s_{p.name}"
            dst.env[p] = f"d_{p.name}"
        sig = ", ".join([f"s_{p.name}" for p in params] + [f"d_{p.name}" for p in params])
        with self.function(f"def {fn}({sig}):", src):
            for el in elems:
                if isinstance(el, ast.ListExpression | ast.StructExpression) or \
                        el.value is not None:
                    continue
                self.fn = src
                s = self.ex(el)
                self.fn = dst
                d = self.ex(el)
                self.fn = src
                if is_composite(el.type):
                    self.line(f"{d}._set({s})")
                else:
                    self.line(f"{d} = {s}")
        return fn

    def preserving_field_lists(self, meta_t: t.Type | None) -> dict[int, str]:
        """One copier per @field_list index found on user metadata fields."""
        lists: dict[int, list[str]] = {}

        def struct_decl(ty: t.Type) -> ast.StructLikeDecl | None:
            for d in self.checked.program.declarations:
                if isinstance(d, ast.StructLikeDecl) and d.resolved == ty:
                    return d
            return None

        def walk(ty: t.Type, path: str) -> None:
            decl = struct_decl(ty)
            if decl is None:
                return
            for f in decl.fields:
                fpath = f"{path}.{f.name}"
                ann = f.annotation("field_list")
                if ann is not None:
                    for a in ann.args:
                        if isinstance(a.value, int):
                            lists.setdefault(a.value, []).append(fpath)
                ft = unwrap(f.type_ref.resolved)
                if isinstance(ft, t.StructType):
                    walk(ft, fpath)

        if meta_t is not None:
            walk(unwrap(meta_t), "")
        out = {}
        for idx, paths in sorted(lists.items()):
            fn = self.gname("FLP")
            lines = [f"def {fn}(s_hdr, s_meta, s_sm, d_hdr, d_meta, d_sm):"]
            for p in paths:
                lines.append(f"    d_meta{p} = s_meta{p}")
            self.funcs.append("\n".join(lines) + "\n")
            out[idx] = fn
        return out


def generate(checked: CheckedProgram, trace: bool = False) -> GeneratedProgram:
    """Compile `checked` to Python source plus the descriptions of its run-time objects."""
    return Generator(checked, trace).generate()
