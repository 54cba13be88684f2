"""Instances with an initializer block: the implementations of an extern's abstract methods (a
mixin of the Checker in typecheck.py).

``RegisterAction<T, I, U>(reg) ra = { void apply(inout T value, out U rv) { ... } };`` — each
method of the block implements the abstract method of that name (spec 11.3.1), with the
instance's type arguments put in for the extern's type parameters; an @optional trailing
parameter of the abstract method may be left out. The bodies are checked like functions
declared where the instance is: they read the enclosing block's parameters, the locals declared
before the instance and constants. As bf-p4c compiles them into a stateful ALU, they may write
only their own parameters and locals.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from softswitch.errors import P4TypeError, SourceLocation
from softswitch.frontend import ast
from softswitch.frontend.scopes import Scope
from softswitch.frontend.typeops import substitute
from softswitch.frontend.types import ExternType, Type

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker


def abstract_methods(decl: ast.ExternDecl) -> list[ast.MethodPrototype]:
    return [m for m in decl.methods if m.is_abstract]


def _declared_inside(node: object) -> Iterator[ast.VariableDecl]:
    """The variables declared anywhere inside `node` (a method implementation's body)."""
    if isinstance(node, ast.VariableDecl):
        yield node
    if isinstance(node, ast.Node):
        for value in vars(node).values():
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.Statement | ast.VariableDecl):
                    yield from _declared_inside(child)


class InitializerMixin:
    """Checks of initializer blocks; `self` is the Checker."""

    # while an implementation is checked: the declarations it may write, and its description
    _writable: tuple[set[int], str] | None = None

    def require_initializer(
        self: Checker, decl: ast.ExternDecl, name: str, loc: SourceLocation
    ) -> None:
        """An extern with abstract methods instantiated without an initializer block (in an
        argument position, or without ``= { ... }``)."""
        missing = abstract_methods(decl)
        if missing:
            raise P4TypeError(
                f"an instance of '{name}' must implement its abstract method "
                f"'{missing[0].name}' in an initializer block (= {{ ... }})",
                loc,
            )

    def check_initializer(self: Checker, d: ast.InstanceDecl, t: Type, scope: Scope) -> None:
        """Bind and check the method implementations of instance `d` (of extern type `t`)."""
        decl = getattr(t, "decl", None)
        if not isinstance(t, ExternType) or not isinstance(decl, ast.ExternDecl):
            if d.initializer:
                raise P4TypeError(
                    f"'{d.name}': only an instance of an extern with abstract methods has an "
                    "initializer block",
                    d.initializer[0].loc,
                )
            return
        if not d.initializer:
            self.require_initializer(decl, t.name, d.loc)
            return
        bindings = {tp.name: arg for tp, arg in zip(decl.type_params, t.type_args)}
        abstract = {m.name: m for m in abstract_methods(decl)}
        implements: dict[str, ast.MethodPrototype] = {}
        for f in d.initializer:
            proto = abstract.get(f.name)
            if proto is None:
                raise P4TypeError(f"extern '{t.name}' has no abstract method '{f.name}'", f.loc)
            if f.name in implements:
                raise P4TypeError(f"'{d.name}' implements '{f.name}' twice", f.loc)
            implements[f.name] = proto
            self._check_signature(f, proto, bindings, scope, f"'{d.name}.{f.name}'")
            allowed = {id(p) for p in f.params} | {id(v) for v in _declared_inside(f.body)}
            with self._writes_limited(allowed, f"'{d.name}.{f.name}'"):
                self._function_body(f, scope)
        for name in abstract:
            if name not in implements:
                raise P4TypeError(
                    f"'{d.name}' does not implement the abstract method '{name}' of '{t.name}'",
                    d.loc,
                )
        d.implements = implements

    def _check_signature(
        self: Checker,
        f: ast.FunctionDecl,
        proto: ast.MethodPrototype,
        bindings: dict[str, Type],
        scope: Scope,
        what: str,
    ) -> None:
        if f.type_params or proto.type_params:
            raise P4TypeError(f"{what}: generic abstract methods are not supported", f.loc)
        assert proto.return_type is not None and proto.return_type.resolved is not None
        want = substitute(proto.return_type.resolved, bindings)
        have = self.resolve_type(f.return_type, scope)
        if have != want:
            raise P4TypeError(f"{what} must return {want}, not {have}", f.return_type.loc)
        if len(f.params) > len(proto.params):
            raise P4TypeError(
                f"{what} has {len(f.params)} parameters, the abstract method {len(proto.params)}",
                f.loc,
            )
        for mine, theirs in zip(f.params, proto.params):
            if mine.direction != theirs.direction:
                need = f"direction '{theirs.direction}'" if theirs.direction else "no direction"
                raise P4TypeError(f"{what}: parameter '{mine.name}' must have {need}", mine.loc)
            assert theirs.type_ref.resolved is not None
            want = substitute(theirs.type_ref.resolved, bindings)
            have = self.resolve_type(mine.type_ref, scope)
            if have != want:
                raise P4TypeError(
                    f"{what}: parameter '{mine.name}' has type {have}, expected {want}", mine.loc
                )
        for theirs in proto.params[len(f.params) :]:
            if not theirs.annotation("optional"):
                raise P4TypeError(f"{what} is missing parameter '{theirs.name}'", f.loc)

    @contextmanager
    def _writes_limited(self: Checker, allowed: set[int], what: str) -> Iterator[None]:
        saved = self._writable
        self._writable = (allowed, what)
        try:
            yield
        finally:
            self._writable = saved

    def check_initializer_write(self: Checker, root: ast.PathExpression) -> None:
        """Inside a method implementation, refuse a write to anything but its own parameters
        and locals (`root` names the variable or parameter an l-value is part of)."""
        if self._writable is None:
            return
        allowed, what = self._writable
        if id(root.decl) not in allowed:
            raise P4TypeError(
                f"{what} may write only its own parameters and local variables, not "
                f"'{root.name}' (bf-p4c compiles it into a stateful ALU)",
                root.loc,
            )
