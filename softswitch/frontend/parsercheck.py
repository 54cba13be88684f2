"""Parser rules (a mixin of the Checker in typecheck.py): states, transitions and select keysets.

Keysets are shared with table entries: `keyset_element` checks one component (value, mask,
range, default, value set) against the selector's type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.frontend.scopes import Scope
from softswitch.frontend.typeops import is_key_type
from softswitch.frontend.types import (
    BitType,
    EnumType,
    ObjectType,
    StructType,
    TupleType,
    Type,
    unwrap_newtype,
)

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker

_IMPLICIT_STATES = ("accept", "reject")


class ParserMixin:
    """Parser rules; `self` is the Checker."""

    def parser(self: Checker, p: ast.ParserDecl, outer: Scope) -> None:
        if self.generic_block(p, outer):
            return
        scope = Scope(outer, owner=p)
        self.declare_params(p.params, scope, f"parser '{p.name}'")
        self.declare_params(p.ctor_params, scope, f"parser '{p.name}'", ctor=True)
        for d in p.locals:
            self.recover(d, lambda d=d: self.parser_local(d, scope), scope)
        states_scope = Scope(scope, owner=p)
        for st in p.states:
            if st.name in _IMPLICIT_STATES:
                raise P4TypeError(f"state '{st.name}' is implicit and cannot be declared", st.loc)
            states_scope.declare(st.name, st, st.loc)
        if states_scope.lookup_local("start") is None:
            raise P4TypeError(f"parser '{p.name}' has no 'start' state", p.loc)
        for st in p.states:
            self.recover(st, lambda st=st: self.state(st, states_scope))
        if not _ends(p):
            raise P4TypeError(f"{p.name}: Parser never reaches accept or reject state", p.loc)

    def parser_local(self: Checker, d: ast.Declaration, scope: Scope) -> None:
        if isinstance(d, ast.ValueSetDecl):
            t = self.resolve_type(d.element_type, scope)
            if not (is_key_type(t) or isinstance(t, StructType)):
                raise P4TypeError(f"value_set element type {t} is not allowed", d.loc)
            size = self.const_int(self._typed(d.size, scope), scope, "value_set size")
            if size <= 0:
                raise P4TypeError("value_set size must be positive", d.size.loc)
            self.limits.check("size", f"value_set '{d.name}' size", size, d.size.loc)
            scope.declare(d.name, d, d.loc)
        elif isinstance(d, ast.InstanceDecl):
            self.instance(d, scope)
        elif isinstance(d, ast.VariableDecl | ast.ConstantDecl):
            self.local_declaration(d, scope)
        else:
            raise P4TypeError(f"'{d.name}' cannot be declared inside a parser", d.loc)

    def state(self: Checker, st: ast.ParserState, states: Scope) -> None:
        scope = Scope(states)
        for s in st.statements:
            self.recover(s, lambda s=s: self.statement(s, scope), scope)
        tr = st.transition
        if tr is None:
            return
        if isinstance(tr, ast.PathExpression):
            st.next_state = self._target_state(tr.name, states, tr.loc)
            tr.decl = st.next_state
            tr.type = ObjectType("state", tr.name, st.next_state)
            return
        if isinstance(tr, ast.SelectExpression):
            self.select(tr, scope, states)
            return
        raise P4TypeError("a transition must name a state or be a select expression", tr.loc)

    def _target_state(self, name: str, states: Scope, loc: object) -> ast.ParserState | None:
        if name in _IMPLICIT_STATES:
            return None
        found = states.lookup_local(name)
        if not isinstance(found, ast.ParserState):
            raise P4TypeError(f"undeclared parser state '{name}'", loc)  # type: ignore[arg-type]
        return found

    def select(self: Checker, sel: ast.SelectExpression, scope: Scope, states: Scope) -> None:
        types: list[Type] = []
        for s in sel.selectors:
            t = self.expr(s, scope)
            if not is_key_type(t):
                raise P4TypeError(f"cannot select on a value of type {t}", s.loc)
            types.append(t)
        sel.type = TupleType(tuple(types)) if len(types) != 1 else types[0]
        for case in sel.cases:
            self.keyset(case.keyset, sel.selectors, types, scope)
            case.state_decl = self._target_state(case.state, states, case.loc)

    def keyset(
        self: Checker,
        ks: ast.Expression,
        selectors: list[ast.Expression],
        types: list[Type],
        scope: Scope,
    ) -> None:
        if isinstance(ks, ast.DefaultExpression | ast.DontCareExpression):
            ks.type = types[0] if len(types) == 1 else TupleType(tuple(types))
            return
        if len(types) > 1 and self._is_value_set(ks, scope):
            self._value_set_keyset(ks, types, scope)
            return
        if len(types) == 1:
            elements = [ks]
            if isinstance(ks, ast.ListExpression) and len(ks.elements) == 1:
                elements = ks.elements
        else:
            if not isinstance(ks, ast.ListExpression):
                raise P4TypeError(f"keyset needs {len(types)} components", ks.loc)
            elements = ks.elements
        if len(elements) != len(types):
            raise P4TypeError(
                f"keyset has {len(elements)} components, the select has {len(types)}", ks.loc
            )
        for el, t in zip(elements, types):
            self.keyset_element(el, t, scope, "select case", allow_value_set=True)
        if ks.type is None:
            ks.type = types[0] if len(types) == 1 else TupleType(tuple(types))

    def _is_value_set(self, e: ast.Expression, scope: Scope) -> bool:
        return isinstance(e, ast.PathExpression) and isinstance(
            scope.lookup(e.name), ast.ValueSetDecl
        )

    def _value_set_keyset(
        self: Checker, ks: ast.Expression, types: list[Type], scope: Scope
    ) -> None:
        t = self.expr(ks, scope)
        if not isinstance(t, StructType) or [ft for _, ft in t.fields] != types:
            raise P4TypeError(f"value_set of {t} does not match the select's types", ks.loc)

    def keyset_element(
        self: Checker,
        e: ast.Expression,
        t: Type,
        scope: Scope,
        what: str,
        allow_value_set: bool = False,
    ) -> None:
        """Check one keyset component against key type `t`; values must be constants."""
        if isinstance(e, ast.DefaultExpression | ast.DontCareExpression):
            e.type = t
            return
        if allow_value_set and self._is_value_set(e, scope):
            vt = self.expr(e, scope)
            # a struct of one field matches a key of that field's type (p4c flattens the
            # struct into the select's one-element key tuple)
            one = isinstance(vt, StructType) and [ft for _, ft in vt.fields] == [t]
            if vt != t and not one:
                raise P4TypeError(f"value_set of {vt} cannot match a key of type {t}", e.loc)
            return
        if isinstance(e, ast.MaskExpression | ast.RangeExpression):
            op = "&&&" if isinstance(e, ast.MaskExpression) else ".."
            u = unwrap_newtype(t)
            if isinstance(u, EnumType) and u.underlying is not None:
                u = u.underlying  # a serializable enum key is masked as its underlying type
            if not isinstance(u, BitType):
                raise P4TypeError(f"'{op}' needs a bit<W> or int<W> key, got {t}", e.loc)
            for side in (e.left, e.right):
                self.checked(side, scope, t if u is unwrap_newtype(t) else u, what)
                if side.value is None:
                    raise P4TypeError(f"{what} must be a compile-time constant", side.loc)
            e.type = t
            return
        self.checked(e, scope, t, what)
        if e.value is None:
            raise P4TypeError(f"{what} must be a compile-time constant", e.loc)


def _ends(p: ast.ParserDecl) -> bool:
    """Whether accept or reject is reachable from start by written transitions (p4c's
    RemoveUnreachableStates refuses a parser that reaches neither; an error going to reject at
    run time does not count). A state without a transition goes to reject."""
    by_name = {st.name: st for st in p.states}
    todo, seen = ["start"], {"start"}
    while todo:
        st = by_name.get(todo.pop())
        if st is None:
            continue
        tr = st.transition
        if tr is None:
            return True
        if isinstance(tr, ast.PathExpression):
            targets = [tr.name]
        elif isinstance(tr, ast.SelectExpression):
            targets = [c.state for c in tr.cases]
        else:
            return True  # malformed: reported by `state`
        for name in targets:
            if name in _IMPLICIT_STATES or name not in by_name:
                return True  # an unknown state is reported by `state`
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return False
