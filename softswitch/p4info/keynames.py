"""Match-field names of table keys in P4Info: ``@name``, else p4c's TableKeyNames name of the
expression (frontend/keynames.py) with each field's own ``@name``."""

from __future__ import annotations

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.frontend.keynames import expression_name
from softswitch.frontend.types import StructLikeType
from softswitch.p4info.typeinfo import TypeSpecs


def key_name(key: ast.KeyElement, specs: TypeSpecs) -> str:
    """The P4Info name of a key element (its ``@name`` when it has one)."""
    explicit = key.string_annotation("name")
    if explicit is not None:
        return explicit

    def field_name(expr: ast.Member) -> str:
        base = expr.expr.type
        if isinstance(base, StructLikeType):
            return specs.field_name(base.name, expr.member)
        return expr.member

    name = expression_name(key.expr, field_name)
    if name is None:   # tablecheck refuses such a key; kept for hand-built ASTs
        raise P4TypeError("complex key expression requires a @name annotation", key.expr.loc)
    return name
