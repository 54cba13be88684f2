"""C expressions on bit<W>/int<W> values wider than 128 bits (``W_K`` limbs, runtime/ss_wide.h).

The arithmetic P4 defines, as the Python engine computes it on its ints: ``+ - *`` reduced to
W bits, ``& | ^ ~``, unary ``-``, shifts (a left shift or an unsigned right shift past the width
gives 0, a signed right shift the sign), comparisons (signed through the sign bit W-1), casts
(truncation, zero or sign extension), slices, concatenation, and ``/`` ``%`` by the power-of-two
constants the type checker lets through (p4c leaves no other run-time division). An int<W> is
held as its W-bit two's complement, as narrower values are.
"""

from __future__ import annotations

from softswitch.errors import NativeUnsupported
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.native.cgen_types import CTypes, bit_width, is_wide, limbs, unwrap

_CMP = {"<": "< 0", "<=": "<= 0", ">": "> 0", ">=": ">= 0"}
_BITWISE = {"&": "and", "|": "or", "^": "xor"}
_ARITH = {"+": "add", "-": "sub", "*": "mul"}


def wide_literal(value: int, width: int) -> str:
    """A W_K constant of `value` reduced to `width` bits."""
    v = value & ((1 << width) - 1)
    words = ", ".join(f"{(v >> (64 * i)) & 0xFFFFFFFFFFFFFFFF:#x}ULL" for i in range(limbs(width)))
    return f"((W_{limbs(width)}){{{{{words}}}}})"


def _signed(ty: t.Type | None) -> bool:
    u = unwrap(ty)
    if isinstance(u, t.EnumType) and u.underlying is not None:
        u = u.underlying
    return isinstance(u, t.BitType) and u.signed


class CWideGen:
    """Mixin of the C expression generator: the operations whose operands or result are wide."""

    types: CTypes

    def wide_from(self, code: str, ty: t.Type | None, width: int, signed: bool) -> str:
        """`code` (of type `ty`) as a W_K of `width` bits: truncated, zero- or (`signed` source)
        sign-extended."""
        name = self.types.wide_name(width)
        u = unwrap(ty)
        if isinstance(u, t.BoolType):
            return f"{name}_u((u128){code}, {width})"
        if isinstance(u, t.IntType):
            return f"{name}_s((s128)({code}), {width})"
        sw = bit_width(u)
        if not is_wide(u):
            if signed:
                sx = f"ss_sx64({code}, {sw})" if sw <= 64 else f"ss_sx128({code}, {sw})"
                return f"{name}_s((s128){sx}, {width})"
            return f"{name}_u((u128){code}, {width})"
        src = self.types.wide_name(sw)
        if src == name and sw <= width and not signed:
            return code
        conv = (f"({{ {src} _ws = ({code}); {name} _wr; "
                f"ss_wslice(_wr.l, {limbs(width)}, _ws.l, {limbs(sw)}, 0, {min(sw, width)}); _wr; }})")
        if signed and width > sw:
            conv = f"{name}_sext({conv}, {sw}, {width})"
        return conv

    def wide_narrow(self, code: str, ty: t.Type | None, lo: int, width: int) -> str:
        """Bits [lo, lo + width) of the wide value `code` (width <= 128) as uint64_t/u128."""
        name = self.types.wide_name(bit_width(unwrap(ty)))
        bits = f"{name}_bits({code}, {lo}, {width})"
        return f"((uint64_t){bits})" if width <= 64 else bits

    def wide_amount(self, code: str, ty: t.Type | None) -> str:
        """A shift amount as uint64_t (a wide one past 64 bits: all ones, i.e. past any width)."""
        if is_wide(ty):
            return f"{self.types.wide_name(bit_width(unwrap(ty)))}_amount({code})"
        return f"(uint64_t)({code})"

    def wide_binary(self, e: ast.BinaryOp, a: str, b: str) -> str:
        op = e.op
        lt, ty = unwrap(e.left.type), unwrap(e.type)
        if op in _CMP:
            name = self.types.wide_name(bit_width(lt))
            if _signed(lt):
                return f"({name}_scmp({a}, {b}, {bit_width(lt)}) {_CMP[op]})"
            return f"({name}_cmp({a}, {b}) {_CMP[op]})"
        if not isinstance(ty, t.BitType):
            raise NativeUnsupported(f"'{op}' on values wider than 128 bits", e.loc)
        w = ty.width
        if w <= 128:  # a narrow result from a wide operand: only shifts by a wide amount
            raise NativeUnsupported(f"'{op}' with an operand wider than 128 bits", e.loc)
        name = self.types.wide_name(w)
        signed = ty.signed
        if op == "++":
            rt = unwrap(e.right.type)
            rw = bit_width(rt)
            left = self.wide_from(a, lt, w, False)
            right = self.wide_from(b, rt, w, False)
            return f"{name}_or({name}_shl({left}, {rw}, {w}), {right})"
        if op in ("<<", ">>"):
            n = self.wide_amount(b, e.right.type)
            if op == "<<":
                return f"{name}_shl({a}, {n}, {w})"
            return f"{name}_sar({a}, {n}, {w})" if signed else f"{name}_shr({a}, {n})"
        if op in ("/", "%"):
            d = e.right.value
            if signed or not isinstance(d, int) or d <= 0 or d & (d - 1):
                raise NativeUnsupported(f"'{op}' on values wider than 128 bits by anything "
                                        "but a power-of-two constant", e.loc)
            if op == "/":
                return f"{name}_shr({a}, {d.bit_length() - 1})"
            return f"{name}_and({a}, {wide_literal(d - 1, w)})"
        if op in _ARITH:
            return f"{name}_{_ARITH[op]}({a}, {b}, {w})"
        if op in _BITWISE:
            return f"{name}_{_BITWISE[op]}({a}, {b})"
        raise NativeUnsupported(f"'{op}' on values wider than 128 bits", e.loc)

    def wide_unary(self, e: ast.UnaryOp, a: str) -> str:
        w = bit_width(unwrap(e.type))
        name = self.types.wide_name(w)
        if e.op == "-":
            return f"{name}_neg({a}, {w})"
        if e.op == "~":
            return f"{name}_not({a}, {w})"
        raise NativeUnsupported(f"unary '{e.op}' on values wider than 128 bits", e.loc)

    def wide_cast(self, e: ast.Cast, a: str, target: t.Type, src: t.Type) -> str:
        """A cast to or from a wide bit<W>/int<W>."""
        if isinstance(target, t.BitType) and target.width > 128:
            return self.wide_from(a, src, target.width,
                                  _signed(src) and bit_width(src) < target.width)
        if isinstance(target, t.BitType):
            return self.wide_narrow(a, src, 0, target.width)
        if isinstance(target, t.BoolType):
            return f"({self.wide_narrow(a, src, 0, 1)} != 0)"
        raise NativeUnsupported(f"a cast of a value wider than 128 bits to {target}", e.loc)

    def wide_slice(self, e: ast.Slice, base: str) -> str:
        assert e.high is not None and e.low is not None
        width = e.high - e.low + 1
        if width <= 128:
            return self.wide_narrow(base, e.expr.type, e.low, width)
        src = self.types.wide_name(bit_width(unwrap(e.expr.type)))
        name = self.types.wide_name(width)
        ka = limbs(bit_width(unwrap(e.expr.type)))
        return (f"({{ {src} _ws = ({base}); {name} _wr; "
                f"ss_wslice(_wr.l, {limbs(width)}, _ws.l, {ka}, {e.low}, {width}); _wr; }})")

    def wide_set_slice(self, lhs: ast.Slice, base: str, rhs: str) -> str:
        """`base` with bits [high:low] replaced by `rhs` (the value of the slice's type)."""
        assert lhs.high is not None and lhs.low is not None
        bw = bit_width(unwrap(lhs.expr.type))
        name = self.types.wide_name(bw)
        sw = lhs.high - lhs.low + 1
        field = ((1 << sw) - 1) << lhs.low
        keep = wide_literal(((1 << bw) - 1) & ~field, bw)
        part = self.wide_from(rhs, lhs.type if lhs.type is not None else t.BitType(sw), bw,
                              False)
        return (f"{name}_or({name}_and({base}, {keep}), "
                f"{name}_and({name}_shl({part}, {lhs.low}, {bw}), {wide_literal(field, bw)}))")
