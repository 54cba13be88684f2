"""Lexical scopes for name resolution.

P4_16 names live in one namespace per scope (types and values together). Functions, extern
functions and extern methods may be overloaded by their number of parameters, so a name maps to a
list of declarations; everything else must be unique within its scope.
"""

from __future__ import annotations

from softswitch.errors import P4TypeError, SourceLocation
from softswitch.frontend import ast

_OVERLOADABLE = (ast.FunctionDecl, ast.ExternFunctionDecl, ast.MethodPrototype)


class ErroneousName(P4TypeError):
    """A use of a name whose declaration failed to check. The checker drops the statement or
    declaration using it without a report: the declaration's own error was reported, and a
    follow-on error for every use would only bury it."""

    def __init__(self, name: str) -> None:
        super().__init__(f"'{name}' was declared with errors")
        self.name = name


def _param_count(decl: ast.Node) -> int:
    return len(getattr(decl, "params", ()))


class Scope:
    """One scope; `parent` is None for the top level."""

    def __init__(self, parent: Scope | None = None, owner: ast.Node | None = None) -> None:
        self.parent = parent
        self.owner = owner  # the declaration whose body this scope is (None for blocks/top level)
        self._names: dict[str, list[ast.Node]] = {}
        self._erroneous: set[str] = set()

    def declare(self, name: str, decl: ast.Node, loc: SourceLocation | None = None) -> None:
        """Add `decl` under `name`; a second declaration of the name here is an error unless both
        are overloadable with different parameter counts."""
        existing = self._names.get(name)
        if existing:
            if isinstance(decl, _OVERLOADABLE) and all(
                isinstance(d, _OVERLOADABLE) and _param_count(d) != _param_count(decl)
                for d in existing
            ):
                existing.append(decl)
                return
            raise P4TypeError(f"duplicate declaration of '{name}'", loc or decl.loc)
        self._names[name] = [decl]

    def mark_erroneous(self, name: str, decl: ast.Node) -> None:
        """`decl`, declared here as `name`, failed to check: later lookups of the name raise
        ErroneousName (unless `name` is another, good declaration's, as after a duplicate)."""
        existing = self._names.get(name)
        if not existing or any(d is decl for d in existing):
            self._erroneous.add(name)

    def lookup_all(self, name: str) -> list[ast.Node]:
        """Every declaration of `name` in the innermost scope that declares it ([] if none)."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope._erroneous:
                raise ErroneousName(name)
            found = scope._names.get(name)
            if found:
                return found
            scope = scope.parent
        return []

    def lookup(self, name: str) -> ast.Node | None:
        found = self.lookup_all(name)
        return found[0] if found else None

    def lookup_local(self, name: str) -> ast.Node | None:
        if name in self._erroneous:
            raise ErroneousName(name)
        found = self._names.get(name)
        return found[0] if found else None

    @property
    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def enclosing_owner(self, kinds: tuple[type, ...]) -> ast.Node | None:
        """The nearest owner declaration of one of `kinds` (e.g. the action being checked)."""
        scope: Scope | None = self
        while scope is not None:
            if scope.owner is not None and isinstance(scope.owner, kinds):
                return scope.owner
            scope = scope.parent
        return None
