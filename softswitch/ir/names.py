"""Control-plane names of tables, actions, extern instances and value sets, as p4c writes them.

p4c names an object by the path of the block instance that holds it plus the object's own name:
``MyIngress.ipv4_lpm`` for a table of the ingress control, ``MyIngress.sub.t`` for a table of a
control instantiated as ``sub`` inside it, plain ``NoAction`` for a top-level declaration.
``@name("x")`` replaces the object's own name; ``@name(".x")`` makes the whole name ``x``.
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
    """Every block instance, depth first, the main package's blocks in package order."""

    def visit(block: BlockInstance) -> Iterator[BlockInstance]:
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
