"""Conflicting control-plane names of actions, refused as p4c's frontend pass
DuplicateActionControlPlaneNameCheck refuses them (before LocalizeAllActions copies top-level
actions into controls): each action's hierarchical name is its ``@name`` when that starts with
a dot, else ``.<Control>.<name>`` for an action of a control (``.<name>`` at top level, where an
action without ``@name`` is ``.<its name>``); two actions with one name is an error at the
second."""

from __future__ import annotations

from collections.abc import Iterator

from softswitch.errors import P4TypeError
from softswitch.frontend import ast


def action_name_errors(program: ast.Program) -> list[P4TypeError]:
    """One error per action whose hierarchical name an earlier action already has."""
    seen: dict[str, ast.ActionDecl] = {}
    errors: list[P4TypeError] = []
    for name, action in _named_actions(program):
        first = seen.setdefault(name, action)
        if first is not action:
            errors.append(
                P4TypeError(
                    f"action '{action.name}': conflicting control plane name: action "
                    f"'{first.name}' at {first.loc} (both are '{name}')",
                    action.loc,
                )
            )
    return errors


def _named_actions(program: ast.Program) -> Iterator[tuple[str, ast.ActionDecl]]:
    for d in program.declarations:
        if isinstance(d, ast.ActionDecl):
            yield _hierarchical(d, ""), d
        elif isinstance(d, ast.ControlDecl):
            for local in d.locals:
                if isinstance(local, ast.ActionDecl):
                    yield _hierarchical(local, d.name), local


def _hierarchical(action: ast.ActionDecl, control: str) -> str:
    name = action.string_annotation("name") or action.name
    if name.startswith("."):
        return name
    return f".{control}.{name}" if control else f".{name}"
