"""Semantic types of P4_16, as the type checker assigns them to expressions and declarations.

Types are compared structurally for base types and nominally (by declaration name) for headers,
structs, unions and enums. ``typedef`` is transparent (it never appears here); ``type`` makes a
`NewType`, which the checker unwraps for arithmetic but P4Info reports by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class Type:
    """Base of all semantic types."""

    __slots__ = ()

    def is_bits(self) -> bool:
        return isinstance(self, BitType)


@dataclass(frozen=True, slots=True)
class BitType(Type):
    """``bit<W>`` (signed=False) or ``int<W>`` (signed=True). ``bool`` is separate."""

    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True, slots=True)
class IntType(Type):
    """The arbitrary-precision ``int`` of unsized literals and compile-time constants."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True, slots=True)
class VarbitType(Type):
    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True, slots=True)
class BoolType(Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class StringType(Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True, slots=True)
class VoidType(Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True, slots=True)
class DontCareType(Type):
    """The type of ``_`` where a type argument is left to inference."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class ErrorType(Type):
    """``error``; its members are numbered in declaration order (core.p4's first)."""

    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True, slots=True)
class MatchKindType(Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True, slots=True)
class NewType(Type):
    """``type bit<9> PortId_t;`` — a distinct named type over `underlying`."""

    name: str
    underlying: Type

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, eq=False)
class StructLikeType(Type):
    """Header, header union and struct types: named, with ordered fields.

    Equality is by name (nominal typing); generic structs are named with their arguments
    (``pair<bit<8>>``) by the checker.
    """

    name: str
    fields: tuple[tuple[str, Type], ...]

    def field_type(self, name: str) -> Type | None:
        for fname, ftype in self.fields:
            if fname == name:
                return ftype
        return None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __str__(self) -> str:
        return self.name


class HeaderType(StructLikeType):
    """``header``: fields are bit<W>, int<W>, bool? (not allowed), varbit (at most one), or
    serializable enums; has a validity bit."""

    __slots__ = ()

    def bit_width(self) -> int:
        """Width of the fixed part (varbit fields count as 0)."""
        total = 0
        for _, ftype in self.fields:
            total += type_bit_width(ftype)
        return total


class HeaderUnionType(StructLikeType):
    __slots__ = ()


class StructType(StructLikeType):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class HeaderStackType(Type):
    element: Type  # a HeaderType or HeaderUnionType
    size: int

    def __str__(self) -> str:
        return f"{self.element}[{self.size}]"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    elements: tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.elements)) + ">"


@dataclass(frozen=True, slots=True)
class ListType(Type):
    """The type of an untyped ``{a, b}`` list expression before the context fixes it."""

    elements: tuple[Type, ...]

    def __str__(self) -> str:
        return "list<" + ", ".join(map(str, self.elements)) + ">"


@dataclass(frozen=True, slots=True, eq=False)
class EnumType(Type):
    """``enum E { A, B }`` (underlying None) or serializable ``enum bit<8> E { A = 1 }``."""

    name: str
    members: tuple[str, ...]
    underlying: BitType | None = None
    values: tuple[int, ...] = ()  # serializable enums: member values, same order as members

    def value_of(self, member: str) -> int:
        index = self.members.index(member)
        return self.values[index] if self.underlying is not None else index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EnumType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("enum", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, eq=False)
class ExternType(Type):
    """An extern object type, e.g. ``counter`` or ``register<bit<32>>`` (args in type_args)."""

    name: str
    type_args: tuple[Type, ...] = ()
    decl: object = field(default=None, compare=False, repr=False)  # the ast.ExternDecl

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ExternType)
            and other.name == self.name
            and other.type_args == self.type_args
        )

    def __hash__(self) -> int:
        return hash(("extern", self.name, self.type_args))

    def __str__(self) -> str:
        if not self.type_args:
            return self.name
        return f"{self.name}<{', '.join(map(str, self.type_args))}>"


@dataclass(frozen=True, slots=True, eq=False)
class ObjectType(Type):
    """Parsers, controls, packages, tables and actions as values (instances, ``t.apply()``).

    kind is one of "parser", "control", "package", "table", "action", "function", "state".
    """

    kind: str
    name: str
    decl: object = field(default=None, compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectType) and (other.kind, other.name) == (self.kind, self.name)

    def __hash__(self) -> int:
        return hash((self.kind, self.name))

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True, slots=True)
class TypeVar(Type):
    """A type parameter (``H`` in ``parser Parser<H, M>``) before specialisation."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ApplyResultType(Type):
    """What ``t.apply()`` returns: a struct with ``hit``, ``miss`` and ``action_run``."""

    table: str

    def __str__(self) -> str:
        return f"apply_result<{self.table}>"


@dataclass(frozen=True, slots=True)
class ActionEnumType(Type):
    """The type of ``t.apply().action_run``: one member per action of table `table`."""

    table: str

    def __str__(self) -> str:
        return f"action_list({self.table})"


def unwrap_newtype(t: Type) -> Type:
    """The representation type under any number of ``type`` declarations."""
    while isinstance(t, NewType):
        t = t.underlying
    return t


def type_bit_width(t: Type) -> int:
    """Width in bits of a serializable type (bit/int/bool/enum/newtype/header/struct...)."""
    t = unwrap_newtype(t)
    if isinstance(t, BitType):
        return t.width
    if isinstance(t, BoolType):
        return 1
    if isinstance(t, EnumType) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, VarbitType):
        return 0
    if isinstance(t, StructLikeType):
        if isinstance(t, HeaderUnionType):
            return max((type_bit_width(ft) for _, ft in t.fields), default=0)
        return sum(type_bit_width(ft) for _, ft in t.fields)
    if isinstance(t, HeaderStackType):
        return t.size * type_bit_width(t.element)
    raise TypeError(f"type {t} has no bit width")
