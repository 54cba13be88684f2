"""Match-field names of table keys, as p4c's TableKeyNames pass generates them.

A key element without ``@name`` is named after its expression: ``hdr.ipv4.dstAddr``,
``meta.x[7:0]``, ``hdr.stack[1].f``, ``a & b``, and ``hdr.ipv4.$valid$`` for ``isValid()``.
A field with ``@name("x")`` contributes ``x``; ``@name(".x")`` makes the whole name ``x``.
Anything more complex needs an explicit ``@name``.
"""

from __future__ import annotations

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.frontend.types import HeaderType, HeaderUnionType, StructLikeType
from softswitch.p4info.typeinfo import TypeSpecs


def _field_name(expr: ast.Member, specs: TypeSpecs) -> str:
    base = expr.expr.type
    if isinstance(base, StructLikeType):
        return specs.field_name(base.name, expr.member)
    return expr.member


def _name(expr: ast.Expression, specs: TypeSpecs) -> str | None:
    if isinstance(expr, ast.PathExpression):
        return ("." if expr.is_global else "") + expr.name
    if isinstance(expr, ast.Member):
        fname = _field_name(expr, specs)
        if fname.startswith("."):
            return fname[1:]
        left = _name(expr.expr, specs)
        return None if left is None else f"{left}.{fname}"
    if isinstance(expr, ast.IntLiteral):
        return str(expr.number)
    if isinstance(expr, ast.ArrayIndex):
        left, right = _name(expr.expr, specs), _name(expr.index, specs)
        return None if left is None or right is None else f"{left}[{right}]"
    if isinstance(expr, ast.Slice):
        base = _name(expr.expr, specs)
        hi = _name(expr.hi, specs) if expr.high is None else str(expr.high)
        lo = _name(expr.lo, specs) if expr.low is None else str(expr.low)
        return None if base is None or hi is None or lo is None else f"{base}[{hi}:{lo}]"
    if isinstance(expr, ast.BinaryOp) and expr.op == "&":
        left, right = _name(expr.left, specs), _name(expr.right, specs)
        return None if left is None or right is None else f"{left} & {right}"
    if (
        isinstance(expr, ast.MethodCall)
        and not expr.args
        and isinstance(expr.callee, ast.Member)
        and expr.callee.member == "isValid"
        and isinstance(expr.callee.expr.type, HeaderType | HeaderUnionType)
    ):
        receiver = _name(expr.callee.expr, specs)
        return None if receiver is None else f"{receiver}.$valid$"
    return None


def key_name(key: ast.KeyElement, specs: TypeSpecs) -> str:
    """The P4Info name of a key element (its ``@name`` when it has one)."""
    explicit = key.string_annotation("name")
    if explicit is not None:
        return explicit
    name = _name(key.expr, specs)
    if name is None:
        raise P4TypeError("complex key expression requires a @name annotation", key.expr.loc)
    return name
