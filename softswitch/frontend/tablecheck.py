"""Table rules (a mixin of the Checker in typecheck.py): keys, actions lists, default actions,
properties, and const/initial entries with their effective priorities.

Priorities follow p4c's EntryPriorities pass (P4_16 1.2.4, "entries"): with no explicit
priority, entries are numbered in order so that the first one wins; with explicit ones, an entry
without a priority gets the previous one's minus (or plus) ``priority_delta``. The result is
stored P4Runtime-style in `TableEntryDecl.priority_value`: a larger number wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
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
        kinds = [self._table_key(t, k, scope) for k in t.keys]
        seen: set[ast.ActionDecl] = set()
        for ref in t.actions:
            self.action_ref(ref, scope, t, "actions")
            assert ref.decl is not None
            if ref.decl in seen:
                raise P4TypeError(f"action '{ref.name}' appears twice in table '{t.name}'", ref.loc)
            seen.add(ref.decl)
        if t.default_action is not None:
            self.action_ref(t.default_action, scope, t, "default")
            if t.default_action.decl not in seen:
                raise P4TypeError(
                    f"default action '{t.default_action.name}' is not in the actions list of "
                    f"table '{t.name}'",
                    t.default_action.loc,
                )
        for prop in t.properties:
            self._table_property(t, prop, scope)
        if "selector" in kinds and not self._has_selector(t):
            raise P4TypeError(
                f"table '{t.name}' has a selector key but no action_selector implementation", t.loc
            )
        if t.entries is not None:
            for entry in t.entries:
                self._entry(t, entry, kinds, scope)
            self._priorities(t, kinds, scope)
        scope.declare(t.name, t, t.loc)

    def _table_key(self: Checker, t: ast.TableDecl, k: ast.KeyElement, scope: Scope) -> str:
        kt = self.expr(k.expr, scope)
        if not is_key_type(kt):
            raise P4TypeError(
                f"table '{t.name}' key has type {kt}, which cannot be matched", k.expr.loc
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
        decl = scope.lookup(ref.name)
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
            if n < 0 or (name == "priority_delta" and n == 0):
                raise P4TypeError(f"table '{t.name}' property {name} must be positive", v.loc)
        elif name in ("largest_priority_wins", "support_timeout"):
            self.expr(v, scope)
            if not isinstance(v.type, BoolType) or v.value is None:
                raise P4TypeError(
                    f"table '{t.name}' property {name} must be a constant bool", v.loc
                )
        elif name in ("implementation", "counters", "meters"):
            vt = self.expr(v, scope)
            if not isinstance(vt, ExternType):
                raise P4TypeError(
                    f"table '{t.name}' property {name} must be an extern instance, got {vt}", v.loc
                )
            expected = {
                "implementation": ("action_profile", "action_selector"),
                "counters": ("direct_counter",),
                "meters": ("direct_meter",),
            }[name]
            if vt.name not in expected:
                raise P4TypeError(
                    f"table '{t.name}' property {name} must be a {' or '.join(expected)}, got {vt}",
                    v.loc,
                )
        else:
            self.expr(v, scope)

    def _has_selector(self, t: ast.TableDecl) -> bool:
        impl = t.property("implementation")
        return (
            impl is not None
            and isinstance(impl.value.type, ExternType)
            and (impl.value.type.name == "action_selector")
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
        if entry.action.decl not in {a.decl for a in t.actions}:
            raise P4TypeError(
                f"action '{entry.action.name}' is not in the actions list of table '{t.name}'",
                entry.action.loc,
            )
        if entry.priority is not None:
            self.const_int(self._typed(entry.priority, scope), scope, "entry priority")

    def _check_prefix_mask(self, e: ast.MaskExpression, kt: Type) -> None:
        width = getattr(unwrap_newtype(kt), "width", 0)
        mask = e.right.value % (1 << width) if width else 0
        inverted = ~mask & ((1 << width) - 1)
        if inverted & (inverted + 1):
            raise P4TypeError("lpm mask must be a prefix (ones followed by zeros)", e.right.loc)

    def _explicit_priority(self: Checker, entry: ast.TableEntryDecl, scope: Scope) -> int | None:
        if entry.priority is not None:
            return entry.priority.value  # type: ignore[no-any-return]
        ann = entry.annotation("priority")
        if ann is not None:
            if len(ann.args) != 1:
                raise P4TypeError("@priority needs one argument", ann.loc)
            return self.const_int(self._typed(ann.args[0], scope), scope, "@priority")
        return None

    def _priorities(self: Checker, t: ast.TableDecl, kinds: list[str], scope: Scope) -> None:
        entries = t.entries or []
        explicit = [self._explicit_priority(e, scope) for e in entries]
        needs = any(k not in _NO_PRIORITY_KINDS for k in kinds)
        if not needs:
            for e, p in zip(entries, explicit):
                if p is not None:
                    raise P4TypeError(
                        f"table '{t.name}' key match kinds do not use priorities, but an entry has one",
                        e.loc,
                    )
            return
        largest = self._bool_property(t, "largest_priority_wins", True)
        delta_prop = t.property("priority_delta")
        delta = delta_prop.value.value if delta_prop is not None else 1
        n = len(entries)
        raw: list[int] = []
        if all(p is None for p in explicit):
            # first entry wins: number them so the first one ends up largest in the larger-wins
            # convention whatever largest_priority_wins says
            for i in range(n):
                raw.append(1 + (n - 1 - i) * delta if largest else 1 + i * delta)
        else:
            if explicit[0] is None:
                raise P4TypeError(
                    f"the first entry of table '{t.name}' must have a priority", entries[0].loc
                )
            current = 0
            for e, p in zip(entries, explicit):
                if p is not None:
                    if p < 0:
                        raise P4TypeError("entry priority must not be negative", e.loc)
                    current = p
                raw.append(current)
                current = current - delta if largest else current + delta
                if current < 0:
                    raise P4TypeError(
                        f"overflow in priority computation of table '{t.name}'", e.loc
                    )
        if largest:
            values = raw
        else:
            lo, hi = min(raw), max(raw)
            values = [lo + hi - r for r in raw]
        for e, v in zip(entries, values):
            e.priority_value = v

    def _bool_property(self, t: ast.TableDecl, name: str, default: bool) -> bool:
        p = t.property(name)
        if p is None or p.value.value is None:
            return default
        return bool(p.value.value)
