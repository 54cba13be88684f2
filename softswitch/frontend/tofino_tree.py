"""Walks the Tofino rules share: the syntactic nodes under an AST node, and the block
instances under the main package's blocks (each once)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from softswitch.frontend import ast
from softswitch.ir.checked import BlockInstance

# fields pointing elsewhere in the tree (or to annotations), not to syntactic children
NOT_CHILDREN = frozenset(
    {
        "loc",
        "decl",
        "type",
        "value",
        "resolved",
        "type_decl",
        "state_decl",
        "next_state",
        "ctor_args",
        "ctor_params",
        "bound_args",
        "annotations",
    }
)


def syntax_nodes(
    node: ast.Node, skip: frozenset[str] = NOT_CHILDREN, visited: set[int] | None = None
) -> Iterator[ast.Node]:
    """`node` and its syntactic descendants (method implementations of instances too), leaving
    out the fields in `skip`; with `visited`, nodes seen before (there or in an earlier walk
    sharing it) are not yielded again."""
    if visited is not None:
        if id(node) in visited:
            return
        visited.add(id(node))
    yield node
    for name, value in vars(node).items():
        if name in skip:
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.Node):
                yield from syntax_nodes(child, skip, visited)


def blocks_under(roots: Iterable[BlockInstance]) -> Iterator[BlockInstance]:
    """`roots` and every block instance below them, each once (specialised copies of generic
    blocks are instances of their own)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        block = stack.pop()
        if id(block) not in seen:
            seen.add(id(block))
            yield block
            stack.extend(block.children.values())
