"""Validated reading of YAML files whose errors name FILE:LINE:COL and the field.

The text is composed to PyYAML nodes (not plain Python values), so every value keeps the line
it came from. `NodeReader` holds the typed primitives (mappings with allowed keys, lists,
integers, numbers, strings, names, SWITCH:PORT references); a file format subclasses it with
its sections (topology/yaml_io.py, emulation/scenario.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from controller.topology.errors import YamlFileError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
STR = "tag:yaml.org,2002:str"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")


def read_text(path: str | Path, error: type[YamlFileError], what: str) -> str:
    """The file's text; `error` says why it cannot be read."""
    source = str(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror}", source) from None
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc.reason})", source) from None


def compose(text: str, source: str, error: type[YamlFileError], what: str) -> Node:
    """The root node of `text`; `error` at the line of a YAML syntax error or if empty."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        raise error(f"bad YAML: {problem}", source, line, col) from None
    if root is None:
        raise error(f"the file is empty; expected a {what} mapping", source, 1, 1)
    return root


def kind(node: Node) -> str:
    """What a node holds, for messages: 'a mapping', 'an integer (\\'x\\')'..."""
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    tag = node.tag.rsplit(":", 1)[-1]
    return {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean",
            "null": "nothing"}.get(tag, f"a {tag}") + f" ('{node.value}')"


class NodeReader:
    """Typed access to composed nodes; every failure is `error` at the node's position."""

    error: type[YamlFileError] = YamlFileError

    def __init__(self, source: str) -> None:
        self.source = source
        self.constructor = SafeConstructor()

    def fail(self, node: Node, field: str, message: str) -> YamlFileError:
        mark = node.start_mark
        return self.error(message, self.source, mark.line + 1, mark.column + 1, field)

    def mapping(self, node: Node, field: str, allowed: tuple[str, ...],
                required: tuple[str, ...] = ()) -> dict[str, tuple[Node, Node]]:
        if not isinstance(node, MappingNode):
            raise self.fail(node, field, f"expected a mapping, found {kind(node)}")
        out: dict[str, tuple[Node, Node]] = {}
        for key, value in node.value:
            if not isinstance(key, ScalarNode) or key.tag != STR:
                raise self.fail(key, field, "keys must be plain names")
            name = key.value
            where = f"{field}.{name}" if field else name
            if name not in allowed:
                raise self.fail(key, where,
                                f"unknown key '{name}' (expected one of: {', '.join(allowed)})")
            if name in out:
                first = out[name][0].start_mark.line + 1
                raise self.fail(key, where, f"duplicate key '{name}' (first given on line {first})")
            out[name] = (key, value)
        for name in required:
            if name not in out:
                raise self.fail(node, field or "<top>", f"missing required key '{name}'")
        return out

    def seq(self, node: Node, field: str) -> list[Node]:
        if not isinstance(node, SequenceNode):
            raise self.fail(node, field, f"expected a list, found {kind(node)}")
        return list(node.value)

    def int_(self, node: Node, field: str, lo: int = 0, hi: int | None = None) -> int:
        if not isinstance(node, ScalarNode) or node.tag != INT:
            raise self.fail(node, field, f"expected an integer, found {kind(node)}")
        value = int(self.constructor.construct_yaml_int(node))
        if value < lo or (hi is not None and value > hi):
            span = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
            raise self.fail(node, field, f"{value} is out of range ({span})")
        return value

    def number(self, node: Node, field: str, lo: float = 0.0, hi: float | None = None, *,
               above: bool = False) -> float:
        """An integer or a decimal number in [lo, hi] (`above`: strictly above lo)."""
        if not isinstance(node, ScalarNode) or node.tag not in (INT, FLOAT):
            raise self.fail(node, field, f"expected a number, found {kind(node)}")
        value = float(self.constructor.construct_yaml_int(node) if node.tag == INT
                      else self.constructor.construct_yaml_float(node))
        if value != value or (value <= lo if above else value < lo) or (
                hi is not None and value > hi):
            low = f"above {lo:g}" if above else f"at least {lo:g}"
            span = f"{low}, at most {hi:g}" if hi is not None else low
            raise self.fail(node, field, f"{value:g} is out of range ({span})")
        return value

    def bool_(self, node: Node, field: str) -> bool:
        if not isinstance(node, ScalarNode) or node.tag != BOOL:
            raise self.fail(node, field, f"expected true or false, found {kind(node)}")
        return bool(self.constructor.construct_yaml_bool(node))

    def str_(self, node: Node, field: str) -> str:
        if not isinstance(node, ScalarNode) or node.tag != STR:
            raise self.fail(node, field, f"expected a string, found {kind(node)}")
        return str(node.value)

    def name(self, node: Node, field: str) -> str:
        text = self.str_(node, field)
        if not NAME.match(text):
            raise self.fail(node, field, f"'{text}' is not a valid name (letters, digits, "
                                         "'_', '.', '-'; starting with a letter or '_')")
        return text

    def choice(self, node: Node, field: str, choices: tuple[str, ...]) -> str:
        text = self.str_(node, field)
        if text not in choices:
            raise self.fail(node, field, f"'{text}' is not one of: {', '.join(choices)}")
        return text

    def port_ref(self, node: Node, field: str) -> tuple[str, int]:
        """`switch:port`."""
        text = self.str_(node, field)
        name, sep, port = text.rpartition(":")
        if not sep or not NAME.match(name) or not port.isdigit():
            raise self.fail(node, field, f"'{text}' is not SWITCH:PORT")
        return name, int(port)
