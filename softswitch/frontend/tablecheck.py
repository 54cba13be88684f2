"""Table rules (a mixin of the Checker in typecheck.py): keys, actions lists, default actions,
properties, and const/initial entries with their effective priorities.

Explicit ``priority = N :`` entries are checked as p4c's EntryPriorities pass checks them
(refused in ``const entries``; the first entry needs one; no underflow with
``priority_delta``). The priority an entry is matched by follows p4c's BMv2 back end and BMv2:
``@priority(N)``, else the entry's position (see `_priorities`); it is stored engine-style in
`TableEntryDecl.priority_value`: a larger number wins.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.frontend.exprcheck import expression_text
from softswitch.frontend.keynames import expression_name
from softswitch.frontend.scopes import Scope
from softswitch.frontend.typeops import is_key_type
from softswitch.frontend.types import BoolType, ExternType, Type, unwrap_newtype

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker

_NO_PRIORITY_KINDS = ("exact", "lpm")
# which keyset shapes each standard match kind accepts in an entry
_SHAPES = {
    "exact": (),
    "lpm": (ast.MaskExpression, ast.DefaultExpression, ast.DontCareExpression),
    "ternary": (ast.MaskExpression, ast.DefaultExpression, ast.DontCareExpression),
    "range": (ast.RangeExpression, ast.DefaultExpression, ast.DontCareExpression),
    "optional": (ast.DefaultExpression, ast.DontCareExpression),
}


class TableMixin:
    """Table rules; `self` is the Checker."""

    def table(self: Checker, t: ast.TableDecl, scope: Scope) -> None:
        # Each key, action, property and entry is checked on its own (`recover`), so that one
        # error does not hide the others; entries are checked only against well-formed keys.
        kinds: list[str] = []
        keys_ok = True
        for k in t.keys:
            keys_ok &= self.recover(k, lambda k=k: kinds.append(self._table_key(t, k, scope)))
        seen: set[ast.ActionDecl] = set()
        for ref in t.actions:
            self.recover(ref, lambda ref=ref: self._listed_action(t, ref, scope, seen))
        if t.default_action is not None:
            self.recover(t.default_action, lambda: self._default_action(t, scope, seen))
        for prop in t.properties:
            self.recover(prop, lambda prop=prop: self._table_property(t, prop, scope))
        # without any implementation p4c-bm2-ss makes a plain table: the selector keys are
        # neither BMv2 nor P4Info match fields (dropped, as with a selector)
        if "selector" in kinds and t.property("implementation") is not None \
                and not self._has_selector(t):
            raise P4TypeError(
                f"table '{t.name}' has a selector key but no action_selector implementation", t.loc
            )
        if t.entries is not None and keys_ok:
            entries_ok = True
            for entry in t.entries:
                entries_ok &= self.recover(
                    entry, lambda entry=entry: self._entry(t, entry, kinds, scope)
                )
            if entries_ok:
                self._priorities(t, kinds, scope)
        scope.declare(t.name, t, t.loc)

    def _listed_action(
        self: Checker, t: ast.TableDecl, ref: ast.ActionRef, scope: Scope, seen: set[ast.ActionDecl]
    ) -> None:
        try:
            self.action_ref(ref, scope, t, "actions")
        finally:  # a listed action with bad arguments is still listed (for the default action)
            listed = ref.decl in seen
            if ref.decl is not None:
                seen.add(ref.decl)
        if listed:
            raise P4TypeError(f"action '{ref.name}' appears twice in table '{t.name}'", ref.loc)

    def _default_action(
        self: Checker, t: ast.TableDecl, scope: Scope, seen: set[ast.ActionDecl]
    ) -> None:
        assert t.default_action is not None
        self.action_ref(t.default_action, scope, t, "default")
        if t.default_action.decl not in seen:
            raise P4TypeError(
                f"default action '{t.default_action.name}' is not in the actions list of "
                f"table '{t.name}'",
                t.default_action.loc,
            )
        self._match_list_binding(t, t.default_action)

    def _match_list_binding(self, t: ast.TableDecl, ref: ast.ActionRef) -> None:
        """p4c: an entry or default action repeats the arguments the actions list binds."""
        listed = next((a for a in t.actions if a.decl is ref.decl), None)
        if listed is None or ref.decl is None:
            return
        for p, bound, given in zip(ref.decl.params, listed.bound_args, ref.bound_args):
            if bound is not None and (given is None or not _same_expression(bound, given)):
                raise P4TypeError(
                    f"argument '{p.name}' of action '{ref.name}' does not match declaration in "
                    f"actions list of table '{t.name}'",
                    (given or ref).loc,
                )

    def _table_key(self: Checker, t: ast.TableDecl, k: ast.KeyElement, scope: Scope) -> str:
        if isinstance(k.expr, ast.ListExpression) and len(k.expr.elements) == 1:
            # p4c-bm2-ss compiles a one-element list key as the element itself
            k.expr = k.expr.elements[0]
        kt = self.expr(k.expr, scope)
        if not is_key_type(kt):
            raise P4TypeError(
                f"table '{t.name}' key has type {kt}, which cannot be matched", k.expr.loc
            )
        if k.string_annotation("name") is None and expression_name(k.expr) is None:
            raise P4TypeError(
                f"table '{t.name}': complex key expression requires a @name annotation",
                k.expr.loc,
            )
        mk = scope.lookup(k.match_kind)
        if not isinstance(mk, ast.MatchKindDecl):
            raise P4TypeError(
                f"table '{t.name}' key uses unknown match_kind '{k.match_kind}'", k.loc
            )
        return k.match_kind

    def action_ref(
        self: Checker, ref: ast.ActionRef, scope: Scope, t: ast.TableDecl, role: str
    ) -> None:
        """Resolve `ref` and bind its arguments: in the actions list only the leading
        directional parameters; as default action or entry action, all of them."""
        # `.a` names the top-level a, past a local action of the same name
        name, where = (ref.name[1:], scope.root) if ref.name.startswith(".") else (ref.name, scope)
        decl = where.lookup(name)
        if decl is None:
            raise P4TypeError(f"undeclared action '{ref.name}' in table '{t.name}'", ref.loc)
        if not isinstance(decl, ast.ActionDecl):
            raise P4TypeError(f"'{ref.name}' in table '{t.name}' is not an action", ref.loc)
        ref.decl = decl
        params = decl.params
        what = f"action '{ref.name}'"
        if role == "actions":
            if len(ref.args) > len(params):
                raise P4TypeError(
                    f"{what} expects {len(params)} arguments, got {len(ref.args)}", ref.loc
                )
            bound = self.bind_arguments(params[: len(ref.args)], ref.args, ref.loc, what)
            for p in params[len(ref.args) :]:
                if p.direction:
                    raise P4TypeError(
                        f"parameter '{p.name}' of {what} must be bound in the actions list of "
                        f"table '{t.name}'",
                        ref.loc,
                    )
            ref.bound_args = bound + [None] * (len(params) - len(bound))
        else:
            ref.bound_args = self.bind_arguments(params, ref.args, ref.loc, what)
        for p, a in zip(params, ref.bound_args):
            if a is None:
                continue
            pt = p.type_ref.resolved
            assert pt is not None
            self._check_arg(p, a, pt, scope, {}, set(), what)
            applied = _table_apply_in(a) if role == "actions" else None
            if applied is not None:  # p4c's SideEffectOrdering (TablesInActions) refuses it
                raise P4TypeError(
                    f"{expression_text(applied)}: table invocation in action argument",
                    applied.loc,
                )
            if not p.direction and a.value is None:
                raise P4TypeError(
                    f"argument '{p.name}' of {what} must be a compile-time constant", a.loc
                )

    def _table_property(
        self: Checker, t: ast.TableDecl, prop: ast.TableProperty, scope: Scope
    ) -> None:
        v = prop.value
        name = prop.name
        if name in ("size", "priority_delta", "max_group_size"):
            n = self.const_int(self._typed(v, scope), scope, f"table '{t.name}' property {name}")
            if n < 0:  # p4c: priority_delta must fit an unsigned integer (0 is accepted)
                raise P4TypeError(f"table '{t.name}' property {name} must be positive", v.loc)
            if name == "size":
                self.limits.check("size", f"table '{t.name}' size", n, v.loc)
        elif name in self.arch.bool_properties:
            self.expr(v, scope)
            if not isinstance(v.type, BoolType) or v.value is None:
                raise P4TypeError(
                    f"table '{t.name}' property {name} must be a constant bool", v.loc
                )
        elif name in self.arch.table_externs:
            vt = self.expr(v, scope)
            if not isinstance(vt, ExternType):
                raise P4TypeError(
                    f"table '{t.name}' property {name} must be an extern instance, got {vt}", v.loc
                )
            expected = self.arch.table_externs[name]
            if vt.name not in expected:
                raise P4TypeError(
                    f"table '{t.name}' property {name} must be a {' or '.join(expected)}, got {vt}",
                    v.loc,
                )
        else:
            self.expr(v, scope)

    def _has_selector(self: Checker, t: ast.TableDecl) -> bool:
        impl = t.property("implementation")
        return (
            impl is not None
            and isinstance(impl.value.type, ExternType)
            and (impl.value.type.name == self.arch.selector)
        )

    def _entry(
        self: Checker, t: ast.TableDecl, entry: ast.TableEntryDecl, kinds: list[str], scope: Scope
    ) -> None:
        keys = entry.keys
        if len(keys) != len(t.keys):
            raise P4TypeError(
                f"entry of table '{t.name}' has {len(keys)} keys, the table has {len(t.keys)}",
                entry.loc,
            )
        for e, k, kind in zip(keys, t.keys, kinds):
            kt: Type = k.expr.type  # type: ignore[assignment]
            shapes = _SHAPES.get(kind)
            if (
                shapes is not None
                and isinstance(
                    e,
                    ast.MaskExpression
                    | ast.RangeExpression
                    | ast.DefaultExpression
                    | ast.DontCareExpression,
                )
                and not isinstance(e, shapes)
            ):
                raise P4TypeError(
                    f"this key form is not allowed for a {kind} key of table '{t.name}'", e.loc
                )
            self.keyset_element(e, kt, scope, f"key of table '{t.name}'")
            if kind == "lpm" and isinstance(e, ast.MaskExpression):
                self._check_prefix_mask(e, kt)
        self.action_ref(entry.action, scope, t, "entry")
        listed = next((a for a in t.actions if a.decl is entry.action.decl), None)
        if listed is None:
            raise P4TypeError(
                f"action '{entry.action.name}' is not in the actions list of table '{t.name}'",
                entry.action.loc,
            )
        if listed.annotation("defaultonly") is not None:  # p4c's TypeInference on an Entry
            raise P4TypeError(
                f"entry of table '{t.name}': Action marked with @defaultonly used in table",
                entry.loc,
            )
        self._match_list_binding(t, entry.action)
        if entry.priority is not None:
            self.const_int(self._typed(entry.priority, scope), scope, "entry priority")

    def _check_prefix_mask(self, e: ast.MaskExpression, kt: Type) -> None:
        width = getattr(unwrap_newtype(kt), "width", 0)
        mask = e.right.value % (1 << width) if width else 0
        inverted = ~mask & ((1 << width) - 1)
        if inverted & (inverted + 1):
            raise P4TypeError("lpm mask must be a prefix (ones followed by zeros)", e.right.loc)

    def _annotated_priority(self: Checker, entry: ast.TableEntryDecl, scope: Scope) -> int | None:
        """The value of an entry's ``@priority(N)`` (p4c's BMv2 back end passes it to BMv2)."""
        ann = entry.annotation("priority")
        if ann is None:
            return None
        if len(ann.args) != 1:
            raise P4TypeError("@priority needs one argument", ann.loc)
        return self.const_int(self._typed(ann.args[0], scope), scope, "@priority")

    def _priorities(self: Checker, t: ast.TableDecl, kinds: list[str], scope: Scope) -> None:
        """p4c's checks of ``priority = N :`` (EntryPriorities), then the priorities BMv2
        matches the entries by.

        p4c's BMv2 back end gives each entry ``@priority(N)`` if it has one, else its 1-based
        position, and BMv2 lets the smallest number win (the earlier entry on a tie); the
        ``priority = N`` values, ``largest_priority_wins`` and ``priority_delta`` only reach
        P4Runtime's view, not BMv2's matching. `priority_value` is that order turned into the
        engine's larger-wins numbers (``top + 1 - bmv2``), so without annotations the first of
        n entries gets n, as p4c's P4Runtime entries number const entries.
        """
        entries = t.entries or []
        with_priority = next((e for e in entries if e.priority is not None), None)
        if t.entries_const:
            if with_priority is not None:
                raise P4TypeError(
                    "Table with 'const' entries cannot have priorities", with_priority.loc
                )
        elif with_priority is not None:
            self._check_entry_priorities(t, kinds, entries)
        bmv2 = []
        for i, e in enumerate(entries):
            annotated = self._annotated_priority(e, scope)
            bmv2.append(i + 1 if annotated is None else annotated)
        if all(k in _NO_PRIORITY_KINDS for k in kinds) or not entries:
            return  # exact/lpm: BMv2 ignores priorities (lpm: the longest prefix wins)
        top = max(bmv2)
        for e, b in zip(entries, bmv2):
            e.priority_value = top + 1 - b

    def _check_entry_priorities(
        self: Checker, t: ast.TableDecl, kinds: list[str], entries: list[ast.TableEntryDecl]
    ) -> None:
        """The errors p4c's EntryPriorities pass reports for explicit ``priority = N :``."""
        if all(k in _NO_PRIORITY_KINDS for k in kinds):
            raise P4TypeError(
                f"table '{t.name}': key match type does not require priorities, but some are "
                "specified",
                t.keys[0].loc if t.keys else t.loc,
            )
        if entries[0].priority is None:
            raise P4TypeError(f"table '{t.name}': entry must have a priority", entries[0].loc)
        largest = self._bool_property(t, "largest_priority_wins", True)
        delta_prop = t.property("priority_delta")
        delta = int(delta_prop.value.value) if delta_prop is not None else 1
        current = 0
        for e in entries:
            if e.priority is not None:
                current = int(e.priority.value)
                if current < 0:
                    raise P4TypeError("entry priority must not be negative", e.priority.loc)
            # p4c computes the next entry's priority after every entry, the last one too
            current = current - delta if largest else current + delta
            if current < 0:
                raise P4TypeError(f"table '{t.name}': Overflow in priority computation", e.loc)

    def _bool_property(self, t: ast.TableDecl, name: str, default: bool) -> bool:
        p = t.property(name)
        if p is None or p.value.value is None:
            return default
        return bool(p.value.value)


_NOT_COMPARED = frozenset({"loc", "type", "value", "annotations", "decl", "call"})


def _table_apply_in(e: ast.Node) -> ast.MethodCall | None:
    """The first ``t.apply()`` inside the checked expression `e` (None: there is none)."""
    if isinstance(e, ast.MethodCall) and e.call is not None and e.call.kind == "table_apply":
        return e
    for f in dataclasses.fields(e):  # type: ignore[arg-type]
        if f.name in _NOT_COMPARED:
            continue
        value = getattr(e, f.name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.Node) and not isinstance(item, ast.Declaration):
                found = _table_apply_in(item)
                if found is not None:
                    return found
    return None


def _same_expression(a: ast.Node, b: ast.Node) -> bool:
    """Structural equality of two checked expressions (p4c's SameExpression)."""
    if (
        isinstance(a, ast.Expression)
        and isinstance(b, ast.Expression)
        and (a.value is not None or b.value is not None)
    ):
        return bool(a.value == b.value)
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.PathExpression) and a.decl is not b.decl:  # type: ignore[attr-defined]
        return False
    for f in dataclasses.fields(a):  # type: ignore[arg-type]
        if f.name in _NOT_COMPARED:
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y) or not all(_same_value(i, j) for i, j in zip(x, y)):
                return False
        elif not _same_value(x, y):
            return False
    return True


def _same_value(x: object, y: object) -> bool:
    if isinstance(x, ast.Node) and isinstance(y, ast.Node):
        return _same_expression(x, y)
    return x == y
