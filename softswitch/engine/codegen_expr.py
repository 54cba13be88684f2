"""Expression compilation: a checked P4 expression → a Python expression string.

Values follow codegen_types' representation. Every arithmetic result is reduced to its type's
width right here (unsigned wrap-around, two's complement for ``int<W>``), so generated code never
carries an out-of-range int.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    # expression nodes whose code is fixed for the statement being emitted: an l-value's
    # location evaluated once (copy-in/copy-out, compound assignment), a pre-computed index
    pins: dict[ast.Node, str] = field(default_factory=dict)
    # bounds checks of the run-time header-stack indices read by the expression being
    # emitted as an assignment source (see ExprGen.value_ex); None: not collecting
    guards: list[str] | None = None

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"_{base}{self.counter}"


def mask(width: int) -> int:
    return (1 << width) - 1


# temporaries the generator assigns once (call results, saved operands, indices, the value of
# a short-circuit or ?: expression): reading them again later gives the same value
_TEMP_RE = re.compile(r"_(?:t|o|ix|b|q)\d+|-?\d+")


def _children(e: ast.Expression) -> Iterator[ast.Expression]:
    """The sub-expressions `e` evaluates (slice bounds and casts' types are compile-time)."""
    if isinstance(e, ast.Member | ast.Cast | ast.Slice):
        yield e.expr
    elif isinstance(e, ast.ArrayIndex):
        yield e.expr
        yield e.index
    elif isinstance(e, ast.UnaryOp):
        yield e.operand
    elif isinstance(e, ast.BinaryOp | ast.MaskExpression | ast.RangeExpression):
        yield e.left
        yield e.right
    elif isinstance(e, ast.Ternary):
        yield e.cond
        yield e.then
        yield e.otherwise
    elif isinstance(e, ast.ListExpression):
        yield from e.elements
    elif isinstance(e, ast.StructExpression):
        for f in e.fields:
            yield f.expr
    elif isinstance(e, ast.MethodCall):
        yield e.callee
        if e.call is not None:
            yield from (a for a in e.call.args if a is not None)
    elif isinstance(e, ast.SelectExpression):
        yield from e.selectors


def has_side_effects(e: ast.Expression | None, cache: dict[ast.Node, bool] | None = None) -> bool:
    """Whether evaluating `e` may change state or control flow: any call except ``isValid()``
    and calls folded to constants (p4c's SideEffects::check: every method call but isValid).
    Table applies (``.hit``), lookahead, functions and extern methods all count."""
    if e is None or e.value is not None:
        return False  # a constant: the generated code never evaluates it
    if cache is not None:
        hit = cache.get(e)
        if hit is not None:
            return hit
    if isinstance(e, ast.MethodCall):
        c = e.call
        if c is not None and c.kind == "builtin" and c.name == "isValid":
            found = has_side_effects(c.receiver, cache)
        else:
            found = True
    else:
        found = any(has_side_effects(x, cache) for x in _children(e))
    if cache is not None:
        cache[e] = found
    return found


def lvalue_spine(e: ast.Expression) -> Iterator[ast.Expression]:
    """`e` and the l-values it is part of: ``hs[i].f[3:0]`` → itself, ``hs[i].f``, ``hs[i]``,
    ``hs`` (the index expressions are not on the spine)."""
    while True:
        yield e
        if isinstance(e, ast.Member | ast.ArrayIndex | ast.Slice):
            e = e.expr
        else:
            return


def is_runtime_element(e: ast.Expression) -> bool:
    """A header-stack element whose position is known only at run time: ``hs[i]`` with a
    non-constant i, ``hs.next``, ``hs.last``."""
    if isinstance(e, ast.ArrayIndex):
        return e.index.value is None and isinstance(
            unwrap(e.expr.type) if e.expr.type is not None else None, t.HeaderStackType)
    return isinstance(e, ast.Member) and e.kind in ("stack_next", "stack_last")


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
    """Mixin of the generator: expressions. Subclasses provide `fn`, `types`, `call_expr`,
    `line`, `indent` and `is_fresh`.

    Evaluation order (P4_16 spec 8.1 and 6.8): operands and arguments left to right, ``&&``,
    ``||`` and ``?:`` only what they must. A call in an expression is emitted as statements
    before the line using its result, so an operand to the left of a side-effecting one is
    first saved in a temporary (`ex_seq`); expressions without side effects compile to one
    Python expression, as before, and cost nothing extra at run time."""

    fn: FnContext
    types: TypeClasses
    trace: bool
    _side_effects: dict[ast.Node, bool]

    def call_expr(self, call: ast.MethodCall) -> str:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def error_code(self, name: str) -> int:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def line(self, text: str) -> None:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def indent(self) -> Any:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def is_fresh(self, e: ast.Expression) -> bool:  # pragma: no cover - provided by Generator
        raise NotImplementedError

    def side_effects(self, e: ast.Expression | None) -> bool:
        return has_side_effects(e, self._side_effects)

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
            raise UnsupportedError(f"expression {type(e).__name__}", e.loc)
        return method(e)

    # -- evaluation order ----------------------------------------------------------------

    def ex_seq(self, exprs: list[ast.Expression], copy: bool = False) -> list[str]:
        """Codes for `exprs` evaluated left to right: each one followed by a side-effecting
        one is saved in a temporary first. `copy`: the caller needs private copies of
        composite values (struct fields, arguments)."""
        last = max((i for i, x in enumerate(exprs) if self.side_effects(x)), default=-1)
        codes = []
        for i, x in enumerate(exprs):
            code = self.ex(x)
            composite = copy and is_composite(x.type) and not self.is_fresh(x)
            if i < last:
                code = self.snapshot(x, code)
            elif composite:
                code = f"{code}._copy()"
            codes.append(code)
        return codes

    def snapshot(self, e: ast.Expression, code: str) -> str:
        """`code` (the value of `e`) saved now in a temporary, unless it cannot change."""
        if e.value is not None and not is_composite(e.type):
            return code
        composite = is_composite(e.type)
        if not composite and _TEMP_RE.fullmatch(code):
            return code  # already a temporary (or a number)
        tmp = self.fn.fresh("o")
        self.line(f"{tmp} = {code}._copy()" if composite and not self.is_fresh(e)
                  else f"{tmp} = {code}")
        return tmp

    @contextmanager
    def guards_off(self) -> Iterator[None]:
        """Code emitted here runs conditionally: no bounds checks of the enclosing statement."""
        saved, self.fn.guards = self.fn.guards, None
        try:
            yield
        finally:
            self.fn.guards = saved

    def collect(self, e: ast.Expression) -> tuple[str, list[str]]:
        """The code of `e` and the bounds checks of the run-time stack indices it reads."""
        saved = self.fn.guards
        self.fn.guards = [] if self.fn.kind != "parser" else None
        try:
            code = self.ex(e)
            return code, self.fn.guards or []
        finally:
            self.fn.guards = saved

    def value_ex(self, e: ast.Expression, default: str) -> str:
        """`e` as the source of an assignment (also a copy-in, a variable initializer, a
        returned value, a table key). p4c's midend (HSIndexContretizer, run by p4c-bm2-ss on
        controls) turns such an assignment reading ``hs[i]`` into ``if (i == 0) x = ..hs[0]..;
        ... else if (i >= size - 1) x = <an uninitialised temporary>;``: an out-of-range index
        gives the whole value 0 / an invalid header, not just the element."""
        code, guards = self.collect(e)
        if guards:
            return f"({code} if {' and '.join(guards)} else {default})"
        return code

    def cond_ex(self, e: ast.Expression) -> str:
        """An ``if`` condition: as p4c's HSIndexContretizer, an out-of-range run-time stack
        index anywhere in it takes the ``else`` branch."""
        code, guards = self.collect(e)
        if guards:
            return f"(({code}) and {' and '.join(guards)})"
        return code

    def fix_lvalue(self, lv: ast.Expression, twin: ast.Expression | None = None) -> list[ast.Node]:
        """Evaluate the location of l-value `lv` now (spec 6.8 step 3, 12.1): the outermost
        run-time stack element on its spine is computed once into a temporary that later reads
        and writes of `lv` (and of `twin`, the copy of `lv` in ``a op= b``) use. Returns the
        pinned nodes (for `unpin`); nothing to do when the location is static."""
        others = list(lvalue_spine(twin)) if twin is not None else []
        for depth, node in enumerate(lvalue_spine(lv)):
            if is_runtime_element(node):
                with self.guards_off():
                    code = self.ex(node)
                tmp = self.fn.fresh("e")
                self.line(f"{tmp} = {code}")
                pinned: list[ast.Node] = [node]
                self.fn.pins[node] = tmp
                if depth < len(others):
                    self.fn.pins[others[depth]] = tmp
                    pinned.append(others[depth])
                return pinned
        return []

    def unpin(self, nodes: list[ast.Node]) -> None:
        for n in nodes:
            self.fn.pins.pop(n, None)

    def runtime_indices(self, exprs: list[ast.Expression | None]) -> list[ast.ArrayIndex]:
        """The run-time header-stack indexings (side-effect free index) in `exprs`, not looking
        into the arguments of nested calls (p4c evaluates those in statements of their own)."""
        found: list[ast.ArrayIndex] = []

        def walk(e: ast.Expression | None) -> None:
            if e is None or e.value is not None:
                return
            if isinstance(e, ast.ArrayIndex) and is_runtime_element(e) \
                    and not self.side_effects(e.index):
                found.append(e)
            if isinstance(e, ast.MethodCall) and self.side_effects(e):
                return
            for x in _children(e):
                walk(x)

        for x in exprs:
            walk(x)
        return found

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
        # out of range: stack_elem gives a detached invalid element, so a write is lost, as
        # p4c's HSIndexContretizer drops a write to hs[i] when i is past the end; reads are
        # caught by the statement's bounds checks (value_ex, cond_ex)
        idx = self.ex(e.index)
        guards = self.fn.guards
        if guards is not None and isinstance(bt, t.HeaderStackType):
            if not _TEMP_RE.fullmatch(idx):
                tmp = self.fn.fresh("ix")
                self.line(f"{tmp} = {idx}")
                idx = tmp
            check = f"0 <= {idx} < {bt.size}"
            if check not in guards:
                guards.append(check)
        return f"stack_elem({base}, {idx})"

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
        if op in ("&&", "||"):
            pyop = "and" if op == "&&" else "or"
            if not self.side_effects(e.right):
                return f"({self.ex(e.left)} {pyop} {self.ex(e.right)})"
            # the right operand's statements run only when the left does not decide
            # (p4c dismantles it into `if (!a) tmp = false; else tmp = b;`)
            tmp = self.fn.fresh("b")
            self.line(f"{tmp} = {self.ex(e.left)}")
            self.line(f"if {tmp}:" if op == "&&" else f"if not {tmp}:")
            with self.indent():
                self.line(f"{tmp} = {self.value_ex(e.right, 'False')}")
            return tmp
        a, b = self.ex_seq([e.left, e.right])
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
        # p4c's frontend turns every ?: into `if (c) tmp = a; else tmp = b;`, so each branch is
        # an assignment source of its own and a condition reading an out-of-range stack
        # index takes the else branch (see value_ex, cond_ex)
        default = self.types.default(e.type)
        cond = self.cond_ex(e.cond)
        if not (self.side_effects(e.then) or self.side_effects(e.otherwise)):
            then = self.value_ex(e.then, default)
            return f"({then} if {cond} else {self.value_ex(e.otherwise, default)})"
        # only the chosen branch is evaluated, side effects included
        tmp = self.fn.fresh("q")
        self.line(f"if {cond}:")
        for branch in (e.then, e.otherwise):
            with self.indent():
                code = self.value_ex(branch, default)
                if is_composite(branch.type) and not self.is_fresh(branch):
                    code = f"{code}._copy()"
                self.line(f"{tmp} = {code}")
            if branch is e.then:
                self.line("else:")
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
        return "(" + "".join(c + ", " for c in self.ex_seq(e.elements, copy=True)) + ")"

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
        given = [(fname, v) for (fname, _), v in zip(ty.fields, values) if v is not None]
        codes = self.ex_seq([v for _, v in given], copy=True)
        args = [(fname, code) for (fname, _), code in zip(given, codes)]
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
