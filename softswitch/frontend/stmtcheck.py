"""Statement rules (a mixin of the Checker in typecheck.py): assignments, calls, blocks, if,
switch, return and exit, and local declarations in blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from softswitch.errors import P4TypeError, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.scopes import Scope
from softswitch.frontend.typeops import is_key_type
from softswitch.frontend.types import (
    ActionEnumType,
    BoolType,
    IntType,
    Type,
    VoidType,
    unwrap_newtype,
)

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker


class StmtMixin:
    """Statement rules; `self` is the Checker."""

    def statement(self: Checker, s: ast.Statement | ast.Declaration, scope: Scope) -> None:
        """Check one statement or local declaration (declarations enter `scope`)."""
        if isinstance(s, ast.Declaration):
            self.local_declaration(s, scope)
            return
        method = getattr(self, "_stmt_" + type(s).__name__, None)
        if method is None:
            raise P4TypeError(f"unexpected {type(s).__name__}", s.loc)
        method(s, scope)

    def block(self: Checker, b: ast.BlockStatement, scope: Scope) -> None:
        inner = Scope(scope)
        for s in b.statements:
            self.statement(s, inner)

    def local_declaration(self: Checker, d: ast.Declaration, scope: Scope) -> None:
        if isinstance(d, ast.VariableDecl):
            self.variable(d, scope)
        elif isinstance(d, ast.ConstantDecl):
            self.constant(d, scope)
        else:
            raise P4TypeError(f"'{d.name}' cannot be declared inside a block", d.loc)

    def variable(self: Checker, d: ast.VariableDecl, scope: Scope) -> None:
        t = self.resolve_type(d.type_ref, scope)
        if isinstance(t, VoidType | IntType):
            raise P4TypeError(f"variable '{d.name}' cannot have type {t}", d.loc)
        if d.init is not None:
            self.checked(d.init, scope, t, f"initializer of '{d.name}'")
        scope.declare(d.name, d, d.loc)

    def constant(self: Checker, d: ast.ConstantDecl, scope: Scope) -> None:
        t = self.resolve_type(d.type_ref, scope)
        self.checked(d.init, scope, t, f"initializer of constant '{d.name}'")
        if d.init.value is None:
            raise P4TypeError(
                f"initializer of constant '{d.name}' is not a compile-time constant", d.init.loc
            )
        scope.declare(d.name, d, d.loc)

    # -- statements ---------------------------------------------------------------------------

    def _stmt_AssignmentStatement(self: Checker, s: ast.AssignmentStatement, scope: Scope) -> None:
        lt = self.expr(s.lhs, scope)
        self.require_lvalue(s.lhs, "the left side of an assignment")
        self.checked(s.rhs, scope, lt, "assignment")

    def _stmt_MethodCallStatement(self: Checker, s: ast.MethodCallStatement, scope: Scope) -> None:
        if not isinstance(s.call, ast.MethodCall):
            raise P4TypeError("expected a method call", s.loc)
        self.expr(s.call, scope)

    def _stmt_BlockStatement(self: Checker, s: ast.BlockStatement, scope: Scope) -> None:
        self.block(s, scope)

    def _stmt_EmptyStatement(self, s: ast.EmptyStatement, scope: Scope) -> None:
        pass

    def _stmt_IfStatement(self: Checker, s: ast.IfStatement, scope: Scope) -> None:
        if scope.enclosing_owner((ast.ParserDecl,)) is not None:
            raise UnsupportedError("'if' statements in parser states (BMv2 has none)", s.loc)
        t = self.expr(s.cond, scope)
        if not isinstance(t, BoolType):
            raise P4TypeError(f"if condition must be bool, got {t}", s.cond.loc)
        for branch in (s.then, s.otherwise):
            if branch is not None:
                self.statement(branch, Scope(scope))

    def _stmt_ExitStatement(self: Checker, s: ast.ExitStatement, scope: Scope) -> None:
        if scope.enclosing_owner((ast.ParserDecl, ast.FunctionDecl)) is not None:
            raise P4TypeError("'exit' is not allowed in parsers and functions", s.loc)

    def _stmt_ReturnStatement(self: Checker, s: ast.ReturnStatement, scope: Scope) -> None:
        owner = scope.enclosing_owner(
            (ast.FunctionDecl, ast.ActionDecl, ast.ControlDecl, ast.ParserDecl)
        )
        if isinstance(owner, ast.ParserDecl):
            raise P4TypeError("'return' is not allowed in parsers", s.loc)
        if isinstance(owner, ast.FunctionDecl):
            rt = owner.return_type.resolved
            assert rt is not None
            if isinstance(rt, VoidType):
                if s.value is not None:
                    raise P4TypeError(f"function '{owner.name}' returns void", s.value.loc)
            else:
                if s.value is None:
                    raise P4TypeError(f"function '{owner.name}' must return a {rt}", s.loc)
                self.checked(s.value, scope, rt, f"return value of '{owner.name}'")
            return
        if s.value is not None:
            raise P4TypeError("only functions can return a value", s.value.loc)

    def _stmt_SwitchStatement(self: Checker, s: ast.SwitchStatement, scope: Scope) -> None:
        t = self.expr(s.expr, scope)
        seen: set[Any] = set()
        for i, case in enumerate(s.cases):
            if case.body is None:
                raise P4TypeError("switch label without a body", case.loc)
            for label in case.labels:
                if isinstance(label, ast.DefaultExpression):
                    if i != len(s.cases) - 1 or label is not case.labels[-1]:
                        raise P4TypeError("'default' must be the last switch label", label.loc)
                    label.type = t
                    continue
                key = self._switch_label(label, t, s, scope)
                if key in seen:
                    raise P4TypeError("duplicate switch label", label.loc)
                seen.add(key)
            self.block(case.body, scope)

    def _switch_label(
        self: Checker, label: ast.Expression, t: Type, s: ast.SwitchStatement, scope: Scope
    ) -> Any:
        if isinstance(t, ActionEnumType):
            table = self._switched_table(s.expr)
            if not isinstance(label, ast.PathExpression):
                raise P4TypeError("switch labels on action_run must be action names", label.loc)
            names = {a.name: a for a in table.actions}
            if label.name not in names:
                raise P4TypeError(
                    f"'{label.name}' is not an action of table '{table.name}'", label.loc
                )
            label.decl = names[label.name].decl
            label.type = t
            return label.name
        if not is_key_type(t) or isinstance(unwrap_newtype(t), BoolType):
            raise P4TypeError(f"cannot switch on a value of type {t}", s.expr.loc)
        self.checked(label, scope, t, "switch label")
        if label.value is None:
            raise P4TypeError("switch label must be a compile-time constant", label.loc)
        v = label.value
        return (v.enum, v.member, v.number) if isinstance(v, ast.EnumValue) else v

    def _switched_table(self, e: ast.Expression) -> ast.TableDecl:
        if (
            isinstance(e, ast.Member)
            and isinstance(e.expr, ast.MethodCall)
            and e.expr.call is not None
        ):
            decl = e.expr.call.decl
            if isinstance(decl, ast.TableDecl):
                return decl
        raise P4TypeError("switch on action_run needs a direct 't.apply().action_run'", e.loc)
