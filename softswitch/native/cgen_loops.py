"""C code for loops, as engine/codegen_loops.py runs them: a three-clause loop iterates over the
index values p4c's unrolling computed (`ForStatement.index_values`), setting the index and
running the body (or the iteration's unrolled copy) then the updates; ``for``-``in`` over a
constant range; ``continue`` runs the updates first. P4 ``switch`` compiles to if-chains, so a
C ``break``/``continue`` always reaches the loop."""

from __future__ import annotations

from softswitch.errors import NativeUnsupported
from softswitch.frontend import ast
from softswitch.native.cgen_expr import CFnContext, literal
from softswitch.native.cgen_types import c_literal, scalar_width


class CLoopGen:
    """Mixin of `cgen.CGenerator`: loops."""

    fn: CFnContext
    _loops: list[tuple[CFnContext, list[ast.Statement]]]

    def loop_stmt(self, s: ast.Statement) -> None:
        if isinstance(s, ast.ForStatement):
            self.for_stmt(s)
        elif isinstance(s, ast.ForInStatement):
            self.for_in_stmt(s)
        elif isinstance(s, ast.BreakStatement):
            self.line("break;")
        elif isinstance(s, ast.ContinueStatement):
            for u in self._loop_updates():
                self.stmt(u)
            self.line("continue;")
        else:  # pragma: no cover - dispatch covers the loop statements only
            raise NativeUnsupported(f"statement {type(s).__name__}", s.loc)

    def _loop_updates(self) -> list[ast.Statement]:
        for fn, updates in reversed(self._loops):
            if fn is self.fn:
                return updates
        return []

    def _loop(self, count: str, first: str, set_index: str, body: ast.Statement,
              updates: list[ast.Statement], unrolled: list[ast.Statement] | None) -> None:
        k = self.fn.fresh("k")
        self.line(f"for (int64_t {k} = 0; {k} < {count}; {k}++) {{")
        self._loops.append((self.fn, updates))
        try:
            with self.indent():
                self.line(set_index.replace("$K", f"({first} + {k})" if first else k))
                if unrolled is None:
                    self.stmt(body)
                for i, copy in enumerate(unrolled or []):
                    self.line(f"{'if' if i == 0 else '} else if'} ({k} == {i}) {{")
                    with self.indent():
                        self.stmt(copy)
                if unrolled:
                    self.line("}")
                for u in updates:
                    self.stmt(u)
        finally:
            self._loops.pop()
        self.line("}")

    def for_stmt(self, s: ast.ForStatement) -> None:
        if s.index is None or s.index_values is None:
            raise NativeUnsupported("a loop the checker did not unroll", s.loc)
        self.line("{")
        with self.indent():
            for item in s.init:
                self.stmt(item)
            values = s.index_values
            w = scalar_width(s.index.type)
            arr = self.fn.fresh("vals")
            items = ", ".join(literal(v, s.index.type) for v in values) or "0"
            ct = "u128" if w > 64 else "uint64_t"
            self.line(f"static const {ct} {arr}[] = {{{items}}};")
            target = self.ex(s.index)
            self._loop(str(len(values)), "", f"{target} = {arr}[$K];", s.body, s.updates,
                       s.unrolled)
        self.line("}")

    def for_in_stmt(self, s: ast.ForInStatement) -> None:
        c = s.collection
        assert isinstance(c, ast.RangeExpression)
        assert isinstance(c.left.value, int) and isinstance(c.right.value, int)
        lo, hi = c.left.value, c.right.value
        self.line("{")
        with self.indent():
            if s.var is not None:
                name = self.fn.fresh(f"v_{s.var.name}_")
                ty = s.var.type_ref.resolved
                self.line(f"{self.types.ctype(ty)} {name} = 0;")
                self.fn.env[s.var] = name
                var: ast.Expression = ast.PathExpression(name=s.var.name, decl=s.var,
                                                         loc=s.var.loc)
                var.type = ty
            else:
                assert s.ref is not None
                var = s.ref
            w = scalar_width(var.type)
            count = max(0, hi - lo + 1)
            elem = f"((uint64_t)(int64_t)($K) & {c_literal((1 << min(w, 64)) - 1, 64)})"
            if isinstance(var, ast.PathExpression):
                set_index = f"{self.ex(var)} = {elem};"
            else:
                # the index is a field or an element: assigned each time, as an assignment
                saved_out = self.out
                self.out = []
                self.assign(var, elem)
                set_index = " ".join(x.strip() for x in self.out)
                self.out = saved_out
            self._loop(str(count), f"{lo}LL", set_index, s.body, [], s.unrolled)
        self.line("}")
