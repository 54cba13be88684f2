"""Compile a checked v1model program into Python source, once, for the engine to ``exec``.

One Python function per block instance (parser, controls, deparser), per action (per block that
uses it), per table (its ``apply``) and per P4 function. Run-time objects (tables, externs) are
module globals the Switch binds after exec; their descriptions (`TableInfo`, `ExternInfo`) come
out of generation together with the source.

Calling conventions:
- a control ``B(params...)``: headers/structs as objects, scalars by value; returns the tuple
  of its scalar out/inout parameters (or None). Nested calls (actions, functions, sub-blocks)
  copy composite arguments in and out at the call site (`emit_call`). Control-level variables live in a per-apply
  frame object ``F`` so that actions can share them.
- an action ``A(ctx..., directional args..., _a)``: `ctx` is the control's composite
  parameters plus ``F``; `_a` the tuple of control-plane (directionless) arguments.
- a table ``T(ctx...)`` → ``(hit, action id)``.
- a parser ``P(_pkt, _nb, _pos, params...)`` → the new bit position (or a tuple with scalar
  outs); errors raise `ParserErrorSignal`.
- a deparser ``D(_ap, params...)``: `_ap` appends the emitted bytes.

The generator is split by concern: codegen_types (classes for headers/structs), codegen_expr
(expressions), codegen_tables, codegen_parser (parsers, extract/emit), codegen_externs; this
module holds controls, actions, statements and calls. codegen_info has the descriptions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from softswitch.engine.codegen_expr import (
    ExprGen,
    FnContext,
    is_runtime_element,
    literal,
    lvalue_spine,
    wrap,
)
from softswitch.engine.codegen_externs import ExternGen
from softswitch.engine.codegen_info import (
    ExternInfo,
    GeneratedProgram,
    TableInfo,
)
from softswitch.engine.codegen_loops import LoopGen
from softswitch.engine.codegen_parser import ParserGen
from softswitch.engine.codegen_tables import TableGen
from softswitch.engine.codegen_types import TypeClasses, bit_width, is_composite, unwrap
from softswitch.errors import P4Error, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.checked import BlockInstance, CheckedProgram
from softswitch.ir.names import (
    action_name,
    control_plane_objects,
    qualified_name,
    top_block_paths,
)

_CONTROL_ROLES = ("verify_checksum", "ingress", "egress", "compute_checksum")


class Generator(ExprGen, TableGen, ParserGen, ExternGen, LoopGen):
    """Walks a CheckedProgram once and writes the Python module source."""

    def __init__(self, checked: CheckedProgram, trace: bool = False) -> None:
        self.checked = checked
        self.trace = trace
        self.types = TypeClasses()
        self.cpo = control_plane_objects(checked)
        self.top_paths = top_block_paths(checked)  # for action names (ir/names.action_name)
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
        self._side_effects: dict[ast.Node, bool] = {}
        self._loops: list[tuple[FnContext, list[ast.Statement]]] = []

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
        except Exception as exc:  # a gap in the generator: report it, never a traceback
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
        frame_slots += [f"v_{v.name}__w" for v in frame_vars  # a varbit local's current width
                        if isinstance(unwrap(v.type_ref.resolved), t.VarbitType)]
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
                what = "Deparser" if ctx.packet is not None else "Pipeline"
                self.tr(repr(f"{what} '{block.path}': start"))
                self.line("try:")
                with self.indent():
                    self.block(decl.body)
                self.line("except ExitSignal:")
                with self.indent():
                    self.tr(repr("Exit"))
                self.tr(repr(f"{what} '{block.path}': end"))
            elif ctx.ret_expr != "None":
                self.body_keeping_outs_on_exit(decl.body, ctx.ret_expr)
            else:
                self.block(decl.body)
            if ctx.ret_expr != "None":
                self.line(f"return {ctx.ret_expr}")
        return name

    def body_keeping_outs_on_exit(self, body: ast.BlockStatement, outs: str) -> None:
        """Run `body`; on ``exit`` attach the scalar out values to the signal so that the
        caller can still copy them out (P4 copies out even when exiting)."""
        self.line("try:")
        with self.indent():
            self.block(body)
        self.line("except ExitSignal as _x:")
        with self.indent():
            self.line(f"_x.outs = {outs}")
            self.line("raise")

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
            code = self.value_ex(v.init, self.types.default(ty))
            if self.is_fresh(v.init):
                self.line(f"{target} = {code}")
            else:
                self.line(f"{target} = {code}._copy()")
        else:
            self.line(f"{target} = {self.value_ex(v.init, self.types.default(ty))}")
        if isinstance(unwrap(ty), t.VarbitType):
            # a varbit value carries its width (BMv2's assign_VL copies both)
            width = "0" if v.init is None else f"{self.ex(v.init)}__w"
            self.line(f"{target}__w = {width}")

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
        cp_name = action_name(decl, block, self.top_paths.get(id(block)))
        with self.function(f"def {name}({', '.join([*args, '_a'])}):", ctx):
            for p in cp_params:
                ctx.env[p] = f"a_{p.name}"
            if len(cp_params) == 1:
                self.line(f"a_{cp_params[0].name} = _a[0]")
            elif cp_params:
                self.line(", ".join(f"a_{p.name}" for p in cp_params) + " = _a")
            for p in dir_params:
                # a composite `out` arrives fresh from the caller (see emit_call)
                if p.direction == "out" and not is_composite(p.type):
                    self.line(f"a_{p.name} = {self.types.default(p.type)}")
            if self.trace:
                args_fmt = ", ".join(f"{{a_{p.name}:#x}}" for p in cp_params)
                self.tr(f"f'Action {cp_name}({args_fmt})'")
            if outs:
                self.body_keeping_outs_on_exit(decl.body, ctx.ret_expr)
                self.line(f"return {ctx.ret_expr}")
            else:
                self.block(decl.body)
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

    def block(self, b: ast.BlockStatement) -> None:
        for s in b.statements:
            self.stmt(s)

    def stmt(self, s: ast.Statement | ast.Declaration) -> None:
        if isinstance(s, ast.BlockStatement):
            self.block(s)
        elif isinstance(s, ast.AssignmentStatement):
            self.assign_stmt(s)
        elif isinstance(s, ast.MethodCallStatement):
            self.call_stmt(s.call)
        elif isinstance(s, ast.IfStatement):
            self.line(f"if {self.cond_ex(s.cond)}:")
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
        elif isinstance(s, ast.ForStatement | ast.ForInStatement | ast.BreakStatement
                        | ast.ContinueStatement):
            self.loop_stmt(s)
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
            value = "None"
            if s.value is not None:
                value = self.value_ex(s.value, self.types.default(s.value.type))
            if s.value is not None and is_composite(s.value.type) and not self.is_fresh(s.value):
                value = f"{value}._copy()"
            outs = self.fn.ret_expr
            self.line(f"return {value}" if not outs else f"return ({value}, {outs})")
        else:
            self.line(f"return {self.fn.ret_expr}" if self.fn.ret_expr != "None" else "return")

    def switch(self, s: ast.SwitchStatement) -> None:
        # the expression is evaluated once, before any label is compared (spec 12.7)
        var = self.fn.fresh("sw")
        code, guards = self.collect(s.expr)
        self.line(f"{var} = {code}")
        if guards:
            # p4c's HSIndexContretizer: with an out-of-range stack index no case runs
            self.line(f"if {' and '.join(guards)}:")
            with self.indent():
                self.switch_cases(s, var)
        else:
            self.switch_cases(s, var)

    def switch_groups(self, s: ast.SwitchStatement
                      ) -> tuple[list[tuple[list[str], ast.BlockStatement | None]],
                                 bool, ast.BlockStatement | None]:
        """The cases of `s` as (label values, body) — an action label as its aid, any other as
        its expression —, whether it has `default:`, and the default's body. Both code
        generators (Python and C) emit their `if` chains from it."""
        groups: list[tuple[list[str], ast.BlockStatement | None]] = []
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
            if vals:
                groups.append((vals, case.body))
        return groups, has_default, default_body

    def switch_cases(self, s: ast.SwitchStatement, var: str) -> None:
        first = True
        groups, has_default, default_body = self.switch_groups(s)
        for vals, body in groups:
            cond = " or ".join(f"{var} == {v}" for v in vals)
            self.line(f"{'if' if first else 'elif'} {cond}:")
            first = False
            with self.indent():
                if body is not None:
                    self.block(body)
        if has_default:
            # a miss of a table with an action profile/selector and no default runs no action
            # (aid -1): BMv2 then goes to the table's base_default_next, the statement after
            # the switch, so not even `default:` runs
            no_action = f"{var} != -1" if self.may_run_no_action(s.expr) else None
            if first and no_action is None:
                if default_body is not None:
                    self.block(default_body)
            else:
                self.line(f"{'if' if first else 'elif'} {no_action}:" if no_action else "else:")
                with self.indent():
                    if default_body is not None:
                        self.block(default_body)
                    else:
                        self.line("pass")

    @staticmethod
    def may_run_no_action(e: ast.Expression) -> bool:
        """`e` is ``t.apply().action_run`` of a table with an action profile or selector."""
        if not (isinstance(e, ast.Member) and e.kind == "apply_action_run"):
            return False
        call = e.expr.call if isinstance(e.expr, ast.MethodCall) else None
        table = call.decl if call is not None else None
        return isinstance(table, ast.TableDecl) and table.property("implementation") is not None

    def assign_stmt(self, s: ast.AssignmentStatement) -> None:
        """``lhs = rhs`` / ``lhs op= rhs`` (spec 12.1): the l-value first, then the value.

        The location needs fixing only when a run-time stack index on the l-value could be
        changed by the right side, or when it has side effects of its own (in ``a op= b`` the
        copy of `a` in the value then reads the same element, evaluated once)."""
        lhs, rhs = s.lhs, s.rhs
        pinned: list[ast.Node] = []
        if (self.side_effects(rhs) or self.side_effects(lhs)) and any(
                is_runtime_element(n) for n in lvalue_spine(lhs)):
            twin = rhs.left if s.compound and isinstance(rhs, ast.BinaryOp) else None
            pinned = self.fix_lvalue(lhs, twin)
        code = self.value_ex(rhs, self.types.default(lhs.type))
        self.assign(lhs, code, fresh=self.is_fresh(rhs), rhs_expr=rhs)
        self.unpin(pinned)

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
        if (isinstance(lhs, ast.ArrayIndex) and not is_composite(ty)
                and isinstance(unwrap(lhs.expr.type), t.TupleType)):
            # tuples are Python tuples: a scalar element is written by rebuilding the tuple
            i = int(lhs.index.value)  # type: ignore[arg-type]
            base = self.ex(lhs.expr)
            self.assign(lhs.expr, f"{base}[:{i}] + ({rhs},) + {base}[{i + 1}:]")
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
                  result: str | None,
                  cp_exprs: list[tuple[ast.Parameter, ast.Expression | None]] | None = None,
                  ) -> None:
        """Call `fn` with P4's copy-in/copy-out (spec 6.8) for every directional argument.

        Arguments are evaluated left to right (`cp_exprs`, a direct action call's
        directionless arguments, after the directional ones, as they come last in the
        parameter list); an out/inout argument's location (a run-time stack index in it) is
        evaluated once, at copy-in, and the copy-out writes there. Scalars are immutable
        Python values: `in`/`inout` pass the value, out/inout come back in the returned tuple.
        Headers/structs/stacks/unions are mutable objects, so the caller copies them: `in`
        gets a private copy, `inout` a copy written back after the call, `out` a fresh
        uninitialised value written back after the call. Copy-out also happens when the
        callee exits; a parser error skips it (p4c's inlined sub-parsers copy out only on
        accept). The top-level blocks are called by the pipeline, not through here, so the
        per-packet path pays nothing."""
        codes = [ctx_args] if ctx_args else []
        n_outs = 0  # scalar out/inout values the callee returns
        # copy-out steps in parameter order: (index in the returned scalars, None, arg) or
        # (-1, temporary holding the composite, arg)
        backs: list[tuple[int, str | None, ast.Expression]] = []
        pinned: list[ast.Node] = []
        evaluated = [*args, *(a for _, a in cp_exprs or [])]
        last_se = max((i for i, a in enumerate(evaluated) if self.side_effects(a)), default=-1)
        for i, (p, a) in enumerate(zip(params, args)):
            composite = is_composite(p.type)
            writes = p.direction in ("out", "inout")
            if a is None or isinstance(a, ast.DontCareExpression):
                codes.append(self.types.default(p.type))
                if writes and not composite:
                    n_outs += 1
                continue
            if writes:
                pinned += self.fix_lvalue(a)
            if p.direction == "out":
                code = self.types.default(p.type)
            else:
                # a copy-in is an assignment to the parameter (p4c inlines it as one)
                code = self.value_ex(a, self.types.default(p.type))
            if composite:
                if writes or i < last_se:
                    tmp = self.fn.fresh("c")
                    copy = p.direction != "out" and not self.is_fresh(a)
                    self.line(f"{tmp} = {code}._copy()" if copy else f"{tmp} = {code}")
                    code = tmp
                elif not self.is_fresh(a):
                    code = f"{code}._copy()"
                if writes:
                    backs.append((-1, code, a))
            else:
                if i < last_se and p.direction != "out":
                    code = self.snapshot(a, code)
                if writes:
                    backs.append((n_outs, None, a))
                    n_outs += 1
            codes.append(code)
        if cp_exprs is not None:
            cp_codes = []
            for j, (p, a) in enumerate(cp_exprs, start=len(args)):
                code = "0" if a is None else self.value_ex(a, self.types.default(p.type))
                if a is not None and j < last_se:
                    code = self.snapshot(a, code)
                cp_codes.append(code)
            cp_args = "(" + "".join(x + ", " for x in cp_codes) + ")"
        if cp_args is not None:
            codes.append(cp_args)
        call = f"{fn}({', '.join(codes)})"
        if not backs and not n_outs:
            self.line(f"{result} = {call}" if result else call)
            return
        r = self.fn.fresh("r")
        offset = 1 if result else 0

        def copy_out(values: str) -> None:
            # left to right (spec 6.8), so that aliased arguments end with the last one's value
            for i, tmp, a in backs:
                if tmp is None:
                    self.assign(a, f"{values}[{i + offset}]")
                else:
                    self.assign(a, tmp, fresh=True)

        if result is None:
            # actions and controls: on exit the signal carries the scalar out values
            self.line("try:")
            with self.indent():
                self.line(f"{r} = {call}")
            self.line("except ExitSignal as _x:")
            with self.indent():
                copy_out("_x.outs")
                self.line("raise")
        else:
            self.line(f"{r} = {call}")
            self.line(f"{result} = {r}[0]" if n_outs else f"{result} = {r}")
        copy_out(r)
        self.unpin(pinned)

    def call_stmt(self, e: ast.MethodCall) -> None:
        c = e.call
        if c is None:
            raise UnsupportedError("unresolved call", e.loc)
        if c.kind in ("builtin", "packet", "extern_method", "extern_function") \
                and self.fn.kind != "parser":
            indexed = self.runtime_indices([c.receiver, *c.args])
            if indexed:
                # p4c's HSIndexContretizer (p4c-bm2-ss midend, controls only) turns a call
                # statement using hs[i] into `if (i == 0) call(hs[0]) else if ...`: with i out
                # of range the extern / built-in call does not happen at all. (Calls of
                # actions, functions and controls are inlined before that: their copy-in and
                # copy-out are assignments, see emit_call.)
                checks = []
                for a in indexed:
                    tmp = self.fn.fresh("ix")
                    self.line(f"{tmp} = {self.ex(a.index)}")
                    self.fn.pins[a.index] = tmp
                    size = unwrap(a.expr.type).size  # type: ignore[attr-defined]
                    checks.append(f"0 <= {tmp} < {size}")
                self.line(f"if {' and '.join(dict.fromkeys(checks))}:")
                with self.indent():
                    self.call_stmt_unchecked(e, c)
                self.unpin([a.index for a in indexed])
                return
        self.call_stmt_unchecked(e, c)

    def call_stmt_unchecked(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        kind = c.kind
        if kind == "builtin":
            self.builtin_stmt(e, c)
        elif kind == "packet":
            self.packet_call(e, c, None)
        elif kind in ("extern_method", "extern_function"):
            # an out/inout argument's location is fixed before an argument with side effects
            # runs (spec 6.8: r.read(hs[i].x, f(i)) writes hs[old i].x)
            pinned: list[ast.Node] = []
            if any(self.side_effects(a) for a in c.args):
                for p, a in zip(c.params, c.args):
                    if a is not None and p.direction in ("out", "inout"):
                        pinned += self.fix_lvalue(a)
            if kind == "extern_method":
                self.extern_method(e, c, None)
            else:
                self.extern_function(e, c)
            self.unpin(pinned)
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
        # directionless arguments behave as `in` (spec 6.8) and come last
        cps = [(p, bound.get(p)) for p in adecl.params if not p.direction]
        ctx_args = self.block_context(block).ctx_args
        self.emit_call(fn, ctx_args, dir_params, [bound.get(p) for p in dir_params], None,
                       None, cp_exprs=cps)

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
            self.block(decl.body)
            self.line("return None" if not outs else f"return (None, {ctx.ret_expr})")
        return name

    def sub_block_call(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        inst = c.decl  # a sub-block instance, or a constructor parameter of parser/control type
        assert isinstance(inst, ast.InstanceDecl | ast.Parameter)
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

def generate(checked: CheckedProgram, trace: bool = False) -> GeneratedProgram:
    """Compile `checked` to Python source plus the descriptions of its run-time objects."""
    return Generator(checked, trace).generate()
