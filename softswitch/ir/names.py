"""Control-plane names of tables, actions, extern instances and value sets, as p4c writes them.

p4c names an object by the path of the block instance that holds it plus the object's own name:
``MyIngress.ipv4_lpm`` for a table of the ingress control, ``MyIngress.sub.t`` for a table of a
control instantiated as ``sub`` inside it, plain ``NoAction`` for a top-level declaration.
``@name("x")`` replaces the object's own name; ``@name(".x")`` makes the whole name ``x``.

Instances of parsers and controls are path elements by the same rule (`block_path`): a directly
invoked ``Sub.apply(...)`` gets an instance annotated ``@name("Sub")`` (frontend/stmtcheck.py,
after p4c's InstantiateDirectCalls), so its tables are ``MyIngress.Sub.t``; a parser or control
passed as constructor argument is named after the parameter (frontend/blocks.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from softswitch.frontend import ast
from softswitch.frontend.types import ExternType
from softswitch.ir.checked import BlockInstance, CheckedProgram


def qualified_name(decl: ast.Declaration, block_path: str | None) -> str:
    """The p4c fully qualified name of `decl` declared inside the block at `block_path`
    (None for a top-level declaration)."""
    annotated = decl.control_plane_name()
    if annotated is not None and annotated.startswith("."):
        return annotated[1:]
    own = annotated if annotated is not None else decl.name
    return f"{block_path}.{own}" if block_path else own


def action_name(decl: ast.ActionDecl, block: BlockInstance | None, top_path: str | None) -> str:
    """The control-plane name of action `decl` as used in `block` (None: outside any block),
    inside the top-level block at `top_path`.

    p4c copies a top-level action into each top-level control using it (LocalizeAllActions),
    keeping its @name: without one (or with an absolute ``@name(".x")``) it stays top-level
    named, but a relative ``@name("x")`` then becomes ``<top-level control>.x``."""
    if block is not None and any(local is decl for local in block.decl.locals):
        return qualified_name(decl, block.path)
    annotated = decl.control_plane_name()
    if annotated is not None and not annotated.startswith(".") and top_path:
        return f"{top_path}.{annotated}"
    return qualified_name(decl, None)


def top_block_paths(checked: CheckedProgram) -> dict[int, str]:
    """id(block) → the path of the main-package block it is (or is nested in)."""
    found: dict[int, str] = {}

    def visit(block: BlockInstance, top: str) -> None:
        found[id(block)] = top
        for child in block.children.values():
            visit(child, top)

    for block in checked.blocks.values():
        visit(block, block.path)
    return found


def block_path(parent_path: str, instance: ast.InstanceDecl) -> str:
    """Path of a parser/control instantiated as `instance` inside the block at `parent_path`."""
    return qualified_name(instance, parent_path)


@dataclass(frozen=True, eq=False)
class NamedObject:
    """A control-plane visible object: its p4c name, its declaration, the block holding it."""

    name: str
    decl: ast.Declaration
    block: BlockInstance | None


@dataclass
class ControlPlaneObjects:
    """Everything a controller can name, in declaration order (blocks in package order).

    actions holds each action once per name: a top-level action used by several controls
    appears once; an action of a control instantiated twice appears twice (two names).
    """

    tables: list[NamedObject] = field(default_factory=list)
    actions: list[NamedObject] = field(default_factory=list)
    externs: list[NamedObject] = field(default_factory=list)
    value_sets: list[NamedObject] = field(default_factory=list)

    def by_decl(self, objects: list[NamedObject], decl: ast.Declaration,
                block: BlockInstance | None) -> NamedObject:
        for obj in objects:
            if obj.decl is decl and (obj.block is block or obj.block is None):
                return obj
        raise KeyError(decl.name)


def _is_extern_instance(decl: ast.Declaration) -> bool:
    return isinstance(decl, ast.InstanceDecl) and isinstance(decl.resolved, ExternType)


def walk_blocks(checked: CheckedProgram) -> Iterator[BlockInstance]:
    """Every block instance, depth first, the main package's blocks in package order; an
    instance passed to several blocks (a constructor argument naming it) comes once."""
    seen: set[int] = set()

    def visit(block: BlockInstance) -> Iterator[BlockInstance]:
        if id(block) in seen:
            return
        seen.add(id(block))
        yield block
        for child in block.children.values():
            yield from visit(child)

    for block in checked.blocks.values():
        yield from visit(block)


def control_plane_objects(checked: CheckedProgram) -> ControlPlaneObjects:
    """Collect the named objects of a checked program."""
    objects = ControlPlaneObjects()
    seen_actions: set[str] = set()

    def add_action(decl: ast.ActionDecl, block: BlockInstance | None, path: str | None) -> None:
        name = qualified_name(decl, path)
        if name not in seen_actions:
            seen_actions.add(name)
            objects.actions.append(NamedObject(name, decl, block))

    for decl in checked.program.declarations:
        if isinstance(decl, ast.ActionDecl):
            add_action(decl, None, None)
        elif _is_extern_instance(decl) and decl is not checked.main:
            objects.externs.append(NamedObject(qualified_name(decl, None), decl, None))

    for block in walk_blocks(checked):
        for local in block.decl.locals:
            if isinstance(local, ast.TableDecl):
                objects.tables.append(NamedObject(qualified_name(local, block.path), local, block))
            elif isinstance(local, ast.ActionDecl):
                add_action(local, block, block.path)
            elif _is_extern_instance(local):
                objects.externs.append(NamedObject(qualified_name(local, block.path), local, block))
            elif isinstance(local, ast.ValueSetDecl):
                objects.value_sets.append(
                    NamedObject(qualified_name(local, block.path), local, block)
                )
    return objects
