"""Code generation for loops: ``for`` (three-clause and ``for``-``in``), ``break``, ``continue``.

BMv2 runs only loops p4c has unrolled, so a three-clause loop runs its body once per index value
p4c computed at compile time (`ForStatement.index_values`): the generated Python loop iterates
over those values, setting the index variable, rather than re-testing the condition. For every
loop p4c can unroll this is what the condition would decide. A body write of the index that a
break (or exit, return) always follows runs as written: the break ends the iteration over the
values, and later reads see the written value, as in p4c's unrolled copy.
``continue`` runs the update statements before the next iteration, as the spec says.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from softswitch.errors import UnsupportedError
from softswitch.frontend import ast

if TYPE_CHECKING:
    from softswitch.engine.codegen_expr import FnContext


class LoopGen:
    """Mixin of `codegen.Generator`: loops."""

    fn: FnContext
    # the loops being emitted, innermost last: the function each is in, its update statements
    _loops: list[tuple[FnContext, list[ast.Statement]]]

    def loop_stmt(self, s: ast.Statement) -> None:
        """Emit a loop statement, ``break`` or ``continue``."""
        if isinstance(s, ast.ForStatement):
            self.for_stmt(s)
        elif isinstance(s, ast.ForInStatement):
            self.for_in_stmt(s)
        elif isinstance(s, ast.BreakStatement):
            self.line("break")
        elif isinstance(s, ast.ContinueStatement):
            updates = self._loop_updates()
            for u in updates:
                self.stmt(u)
            self.line("continue")
        else:  # pragma: no cover - dispatch covers the loop statements only
            raise UnsupportedError(f"statement {type(s).__name__}", s.loc)

    def _loop_updates(self) -> list[ast.Statement]:
        """The update statements of the innermost loop being emitted in this function."""
        for fn, updates in reversed(self._loops):
            if fn is self.fn:
                return updates
        return []

    def _loop_body(self, body: ast.Statement, updates: list[ast.Statement],
                   unrolled: list[ast.Statement] | None = None, counter: str = "") -> None:
        """The body (or, with `unrolled`, the copy for the iteration `counter` counts) and the
        updates, inside the Python loop."""
        self._loops.append((self.fn, updates))
        try:
            with self.indent():
                if unrolled is None:
                    self.stmt(body)
                for k, copy in enumerate(unrolled or []):
                    self.line(f"{'if' if k == 0 else 'elif'} {counter} == {k}:")
                    with self.indent():
                        self.line("pass")
                        self.stmt(copy)
                for u in updates:
                    self.stmt(u)
        finally:
            self._loops.pop()

    def _loop_header(self, target: str, values: str, unrolled: list[ast.Statement] | None,
                     ) -> str:
        """Emit the Python ``for`` over `values`; return the iteration counter's name ("" when
        the body is not unrolled)."""
        if unrolled is None:
            self.line(f"for {target} in {values}:")
            return ""
        counter = self.fn.fresh("k")
        self.line(f"for {counter}, {target} in enumerate({values}):")
        return counter

    def for_stmt(self, s: ast.ForStatement) -> None:
        if s.index is None or s.index_values is None:
            raise UnsupportedError("a loop the checker did not unroll", s.loc)
        for item in s.init:
            self.stmt(item)
        target = self.ex(s.index)
        counter = self._loop_header(target, _values_code(s.index_values), s.unrolled)
        self._loop_body(s.body, s.updates, s.unrolled, counter)

    def for_in_stmt(self, s: ast.ForInStatement) -> None:
        c = s.collection
        if s.var is not None:
            var: ast.Expression = ast.PathExpression(name=s.var.name, decl=s.var, loc=s.var.loc)
            var.type = s.var.type_ref.resolved
            self.fn.env[s.var] = self.fn.fresh(f"v_{s.var.name}_")
        else:
            assert s.ref is not None
            var = s.ref
        # loopcheck admits only a range of two constants (what p4c's UnrollLoops unrolls)
        assert isinstance(c, ast.RangeExpression)
        assert isinstance(c.left.value, int) and isinstance(c.right.value, int)
        values = f"range({c.left.value}, {c.right.value + 1})"
        if s.var is not None or isinstance(var, ast.PathExpression):
            counter = self._loop_header(self.ex(var), values, s.unrolled)
            self._loop_body(s.body, [], s.unrolled, counter)
            return
        elem = self.fn.fresh("e")  # the index is a field or an element: assigned each time
        counter = self._loop_header(elem, values, s.unrolled)
        with self.indent():
            self.assign(var, elem)
        self._loop_body(s.body, [], s.unrolled, counter)


def _values_code(values: list[int]) -> str:
    """A Python iterable of `values`: a range when they step evenly, else a tuple."""
    if len(values) >= 3:
        step = values[1] - values[0]
        if step != 0 and all(b - a == step for a, b in itertools.pairwise(values)):
            return f"range({values[0]}, {values[-1] + step}, {step})"
    return "(" + "".join(f"{v}, " for v in values) + ")"
