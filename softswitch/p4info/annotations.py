"""P4 annotations as P4Info strings (``@my_anno(1, 2)``), printed the way p4c prints them.

p4c copies every annotation of an object into its P4Info message except ``@name`` and ``@id``
(represented by the preamble itself) and ``@brief``/``@description`` (which go to ``doc``).
Annotations p4c parses as expressions print their arguments separated by ", "; any other
annotation keeps its raw tokens, which p4c joins with single spaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from finsy.proto.p4.config.v1 import p4info_pb2

from softswitch.frontend import ast

# Annotations whose bodies p4c parses (frontend, P4Runtime and v1model annotation parsers).
_PARSED = frozenset({
    "name", "noWarn", "deprecated", "match", "length", "id", "controller_header", "brief",
    "description", "max_group_size", "selector_size_semantics", "max_member_weight",
    "p4runtime_translation", "field_list", "alias", "priority", "synchronous", "pkginfo",
})
_NEVER_COPIED = frozenset({"name", "id", "brief", "description"})

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|\d\w*|&&&|\.\.|<<|>>|==|!=|<=|>=|&&|\|\||'
    r"\+\+|\|\+\||\|-\||\S"
)


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for tok in _TOKEN.findall(body):
        if tok in "([{" and len(tok) == 1:
            depth += 1
        elif tok in ")]}" and len(tok) == 1:
            depth -= 1
        if tok == "," and depth == 0:
            parts.append(" ".join(current))
            current = []
            continue
        current.append(tok)
    if current:
        parts.append(" ".join(current))
    return parts


def format_annotation(anno: ast.Annotation) -> str:
    """``@name`` or ``@name(body)`` as p4c prints it into P4Info."""
    body = anno.body.strip()
    if not body:
        return f"@{anno.name}"
    if anno.name in _PARSED:
        text = ", ".join(_split_top_level(body))
    else:
        text = " ".join(_TOKEN.findall(body))
    return f"@{anno.name}({text})"


def serialize_annotations(node: ast.Annotated | None, skip: Iterable[str] = ()) -> list[str]:
    """The P4Info ``annotations`` strings of `node`, in source order."""
    if node is None:
        return []
    skipped = _NEVER_COPIED | frozenset(skip)
    return [format_annotation(a) for a in node.annotations if a.name not in skipped]


def string_arg(anno: ast.Annotation, index: int = 0) -> str | None:
    """The `index`-th argument of `anno` if it is a string literal."""
    if index < len(anno.args):
        arg = anno.args[index]
        if isinstance(arg, ast.StringLiteral):
            return arg.text
    parts = _split_top_level(anno.body)
    if index < len(parts) and parts[index].startswith('"') and parts[index].endswith('"'):
        return parts[index][1:-1]
    return None


def int_arg(anno: ast.Annotation, index: int = 0) -> int | None:
    """The `index`-th argument of `anno` if it is an integer constant."""
    if index < len(anno.args):
        arg = anno.args[index]
        if isinstance(arg, ast.IntLiteral):
            return arg.number
        if isinstance(arg.value, int) and not isinstance(arg.value, bool):
            return arg.value
    parts = _split_top_level(anno.body)
    if index < len(parts):
        try:
            return int(parts[index].replace("_", ""), 0)
        except ValueError:
            return None
    return None


def set_documentation(doc: p4info_pb2.Documentation, node: ast.Annotated | None) -> None:
    """Fill ``doc`` from ``@brief`` / ``@description``, as p4c's addDocumentation."""
    if node is None:
        return
    brief = node.annotation("brief")
    if brief is not None and (text := string_arg(brief)) is not None:
        doc.brief = text
    description = node.annotation("description")
    if description is not None and (text := string_arg(description)) is not None:
        doc.description = text


def user_id(node: ast.Annotated | None) -> int | None:
    """The value of an ``@id(N)`` annotation, if any."""
    if node is None:
        return None
    anno = node.annotation("id")
    return None if anno is None else int_arg(anno)
