"""Which stateful objects and tables one packet can reach twice in one gress (for Tofino's rules).

On Tofino a packet passes each match-action stage once, so along one path through the ingress
(or the egress) control a table is applied at most once, and a register (through its
RegisterActions, or read/write), an indirect counter or meter, and an action profile are
reached at most once: bf-p4c refuses tables that "are not mutually exclusive, yet share" one.
Mutually exclusive code is fine: the two arms of an ``if``, the cases of a ``switch``, the
different actions of one table.

The walk follows the control flow the way the packet does — sub-controls applied, tables'
actions (one of them per apply), actions and functions called — carrying for each path the
objects used so far. At a join the sets are merged, which is exact for this question: an object
is in the merged set iff some path reaching the join used it, and that path continues here.
``exit`` ends a path; ``return`` ends the action, function or control it is in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from softswitch.errors import SourceLocation
from softswitch.frontend import ast
from softswitch.frontend.tofino_tree import action_run_table, extern_instance, table_actions
from softswitch.ir.checked import BlockInstance
from softswitch.ir.names import qualified_name

# What a packet reaches at most once per gress: kind (for messages) and name.
Resource = tuple[str, str]
# For each object used on some path so far, where (the first such use found).
State = dict[Resource, SourceLocation]

_COUNTED = {"Counter": "counter", "Meter": "meter"}  # indirect: one cell per packet
_REGISTERS = ("Register", "DirectRegister")
_REGISTER_ACTIONS = ("RegisterAction", "DirectRegisterAction")


@dataclass(frozen=True)
class Use:
    """A second use of `resource` on one path: here, after the one at `first`."""

    resource: Resource
    loc: SourceLocation
    first: SourceLocation


def _join(states: list[State | None]) -> State | None:
    live = [s for s in states if s is not None]
    if not live:
        return None
    joined = dict(live[0])
    for s in live[1:]:
        for key, loc in s.items():
            joined.setdefault(key, loc)
    return joined


@dataclass
class _Frame:
    """The block whose code is being walked, and the states its `return`s leave with."""

    block: BlockInstance
    parents: list[BlockInstance]  # enclosing instances, innermost last
    returns: list[State] = field(default_factory=list)


class GressWalk:
    """Walks one gress's control (`top`), reporting each repeated use once to `report`, and
    recording every stateful extern it reaches in `seen` (for the one-gress rule)."""

    def __init__(self, top: BlockInstance, report: Callable[[Use], None]) -> None:
        self.top = top
        self.report = report
        self.seen: dict[Resource, SourceLocation] = {}
        self._reported: set[tuple[Resource, SourceLocation]] = set()

    def run(self) -> None:
        self._control(self.top, [], {})

    # --- uses -----------------------------------------------------------------------------

    def _use(self, resource: Resource, loc: SourceLocation, state: State) -> State:
        self.seen.setdefault(resource, loc)
        first = state.get(resource)
        if first is not None:
            if (resource, loc) not in self._reported:
                self._reported.add((resource, loc))
                self.report(Use(resource, loc, first))
            return state
        new = dict(state)
        new[resource] = loc
        return new

    # --- blocks, actions, functions -------------------------------------------------------

    def _control(
        self, block: BlockInstance, parents: list[BlockInstance], state: State
    ) -> State | None:
        decl = block.decl
        assert isinstance(decl, ast.ControlDecl)
        frame = _Frame(block, parents)
        end = self._stmt(decl.body, state, frame)
        return _join([end, *frame.returns])

    def _body(self, body: ast.BlockStatement, state: State, frame: _Frame) -> State | None:
        """An action's or function's body: its returns continue at the call."""
        inner = _Frame(frame.block, frame.parents)
        end = self._stmt(body, state, inner)
        return _join([end, *inner.returns])

    # --- statements -----------------------------------------------------------------------

    def _stmt(self, s: ast.Node, state: State, frame: _Frame) -> State | None:
        if isinstance(s, ast.BlockStatement):
            current: State | None = state
            for item in s.statements:
                if current is None:
                    return None
                current = self._stmt(item, current, frame)
            return current
        if isinstance(s, ast.AssignmentStatement):
            return self._exprs([s.lhs, s.rhs], state, frame)
        if isinstance(s, ast.MethodCallStatement):
            return self._expr(s.call, state, frame)
        if isinstance(s, ast.IfStatement):
            if isinstance(s.cond.value, bool):  # folded, as p4c folds it
                taken = s.then if s.cond.value else s.otherwise
                return self._stmt(taken, state, frame) if taken is not None else state
            after = self._expr(s.cond, state, frame)
            if after is None:
                return None
            then = self._stmt(s.then, after, frame)
            other = self._stmt(s.otherwise, after, frame) if s.otherwise is not None else after
            return _join([then, other])
        if isinstance(s, ast.SwitchStatement):
            return self._switch(s, state, frame)
        if isinstance(s, ast.ExitStatement):
            return None
        if isinstance(s, ast.ReturnStatement):
            after = self._expr(s.value, state, frame) if s.value is not None else state
            if after is not None:
                frame.returns.append(after)
            return None
        if isinstance(s, ast.VariableDecl):
            return self._expr(s.init, state, frame) if s.init is not None else state
        return state  # constants, empty statements (loops are refused on Tofino)

    def _switch(self, s: ast.SwitchStatement, state: State, frame: _Frame) -> State | None:
        table = action_run_table(s.expr)
        if table is None:
            after = self._expr(s.expr, state, frame)
            if after is None:
                return None
            ends = [
                self._stmt(c.body, after, frame) if c.body is not None else after for c in s.cases
            ]
            if not any(isinstance(lbl, ast.DefaultExpression) for c in s.cases for lbl in c.labels):
                ends.append(after)
            return _join(ends)
        # switch (t.apply().action_run): the case of the action that ran follows that action
        call, decl = table
        before = self._table_entry(call, decl, state, frame)
        runs = {id(a): (a, self._action(a, [], before, frame)) for a in table_actions(decl)}
        ends: list[State | None] = []
        labelled: set[int] = set()
        for case in s.cases:
            names = [lbl for lbl in case.labels if not isinstance(lbl, ast.DefaultExpression)]
            default = len(names) != len(case.labels)
            picked = [id(lbl.decl) for lbl in names if isinstance(lbl, ast.PathExpression)]
            labelled.update(picked)
            starts = [runs[i][1] for i in picked if i in runs]
            if default:
                starts += [r for i, (_, r) in runs.items() if i not in labelled]
            start = _join(starts)
            if start is not None and case.body is not None:
                ends.append(self._stmt(case.body, start, frame))
        if not any(isinstance(lbl, ast.DefaultExpression) for c in s.cases for lbl in c.labels):
            ends += [r for i, (_, r) in runs.items() if i not in labelled]
        return _join(ends)

    # --- expressions ----------------------------------------------------------------------

    def _exprs(
        self, exprs: list[ast.Expression | None], state: State, frame: _Frame
    ) -> State | None:
        current: State | None = state
        for e in exprs:
            if current is None:
                return None
            if e is not None:
                current = self._expr(e, current, frame)
        return current

    def _expr(self, e: ast.Expression, state: State, frame: _Frame) -> State | None:
        if isinstance(e, ast.BinaryOp) and e.op in ("&&", "||"):
            left = self._expr(e.left, state, frame)
            if left is None:
                return None
            return _join([left, self._expr(e.right, left, frame)])
        if isinstance(e, ast.Ternary):
            cond = self._expr(e.cond, state, frame)
            if cond is None:
                return None
            return _join([self._expr(e.then, cond, frame), self._expr(e.otherwise, cond, frame)])
        if isinstance(e, ast.MethodCall):
            return self._call(e, state, frame)
        current: State | None = state
        for child in _subexpressions(e):
            if current is None:
                return None
            current = self._expr(child, current, frame)
        return current

    def _call(self, e: ast.MethodCall, state: State, frame: _Frame) -> State | None:
        info = e.call
        receiver = e.callee.expr if isinstance(e.callee, ast.Member) else None
        after = self._expr(receiver, state, frame) if receiver is not None else state
        if after is None or info is None:
            return after
        after = self._exprs([a for a in info.args], after, frame)
        if after is None:
            return None
        if info.kind == "table_apply" and isinstance(info.decl, ast.TableDecl):
            entered = self._table_entry(e, info.decl, after, frame)
            return _join([self._action(a, [], entered, frame) for a in table_actions(info.decl)])
        if info.kind == "action" and isinstance(info.decl, ast.ActionDecl):
            return self._action(info.decl, [], after, frame)
        if info.kind == "function" and isinstance(info.decl, ast.FunctionDecl):
            return self._body(info.decl.body, after, frame)
        if info.kind == "apply":
            child = self._child(info.decl, frame)
            if child is not None and isinstance(child.decl, ast.ControlDecl):
                return self._control(child, [*frame.parents, frame.block], after)
            return after
        if info.kind == "extern_method" and receiver is not None:
            resource = self._extern_use(receiver, info.name, frame)
            if resource is not None:
                return self._use(resource, e.loc, after)
        return after

    def _table_entry(
        self, call: ast.MethodCall, decl: ast.TableDecl, state: State, frame: _Frame
    ) -> State:
        """The apply of table `decl` itself (before its action): the table, its keys, and the
        action profile it is implemented by."""
        name = qualified_name(decl, frame.block.path)
        state = self._use(("table", name), call.loc, state)
        for key in decl.keys:
            state = self._expr(key.expr, state, frame) or state
        impl = decl.property("implementation")
        if impl is not None:
            profile = self._profile(impl.value, frame)
            if profile is not None:
                state = self._use(profile, call.loc, state)
        return state

    def _action(
        self, decl: ast.ActionDecl, _args: list[ast.Expression], state: State, frame: _Frame
    ) -> State | None:
        return self._body(decl.body, state, frame)

    # --- resolving instances --------------------------------------------------------------

    def _child(self, decl: ast.Node | None, frame: _Frame) -> BlockInstance | None:
        if isinstance(decl, ast.InstanceDecl | ast.Parameter):
            return frame.block.children.get(decl.name)
        return None

    def _instance(
        self, e: ast.Expression, frame: _Frame
    ) -> tuple[ast.InstanceDecl, BlockInstance | None, _Frame] | None:
        """The extern instance `e` names, the block declaring it (None: top level), and a
        frame for resolving the instance's own constructor arguments."""
        found = extern_instance(e, frame.block, frame.parents)
        if found is None:
            return None
        decl, block, parents = found
        owner = block if any(local is decl for local in block.decl.locals) else None
        return decl, owner, _Frame(block, parents)

    def _name(self, decl: ast.InstanceDecl, owner: BlockInstance | None) -> str:
        return qualified_name(decl, owner.path if owner is not None else None)

    def _extern_use(self, receiver: ast.Expression, method: str, frame: _Frame) -> Resource | None:
        found = self._instance(receiver, frame)
        if found is None:
            return None
        decl, owner, at = found
        kind = decl.resolved.name  # type: ignore[union-attr]
        if kind in _REGISTERS and method in ("read", "write"):
            return ("register", self._name(decl, owner))
        if kind in _REGISTER_ACTIONS and method == "execute":
            reg = decl.ctor_args[0] if decl.ctor_args else None
            target = self._instance(reg, at) if reg is not None else None
            if target is not None:
                return ("register", self._name(target[0], target[1]))
        if kind in _COUNTED and method in ("count", "execute"):
            return (_COUNTED[kind], self._name(decl, owner))
        return None

    def _profile(self, value: ast.Expression, frame: _Frame) -> Resource | None:
        found = self._instance(value, frame)
        if found is None:
            return None
        decl, owner, at = found
        kind = decl.resolved.name  # type: ignore[union-attr]
        if kind == "ActionSelector" and "size" not in {p.name for p in decl.ctor_params}:
            profile = decl.ctor_args[0] if decl.ctor_args else None
            target = self._instance(profile, at) if profile is not None else None
            if target is not None:
                return ("action profile", self._name(target[0], target[1]))
        if kind in ("ActionProfile", "ActionSelector"):
            return ("action profile", self._name(decl, owner))
        return None


def _subexpressions(e: ast.Expression) -> Iterator[ast.Expression]:
    for value in vars(e).values():
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.Argument):
                child = child.expr
            if isinstance(child, ast.NamedExpression):
                child = child.expr
            if isinstance(child, ast.Expression):
                yield child
