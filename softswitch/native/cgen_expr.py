"""Expression compilation for the C engine: a checked P4 expression → a C expression string.

The mirror of engine/codegen_expr.py with the same evaluation order: a call (or table apply,
lookahead...) inside an expression is emitted as statements before the line using its result,
operands to its left saved in temporaries first, so every C expression the generator writes is
free of side effects and C's unspecified operand order never matters. Arithmetic is reduced
to the type's width right here; ``int<W>`` values are W-bit two's complement patterns and
compared, shifted and widened through their signed view (``ss_sx64``/``ss_sx128``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from softswitch.engine.codegen_expr import (
    ExprGen,
    has_side_effects,
    is_runtime_element,
    lvalue_spine,
)
from softswitch.errors import NativeUnsupported
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.native.cgen_types import (
    CTypes,
    c_literal,
    c_mask,
    is_composite,
    is_value_struct,
    is_wide,
    scalar_width,
    unwrap,
)
from softswitch.native.cgen_wide import CWideGen, wide_literal

if TYPE_CHECKING:
    from softswitch.ir.checked import BlockInstance


@dataclass
class CFnContext:
    """What the generator knows while emitting one C function."""

    kind: str  # "parser", "control", "action", "function", "table"
    block: BlockInstance | None
    env: dict[ast.Node, str] = field(default_factory=dict)
    ctx_args: str = ""  # the C arguments passing this control's context to actions/tables
    ctx_params: str = ""  # their declarations
    packet: ast.Node | None = None
    counter: int = 0
    ret: str | None = None  # a function's return-value pointer
    pins: dict[ast.Node, str] = field(default_factory=dict)
    guards: list[str] | None = None

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"_{base}{self.counter}"


# an addressable C expression: names, members, elements, dereferences (not a built value)
_LVALUE_RE = re.compile(r"[\w.>\-\[\]()*&]+")
# temporaries assigned once, and constants: reading them again gives the same value
_TEMP_RE = re.compile(r"_(?:t|o|ix|b|q|h|a)\d+|(?:0x[0-9a-f]+|\d+)ULL|\d+")


def literal(value: object, ty: t.Type | None) -> str:
    if isinstance(value, ast.EnumValue):
        return c_literal(value.number, 64)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        u = unwrap(ty) if ty is not None else None
        if isinstance(u, t.BoolType):
            return "1" if value else "0"
        if isinstance(u, t.EnumType) and u.underlying is not None:
            u = u.underlying
        if isinstance(u, t.BitType):
            return wide_literal(value, u.width) if u.width > 128 else c_literal(value, u.width)
        if value < 0:
            return f"((int64_t)({value}LL))"
        return c_literal(value, 128)
    raise NativeUnsupported(f"constant value {value!r}")


def signed_width(ty: t.Type | None) -> int:
    """The width of a signed ``int<W>`` type (enums with a signed underlying type too), else 0."""
    u = unwrap(ty)
    if isinstance(u, t.EnumType) and u.underlying is not None:
        u = u.underlying
    if isinstance(u, t.BitType) and u.signed:
        return u.width
    return 0


def sext(code: str, width: int) -> str:
    """The signed view of a W-bit two's complement pattern."""
    return f"ss_sx64({code}, {width})" if width <= 64 else f"ss_sx128({code}, {width})"


def reduce(code: str, width: int) -> str:
    m = c_mask(width)
    return f"(({code}) & {m})" if m else f"({code})"


class CExprGen(CWideGen):
    """Mixin of the C generator: expressions. Subclasses provide `fn`, `types`, `call_expr`,
    `line`, `indent`, `error_code`, `constant_code` and `name_fallback`."""

    fn: CFnContext
    types: CTypes
    _side_effects: dict[ast.Node, bool]

    def call_expr(self, call: ast.MethodCall) -> str:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def error_code(self, name: str) -> int:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def line(self, text: str) -> None:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def indent(self) -> Any:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def constant_code(self, decl: ast.ConstantDecl) -> str:  # pragma: no cover - Generator
        raise NotImplementedError

    def name_fallback(self, e: ast.PathExpression) -> str:  # pragma: no cover - Generator
        raise NativeUnsupported(f"name '{e.name}' here", e.loc)

    def side_effects(self, e: ast.Expression | None) -> bool:
        return has_side_effects(e, self._side_effects)

    def tmp(self, base: str, ctype: str, code: str) -> str:
        """Declare a temporary holding `code` now; returns its name."""
        name = self.fn.fresh(base)
        self.line(f"{ctype} {name} = {code};")
        return name

    # -- entry point ---------------------------------------------------------------------

    def ex(self, e: ast.Expression) -> str:
        if self.fn.pins:
            pinned = self.fn.pins.get(e)
            if pinned is not None:
                return pinned
        if (e.value is not None
                and not isinstance(e, ast.ListExpression | ast.StructExpression)
                and not is_composite(e.type)
                and not isinstance(unwrap(e.type) if e.type is not None else None,
                                   t.TupleType | t.ListType)):
            return literal(e.value, e.type)
        method = getattr(self, "ex_" + type(e).__name__, None)
        if method is None:
            raise NativeUnsupported(f"expression {type(e).__name__}", e.loc)
        return method(e)  # type: ignore[no-any-return]

    # -- evaluation order ----------------------------------------------------------------

    def ex_seq(self, exprs: list[ast.Expression]) -> list[str]:
        """Codes for `exprs` evaluated left to right: each one followed by a side-effecting
        one is saved in a temporary first."""
        last = max((i for i, x in enumerate(exprs) if self.side_effects(x)), default=-1)
        codes = []
        for i, x in enumerate(exprs):
            code = self.ex(x)
            if i < last:
                code = self.snapshot(x, code)
            codes.append(code)
        return codes

    def snapshot(self, e: ast.Expression, code: str) -> str:
        """`code` (the value of `e`) saved now in a temporary, unless it cannot change."""
        if e.value is not None and not is_composite(e.type):
            return code
        if not is_composite(e.type) and _TEMP_RE.fullmatch(code):
            return code
        return self.tmp("o", self.types.ctype(e.type), code)

    @contextmanager
    def guards_off(self) -> Iterator[None]:
        saved, self.fn.guards = self.fn.guards, None
        try:
            yield
        finally:
            self.fn.guards = saved

    def collect(self, e: ast.Expression) -> tuple[str, list[str]]:
        saved = self.fn.guards
        self.fn.guards = [] if self.fn.kind != "parser" else None
        try:
            code = self.ex(e)
            return code, self.fn.guards or []
        finally:
            self.fn.guards = saved

    def value_ex(self, e: ast.Expression, default: str) -> str:
        """`e` as an assignment source: an out-of-range run-time stack index gives the whole
        value 0 / an invalid header (p4c's HSIndexContretizer, see codegen_expr.value_ex)."""
        code, guards = self.collect(e)
        if guards:
            return f"(({' && '.join(guards)}) ? {code} : {default})"
        return code

    def cond_ex(self, e: ast.Expression) -> str:
        code, guards = self.collect(e)
        if guards:
            return f"(({code}) && {' && '.join(guards)})"
        return code

    def fix_lvalue(self, lv: ast.Expression, twin: ast.Expression | None = None) -> list[ast.Node]:
        """Evaluate the location of l-value `lv` now (see codegen_expr.fix_lvalue): the
        outermost run-time stack element on its spine becomes a pointer temporary."""
        others = list(lvalue_spine(twin)) if twin is not None else []
        for depth, node in enumerate(lvalue_spine(lv)):
            if is_runtime_element(node):
                with self.guards_off():
                    code = self.ex(node)
                name = self.fn.fresh("e")
                self.line(f"{self.types.ctype(node.type)} *{name} = &{code};")
                ref = f"(*{name})"
                pinned: list[ast.Node] = [node]
                self.fn.pins[node] = ref
                if depth < len(others):
                    self.fn.pins[others[depth]] = ref
                    pinned.append(others[depth])
                return pinned
        return []

    def unpin(self, nodes: list[ast.Node]) -> None:
        for n in nodes:
            self.fn.pins.pop(n, None)

    runtime_indices = ExprGen.runtime_indices  # an analysis of the IR: one copy

    # -- leaves --------------------------------------------------------------------------

    def ex_IntLiteral(self, e: ast.IntLiteral) -> str:
        return literal(e.number, e.type)

    def ex_BoolLiteral(self, e: ast.BoolLiteral) -> str:
        return "1" if e.bool_value else "0"

    def ex_StringLiteral(self, e: ast.StringLiteral) -> str:
        raise NativeUnsupported("string values", e.loc)

    def ex_PathExpression(self, e: ast.PathExpression) -> str:
        decl = e.decl
        if decl is None:
            raise NativeUnsupported(f"unresolved name '{e.name}'", e.loc)
        code = self.fn.env.get(decl)
        if code is not None:
            return code
        if isinstance(decl, ast.ConstantDecl):
            return self.constant_code(decl)
        if (isinstance(decl, ast.Parameter) and self.fn.block is not None
                and decl.name in self.fn.block.ctor_args):
            return literal(self.fn.block.ctor_args[decl.name], decl.type)
        return self.name_fallback(e)

    def ex_Member(self, e: ast.Member) -> str:
        kind = e.kind
        if kind in ("enum_member", "error_member"):
            if e.value is not None:
                return literal(e.value, e.type)
            if kind == "error_member":
                return c_literal(self.error_code(e.member), 64)
            et = unwrap(e.type)
            if isinstance(et, t.EnumType):
                return c_literal(et.value_of(e.member), 64)
        if kind in ("apply_hit", "apply_miss", "apply_action_run"):
            assert isinstance(e.expr, ast.MethodCall)
            result = self.call_expr(e.expr)  # "hit_var,aid_var"
            hit, aid = result.split(",")
            if kind == "apply_hit":
                return hit
            if kind == "apply_miss":
                return f"(!{hit})"
            return aid
        base = self.ex(e.expr)
        if kind in ("stack_next", "stack_last"):
            st = self.types.name(unwrap(e.expr.type))
            off = "" if kind == "stack_next" else " - 1"
            return f"(*EL_{st}(&{base}, (uint64_t){base}.nxt{off}))"
        if kind == "stack_last_index":
            return f"((uint64_t)(uint32_t)({base}.nxt - 1u))"
        if kind == "stack_size":
            st = unwrap(e.expr.type)
            assert isinstance(st, t.HeaderStackType)
            return c_literal(st.size, 32)
        return f"{base}.{e.member}"

    def ex_ArrayIndex(self, e: ast.ArrayIndex) -> str:
        bt = unwrap(e.expr.type)
        if isinstance(bt, t.TupleType | t.ListType) and isinstance(e.index.value, int):
            return f"{self.ex(e.expr)}.f{int(e.index.value)}"  # a constant index (spec 8.12)
        if not isinstance(bt, t.HeaderStackType):
            raise NativeUnsupported("indexing a tuple", e.loc)
        base = self.ex(e.expr)
        if e.index.value is not None:
            idx = int(e.index.value)
            if 0 <= idx < bt.size:
                return f"{base}.h[{idx}]"
        idx = self.ex(e.index)
        guards = self.fn.guards
        if guards is not None:
            if not _TEMP_RE.fullmatch(idx):
                idx = self.tmp("ix", "uint64_t", idx)
            check = f"{idx} < {bt.size}"
            if check not in guards:
                guards.append(check)
        return f"(*EL_{self.types.name(bt)}(&{base}, (uint64_t)({idx})))"

    def ex_Slice(self, e: ast.Slice) -> str:
        assert e.high is not None and e.low is not None
        width = e.high - e.low + 1
        base = self.ex(e.expr)
        if is_wide(e.expr.type):
            return self.wide_slice(e, base)
        code = f"({base} >> {e.low})" if e.low else base
        code = reduce(code, width) if width < scalar_width(e.expr.type) or e.low else code
        if width <= 64 < scalar_width(e.expr.type):
            code = f"((uint64_t){code})"
        return code

    # -- operators -----------------------------------------------------------------------

    def ex_UnaryOp(self, e: ast.UnaryOp) -> str:
        a = self.ex(e.operand)
        if e.op == "!":
            return f"(!{a})"
        if e.op == "+":
            return a
        if is_wide(e.type):
            return self.wide_unary(e, a)
        w = scalar_width(e.type)
        if e.op == "-":
            return reduce(f"-{self.widen(a, e.operand.type, w)}", w)
        if e.op == "~":
            return reduce(f"~{self.widen(a, e.operand.type, w)}", w)
        raise NativeUnsupported(f"unary operator '{e.op}'", e.loc)

    def widen(self, code: str, ty: t.Type | None, width: int) -> str:
        """`code` in the C type of a `width`-bit result (a u128 cast when it crosses 64)."""
        if width > 64 and scalar_width(ty) <= 64:
            return f"((u128){code})"
        return code

    def ex_BinaryOp(self, e: ast.BinaryOp) -> str:
        op = e.op
        if op in ("&&", "||"):
            if not self.side_effects(e.right):
                return f"({self.ex(e.left)} {op} {self.ex(e.right)})"
            tmp = self.tmp("b", "uint8_t", self.ex(e.left))
            self.line(f"if ({tmp}) {{" if op == "&&" else f"if (!{tmp}) {{")
            with self.indent():
                self.line(f"{tmp} = {self.value_ex(e.right, '0')};")
            self.line("}")
            return tmp
        a, b = self.ex_seq([e.left, e.right])
        lt = unwrap(e.left.type)
        if op in ("==", "!="):
            if is_composite(lt) or is_value_struct(lt):
                name = self.types.ctype(lt)
                eq = f"EQ_{name}(&{self.addressable(e.left, a)}, &{self.addressable(e.right, b)})"
                return eq if op == "==" else f"(!{eq})"
            return f"({a} {op} {b})"
        if is_wide(lt) or is_wide(e.type) or is_wide(e.right.type):
            return self.wide_binary(e, a, b)
        if op in ("<", "<=", ">", ">="):
            sw = signed_width(lt)
            if sw:
                return f"({sext(a, sw)} {op} {sext(b, sw)})"
            return f"({a} {op} {b})"
        ty = unwrap(e.type)
        if not isinstance(ty, t.BitType):
            raise NativeUnsupported(f"'{op}' on arbitrary-precision integers", e.loc)
        w = ty.width
        if w > 128:
            raise NativeUnsupported(f"values wider than 128 bits ({w})", e.loc)
        a = self.widen(a, e.left.type, w)
        if op in ("+", "-", "*"):
            return reduce(f"{a} {op} {b}", w)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("/", "%"):
            if ty.signed:
                raise NativeUnsupported("signed division", e.loc)
            return f"({b} ? {a} {op} {b} : 0)"
        if op in ("|+|", "|-|"):
            if w > 64:
                raise NativeUnsupported("saturating arithmetic wider than 64 bits", e.loc)
            if ty.signed:
                sop = "+" if op == "|+|" else "-"
                return f"ss_ssat((s128){sext(a, w)} {sop} (s128){sext(b, w)}, {w})"
            if op == "|+|":
                return f"ss_usat_add({a}, {b}, {w})"
            return f"ss_usat_sub({a}, {b})"
        if op == "<<":
            if e.right.value is not None:
                n = int(e.right.value)
                return "0" if n >= w else reduce(f"{a} << {n}", w)
            return f"({b} < {w} ? {reduce(f'{a} << {b}', w)} : 0)"
        if op == ">>":
            if ty.signed:
                s = sext(a, w)
                if e.right.value is not None:
                    n = min(int(e.right.value), w - 1)
                    return reduce(f"{s} >> {n}", w)
                return reduce(f"{s} >> ({b} < {w} ? {b} : {w - 1})", w)
            if e.right.value is not None:
                n = int(e.right.value)
                return "0" if n >= w else f"({a} >> {n})"
            return f"({b} < {w} ? {a} >> {b} : 0)"
        if op == "++":
            rw = scalar_width(e.right.type)
            left = f"((u128){a})" if w > 64 else f"((uint64_t){a})"
            return f"(({left} << {rw}) | {b})"
        raise NativeUnsupported(f"binary operator '{op}'", e.loc)

    def addressable_value(self, code: str, ty: t.Type | None) -> str:
        """`code` itself when it names a place, else a temporary holding its value now."""
        return code if _LVALUE_RE.fullmatch(code) else self.tmp("o", self.types.ctype(ty), code)

    def addressable(self, e: ast.Expression, code: str) -> str:
        """An lvalue holding the composite value `code` (a temporary for a built value)."""
        if isinstance(e, ast.ListExpression | ast.StructExpression | ast.InvalidHeaderExpression):
            return self.tmp("o", self.types.ctype(e.type), code)
        return self.addressable_value(code, e.type)

    def ex_Ternary(self, e: ast.Ternary) -> str:
        default = self.types.default(e.type)
        cond = self.cond_ex(e.cond)
        if not (self.side_effects(e.then) or self.side_effects(e.otherwise)):
            then = self.value_ex(e.then, default)
            return f"({cond} ? {then} : {self.value_ex(e.otherwise, default)})"
        tmp = self.fn.fresh("q")
        self.line(f"{self.types.ctype(e.type)} {tmp};")
        self.line(f"if ({cond}) {{")
        for branch in (e.then, e.otherwise):
            with self.indent():
                self.line(f"{tmp} = {self.value_ex(branch, default)};")
            self.line("} else {" if branch is e.then else "}")
        return tmp

    def ex_Cast(self, e: ast.Cast) -> str:
        target = unwrap(e.type if e.type is not None else e.target.resolved)
        src = unwrap(e.expr.type)
        a = self.ex(e.expr)
        if isinstance(target, t.BoolType):
            return a if isinstance(src, t.BoolType) else f"({a} != 0)"
        if isinstance(target, t.EnumType) and target.underlying is not None:
            target = target.underlying
        if isinstance(src, t.EnumType) and src.underlying is not None:
            src = src.underlying
        if is_wide(target) or is_wide(src):
            return self.wide_cast(e, a, target, src)
        if isinstance(target, t.BitType):
            tw = target.width
            if tw > 128:
                raise NativeUnsupported(f"values wider than 128 bits ({tw})", e.loc)
            if isinstance(src, t.BoolType):
                return f"((uint64_t){a})"
            if isinstance(src, t.IntType):
                return reduce(f"(u128)(s128)({a})", tw) if tw > 64 else reduce(
                    f"(uint64_t)({a})", tw)
            sw = scalar_width(src)
            if isinstance(src, t.BitType) and src.signed and tw > sw:
                s = sext(a, sw)
                return reduce(f"(u128)(s128){s}", tw) if tw > 64 else reduce(
                    f"(uint64_t){s}", tw)
            if tw >= sw:
                return self.widen(a, src, tw)
            code = reduce(a, tw)
            return f"((uint64_t){code})" if tw <= 64 < sw else code
        return a

    # -- composite values ----------------------------------------------------------------

    def ex_ListExpression(self, e: ast.ListExpression) -> str:
        ty = unwrap(e.type) if e.type is not None else None
        if isinstance(ty, t.StructLikeType):
            return self.build_struct(ty, list(e.elements))
        if isinstance(ty, t.TupleType | t.ListType):
            name = self.types.ctype(ty)
            codes = self.ex_seq(list(e.elements))
            parts = "".join(f" _m.f{i} = {c};" for i, c in enumerate(codes))
            return f"({{ {name} _m = {{0}};{parts} _m; }})"
        raise NativeUnsupported("a list expression without a tuple or struct type", e.loc)

    def ex_StructExpression(self, e: ast.StructExpression) -> str:
        ty = unwrap(e.type)
        if not isinstance(ty, t.StructLikeType):
            raise NativeUnsupported("struct expression without a struct type", e.loc)
        by_name = {f.name: f.expr for f in e.fields}
        return self.build_struct(ty, [by_name.get(n) for n, _ in ty.fields])

    def build_struct(self, ty: t.StructLikeType, values: list[ast.Expression | None]) -> str:
        """A fresh struct/header built from field values (headers become valid), as a GNU C
        statement expression (its parts are side-effect free: ex_seq hoisted the calls)."""
        name = self.types.name(ty)
        given = [(fname, v) for (fname, _), v in zip(ty.fields, values) if v is not None]
        codes = self.ex_seq([v for _, v in given])
        parts = "".join(f" _m.{f} = {c};" for (f, _), c in zip(given, codes))
        valid = " _m._v = 1;" if isinstance(ty, t.HeaderType) else ""
        return f"({{ {name} _m = {{0}};{parts}{valid} _m; }})"

    # -- header unions -------------------------------------------------------------------

    @staticmethod
    def union_valid(code: str, u: t.HeaderUnionType) -> str:
        """``u.isValid()``: some member is valid."""
        return "(" + " || ".join(f"{code}.{m}._v" for m, _ in u.fields) + ")" if u.fields \
            else "0"

    def union_member_set(self, member: ast.Expression, valid: str | None) -> None:
        """After `member` of a header union became valid (`valid`: only if this C condition
        holds), the union's other members are invalid (the Python engine's ``_only``)."""
        if not (isinstance(member, ast.Member) and member.kind == "field"):
            return
        u = unwrap(member.expr.type)
        if not isinstance(u, t.HeaderUnionType):
            return
        others = self.types.union_only(u, self.ex(member.expr), member.member)
        if others:
            self.line(f"if ({valid}) {{ {others} }}" if valid else others)

    def ex_InvalidHeaderExpression(self, e: ast.InvalidHeaderExpression) -> str:
        return self.types.default(e.type)

    def ex_MethodCall(self, e: ast.MethodCall) -> str:
        return self.call_expr(e)

    def ex_DefaultExpression(self, e: ast.DefaultExpression) -> str:
        return "0"

    def ex_DontCareExpression(self, e: ast.DontCareExpression) -> str:
        return self.types.default(e.type)
