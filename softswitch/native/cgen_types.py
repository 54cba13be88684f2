"""C types for P4 values: scalars, headers, structs and header stacks (the generated typedefs).

Representation (the contract of runtime/ss_rt.h): ``bit<W>``/``int<W>``/enums/``error`` of up to 64
bits are ``uint64_t``, up to 128 bits ``u128``, always reduced to their width (``int<W>`` as its
W-bit two's complement); ``bool`` is ``uint8_t`` 0/1. A header is a struct with a validity byte
``_v`` first, then its fields (a struct-typed field is a nested struct, so p4c's flattened
``row.e`` is the C member path too); a struct is a C struct; a header stack is ``{elem h[N];
uint32_t nxt;}``; a header union a struct of its member headers (no validity of its own); a
tuple ``T_n {f0; f1; ...}``; a ``varbit<N>`` ``V_N {uint32_t w; uint64_t d[K];}`` (its current
width travels with the value, as BMv2's assign_VL; limbs least significant first, zero above
`w`); a ``bit<W>``/``int<W>`` over 128 bits ``W_K {uint64_t l[K];}`` (limbs, reduced to W bits,
runtime/ss_wide.h). These are C structs, so every value is copied with plain C assignment
(copy-in/copy-out). Where a wide value cannot go yet (table keys, action data, registers,
digests, select keys) raises `NativeUnsupported`.
"""

from __future__ import annotations

import re

from softswitch.engine.codegen_types import bit_width, is_composite, unwrap
from softswitch.errors import NativeUnsupported
from softswitch.frontend import types as t

__all__ = [
    "CTypes",
    "bit_width",
    "c_literal",
    "c_mask",
    "is_composite",
    "is_value_struct",
    "is_wide",
    "limbs",
    "scalar_width",
    "unwrap",
]


def scalar_width(ty: t.Type | None) -> int:
    """The bit width of a scalar's C representation (bool: 1); refuses what C cannot hold."""
    u = unwrap(ty)
    if isinstance(u, t.VarbitType):
        raise NativeUnsupported("varbit values")
    if isinstance(u, t.IntType):
        raise NativeUnsupported("arbitrary-precision int values at run time")
    if isinstance(u, t.StringType):
        raise NativeUnsupported("string values")
    w = bit_width(u)
    if w > 128:
        raise NativeUnsupported(f"values wider than 128 bits ({w})")
    return w


def limbs(width: int) -> int:
    """64-bit words holding `width` bits."""
    return (width + 63) // 64


def is_wide(ty: t.Type | None) -> bool:
    """A bit<W>/int<W> (or an enum over one) of more than 128 bits: a W_K struct of limbs."""
    u = unwrap(ty)
    if isinstance(u, t.EnumType) and u.underlying is not None:
        u = u.underlying
    return isinstance(u, t.BitType) and u.width > 128


def is_value_struct(ty: t.Type | None) -> bool:
    """A P4 value (not a P4 composite) whose C form is a struct: tuples, varbits and wide
    bit<W>. They compare with their EQ_ function."""
    return isinstance(unwrap(ty), t.TupleType | t.ListType | t.VarbitType) or is_wide(ty)


def c_literal(value: int, width: int) -> str:
    """An unsigned C constant of `value` reduced to `width` bits."""
    v = value & ((1 << width) - 1) if width > 0 else value
    if v < 0:
        return f"((uint64_t)({v}LL))"
    if v <= 0xFFFFFFFFFFFFFFFF:
        return f"{v:#x}ULL" if v > 9 else f"{v}ULL"
    return f"SS_U128({v >> 64:#x}ULL, {v & 0xFFFFFFFFFFFFFFFF:#x}ULL)"


def c_mask(width: int) -> str | None:
    """The mask constant reducing a value to `width` bits; None for 64 and 128 (the C type
    does it)."""
    if width in (64, 128):
        return None
    return c_literal((1 << width) - 1, 128)


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name)


class CTypes:
    """Emits (once per type, dependencies first) the typedefs of composite types."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._names: dict[tuple[str, str, int], str] = {}

    # -- scalars ------------------------------------------------------------------------------

    def ctype(self, ty: t.Type | None) -> str:
        u = unwrap(ty)
        if isinstance(u, t.BoolType):
            return "uint8_t"
        if isinstance(u, t.StructLikeType | t.HeaderStackType):
            return self.name(u)
        if isinstance(u, t.TupleType | t.ListType):
            return self.tuple_name(u)
        if isinstance(u, t.VarbitType):
            return self.varbit_name(u)
        if is_wide(u):
            return self.wide_name(bit_width(u))
        return "uint64_t" if scalar_width(u) <= 64 else "u128"

    def wide_name(self, width: int) -> str:
        """``W_K``: a bit<W>/int<W> of W > 128 bits in K limbs (runtime/ss_wide.h's SS_WIDE)."""
        k = limbs(width)
        key = ("wide", "", k)
        if key not in self._names:
            self._names[key] = f"W_{k}"
            self.lines.append(f"SS_WIDE({k})")
        return f"W_{k}"

    def default(self, ty: t.Type | None) -> str:
        """A C expression for the uninitialised value of `ty` (zeros, invalid headers)."""
        u = unwrap(ty)
        if isinstance(u, t.StructLikeType | t.HeaderStackType) or is_value_struct(u):
            return f"(({self.ctype(u)}){{0}})"
        self.ctype(u)
        return "0"

    def tuple_name(self, u: t.TupleType | t.ListType) -> str:
        """``T_n {f0; f1; ...}``: a tuple's elements in order (element i is member ``f<i>``)."""
        elems = [self.ctype(e) for e in u.elements]  # dependencies first
        key = ("tuple", ",".join(elems), 0)
        found = self._names.get(key)
        if found is not None:
            return found
        name = f"T_{len(self._names)}"
        self._names[key] = name
        body = " ".join(f"{c} f{i};" for i, c in enumerate(elems)) or "uint8_t _empty;"
        self.lines.append(f"typedef struct {{ {body} }} {name};")
        cmp = " && ".join(self._field_eq(f"a->f{i}", f"b->f{i}", e)
                          for i, e in enumerate(u.elements)) or "1"
        self.lines.append(f"static inline int EQ_{name}(const {name} *a, const {name} *b) "
                          f"{{ return {cmp}; }}")
        return name

    def varbit_name(self, u: t.VarbitType) -> str:
        """``V_N``: a varbit<N>'s current width and value (EQ compares values, as the Python
        engine's ``==`` on varbit ints)."""
        key = ("varbit", "", u.max_width)
        found = self._names.get(key)
        if found is not None:
            return found
        name = f"V_{u.max_width}"
        self._names[key] = name
        k = max(1, limbs(u.max_width))
        self.lines.append(f"typedef struct {{ uint32_t w; uint64_t d[{k}]; }} {name};")
        self.lines.append(f"static inline int EQ_{name}(const {name} *a, const {name} *b) "
                          f"{{ return !memcmp(a->d, b->d, sizeof a->d); }}")
        return name

    # -- composites ---------------------------------------------------------------------------

    def name(self, ty: t.Type) -> str:
        u = unwrap(ty)
        if isinstance(u, t.HeaderStackType):
            elem = self.name(u.element)
            key = ("stack", elem, u.size)
        elif isinstance(u, t.StructLikeType):
            key = (type(u).__name__, u.name, 0)
        else:
            raise NativeUnsupported(f"a C struct for {u}")
        found = self._names.get(key)
        if found is not None:
            return found
        if isinstance(u, t.HeaderStackType):
            name = f"K_{_ident(key[1])}_{u.size}"
            self._names[key] = name
            self._emit_stack(name, elem, u.size)
            return name
        assert isinstance(u, t.StructLikeType)
        fields = [(f, self.ctype(ft)) for f, ft in u.fields]  # dependencies first
        name = f"{type(u).__name__[0]}_{_ident(u.name)}_{len(self._names)}"
        self._names[key] = name
        body = ["uint8_t _v;"] if isinstance(u, t.HeaderType) else []
        body += [f"{ct} {f};" for f, ct in fields]
        if not body:
            body = ["uint8_t _empty;"]
        self.lines.append(f"typedef struct {{ {' '.join(body)} }} {name};")
        self._emit_eq(name, u)
        self._emit_invalidate(name, u)
        return name

    def _field_eq(self, a: str, b: str, ty: t.Type) -> str:
        u = unwrap(ty)
        if is_composite(u) or is_value_struct(u):
            return f"EQ_{self.ctype(u)}(&{a}, &{b})"
        return f"{a} == {b}"

    def _emit_eq(self, name: str, u: t.StructLikeType) -> None:
        parts = [self._field_eq(f"a->{f}", f"b->{f}", ft) for f, ft in u.fields]
        if isinstance(u, t.HeaderType):
            # a header compares its varbits' widths too (the Python engine's header _eq
            # compares every slot, ``f__w`` included)
            parts += [f"a->{f}.w == b->{f}.w" for f, ft in u.fields
                      if isinstance(unwrap(ft), t.VarbitType)]
        cmp = " && ".join(parts) or "1"
        if isinstance(u, t.HeaderType):
            cmp = f"a->_v == b->_v && (!a->_v || ({cmp}))"
        self.lines.append(f"static inline int EQ_{name}(const {name} *a, const {name} *b) "
                          f"{{ return {cmp}; }}")

    def _emit_invalidate(self, name: str, u: t.StructLikeType) -> None:
        """``INV_<name>``: a header made invalid, or every member of a union (stack shifts)."""
        if isinstance(u, t.HeaderType):
            body = "p->_v = 0;"
        elif isinstance(u, t.HeaderUnionType):
            body = " ".join(f"p->{m}._v = 0;" for m, _ in u.fields)
        else:
            return
        self.lines.append(f"static inline void INV_{name}({name} *p) {{ {body} }}")

    def union_only(self, u: t.HeaderUnionType, union: str, keep: str) -> str:
        """C statements invalidating every member of `union` but `keep` (a member just made
        valid: the union's other members become invalid, as the Python engine's _only)."""
        return " ".join(f"{union}.{m}._v = 0;" for m, _ in u.fields if m != keep)

    def _emit_stack(self, name: str, elem: str, size: int) -> None:
        lines = self.lines
        lines.append(f"typedef struct {{ {elem} h[{size}]; uint32_t nxt; }} {name};")
        lines.append(f"static inline int EQ_{name}(const {name} *a, const {name} *b) {{ "
                     f"for (int i = 0; i < {size}; i++) if (!EQ_{elem}(&a->h[i], &b->h[i])) "
                     "return 0; return 1; }")
        # hs[i] with a run-time index: past the end a detached invalid element (reads give
        # zeros, writes are lost), as support.stack_elem
        lines.append(f"static {elem} SCR_{name};")
        lines.append(f"static inline {elem} *EL_{name}({name} *s, uint64_t i) {{ "
                     f"if (i < {size}) return &s->h[i]; "
                     f"memset(&SCR_{name}, 0, sizeof SCR_{name}); return &SCR_{name}; }}")
        lines.append(
            f"static inline void PUSH_{name}({name} *s, uint64_t n) {{ if (n == 0) return; "
            f"if (n >= {size}) {{ for (int i = 0; i < {size}; i++) INV_{elem}(&s->h[i]); }} "
            f"else {{ for (int i = {size} - 1; i >= (int)n; i--) s->h[i] = s->h[i - n]; "
            f"for (int i = 0; i < (int)n; i++) INV_{elem}(&s->h[i]); }} "
            f"s->nxt = s->nxt + n > {size} ? {size} : s->nxt + (uint32_t)n; }}")
        lines.append(
            f"static inline void POP_{name}({name} *s, uint64_t n) {{ if (n == 0) return; "
            f"if (n >= {size}) {{ for (int i = 0; i < {size}; i++) INV_{elem}(&s->h[i]); }} "
            f"else {{ for (int i = 0; i < {size} - (int)n; i++) s->h[i] = s->h[i + n]; "
            f"for (int i = {size} - (int)n; i < {size}; i++) INV_{elem}(&s->h[i]); }} "
            f"s->nxt = s->nxt > n ? s->nxt - (uint32_t)n : 0; }}")

    def header_layout(self, u: t.StructLikeType) -> list[tuple[str, t.Type, int]]:
        """(C member path, type, width) of each scalar leaf of a header, in wire order (a
        varbit: width 0, its current width is ``.w``)."""
        out: list[tuple[str, t.Type, int]] = []
        for fname, ftype in u.fields:
            fu = unwrap(ftype)
            if isinstance(fu, t.StructLikeType):
                out += [(f"{fname}.{f}", ft, w) for f, ft, w in self.header_layout(fu)]
                continue
            out.append((fname, fu, 0 if isinstance(fu, t.VarbitType)
                        else bit_width(fu) if is_wide(fu) else scalar_width(fu)))
        return out
