"""Which loops p4c can unroll — BMv2 has no loops, so p4c-bm2-ss refuses every other one.

p4c's midend pass UnrollLoops (midend/unrollLoops.cpp) unrolls a loop when it can list the values
its index takes at compile time; the BMv2 back end then refuses any loop left ("BMV2 does not
support loops"). This module makes the same decision on the checked AST:

* a three-clause ``for``: the condition compares a variable with a constant (``i < 4``); the
  variable is defined exactly twice where the condition reads it — once by a constant before the
  loop, once by an assignment in the updates (or, without one there, in the body) whose value
  depends only on the variable and constants; a write in the body that a break, exit or return
  always follows does not count (it never reaches the condition). The values are found by
  evaluating the increment from the initial constant as p4c's evalLoop does (C++ longs, each
  bit<W>/int<W> subexpression reduced to its width, so `i + 1` wraps), up to 1000 iterations;
* ``for (x in lo .. hi)`` with constant bounds;
* a loop annotated ``@nounroll`` is never unrolled.

``for`` over a header stack or a list is refused: p4c's unrolling covers only ranges.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.frontend.types import BitType, unwrap_newtype

MAX_ITERATIONS = 1000  # p4c gives up when a loop's index takes more values than this

_RELATIONS = {"<", "<=", ">", ">=", "==", "!="}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class CannotUnroll(Exception):
    """Why p4c would leave the loop as it is (the message completes the error)."""


def refuse(loop: ast.Statement, reason: str) -> P4TypeError:
    return P4TypeError(
        f"BMV2 does not support loops: p4c cannot unroll this loop ({reason})", loop.loc
    )


def check_for_in(loop: ast.ForInStatement) -> None:
    """Refuse a ``for``-``in`` loop p4c leaves as a loop."""
    if loop.annotation("nounroll") is not None:
        raise refuse(loop, "it is marked @nounroll")
    c = loop.collection
    # p4c's UnrollLoops unrolls a for-in only over a range of two constants
    if not isinstance(c, ast.RangeExpression):
        raise refuse(loop, "p4c unrolls only a for-in over a constant range, not over a header "
                     "stack or a list")
    if not isinstance(c.left.value, int) or not isinstance(c.right.value, int):
        raise refuse(loop, "the range bounds are not compile-time constants")


def index_values(
    loop: ast.ForStatement, preceding: Sequence[ast.Statement | ast.Declaration]
) -> tuple[ast.PathExpression, list[int]]:
    """The loop's index variable and the values p4c unrolls it with (in order, reduced to the
    variable's type); `preceding` are the statements before the loop in its block. Raises the
    BMv2 error when p4c cannot unroll it."""
    try:
        if loop.annotation("nounroll") is not None:
            raise CannotUnroll("it is marked @nounroll")
        index, op, bound = _condition(loop.cond)
        decl = index.decl
        start = _initial_value(decl, loop.init, preceding)
        incr = _increment(decl, loop)
        values = _simulate(decl, op, bound, start, incr)
    except CannotUnroll as exc:
        raise refuse(loop, str(exc)) from None
    t = unwrap_newtype(index.type)  # type: ignore[arg-type]
    assert isinstance(t, BitType)
    return index, [_reduce(v, t) for v in values]


def _reduce(v: int, t: BitType) -> int:
    v &= (1 << t.width) - 1
    if t.signed and v >> (t.width - 1):
        v -= 1 << t.width
    return v


def initial_value(
    loop: ast.ForStatement, preceding: Sequence[ast.Statement | ast.Declaration]
) -> int | None:
    """The constant the index of `loop` starts from (checked init and condition), if any."""
    try:
        index = _condition(loop.cond)[0]
        return _initial_value(index.decl, loop.init, preceding)  # type: ignore[arg-type]
    except CannotUnroll:
        return None


def condition_index(cond: ast.Expression) -> ast.Node | None:
    """The variable a checked loop condition compares with a constant, if it does."""
    try:
        return _condition(cond)[0].decl
    except CannotUnroll:
        return None


def _condition(cond: ast.Expression) -> tuple[ast.PathExpression, str, int]:
    """``i REL k`` (or ``k REL i``) → (i, REL as seen from i, k)."""
    if not isinstance(cond, ast.BinaryOp) or cond.op not in _RELATIONS:
        raise CannotUnroll("its condition does not compare the index with a constant")
    left, right, op = cond.left, cond.right, cond.op
    if isinstance(left.value, int) and not isinstance(left.value, bool):
        left, right, op = right, left, _MIRROR[op]
    if not isinstance(right.value, int) or isinstance(right.value, bool):
        raise CannotUnroll("its condition does not compare the index with a constant")
    if not isinstance(left, ast.PathExpression) or not isinstance(
        left.decl, ast.VariableDecl | ast.Parameter
    ):
        raise CannotUnroll("the index in its condition is not a local variable")
    if not isinstance(unwrap_newtype(left.type), BitType):  # type: ignore[arg-type]
        raise CannotUnroll("the index is not a bit<W> or int<W> variable")
    return left, op, right.value


def _initial_value(
    decl: ast.Node,
    init: Sequence[ast.Statement | ast.Declaration],
    preceding: Sequence[ast.Statement | ast.Declaration],
) -> int:
    """The constant the index holds on entry: its last definition in the initializers, else in
    the statements before the loop, else its declaration's initializer."""
    for stmts in (init, preceding):
        for s in reversed(stmts):
            if s is decl:
                return _constant_init(decl)
            if _defines(s, decl):
                value = s.rhs.value if isinstance(s, ast.AssignmentStatement) else None
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
                raise CannotUnroll("the index does not start from a constant")
    return _constant_init(decl)


def _constant_init(decl: ast.Node) -> int:
    init = decl.init if isinstance(decl, ast.VariableDecl) else None
    if init is None or not isinstance(init.value, int) or isinstance(init.value, bool):
        raise CannotUnroll("the index does not start from a constant")
    return init.value


def _increment(decl: ast.Node, loop: ast.ForStatement) -> ast.Expression:
    """The value the index is given on each iteration (an assignment's right side)."""
    in_updates = [s for s in loop.updates if _defines(s, decl)]
    # a write in the body that a break, exit or return always follows never reaches the next
    # iteration: p4c's def-use does not count it (the unrolled copy reads the variable after it)
    escaping = _escaping_definitions(loop.body, decl)
    in_body = [d for d in _definitions(loop.body, decl)
               if not any(d is e for e in escaping)]
    defs = in_updates or in_body
    if not defs:
        raise CannotUnroll("its index is never changed")
    if len(defs) > 1 or (in_updates and in_body):
        raise CannotUnroll("its index is changed in more than one place")
    d = defs[0]
    if not isinstance(d, ast.AssignmentStatement) or not _is_whole(d.lhs, decl):
        raise CannotUnroll("its index is not changed by an assignment")
    body = loop.body.statements if isinstance(loop.body, ast.BlockStatement) else [loop.body]
    if not in_updates and not any(d is b for b in body):
        # p4c (its pull request 5344): an increment under a condition gives no loop bounds
        raise CannotUnroll("its index is changed in the body, but not unconditionally")
    return d.rhs


def value_after(e: ast.Expression, decl: ast.Node, v: int) -> int:
    """The value an assignment `decl = e` gives the index when it holds `v`; raises
    CannotUnroll when `e` is not computed from the index and constants."""
    return _evaluate(e, decl, v)


def _simulate(decl: ast.Node, op: str, bound: int, start: int, incr: ast.Expression) -> list[int]:
    values: list[int] = []
    v = start
    while _compare(op, v, bound):
        values.append(v)
        if len(values) > MAX_ITERATIONS:
            raise CannotUnroll(f"it runs more than {MAX_ITERATIONS} times")
        v = _evaluate(incr, decl, v)
    return values


def _compare(op: str, a: int, b: int) -> bool:
    return {
        "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b,
    }[op]  # fmt: skip


def _evaluate(e: ast.Expression, decl: ast.Node, v: int) -> int:
    """`e` with the index at `v`, as p4c's evalLoop: C++ long arithmetic, each bit<W>/int<W>
    subexpression's value reduced to its type (so `i + 1` wraps around at the width)."""
    t = unwrap_newtype(e.type) if e.type is not None else None
    value = _evaluate_unreduced(e, decl, v)
    return _reduce(value, t) if isinstance(t, BitType) else value


def _evaluate_unreduced(e: ast.Expression, decl: ast.Node, v: int) -> int:
    if isinstance(e.value, int):  # also a bool constant, as p4c's LNot yields 0/1
        return int(e.value)
    if isinstance(e, ast.PathExpression) and e.decl is decl:
        return v
    if isinstance(e, ast.UnaryOp) and e.op in ("-", "~", "!"):
        a = _evaluate(e.operand, decl, v)
        return -a if e.op == "-" else ~a if e.op == "~" else int(not a)
    if isinstance(e, ast.BinaryOp):
        a, b = _evaluate(e.left, decl, v), _evaluate(e.right, decl, v)
        if e.op in _RELATIONS:
            return int(_compare(e.op, a, b))
        if e.op in ("/", "%"):
            if b == 0:
                raise CannotUnroll("its increment divides by zero")
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates to zero
            return q if e.op == "/" else a - q * b
        if e.op in ("<<", ">>"):
            if b < 0 or b > 1024:
                raise CannotUnroll("its increment shifts by an unusual amount")
            return a << b if e.op == "<<" else a >> b
        if e.op in ("+", "-", "*"):
            return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    raise CannotUnroll("its increment is not computed from the index and constants")


# -- definitions of the index ---------------------------------------------------------------


def _is_whole(e: ast.Expression, decl: ast.Node) -> bool:
    return isinstance(e, ast.PathExpression) and e.decl is decl


def _writes(e: ast.Expression | None, decl: ast.Node) -> bool:
    b = ast.lvalue_root(e) if e is not None else None
    return isinstance(b, ast.PathExpression) and b.decl is decl


def _defines(s: ast.Statement | ast.Declaration, decl: ast.Node) -> bool:
    """Whether `s` (with what it contains) may write the variable `decl`."""
    return next(_definitions(s, decl), None) is not None


def _definitions(node: ast.Node, decl: ast.Node) -> Iterator[ast.Node]:
    """The statements in `node` that write `decl`: assignments to it (or part of it) and calls
    passing it to an out/inout parameter."""
    if node is decl:
        if isinstance(decl, ast.VariableDecl) and decl.init is not None:
            yield node
        return
    if isinstance(node, ast.AssignmentStatement):
        if _writes(node.lhs, decl):
            yield node
        return
    if isinstance(node, ast.MethodCallStatement):
        info = node.call.call
        if info is not None:
            for p, a in zip(info.params, info.args):
                if p.direction in ("out", "inout") and _writes(a, decl):
                    yield node
                    return
            if info.kind == "builtin" and _writes(info.receiver, decl):
                yield node
        return
    for child in _statement_children(node):
        yield from _definitions(child, decl)


def _escaping_definitions(body: ast.Statement, decl: ast.Node) -> list[ast.Node]:
    """The writes of `decl` in a loop body after which every path leaves the loop (break) or
    the block (exit, return) before the body's end."""

    def walk(s: ast.Node, live: list[ast.Node]) -> list[ast.Node] | None:
        """The writes live after `s`; None when `s` never falls through."""
        if isinstance(s, ast.BreakStatement | ast.ExitStatement | ast.ReturnStatement):
            return None
        if isinstance(s, ast.BlockStatement):
            out: list[ast.Node] | None = live
            for child in s.statements:
                if out is None:
                    break
                out = walk(child, out)
            return out
        if isinstance(s, ast.IfStatement):
            arms = [walk(s.then, list(live)),
                    walk(s.otherwise, list(live)) if s.otherwise is not None else list(live)]
            if all(arm is None for arm in arms):
                return None
            return [d for arm in arms if arm is not None for d in arm]
        # anything else (a continue too, a nested loop, a switch, a simple statement): its
        # writes and those before it reach the next iteration
        writes = list(_definitions(s, decl))
        seen.extend(writes)
        return [*live, *writes]

    seen: list[ast.Node] = []
    reaching = walk(body, []) or []
    return [d for d in seen if not any(d is r for r in reaching)]


def _statement_children(node: ast.Node) -> Iterator[ast.Node]:
    if isinstance(node, ast.BlockStatement):
        yield from node.statements
    elif isinstance(node, ast.IfStatement):
        yield node.then
        if node.otherwise is not None:
            yield node.otherwise
    elif isinstance(node, ast.SwitchStatement):
        for case in node.cases:
            if case.body is not None:
                yield case.body
    elif isinstance(node, ast.ForStatement):
        yield from node.init
        yield from node.updates
        yield node.body
    elif isinstance(node, ast.ForInStatement):
        if node.ref is not None:
            yield ast.AssignmentStatement(lhs=node.ref, rhs=node.ref)  # the loop writes it
        yield node.body


# -- `(int)` casts of the index ---------------------------------------------------------------


def _children(node: ast.Node) -> Iterator[ast.Node]:
    """The AST nodes directly inside the unchecked `node`."""
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.Node):
                yield item


def _is_int_cast_of(node: ast.Node, name: str) -> bool:
    return (isinstance(node, ast.Cast) and isinstance(node.target, ast.BaseTypeRef)
            and node.target.name == "int"
            and isinstance(node.expr, ast.PathExpression) and node.expr.name == name)


def casts_index_to_int(body: ast.Node, name: str) -> bool:
    """Whether the (unchecked) `body` casts the variable `name` to int: p4c folds such a cast
    only in the unrolled copies, where the index is a constant (stmtcheck checks one copy of
    the body per index value)."""
    return _is_int_cast_of(body, name) or any(
        casts_index_to_int(c, name) for c in _children(body))
