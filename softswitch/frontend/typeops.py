"""Relations between semantic types: substitution and unification of type variables, and the
predicates the checker's rules are phrased in (numeric, fixed-width, castable...)."""

from __future__ import annotations

from softswitch.frontend.types import (
    BitType,
    BoolType,
    DontCareType,
    EnumType,
    ErrorType,
    ExternType,
    HeaderStackType,
    HeaderType,
    HeaderUnionType,
    IntType,
    ListType,
    NewType,
    StructLikeType,
    StructType,
    TupleType,
    Type,
    TypeVar,
    VarbitType,
    unwrap_newtype,
)


def substitute(t: Type, bindings: dict[str, Type]) -> Type:
    """`t` with bound type variables replaced."""
    if isinstance(t, TypeVar):
        return bindings.get(t.name, t)
    if isinstance(t, TupleType):
        return TupleType(tuple(substitute(e, bindings) for e in t.elements))
    if isinstance(t, HeaderStackType):
        return HeaderStackType(substitute(t.element, bindings), t.size)
    if isinstance(t, ExternType) and t.type_args:
        return ExternType(t.name, tuple(substitute(a, bindings) for a in t.type_args), t.decl)
    return t


def has_type_vars(t: Type, names: set[str] | None = None) -> bool:
    if isinstance(t, TypeVar):
        return names is None or t.name in names
    if isinstance(t, TupleType | ListType):
        return any(has_type_vars(e, names) for e in t.elements)
    if isinstance(t, HeaderStackType):
        return has_type_vars(t.element, names)
    if isinstance(t, ExternType):
        return any(has_type_vars(a, names) for a in t.type_args)
    return False


def unify(param: Type, arg: Type, bindings: dict[str, Type], variables: set[str]) -> bool:
    """Bind the `variables` in `param` so that it matches `arg`; False on a mismatch."""
    if isinstance(param, TypeVar) and param.name in variables:
        bound = bindings.get(param.name)
        if bound is None:
            bindings[param.name] = list_to_tuple(arg)
            return True
        if isinstance(bound, IntType) and isinstance(arg, BitType):
            # an unsized literal seen first gives way to a sized argument
            bindings[param.name] = arg
            return True
        return bound == list_to_tuple(arg) or (isinstance(arg, IntType) and is_numeric(bound))
    if isinstance(param, TupleType) and isinstance(arg, TupleType | ListType):
        return len(param.elements) == len(arg.elements) and all(
            unify(p, a, bindings, variables) for p, a in zip(param.elements, arg.elements)
        )
    if isinstance(param, HeaderStackType) and isinstance(arg, HeaderStackType):
        return param.size == arg.size and unify(param.element, arg.element, bindings, variables)
    if isinstance(param, ExternType) and isinstance(arg, ExternType):
        return (
            param.name == arg.name
            and len(param.type_args) == len(arg.type_args)
            and all(
                unify(p, a, bindings, variables) for p, a in zip(param.type_args, arg.type_args)
            )
        )
    return True  # no variables to bind here; compatibility is checked after substitution


def list_to_tuple(t: Type) -> Type:
    return TupleType(t.elements) if isinstance(t, ListType) else t


def is_numeric(t: Type) -> bool:
    """bit<W>, int<W> or the unsized int (after unwrapping ``type``)."""
    return isinstance(unwrap_newtype(t), BitType | IntType)


def is_fixed_width(t: Type) -> bool:
    """Serializable without varbit: what lookahead, keys and casts to bit accept."""
    t = unwrap_newtype(t)
    if isinstance(t, BitType | BoolType):
        return True
    if isinstance(t, EnumType):
        return t.underlying is not None
    if isinstance(t, HeaderType | StructType):
        return all(is_fixed_width(ft) for _, ft in t.fields)
    return False


def is_header_field_type(t: Type) -> bool:
    """Types allowed as header fields (P4_16 1.2: bits, ints, varbit, bool, serializable enums,
    and structs of those)."""
    u = unwrap_newtype(t)
    if isinstance(u, BitType | VarbitType | BoolType):
        return True
    if isinstance(u, EnumType):
        return u.underlying is not None
    if isinstance(u, StructType):
        return all(
            is_header_field_type(ft) and not isinstance(ft, VarbitType) for _, ft in u.fields
        )
    return False


def is_key_type(t: Type) -> bool:
    """Types usable as table keys and select expressions."""
    u = unwrap_newtype(t)
    return isinstance(u, BitType | BoolType | EnumType | ErrorType | IntType)


def is_header_like(t: Type) -> bool:
    return isinstance(t, HeaderType | HeaderUnionType)


def castable(source: Type, target: Type) -> bool:
    """The explicit casts of P4_16 section 8.11 (plus NewType <-> underlying)."""
    if source == target:
        return True
    s, t = source, target
    if isinstance(t, NewType) and (s == t.underlying or castable(s, t.underlying)):
        return True
    if isinstance(s, NewType) and (s.underlying == t or castable(s.underlying, t)):
        return True
    if isinstance(s, IntType):
        return isinstance(unwrap_newtype(t), BitType | IntType | BoolType) or (
            isinstance(t, EnumType) and t.underlying is not None
        )
    if isinstance(s, BitType) and isinstance(t, BitType):
        # sign and width may change, but not both at once (p4c allows both; so do we)
        return True
    if isinstance(s, BitType) and isinstance(t, IntType):
        return True  # value kept, as an arbitrary-precision int (compile-time values only)
    if isinstance(s, BoolType) and isinstance(t, BitType):
        return t.width == 1 and not t.signed
    if isinstance(s, BitType) and isinstance(t, BoolType):
        return s.width == 1 and not s.signed
    if isinstance(s, EnumType) and s.underlying is not None:
        return castable(s.underlying, t)
    if isinstance(t, EnumType) and t.underlying is not None:
        return castable(s, t.underlying)
    # tuples/lists cast to structs are checked element-wise by the caller
    return isinstance(s, TupleType | ListType) and isinstance(t, StructLikeType | TupleType)


def extern_fits(t: Type, target: ExternType) -> bool:
    """Whether a value of type `t` fits a parameter of extern type `target` whose type
    arguments may be ``_`` (any type: ``Hash<_>`` takes a Hash<bit<16>>)."""
    return (
        isinstance(t, ExternType)
        and t.name == target.name
        and len(t.type_args) == len(target.type_args)
        and all(
            isinstance(want, DontCareType) or want == have
            for want, have in zip(target.type_args, t.type_args)
        )
    )
