"""Expression compilation: a checked P4 expression → a Python expression string.

Values follow codegen_types' representation. Every arithmetic result is reduced to its type's
width right here (unsigned wrap-around, two's complement for ``int<W>``), so generated code never
carries an out-of-range int.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from softswitch.engine.codegen_types import TypeClasses, bit_width, is_composite, unwrap
from softswitch.errors import UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend import types as t

if TYPE_CHECKING:
    from softswitch.ir.checked import BlockInstance


@dataclass
class FnContext:
    """What the generator knows while emitting one Python function."""

    kind: str  # "parser", "control", "action", "function", "deparser"
    block: BlockInstance | None
    env: dict[ast.Node, str] = field(default_factory=dict)
    ret_expr: str = ""
    ctx_args: str = ""  # how to pass the control context to actions/tables
    packet: ast.Node | None = None  # the packet_in/packet_out parameter
    state: str = ""  # the parser state being emitted (for trace lines)
    counter: int = 0

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"_{base}{self.counter}"


def mask(width: int) -> int:
    return (1 << width) - 1


def wrap(code: str, ty: t.Type) -> str:
    """Reduce a Python int expression to `ty` (bit<W> mask, int<W> two's complement)."""
    u = unwrap(ty)
    if isinstance(u, t.EnumType) and u.underlying is not None:
        u = u.underlying
    if isinstance(u, t.BitType):
        if u.signed:
            half = 1 << (u.width - 1)
            return f"((({code}) + {half}) & {mask(u.width)}) - {half}"
        return f"(({code}) & {mask(u.width)})"
    return code


def literal(value: object, ty: t.Type | None) -> str:
    if isinstance(value, ast.EnumValue):
        return str(value.number)
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        if ty is not None and isinstance(unwrap(ty), t.BoolType):
            return "True" if value else "False"
        return str(value)
    if isinstance(value, str):
        return repr(value)
    raise UnsupportedError(f"constant value {value!r}")


def key_text(e: ast.Expression) -> str:
    """The source-like text p4c uses as a key field name (``hdr.ipv6.dstAddr``)."""
    if isinstance(e, ast.PathExpression):
        return e.name
    if isinstance(e, ast.Member):
        return f"{key_text(e.expr)}.{e.member}"
    if isinstance(e, ast.ArrayIndex):
        return f"{key_text(e.expr)}[{key_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{key_text(e.expr)}[{e.high}:{e.low}]"
    if isinstance(e, ast.IntLiteral):
        return str(e.number)
    if isinstance(e, ast.MethodCall):
        return f"{key_text(e.callee)}()"
    if isinstance(e, ast.Cast):
        return key_text(e.expr)
    return type(e).__name__


class ExprGen:
    """Mixin of the generator: expressions. Subclasses provide `fn`, `types`, `call_expr`."""

    fn: FnContext
    types: TypeClasses
    trace: bool

    def call_expr(self, call: ast.MethodCall) -> str:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def error_code(self, name: str) -> int:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    # -- entry point ---------------------------------------------------------------------

    def ex(self, e: ast.Expression) -> str:
        if (e.value is not None
                and not isinstance(e, ast.ListExpression | ast.StructExpression)
                and not is_composite(e.type)
                and not isinstance(unwrap(e.type) if e.type is not None else None,
                                   t.TupleType | t.ListType)):
            return literal(e.value, e.type)
        method = getattr(self, "ex_" + type(e).__name__, None)
        if method is None:
            raise UnsupportedError(f"expression {type(e).__name__}", e.loc)
        return method(e)

    # -- leaves --------------------------------------------------------------------------

    def ex_IntLiteral(self, e: ast.IntLiteral) -> str:
        return str(e.number)

    def ex_BoolLiteral(self, e: ast.BoolLiteral) -> str:
        return "True" if e.bool_value else "False"

    def ex_StringLiteral(self, e: ast.StringLiteral) -> str:
        return repr(e.text)

    def ex_PathExpression(self, e: ast.PathExpression) -> str:
        decl = e.decl
        if decl is None:
            raise UnsupportedError(f"unresolved name '{e.name}'", e.loc)
        code = self.fn.env.get(decl)
        if code is not None:
            return code
        if isinstance(decl, ast.ConstantDecl):
            return self.constant_code(decl)
        if (isinstance(decl, ast.Parameter) and self.fn.block is not None
                and decl.name in self.fn.block.ctor_args):
            return literal(self.fn.block.ctor_args[decl.name], decl.type)
        return self.name_fallback(e)

    def name_fallback(self, e: ast.PathExpression) -> str:  # pragma: no cover - Generator
        raise UnsupportedError(f"name '{e.name}' in this context", e.loc)

    def constant_code(self, decl: ast.ConstantDecl) -> str:  # pragma: no cover - Generator
        raise NotImplementedError

    def ex_Member(self, e: ast.Member) -> str:
        kind = e.kind
        if kind in ("enum_member", "error_member"):
            if e.value is not None:
                return literal(e.value, e.type)
            if kind == "error_member":
                return str(self.error_code(e.member))
            et = unwrap(e.type)
            if isinstance(et, t.EnumType):
                return str(et.value_of(e.member))
        if kind in ("apply_hit", "apply_miss", "apply_action_run"):
            assert isinstance(e.expr, ast.MethodCall)
            call = self.call_expr(e.expr)
            if kind == "apply_hit":
                return f"{call}[0]"
            if kind == "apply_miss":
                return f"(not {call}[0])"
            return f"{call}[1]"
        base = self.ex(e.expr)
        if kind == "stack_next":
            return f"stack_elem({base}, {base}.nxt)"
        if kind == "stack_last":
            return f"stack_elem({base}, {base}.nxt - 1)"
        if kind == "stack_last_index":
            return f"(({base}.nxt - 1) & 0xFFFFFFFF)"
        if kind == "stack_size":
            st = unwrap(e.expr.type)
            assert isinstance(st, t.HeaderStackType)
            return str(st.size)
        return f"{base}.{e.member}"

    def ex_ArrayIndex(self, e: ast.ArrayIndex) -> str:
        base = self.ex(e.expr)
        bt = unwrap(e.expr.type)
        if isinstance(bt, t.TupleType | t.ListType):
            return f"{base}[{self.ex(e.index)}]"
        if isinstance(bt, t.HeaderStackType) and e.index.value is not None:
            idx = int(e.index.value)
            if 0 <= idx < bt.size:
                return f"{base}.h[{idx}]"
        return f"stack_elem({base}, {self.ex(e.index)})"

    def ex_Slice(self, e: ast.Slice) -> str:
        assert e.high is not None and e.low is not None
        width = e.high - e.low + 1
        base = self.ex(e.expr)
        if e.low == 0:
            return f"({base} & {mask(width)})"
        return f"(({base} >> {e.low}) & {mask(width)})"

    # -- operators -----------------------------------------------------------------------

    def ex_UnaryOp(self, e: ast.UnaryOp) -> str:
        a = self.ex(e.operand)
        ty = unwrap(e.type)
        if e.op == "!":
            return f"(not {a})"
        if e.op == "+":
            return a
        if e.op == "-":
            if isinstance(ty, t.BitType):
                return wrap(f"-{a}", ty)
            return f"(-{a})"
        if e.op == "~":
            if isinstance(ty, t.BitType) and not ty.signed:
                return f"({a} ^ {mask(ty.width)})"
            return f"(~{a})"
        raise UnsupportedError(f"unary operator '{e.op}'", e.loc)

    def ex_BinaryOp(self, e: ast.BinaryOp) -> str:
        op = e.op
        if op == "&&":
            return f"({self.ex(e.left)} and {self.ex(e.right)})"
        if op == "||":
            return f"({self.ex(e.left)} or {self.ex(e.right)})"
        a = self.ex(e.left)
        b = self.ex(e.right)
        lt = unwrap(e.left.type)
        if op in ("==", "!="):
            if is_composite(lt):
                eq = f"{a}._eq({b})"
                return eq if op == "==" else f"(not {eq})"
            return f"({a} {op} {b})"
        if op in ("<", "<=", ">", ">="):
            return f"({a} {op} {b})"
        ty = unwrap(e.type)
        if not isinstance(ty, t.BitType):
            # arbitrary-precision int arithmetic (compile-time ints not folded by the checker)
            pyop = {"/": "//", "|+|": "+", "|-|": "-"}.get(op, op)
            if op == "++":
                raise UnsupportedError("'++' on untyped integers", e.loc)
            return f"({a} {pyop} {b})"
        w = ty.width
        m = mask(w)
        if op in ("+", "-", "*"):
            return wrap(f"{a} {op} {b}", ty)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("/", "%"):
            pyop = "//" if op == "/" else "%"
            return f"({a} {pyop} {b} if {b} else 0)"
        if op == "|+|":
            if ty.signed:
                half = 1 << (w - 1)
                return f"max(min({a} + {b}, {half - 1}), {-half})"
            return f"min({a} + {b}, {m})"
        if op == "|-|":
            if ty.signed:
                half = 1 << (w - 1)
                return f"max(min({a} - {b}, {half - 1}), {-half})"
            return f"max({a} - {b}, 0)"
        if op == "<<":
            if e.right.value is not None:
                n = int(e.right.value)
                return "0" if n >= w else wrap(f"{a} << {n}", ty)
            return f"({wrap(f'{a} << {b}', ty)} if {b} < {w} else 0)"
        if op == ">>":
            if e.right.value is not None:
                n = int(e.right.value)
                if n >= w:
                    return f"(-1 if {a} < 0 else 0)" if ty.signed else "0"
                return f"({a} >> {n})"
            return f"({a} >> {b})"
        if op == "++":
            rt = unwrap(e.right.type)
            rw = bit_width(rt)
            left = a
            if isinstance(lt, t.BitType) and lt.signed:
                left = f"({a} & {mask(lt.width)})"
            right = b
            if isinstance(rt, t.BitType) and rt.signed:
                right = f"({b} & {mask(rw)})"
            elif isinstance(rt, t.BoolType):
                right = f"int({b})"
            code = f"(({left} << {rw}) | {right})"
            return wrap(code, ty) if ty.signed else code
        raise UnsupportedError(f"binary operator '{op}'", e.loc)

    def ex_Ternary(self, e: ast.Ternary) -> str:
        return f"({self.ex(e.then)} if {self.ex(e.cond)} else {self.ex(e.otherwise)})"

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
        if isinstance(target, t.BitType):
            if isinstance(src, t.BoolType):
                return f"(1 if {a} else 0)"
            if isinstance(src, t.BitType) and not src.signed and not target.signed \
                    and src.width <= target.width:
                return a
            return wrap(a, target)
        if is_composite(target) and isinstance(e.expr, ast.ListExpression | ast.StructExpression):
            return a
        return a

    # -- composite values ----------------------------------------------------------------

    def ex_ListExpression(self, e: ast.ListExpression) -> str:
        ty = unwrap(e.type) if e.type is not None else None
        if isinstance(ty, t.StructLikeType):
            return self.build_struct(ty, [el for el in e.elements], None)
        return "(" + "".join(self.ex(el) + ", " for el in e.elements) + ")"

    def ex_StructExpression(self, e: ast.StructExpression) -> str:
        ty = unwrap(e.type)
        if not isinstance(ty, t.StructLikeType):
            raise UnsupportedError("struct expression without a struct type", e.loc)
        by_name = {f.name: f.expr for f in e.fields}
        return self.build_struct(ty, [by_name.get(n) for n, _ in ty.fields], e)

    def build_struct(self, ty: t.StructLikeType, values: list[ast.Expression | None],
                     node: ast.Node | None) -> str:
        """A fresh struct/header built from field values (headers become valid)."""
        cls = self.types.class_name(ty)
        args = []
        for (fname, ftype), v in zip(ty.fields, values):
            if v is None:
                continue
            code = self.ex(v)
            if is_composite(ftype) and not isinstance(
                v, ast.ListExpression | ast.StructExpression | ast.InvalidHeaderExpression
            ):
                code = f"{code}._copy()"
            args.append((fname, code))
        parts = ", ".join(f"({n!r}, {c})" for n, c in args)
        valid = isinstance(ty, t.HeaderType)
        return f"mk({cls}, {valid}, ({parts}{',' if len(args) == 1 else ''}))"

    def ex_InvalidHeaderExpression(self, e: ast.InvalidHeaderExpression) -> str:
        return f"{self.types.class_name(unwrap(e.type))}()"

    def ex_MethodCall(self, e: ast.MethodCall) -> str:
        return self.call_expr(e)

    def ex_DefaultExpression(self, e: ast.DefaultExpression) -> str:
        return "None"

    def ex_DontCareExpression(self, e: ast.DontCareExpression) -> str:
        return self.types.default(e.type)

    # -- field lists (hash, checksum, digest, clone3...) ----------------------------------

    def flatten(self, e: ast.Expression) -> list[tuple[str, int, str]]:
        """(python value, width, name) of every scalar leaf of a field-list expression."""
        if isinstance(e, ast.ListExpression):
            out = []
            for el in e.elements:
                out += self.flatten(el)
            return out
        if isinstance(e, ast.StructExpression):
            out = []
            for f in e.fields:
                out += self.flatten(f.expr)
            return out
        ty = unwrap(e.type)
        if isinstance(ty, t.StructLikeType | t.HeaderStackType):
            return self.flatten_value(self.ex(e), ty, key_text(e))
        code = self.ex(e)
        if isinstance(ty, t.BoolType):
            code = f"int({code})"
        return [(code, bit_width(ty), key_text(e))]

    def flatten_value(self, code: str, ty: t.Type, name: str) -> list[tuple[str, int, str]]:
        u = unwrap(ty)
        if isinstance(u, t.HeaderStackType):
            out = []
            for i in range(u.size):
                out += self.flatten_value(f"{code}.h[{i}]", u.element, f"{name}[{i}]")
            return out
        if isinstance(u, t.StructLikeType):
            out = []
            for fname, ftype in u.fields:
                out += self.flatten_value(f"{code}.{fname}", ftype, f"{name}.{fname}")
            return out
        if isinstance(u, t.BoolType):
            return [(f"int({code})", 1, name)]
        if isinstance(u, t.VarbitType):
            return []
        return [(code, bit_width(u), name)]
