"""Statement rules (a mixin of the Checker in typecheck.py): assignments, calls, blocks, if,
switch, loops, return and exit, and local declarations in blocks.

Direct invocation of a parser or control type (``C.apply(...)``, P4_16 §15.1) is desugared here
as p4c's InstantiateDirectCalls does: an instance ``@name("C") C() C_inst;`` is appended to the
enclosing block's locals and the call applies it, so its tables are named ``<block>.C.t``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from softswitch.errors import P4TypeError
from softswitch.frontend import ast, loopcheck
from softswitch.frontend.scopes import Scope
from softswitch.frontend.typeops import is_key_type
from softswitch.frontend.types import (
    ActionEnumType,
    BitType,
    BoolType,
    HeaderStackType,
    IntType,
    ListType,
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
        for i, s in enumerate(b.statements):  # one failed statement does not stop the others
            self._position = (b.statements, i)  # what precedes a loop (see _stmt_ForStatement)
            self.recover(s, lambda s=s: self.statement(s, inner), inner)

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
        self._follow_index_write(s)

    def _follow_index_write(self: Checker, s: ast.AssignmentStatement) -> None:
        """In an unrolled copy of a loop body, an assignment to the index gives the casts
        after it the assigned value (p4c folds `(int)i` only after unrolling, by constant
        propagation through the copy): `i = i + 3; h[(int)i]` reads the new value. A value
        that is not computed from the index and constants makes later casts unknown."""
        values = getattr(self, "loop_int_values", {})
        lhs = s.lhs
        if not isinstance(lhs, ast.PathExpression) or id(lhs.decl) not in values:
            return
        changed = dict(values)
        try:
            changed[id(lhs.decl)] = loopcheck.value_after(s.rhs, lhs.decl, values[id(lhs.decl)])
        except loopcheck.CannotUnroll:
            del changed[id(lhs.decl)]
        self.loop_int_values = changed

    def _stmt_MethodCallStatement(self: Checker, s: ast.MethodCallStatement, scope: Scope) -> None:
        if not isinstance(s.call, ast.MethodCall):
            raise P4TypeError("expected a method call", s.loc)
        self._direct_invocation(s.call, scope)
        self.expr(s.call, scope)

    def _direct_invocation(self: Checker, call: ast.MethodCall, scope: Scope) -> None:
        """``T.apply(args)`` with T a parser or control type: instantiate T in the enclosing
        block (p4c's InstantiateDirectCalls) and apply that instance."""
        callee = call.callee
        if not (
            isinstance(callee, ast.Member)
            and callee.member == "apply"
            and isinstance(callee.expr, ast.PathExpression)
        ):
            return
        path = callee.expr
        found = (scope.root if path.is_global else scope).lookup(path.name)
        if not isinstance(found, ast.ParserDecl | ast.ControlDecl):
            return
        owner = scope.enclosing_owner((ast.ParserDecl, ast.ControlDecl))
        if owner is None or scope.enclosing_owner((ast.ActionDecl, ast.FunctionDecl)):
            raise P4TypeError(
                f"'{path.name}.apply' can only be invoked in a parser state or a control's "
                "apply block",
                call.loc,
            )
        home = scope  # the scope of the block's own parameters and locals
        walk: Scope | None = scope
        while walk is not None:
            if walk.owner is owner:
                home = walk
            walk = walk.parent
        cp_name = ("." if path.is_global else "") + path.name
        for local in owner.locals:
            if (
                isinstance(local, ast.InstanceDecl)
                and local.control_plane_name() == cp_name
                and _names_objects(found)
            ):
                # both instances are named `cp_name`: what they hold would share names (p4c's
                # DuplicateHierarchicalNameCheck)
                raise P4TypeError(
                    f"conflicting control plane name: '{path.name}' is invoked directly "
                    f"more than once in '{owner.name}'",
                    call.loc,
                )
        name = f"{path.name}_inst"
        n = 0
        while home.lookup_local(name) is not None:
            name = f"{path.name}_inst_{n}"
            n += 1
        loc = path.loc
        inst = ast.InstanceDecl(
            name=name,
            type_ref=ast.NamedTypeRef(name=cp_name, loc=loc),
            annotations=[
                ast.Annotation(
                    name="name",
                    args=[ast.StringLiteral(text=cp_name, loc=loc)],
                    body=f'"{cp_name}"',
                    loc=loc,
                )
            ],
            loc=loc,
        )
        self.instance(inst, home)
        owner.locals.append(inst)
        callee.expr = ast.PathExpression(name=name, loc=loc)

    def _stmt_BlockStatement(self: Checker, s: ast.BlockStatement, scope: Scope) -> None:
        self.block(s, scope)

    def _stmt_EmptyStatement(self, s: ast.EmptyStatement, scope: Scope) -> None:
        pass

    def _stmt_IfStatement(self: Checker, s: ast.IfStatement, scope: Scope) -> None:
        # also in parser states (P4_16 1.2.x; p4c splits the state there)
        t = self.expr(s.cond, scope)
        if not isinstance(t, BoolType):
            raise P4TypeError(f"if condition must be bool, got {t}", s.cond.loc)
        # an index write in a branch is one a break, exit or return always follows
        # (loopcheck refuses others), so the code after the if sees the value before it
        values = getattr(self, "loop_int_values", {})
        for branch in (s.then, s.otherwise):
            if branch is not None:
                self.statement(branch, Scope(scope))
                self.loop_int_values = values

    def _stmt_ForStatement(self: Checker, s: ast.ForStatement, scope: Scope) -> None:
        self._tofino_loop(s)
        statements, i = self._position
        preceding = statements[:i] if i < len(statements) and statements[i] is s else ()
        inner = Scope(scope, owner=s)  # the init declarations are the loop's own
        for item in s.init:
            self.statement(item, inner)
        t = self.expr(s.cond, inner)
        if not isinstance(t, BoolType):
            raise P4TypeError(f"for condition must be bool, got {t}", s.cond.loc)
        for u in s.updates:
            self.statement(u, inner)
        index = loopcheck.condition_index(s.cond)
        template = self._check_loop_body(
            s, index, lambda: loopcheck.initial_value(s, preceding), inner)
        index_expr, s.index_values = loopcheck.index_values(s, preceding)
        s.index = index_expr
        self._unroll_int_casts(s, index, template, s.index_values, inner)

    def _check_loop_body(
        self: Checker, s: ast.ForStatement | ast.ForInStatement, index: ast.Node | None,
        start: Callable[[], int | None], inner: Scope,
    ) -> ast.Statement | None:
        """Check the body. When it casts the index to int (and the index starts from a
        constant), return an unchecked copy of the body for `_unroll_int_casts`; the body
        itself is checked with the casts at the first value."""
        name = getattr(index, "name", None)
        first = start() if name is not None and loopcheck.casts_index_to_int(s.body, name) \
            else None
        if first is None:
            self.statement(s.body, Scope(inner))
            return None
        template = copy.deepcopy(s.body)
        self._with_index_value(index, first, lambda: self.statement(s.body, Scope(inner)))
        return template

    def _with_index_value(self: Checker, index: ast.Node | None, value: int,
                          check: Callable[[], None]) -> None:
        saved = getattr(self, "loop_int_values", {})
        self.loop_int_values = {**saved, id(index): value}
        try:
            check()
        finally:
            self.loop_int_values = saved

    def _unroll_int_casts(
        self: Checker, s: ast.ForStatement | ast.ForInStatement, index: ast.Node | None,
        template: ast.Statement | None, values: list[int], inner: Scope,
    ) -> None:
        """One checked copy of the body per index value, `(int)index` folded to that value."""
        if template is None:
            return
        s.unrolled = []
        for v in values:
            body = copy.deepcopy(template)
            self._with_index_value(index, v, lambda b=body: self.statement(b, Scope(inner)))
            s.unrolled.append(body)

    def _tofino_loop(self: Checker, s: ast.Statement) -> None:
        if self.arch.name == "tna":
            raise P4TypeError(
                "Tofino: loops are not supported (bf-p4c does not unroll them); write the "
                "iterations out",
                s.loc,
            )

    def _stmt_ForInStatement(self: Checker, s: ast.ForInStatement, scope: Scope) -> None:
        self._tofino_loop(s)
        inner = Scope(scope, owner=s)
        if s.var is not None:
            if s.var.init is not None:
                raise P4TypeError("the variable of a for-in loop takes no initializer", s.var.loc)
            self.variable(s.var, inner)
            t = s.var.type_ref.resolved
        else:
            assert s.ref is not None
            t = self.expr(s.ref, scope)
            self.require_lvalue(s.ref, "the variable of a for-in loop")
        assert t is not None
        c = s.collection
        if isinstance(c, ast.RangeExpression):
            if not isinstance(unwrap_newtype(t), BitType):
                raise P4TypeError(f"a range loop needs a bit<W> or int<W> variable, got {t}", c.loc)
            for side in (c.left, c.right):
                self.checked(side, scope, t, "range bound")
            c.type = t
        elif isinstance(c, ast.ListExpression):
            for el in c.elements:
                self.checked(el, scope, t, "list element")
            c.type = ListType(tuple(el.type for el in c.elements))  # type: ignore[misc]
        else:
            ct = self.expr(c, scope)
            if not isinstance(ct, HeaderStackType):
                raise P4TypeError(
                    f"a for-in loop iterates over a range, a list or a header stack, not {ct}",
                    c.loc,
                )
            if ct.element != t:
                raise P4TypeError(
                    f"loop variable of type {t} does not match the stack elements ({ct.element})",
                    c.loc,
                )
        index = s.var if s.var is not None else (s.ref.decl if s.ref is not None else None)
        lo, hi = (c.left.value, c.right.value) if isinstance(c, ast.RangeExpression) else (1, 0)
        if not isinstance(lo, int) or not isinstance(hi, int):
            lo, hi = 1, 0  # not unrolled: loopcheck refuses it
        template = self._check_loop_body(s, index, lambda: lo if lo <= hi else None, inner)
        loopcheck.check_for_in(s)
        if template is not None:
            self._unroll_int_casts(s, index, template, list(range(lo, hi + 1)), inner)

    def _stmt_BreakStatement(self, s: ast.BreakStatement, scope: Scope) -> None:
        if scope.enclosing_owner((ast.ForStatement, ast.ForInStatement)) is None:
            raise P4TypeError("'break' is only allowed inside a loop", s.loc)

    def _stmt_ContinueStatement(self, s: ast.ContinueStatement, scope: Scope) -> None:
        if scope.enclosing_owner((ast.ForStatement, ast.ForInStatement)) is None:
            raise P4TypeError("'continue' is only allowed inside a loop", s.loc)

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
        if scope.enclosing_owner((ast.ActionDecl,)) is not None:  # p4c's ValidateParsedProgram
            raise P4TypeError("switch statements not allowed in actions", s.loc)
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


def _names_objects(decl: ast.ParserDecl | ast.ControlDecl) -> bool:
    """Whether `decl` holds anything with a control-plane name (tables, actions, extern
    instances, value sets, also in its sub-blocks)."""
    for local in decl.locals:
        if isinstance(local, ast.TableDecl | ast.ActionDecl | ast.ValueSetDecl):
            return True
        if isinstance(local, ast.InstanceDecl):
            if not isinstance(local.type_decl, ast.ParserDecl | ast.ControlDecl):
                return True
            if _names_objects(local.type_decl):
                return True
    return False
