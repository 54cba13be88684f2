"""Which composite arguments of a call the C code may pass by pointer instead of through a
copy-in/copy-out temporary (P4_16 6.8), with no observable difference.

Only calls whose callee sees nothing of the caller but its arguments qualify: a sub-control's
``apply`` and a P4 function (an action can read its control's parameters and locals, which
an argument could alias; a sub-parser's copy-out is skipped on a parser error, so a pointer
would leak its partial writes). For those, an ``in`` or ``inout`` struct/header argument
that is a plain l-value (names, fields and constant indices; no run-time index, slice or
call) goes by pointer when no other argument the call writes (out/inout, or another
pointer-passed inout) overlaps it, and no pointer-passed ``inout`` overlaps another argument
at all:
- an ``in`` argument cannot be written by the callee (the checker refuses assignments,
  setValid and out/inout uses of ``in`` parameters), so reading the caller's storage equals
  reading a copy as long as no other argument changes that storage during the call;
- an ``inout`` argument's writes land in the caller's storage during the call instead of at
  the copy-out; with no other argument overlapping it nobody can see the difference; on
  ``exit`` the copy-out happens anyway (P4_16 12.5), and an assert failure drops the packet.
standard_metadata stays copied: externs reach the top-level one through ``R->sm``
(mark_to_drop(), checksum_error), which a pointer to a sub-control's copy would alias.
"""

from __future__ import annotations

from collections.abc import Sequence

from softswitch.frontend import ast
from softswitch.native.cgen_types import is_composite

Path = tuple[object, ...]


def lvalue_path(e: ast.Expression) -> tuple[Path, bool]:
    """The storage `e` names, as (path from its variable, exact): exact False when a run-time
    index or a slice cuts the path (then the path is the known prefix)."""
    parts: list[object] = []
    exact = True
    while True:
        if isinstance(e, ast.PathExpression):
            parts.append(e.decl if e.decl is not None else e.name)
            return tuple(reversed(parts)), exact
        if isinstance(e, ast.Member) and e.kind == "field":
            parts.append(e.member)
            e = e.expr
        elif isinstance(e, ast.ArrayIndex) and isinstance(e.index.value, int):
            parts.append(e.index.value)
            e = e.expr
        elif isinstance(e, ast.ArrayIndex | ast.Slice) or (
                isinstance(e, ast.Member) and e.kind in ("stack_next", "stack_last")):
            parts.clear()  # what lies under a run-time index or a slice: its prefix only
            exact = False
            e = e.expr
        else:
            return (), False  # not an l-value: nothing the callee could write through


def _overlap(a: Path, b: Path) -> bool:
    n = min(len(a), len(b))
    return n > 0 and a[:n] == b[:n]


def by_reference(params: Sequence[ast.Parameter], args: Sequence[ast.Expression | None],
                 sm_type: str, type_name: object) -> set[int]:
    """Indices of the arguments to pass by pointer (see the module docstring). `type_name`
    gives a parameter type's C name (to leave standard_metadata, `sm_type`, copied)."""
    paths: list[tuple[Path, bool] | None] = []
    for a in args:
        if a is None or isinstance(a, ast.DontCareExpression):
            paths.append(None)
        else:
            paths.append(lvalue_path(a))
    chosen: set[int] = set()
    for i, (p, found) in enumerate(zip(params, paths)):
        if found is None or not found[1] or not found[0] or p.direction not in ("in", "inout"):
            continue
        if not is_composite(p.type) or type_name(p.type) == sm_type:  # type: ignore[operator]
            continue
        ok = True
        for j, (q, other) in enumerate(zip(params, paths)):
            if j == i or other is None or not other[0] or not _overlap(found[0], other[0]):
                continue
            # two read-only views of the same storage are harmless
            if p.direction == "in" and q.direction not in ("out", "inout"):
                continue
            ok = False
            break
        if ok:
            chosen.add(i)
    return chosen
