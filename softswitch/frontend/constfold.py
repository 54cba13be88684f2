"""Compile-time arithmetic on P4 values: wrap-around to a type's width and operator folding.

Values are Python ints (bit/int/IntType), bools or strings; signed values are negative ints.
These helpers never raise for ordinary overflow (P4 wraps); they return None when an operation has
no compile-time result (e.g. division by zero), leaving the caller to report it.
"""

from __future__ import annotations

from softswitch.frontend.types import BitType, BoolType, IntType, NewType, Type, unwrap_newtype

MAX_CONST_SHIFT = 1 << 16  # larger left shifts of an unsized int are not folded (not constant)


def wrap(value: int, t: Type) -> int:
    """Reduce `value` to the range of `t` (two's complement for signed types)."""
    t = unwrap_newtype(t)
    if not isinstance(t, BitType):
        return value
    if t.width == 0:
        return 0
    value &= (1 << t.width) - 1
    if t.signed and value >= 1 << (t.width - 1):
        value -= 1 << t.width
    return value


def fits(value: int, t: BitType) -> bool:
    """Whether `value` is representable in `t` without wrapping."""
    if t.signed:
        return -(1 << (t.width - 1)) <= value < (1 << (t.width - 1)) if t.width else value == 0
    return 0 <= value < (1 << t.width)


def _saturate(value: int, t: BitType) -> int:
    if t.signed:
        lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    else:
        lo, hi = 0, (1 << t.width) - 1
    return max(lo, min(hi, value))


def fold_binary(op: str, a: object, b: object, operand_type: Type, result_type: Type) -> object:
    """Fold ``a op b``; operands already have `operand_type` (for ``++`` the left one's)."""
    if op == "&&":
        return bool(a) and bool(b)
    if op == "||":
        return bool(a) or bool(b)
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if not isinstance(a, int) or not isinstance(b, int) or isinstance(a, bool):
        return None
    rt = unwrap_newtype(result_type)
    if op in ("<", "<=", ">", ">="):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if op == "++":
        assert isinstance(rt, BitType)
        right_width = rt.width - unwrap_newtype(operand_type).width  # type: ignore[attr-defined]
        raw = ((a & ((1 << rt.width) - 1)) << right_width) | (b & ((1 << right_width) - 1))
        return wrap(raw, rt)
    if op in ("|+|", "|-|"):
        raw = a + b if op == "|+|" else a - b
        return _saturate(raw, rt) if isinstance(rt, BitType) else raw
    if op in ("/", "%"):
        if b == 0:
            return None
        # P4 only allows these on non-negative values, so floor and truncation agree
        raw = a // b if op == "/" else a % b
        return wrap(raw, rt)
    if op == "<<":
        if b < 0:
            return None
        if isinstance(rt, BitType) and b >= rt.width:
            return 0
        if b > MAX_CONST_SHIFT:  # an arbitrary-precision int this large is a mistake, not a value
            return None
        return wrap(a << b, rt)
    if op == ">>":
        if b < 0:
            return None
        return wrap(a >> min(b, 1 << 16), rt)
    table = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "&": lambda: a & b,
        "|": lambda: a | b,
        "^": lambda: a ^ b,
    }
    if op in table:
        return wrap(table[op](), rt)
    return None


def fold_unary(op: str, a: object, t: Type) -> object:
    if op == "!":
        return not a
    if not isinstance(a, int) or isinstance(a, bool):
        return None
    if op == "-":
        return wrap(-a, t)
    if op == "+":
        return a
    if op == "~":
        return wrap(~a, t)
    return None


def fold_cast(a: object, source: Type, target: Type) -> object:
    """Value of ``(target) a``; None if not foldable."""
    t = unwrap_newtype(target)
    if isinstance(t, BoolType):
        return bool(a) if isinstance(a, (bool, int)) else None
    if isinstance(t, BitType):
        if isinstance(a, bool):
            return int(a)
        if isinstance(a, int):
            return wrap(a, t)
        return None
    if isinstance(t, IntType):
        return a if isinstance(a, int) and not isinstance(a, bool) else None
    if isinstance(target, NewType) or source == target:
        return a
    return None
