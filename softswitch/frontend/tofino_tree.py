"""Walks the Tofino rules share: the syntactic nodes under an AST node, the block instances
under the main package's blocks (each once), what a table apply may run, and which extern instance a name stands for."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from softswitch.frontend import ast
from softswitch.frontend.types import ExternType
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


def table_actions(decl: ast.TableDecl) -> list[ast.ActionDecl]:
    """The actions one apply of `decl` may run (its list and its default), each once."""
    found: dict[int, ast.ActionDecl] = {}
    refs = list(decl.actions) + ([decl.default_action] if decl.default_action else [])
    for ref in refs:
        if isinstance(ref.decl, ast.ActionDecl):
            found.setdefault(id(ref.decl), ref.decl)
    return list(found.values())


def action_run_table(e: ast.Expression) -> tuple[ast.MethodCall, ast.TableDecl] | None:
    """(the apply call, its table) when `e` is `t.apply().action_run`."""
    if (
        isinstance(e, ast.Member)
        and e.member == "action_run"
        and isinstance(e.expr, ast.MethodCall)
        and e.expr.call is not None
        and e.expr.call.kind == "table_apply"
        and isinstance(e.expr.call.decl, ast.TableDecl)
    ):
        return e.expr, e.expr.call.decl
    return None


def extern_instance(
    e: ast.Expression, block: BlockInstance, parents: list[BlockInstance]
) -> tuple[ast.InstanceDecl, BlockInstance, list[BlockInstance]] | None:
    """The extern instance `e` names in `block` (whose enclosing instances are `parents`,
    innermost last), following constructor arguments out to where it is declared: the
    instance, and the block and parents where that name was found; None for anything else."""
    decl = e.decl if isinstance(e, ast.PathExpression) else None
    parents = list(parents)
    while isinstance(decl, ast.Parameter):  # an extern passed as a constructor argument
        arg = block.ctor_args.get(decl.name)
        if not parents or not isinstance(arg, ast.PathExpression):
            return None
        block, parents = parents[-1], parents[:-1]
        decl = arg.decl
    if not isinstance(decl, ast.InstanceDecl) or not isinstance(decl.resolved, ExternType):
        return None
    return decl, block, parents
