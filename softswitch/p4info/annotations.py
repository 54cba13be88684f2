"""P4 annotations as P4Info strings (``@my_anno(1, 2)``), printed the way p4c prints them.

p4c copies every annotation of an object into its P4Info message except ``@name`` and ``@id``
(represented by the preamble itself) and ``@brief``/``@description`` (which go to ``doc``);
structured annotations (``@x[1, "a"]``, ``@x[k = 1]``) all go to ``structured_annotations``.
Annotations p4c parses as expressions print their arguments separated by ", "; any other
annotation keeps its raw tokens, which p4c joins with single spaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from finsy.proto.p4.config.v1 import p4info_pb2, p4types_pb2

from softswitch.errors import SourceLocation
from softswitch.frontend import ast
from softswitch.frontend.lexer import INT, STRING, tokenize

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
    """The P4Info ``annotations`` strings of `node`, in source order (structured annotations
    go to ``structured_annotations`` instead)."""
    if node is None:
        return []
    skipped = _NEVER_COPIED | frozenset(skip)
    return [format_annotation(a) for a in node.annotations
            if a.name not in skipped and not a.structured]


def add_annotations(message: Any, node: ast.Annotated | None, skip: Iterable[str] = ()) -> None:
    """Fill `message`'s ``annotations`` and ``structured_annotations`` from `node`, as p4c's
    addAnnotations: every structured annotation is copied, whatever its name."""
    message.annotations.extend(serialize_annotations(node, skip))
    if node is None:
        return
    for anno in node.annotations:
        if anno.structured:
            _structured(anno, message.structured_annotations.add())


def _structured(anno: ast.Annotation, out: p4types_pb2.StructuredAnnotation) -> None:
    out.name = anno.name
    parts = _split_top_level(anno.body)
    if not parts:
        return  # @x[]: neither an expression list nor key-value pairs
    pairs = [part.split("=", 1) for part in parts]
    if all(len(p) == 2 and _KEY.fullmatch(p[0].strip()) for p in pairs) and "==" not in anno.body:
        for key, text in pairs:
            kv = out.kv_pair_list.kv_pairs.add()
            kv.key = key.strip()
            _literal(_literal_value(text), kv.value)
        return
    out.expression_list.SetInParent()
    if len(anno.args) == len(parts):
        values = [_arg_value(a) for a in anno.args]
    else:
        values = [_literal_value(part) for part in parts]
    for value in values:
        _literal(value, out.expression_list.expressions.add())


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _arg_value(arg: ast.Expression) -> object:
    if isinstance(arg, ast.StringLiteral):
        return arg.text
    if isinstance(arg, ast.BoolLiteral):
        return arg.bool_value
    if isinstance(arg, ast.IntLiteral):
        return arg.number
    return arg.value


def _literal_value(text: str) -> object:
    """A literal written in an annotation body: a string, true/false or an integer."""
    tokens = tokenize(text.strip(), lambda line, col: SourceLocation("<annotation>", line, col))
    if len(tokens) == 2 and tokens[0].kind == STRING:
        return tokens[0].value
    words = [t.text for t in tokens[:-1]]
    if words in (["true"], ["false"]):
        return words == ["true"]
    sign = -1 if words[:1] == ["-"] else 1
    ints = [t for t in tokens if t.kind == INT]
    if len(ints) == 1 and len(words) == (2 if sign < 0 else 1):
        return sign * int(ints[0].value)
    return text.strip()


def _literal(value: object, out: p4types_pb2.Expression) -> None:
    if isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        out.int64_value = value
    else:
        out.string_value = str(value)


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
