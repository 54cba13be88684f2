"""Python classes for P4 headers, unions and structs, generated as source with ``__slots__``.

Representation at run time:
- ``bit<W>``/``int<W>``/enums/``error``: Python int (``int<W>`` as a signed int in range);
- ``bool``: Python bool; ``varbit`` fields: two slots, the value and ``<name>__w`` (its width);
- headers: ``_v`` (validity) plus one slot per field; unions: one slot per member header;
- structs: one slot per field; stacks: `support.Stack`; tuples: Python tuples.

Every composite class has ``_copy()`` (deep copy), ``_set(other)`` (in-place assignment, so
references held by callers stay valid), ``_reset()`` (the uninitialised value: zeros, invalid
headers), ``_invalidate()`` and ``_eq(other)``.
"""

from __future__ import annotations

import re

from softswitch.errors import UnsupportedError
from softswitch.frontend import types as t


def unwrap(ty: t.Type | None) -> t.Type:
    """The representation type: newtypes removed."""
    if ty is None:
        raise UnsupportedError("an expression without a type (checker annotation missing)")
    return t.unwrap_newtype(ty)


def is_composite(ty: t.Type | None) -> bool:
    return isinstance(unwrap(ty), t.StructLikeType | t.HeaderStackType)


def bit_width(ty: t.Type) -> int:
    """Width of a scalar serializable type (bit/int/bool/serializable enum)."""
    u = unwrap(ty)
    if isinstance(u, t.BitType):
        return u.width
    if isinstance(u, t.BoolType):
        return 1
    if isinstance(u, t.EnumType) and u.underlying is not None:
        return u.underlying.width
    if isinstance(u, t.ErrorType | t.EnumType):
        return 32
    return t.type_bit_width(u)


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name)


class TypeClasses:
    """Generates (once per type) the class source for composite types and default values."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._names: dict[tuple[str, str], str] = {}

    def class_name(self, ty: t.Type) -> str:
        u = unwrap(ty)
        if not isinstance(u, t.StructLikeType):
            raise UnsupportedError(f"class for non-struct type {u}")
        kind = type(u).__name__
        key = (kind, u.name)
        name = self._names.get(key)
        if name is None:
            name = f"{kind[0]}_{_ident(u.name)}_{len(self._names)}"
            self._names[key] = name
            if isinstance(u, t.HeaderType):
                self._emit_header(name, u)
            elif isinstance(u, t.HeaderUnionType):
                self._emit_union(name, u)
            else:
                self._emit_struct(name, u)
        return name

    def default(self, ty: t.Type | None) -> str:
        """Python expression for a fresh, uninitialised value of `ty`."""
        u = unwrap(ty)
        if isinstance(u, t.BoolType):
            return "False"
        if isinstance(u, t.BitType | t.IntType | t.ErrorType | t.EnumType | t.VarbitType):
            return "0"
        if isinstance(u, t.StringType):
            return "''"
        if isinstance(u, t.StructLikeType):
            return f"{self.class_name(u)}()"
        if isinstance(u, t.HeaderStackType):
            return f"Stack({self.class_name(u.element)}, {u.size})"
        if isinstance(u, t.TupleType | t.ListType):
            return "(" + "".join(self.default(e) + ", " for e in u.elements) + ")"
        return "None"

    # -- class emitters ----------------------------------------------------------------------

    def _fields(self, u: t.StructLikeType) -> list[tuple[str, t.Type]]:
        out = []
        for fname, ftype in u.fields:
            out.append((fname, ftype))
        return out

    def _slot_names(self, u: t.StructLikeType) -> list[str]:
        slots = []
        for fname, ftype in u.fields:
            slots.append(fname)
            if isinstance(unwrap(ftype), t.VarbitType):
                slots.append(f"{fname}__w")
        return slots

    def _emit_header(self, name: str, u: t.HeaderType) -> None:
        slots = ["_v", *self._slot_names(u)]
        # a struct-typed field (`header h { row_t row; }`) is a nested struct object; p4c
        # flattens its fields into the header, which gives the same bits and values
        nested = {f: self.class_name(ft) for f, ft in u.fields
                  if isinstance(unwrap(ft), t.StructLikeType)}
        zero = [f"self.{s}._reset()" if s in nested else f"self.{s} = 0" for s in slots[1:]]
        init = [f"self.{s} = {nested[s]}()" if s in nested else f"self.{s} = 0"
                for s in slots[1:]]
        lines = [f"class {name}:", f"    __slots__ = {tuple(slots)!r}", "    _ty = " + repr(u.name),
                 "    def __init__(self):", "        self._v = False"]
        lines += ["        " + z for z in init]
        lines += [f"    def _copy(self):", f"        n = {name}.__new__({name})"]  # noqa: F541
        lines += [f"        n.{s} = self.{s}._copy()" if s in nested else f"        n.{s} = self.{s}"
                  for s in slots]
        lines += ["        return n", "    def _set(self, o):"]
        lines += [f"        self.{s}._set(o.{s})" if s in nested else f"        self.{s} = o.{s}"
                  for s in slots]
        lines += ["    def _reset(self):", "        self._v = False"]
        lines += ["        " + z for z in zero]
        lines += ["    def _invalidate(self):", "        self._v = False"]
        lines += ["    def _setvalid(self):", "        if not self._v:", "            self._v = True"]
        lines += ["            " + z for z in zero]
        cmp = " and ".join(f"self.{s}._eq(o.{s})" if s in nested else f"self.{s} == o.{s}"
                           for s in slots[1:]) or "True"
        lines += ["    def _eq(self, o):",
                  f"        return self._v == o._v and (not self._v or ({cmp}))"]
        self.lines += [*lines, ""]

    def _emit_union(self, name: str, u: t.HeaderUnionType) -> None:
        members = [f for f, _ in u.fields]
        classes = [self.class_name(ft) for _, ft in u.fields]
        lines = [f"class {name}:", f"    __slots__ = {tuple(members)!r}", "    def __init__(self):"]
        lines += [f"        self.{m} = {c}()" for m, c in zip(members, classes)] or ["        pass"]
        lines += ["    def _copy(self):", f"        n = {name}.__new__({name})"]
        lines += [f"        n.{m} = self.{m}._copy()" for m in members]
        lines += ["        return n", "    def _set(self, o):"]
        lines += [f"        self.{m}._set(o.{m})" for m in members] or ["        pass"]
        lines += ["    def _reset(self):"]
        lines += [f"        self.{m}._reset()" for m in members] or ["        pass"]
        lines += ["    def _invalidate(self):"]
        lines += [f"        self.{m}._invalidate()" for m in members] or ["        pass"]
        valid = " or ".join(f"self.{m}._v" for m in members) or "False"
        lines += ["    def _valid(self):", f"        return {valid}"]
        lines += ["    def _only(self, keep):"]
        lines += [f"        if keep != {m!r}: self.{m}._v = False" for m in members] or [
            "        pass"]
        cmp = " and ".join(f"self.{m}._eq(o.{m})" for m in members) or "True"
        lines += ["    def _eq(self, o):", f"        return {cmp}"]
        self.lines += [*lines, ""]

    def _emit_struct(self, name: str, u: t.StructLikeType) -> None:
        fields = self._fields(u)
        slots = self._slot_names(u)
        init = []
        copy = []
        setl = []
        reset = []
        inval = []
        cmp = []
        for fname, ftype in fields:
            fu = unwrap(ftype)
            if is_composite(fu):
                init.append(f"self.{fname} = {self.default(fu)}")
                copy.append(f"n.{fname} = self.{fname}._copy()")
                setl.append(f"self.{fname}._set(o.{fname})")
                reset.append(f"self.{fname}._reset()")
                inval.append(f"self.{fname}._invalidate()" if not isinstance(
                    fu, t.HeaderStackType) else f"self.{fname}._reset()")
                cmp.append(f"self.{fname}._eq(o.{fname})")
            else:
                init.append(f"self.{fname} = {self.default(fu)}")
                copy.append(f"n.{fname} = self.{fname}")
                setl.append(f"self.{fname} = o.{fname}")
                reset.append(f"self.{fname} = {self.default(fu)}")
                cmp.append(f"self.{fname} == o.{fname}")
                if isinstance(fu, t.VarbitType):
                    init.append(f"self.{fname}__w = 0")
                    copy.append(f"n.{fname}__w = self.{fname}__w")
                    setl.append(f"self.{fname}__w = o.{fname}__w")
                    reset.append(f"self.{fname}__w = 0")

        def body(stmts: list[str]) -> list[str]:
            return ["        " + s for s in stmts] or ["        pass"]

        lines = [f"class {name}:", f"    __slots__ = {tuple(slots)!r}", "    def __init__(self):"]
        lines += body(init)
        lines += ["    def _copy(self):", f"        n = {name}.__new__({name})"]
        lines += body(copy)
        lines += ["        return n", "    def _set(self, o):", *body(setl)]
        lines += ["    def _reset(self):", *body(reset)]
        lines += ["    def _invalidate(self):", *body(inval)]
        lines += ["    def _eq(self, o):", f"        return {' and '.join(cmp) or 'True'}"]
        self.lines += [*lines, ""]

    def header_layout(self, u: t.StructLikeType) -> list[tuple[str, t.Type, int]]:
        """(field, type, width) in order; varbit fields have width 0 here.

        A struct-typed field gives its scalar leaves as dotted paths (`row.e`), as p4c
        flattens them into the header."""
        out: list[tuple[str, t.Type, int]] = []
        for fname, ftype in u.fields:
            fu = unwrap(ftype)
            if isinstance(fu, t.StructLikeType):
                out += [(f"{fname}.{f}", ft, w) for f, ft, w in self.header_layout(fu)]
                continue
            width = 0 if isinstance(fu, t.VarbitType) else bit_width(fu)
            out.append((fname, fu, width))
        return out
