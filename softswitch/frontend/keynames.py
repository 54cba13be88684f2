"""Match-field names of table keys, as p4c's TableKeyNames pass generates them.

A key element without ``@name`` is named after its expression: ``hdr.ipv4.dstAddr``,
``meta.x[7:0]``, ``hdr.stack[1].f``, ``a & b``, and ``hdr.ipv4.$valid$`` for ``isValid()``.
A field with ``@name("x")`` contributes ``x``; ``@name(".x")`` makes the whole name ``x``.
Anything more complex (``++``, casts, arithmetic...) needs an explicit ``@name``; p4c refuses
the program otherwise.

The pass runs after p4c's first constant folding, which replaces compile-time constant
subexpressions (literals, ``const`` declarations, operations and casts on them) by one literal
written in the base of its leftmost operand: ``meta.x & MASK`` with ``const bit<8> MASK = 0x0F``
is named ``meta.x & 0xf``.
"""

from __future__ import annotations

from collections.abc import Callable

from softswitch.frontend import ast
from softswitch.frontend.types import HeaderType, HeaderUnionType

# how a struct/header field contributes to a name (its @name, when P4Info is built)
FieldName = Callable[[ast.Member], str]

# operators p4c's untyped constant folding evaluates (comparisons give booleans, not names)
_FOLDED_BINARY = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "++",
                            "|+|", "|-|"})
_DIGITS = "0123456789abcdef"
_PREFIX = {2: "0b", 8: "0o", 10: "", 16: "0x"}


def constant_text(value: int, base: int) -> str:
    """An integer as p4c's Util::toString prints it (no width; lowercase digits)."""
    sign, value = ("-", -value) if value < 0 else ("", value)
    digits = ""
    while True:
        digits = _DIGITS[value % base] + digits
        value //= base
        if value == 0:
            break
    return f"{sign}{_PREFIX[base]}{digits}"


def folded_base(expr: ast.Expression, seen: frozenset[int] = frozenset()) -> int | None:
    """The base of the literal p4c's first constant folding turns `expr` into, or None when it
    does not fold it to an integer literal."""
    if isinstance(expr, ast.IntLiteral):
        return expr.base
    if isinstance(expr, ast.PathExpression):
        decl = expr.decl
        # a constant is folded only when declared bit<W>, int<W> or int as written: a
        # typedef'd type is not known before type checking
        if (isinstance(decl, ast.ConstantDecl) and id(decl) not in seen
                and _written_bits_or_int(decl.type_ref)):
            return folded_base(decl.init, seen | {id(decl)})
        return None
    if isinstance(expr, ast.Cast):
        if isinstance(expr.target, ast.BitTypeRef):
            return folded_base(expr.expr, seen)
        return None
    if isinstance(expr, ast.UnaryOp) and expr.op in ("-", "~", "+"):
        return folded_base(expr.operand, seen)
    if isinstance(expr, ast.BinaryOp) and expr.op in _FOLDED_BINARY:
        left = folded_base(expr.left, seen)
        return left if left is not None and folded_base(expr.right, seen) is not None else None
    if isinstance(expr, ast.Slice):
        return folded_base(expr.expr, seen)
    return None


def _written_bits_or_int(ref: ast.TypeRef) -> bool:
    return isinstance(ref, ast.BitTypeRef) or (isinstance(ref, ast.BaseTypeRef)
                                               and ref.name == "int")


def _folded(expr: ast.Expression) -> str | None:
    """`expr` as the literal p4c's constant folding makes of it, if it folds."""
    if not isinstance(expr.value, int) or isinstance(expr.value, bool):
        return None
    base = folded_base(expr)
    return None if base is None else constant_text(expr.value, base)


def plain_field_name(expr: ast.Member) -> str:
    return expr.member


def expression_name(expr: ast.Expression, field_name: FieldName = plain_field_name) -> str | None:
    """The name p4c gives a key expression without ``@name``; None when it is too complex to
    have one (p4c then refuses the program: tablecheck does too)."""
    folded = _folded(expr)
    if folded is not None:
        return folded
    if isinstance(expr, ast.PathExpression):
        return ("." if expr.is_global else "") + expr.name
    if isinstance(expr, ast.Member):
        fname = field_name(expr)
        if fname.startswith("."):
            return fname[1:]
        left = expression_name(expr.expr, field_name)
        return None if left is None else f"{left}.{fname}"
    if isinstance(expr, ast.ArrayIndex):
        left, right = expression_name(expr.expr, field_name), expression_name(expr.index, field_name)
        return None if left is None or right is None else f"{left}[{right}]"
    if isinstance(expr, ast.Slice):
        base, hi, lo = expression_name(expr.expr, field_name), expression_name(expr.hi, field_name), expression_name(expr.lo, field_name)
        return None if base is None or hi is None or lo is None else f"{base}[{hi}:{lo}]"
    if isinstance(expr, ast.BinaryOp) and expr.op == "&":
        left, right = expression_name(expr.left, field_name), expression_name(expr.right, field_name)
        return None if left is None or right is None else f"{left} & {right}"
    if (
        isinstance(expr, ast.MethodCall)
        and not expr.args
        and isinstance(expr.callee, ast.Member)
        and expr.callee.member == "isValid"
        and isinstance(expr.callee.expr.type, HeaderType | HeaderUnionType)
    ):
        receiver = expression_name(expr.callee.expr, field_name)
        return None if receiver is None else f"{receiver}.$valid$"
    return None
