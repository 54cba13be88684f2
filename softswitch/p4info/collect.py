"""What a checked program exposes to the control plane, in the order p4c serializes it.

p4c (p4c-bm2-ss) writes P4Info from the program as its *frontend* leaves it (the midend runs
later), so the frontend decides what exists:

* constant ``if`` conditions are folded away first, so whatever only dead code uses is unused;
* unused declarations are removed (RemoveAllUnusedDeclarations): tables nothing applies, actions
  no table lists and no apply block calls, parser/control instances nothing applies; extern
  instances are always kept;
* sub-controls and sub-parsers are inlined: the locals of an applied instance take the place of
  its declaration, named ``<instance @name or name>.<local>``; a control applied through a
  constructor parameter is inlined where the argument instance is declared; a direct
  invocation ``C.apply(...)`` is an instance ``C_inst`` with ``@name("C")`` appended to the
  caller's locals (InstantiateDirectCalls);
* actions called from other actions are inlined into their callers and then removed as unused,
  so an action is listed when a table refers to it or an apply block calls it (the midend,
  which turns apply-block calls into hidden tables, runs after P4Info is written);
* a table without ``default_action`` gets ``@defaultonly NoAction`` appended to its actions and
  ``default_action = NoAction()``;
* top-level actions are copied into each top-level control using them, before that control's
  own locals, in order of first use (tables in declaration order, then the apply block).

P4Info objects then come in the order p4c visits the evaluated blocks (breadth first): top-level
extern instances first, then actions, digests and value sets block by block (package order),
then each block's extern instances and tables in declaration order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from softswitch.errors import P4TypeError, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.types import ExternType, Type
from softswitch.ir.checked import BlockInstance, CheckedProgram
from softswitch.ir.names import action_name, qualified_name

# Fields of AST nodes that point back into the tree (or to annotations) rather than to children.
_NOT_CHILDREN = frozenset({
    "loc", "decl", "type", "value", "resolved", "type_decl", "state_decl", "next_state",
    "ctor_args", "ctor_params", "bound_args", "annotations",
})


def children(node: ast.Node) -> Iterator[ast.Node]:
    """The syntactic children of `node`, in source order."""
    for f in dataclasses.fields(node):
        if f.name in _NOT_CHILDREN:
            continue
        value = getattr(node, f.name)
        if isinstance(value, ast.Node):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.Node):
                    yield item


def _ends(stmt: ast.Node) -> bool:
    """Whether `stmt` returns or exits on every path, as p4c's RemoveReturns decides it: both
    arms of an ``if``; never a ``switch`` or a loop."""
    if isinstance(stmt, ast.ReturnStatement | ast.ExitStatement):
        return True
    if isinstance(stmt, ast.BlockStatement):
        return any(_ends(s) for s in stmt.statements)
    if isinstance(stmt, ast.IfStatement):
        if isinstance(stmt.cond.value, bool):  # folded before RemoveReturns runs
            taken = stmt.then if stmt.cond.value else stmt.otherwise
            return taken is not None and _ends(taken)
        return stmt.otherwise is not None and _ends(stmt.then) and _ends(stmt.otherwise)
    return False


def live_children(node: ast.Node, cut: bool = False) -> Iterator[ast.Node]:
    """`children`, without the branch of an ``if`` that a constant condition rules out (p4c
    folds such ifs before removing unused declarations); with `cut`, also without the
    statements of a block after one that always returns or exits (RemoveReturns drops them)."""
    if isinstance(node, ast.IfStatement) and isinstance(node.cond.value, bool):
        taken = node.then if node.cond.value else node.otherwise
        if taken is not None:
            yield taken
        return
    if cut and isinstance(node, ast.BlockStatement):
        for stmt in node.statements:
            yield stmt
            if _ends(stmt):
                return
        return
    yield from children(node)


def _preorder(node: ast.Node, step: Callable[[ast.Node], Iterable[ast.Node]],
              ) -> Iterator[ast.Node]:
    stack = [node]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue  # a node reachable twice (a field another pass added) is visited once
        seen.add(id(current))
        yield current
        stack.extend(reversed(list(step(current))))


def walk(node: ast.Node, live: bool = False) -> Iterator[ast.Node]:
    """`node` and everything under it, pre-order (`live`: without the code p4c's frontend
    removes as dead before P4Info is written; `node` is then a whole apply block or body)."""
    if not live:
        return _preorder(node, children)
    # RemoveReturns rewrites only a body with a (live) return in it: only there does exit cut
    cut = any(isinstance(n, ast.ReturnStatement) for n in _preorder(node, live_children))
    return _preorder(node, lambda n: live_children(n, cut))


def referenced_decls(node: ast.Node) -> set[int]:
    """ids of the declarations named anywhere in the live code under `node` (paths and
    resolved calls)."""
    found: set[int] = set()
    for n in walk(node, live=True):
        if isinstance(n, ast.PathExpression) and n.decl is not None:
            found.add(id(n.decl))
        elif isinstance(n, ast.MethodCall) and n.call is not None and n.call.decl is not None:
            found.add(id(n.call.decl))
    return found


def extern_type_name(decl: ast.Declaration) -> str | None:
    """The extern type instantiated by an instance declaration, if it is an extern."""
    if isinstance(decl, ast.InstanceDecl) and isinstance(decl.resolved, ExternType):
        return decl.resolved.name
    return None


@dataclass(eq=False)
class TableObj:
    name: str
    decl: ast.TableDecl
    block: BlockInstance
    action_refs: list[ast.ActionRef]  # including the implicit @defaultonly NoAction
    action_names: list[str] = field(default_factory=list)  # P4Info name of each ref


@dataclass(eq=False)
class ActionObj:
    name: str
    decl: ast.ActionDecl
    # False for an action no kept table of its control lists, only called from an apply
    # block: p4c's frontend (RemoveActionParameters) binds all its parameters at the call
    with_params: bool = True


@dataclass(eq=False)
class ExternObj:
    """An extern instance, or an extern constructed in a table property (`prop` set)."""

    name: str
    kind: str  # extern type name: counter, direct_counter, action_selector...
    type: ExternType
    annotated: ast.Annotated  # the declaration (or property) carrying its annotations
    args: dict[str, ast.Expression | None]  # constructor arguments by parameter name
    prop: ast.TableProperty | None = None
    table: TableObj | None = None


@dataclass(eq=False)
class ControlObj:
    """A top-level control after inlining: its actions and the digest types it sends."""

    block: BlockInstance
    actions: list[ActionObj] = field(default_factory=list)
    digests: list[ast.MethodCall] = field(default_factory=list)


@dataclass(eq=False)
class ProgramModel:
    top_externs: list[ExternObj] = field(default_factory=list)
    controls: list[ControlObj] = field(default_factory=list)
    value_sets: list[tuple[str, ast.ValueSetDecl]] = field(default_factory=list)
    # per block, in package order: extern instances and tables in declaration order
    block_items: list[ExternObj | TableObj] = field(default_factory=list)
    controller_headers: list[ast.HeaderDecl] = field(default_factory=list)

    @property
    def tables(self) -> list[TableObj]:
        return [t for t in self.block_items if isinstance(t, TableObj)]

    @property
    def externs(self) -> list[ExternObj]:
        return self.top_externs + [e for e in self.block_items if isinstance(e, ExternObj)]


def _bound_args(params: list[ast.Parameter], bound: list[ast.Expression | None],
                raw: list[ast.Argument]) -> dict[str, ast.Expression | None]:
    """Constructor arguments by parameter name (checker binding, else positional/named)."""
    if params and len(bound) == len(params):
        return {p.name: a for p, a in zip(params, bound)}
    result: dict[str, ast.Expression | None] = {}
    for i, arg in enumerate(raw):
        key = arg.name if arg.name is not None else (params[i].name if i < len(params) else str(i))
        result[key] = arg.expr
    return result


def ctor_arg(args: dict[str, ast.Expression | None], name: str,
             index: int) -> ast.Expression | None:
    """Constructor argument `name` (or, failing that, the `index`-th one)."""
    if name in args:
        return args[name]
    values = list(args.values())
    return values[index] if index < len(values) else None


def _position(node: ast.Node) -> tuple[int, int]:
    return (node.loc.line, node.loc.column)


@dataclass(eq=False)
class _BlockUse:
    """What the live code of one control instance uses: its tables, the actions it calls
    directly, and the events of its apply block in order (with applied sub-blocks expanded in
    place, as p4c inlines them)."""

    tables: set[int] = field(default_factory=set)
    called: list[ast.ActionDecl] = field(default_factory=list)
    body_events: list[ast.ActionDecl | ast.MethodCall] = field(default_factory=list)


class _ControlFlattener:
    """One top-level control as p4c's frontend leaves it (see the module docstring)."""

    def __init__(self, collector: _Collector, top: BlockInstance) -> None:
        self.collector = collector
        self.top = top
        self.uses: dict[int, _BlockUse] = {}
        self.applied: set[int] = set()  # ids of BlockInstances some live code applies
        self._use(top, None)

    # --- what the apply blocks use --------------------------------------------------------

    def _use(self, block: BlockInstance, parent: BlockInstance | None) -> _BlockUse:
        use = self.uses.get(id(block))
        if use is not None:
            return use
        use = self.uses[id(block)] = _BlockUse()
        assert isinstance(block.decl, ast.ControlDecl)
        for node in walk(block.decl.body, live=True):
            if isinstance(node, ast.MethodCall) and node.call is not None:
                self._call(node, block, parent, use)
        return use

    def _call(self, node: ast.MethodCall, block: BlockInstance, parent: BlockInstance | None,
              use: _BlockUse) -> None:
        info = node.call
        assert info is not None
        if info.kind == "table_apply" and info.decl is not None:
            use.tables.add(id(info.decl))
        elif info.kind == "action" and isinstance(info.decl, ast.ActionDecl):
            use.called.append(info.decl)
            use.body_events.append(info.decl)
        elif info.kind == "extern_function" and info.name == "digest":
            use.body_events.append(node)
        elif info.kind == "function" and isinstance(info.decl, ast.FunctionDecl):
            use.body_events.extend(self.collector.digest_calls(info.decl.body))
        elif info.kind == "apply":
            target = self._apply_target(node, block, parent)
            if target is not None:
                child, owner = target
                self.applied.add(id(child))
                use.body_events.extend(self._use(child, owner).body_events)

    @staticmethod
    def _apply_target(node: ast.MethodCall, block: BlockInstance, parent: BlockInstance | None,
                      ) -> tuple[BlockInstance, BlockInstance | None] | None:
        """The control instance `node` applies, with the block it sits in: a local instance,
        or the block bound to a constructor parameter (frontend/blocks.py makes it a child too:
        a new one for a constructor call, else the instance the argument names)."""
        assert node.call is not None
        decl = node.call.decl
        if isinstance(decl, ast.InstanceDecl | ast.Parameter):
            child = block.children.get(decl.name)
            if child is not None and isinstance(child.decl, ast.ControlDecl):
                return child, block
        if isinstance(decl, ast.Parameter) and parent is not None:
            arg = block.ctor_args.get(decl.name)
            if isinstance(arg, ast.PathExpression) and isinstance(arg.decl, ast.InstanceDecl):
                child = parent.children.get(arg.decl.name)
                if child is not None and isinstance(child.decl, ast.ControlDecl):
                    return child, parent
        return None

    # --- the inlined locals ---------------------------------------------------------------

    def locals(self, block: BlockInstance | None = None) -> Iterator[
            tuple[ast.Declaration, BlockInstance]]:
        """The locals left after inlining and unused-declaration removal, in p4c's order."""
        block = block or self.top
        use = self.uses.get(id(block), _BlockUse())
        assert isinstance(block.decl, ast.ControlDecl)
        kept_actions = self._kept_actions(block, use)
        for param in block.decl.ctor_params:
            # a block constructed in the argument: p4c's specialisation declares it first in
            # the specialised control; one the argument names is inlined where it is declared
            child = block.children.get(param.name)
            if (child is not None and child.path == f"{block.path}.{param.name}"
                    and id(child) in self.applied):
                yield from self.locals(child)
        for local in block.decl.locals:
            child = block.children.get(local.name) if isinstance(local, ast.InstanceDecl) else None
            if child is not None:
                if id(child) in self.applied:
                    yield from self.locals(child)
                continue
            if isinstance(local, ast.TableDecl):
                if id(local) in use.tables:
                    yield local, block
            elif isinstance(local, ast.ActionDecl):
                if id(local) in kept_actions:
                    yield local, block
            else:
                yield local, block

    def _kept_actions(self, block: BlockInstance, use: _BlockUse) -> set[int]:
        assert isinstance(block.decl, ast.ControlDecl)
        kept = {id(a) for a in use.called}
        for local in block.decl.locals:
            if isinstance(local, ast.TableDecl) and id(local) in use.tables:
                kept.update(id(r.decl) for r in self.collector.table_refs(local))
        return kept

    def global_actions(self, items: list[tuple[ast.Declaration, BlockInstance]],
                       ) -> list[ast.ActionDecl]:
        """Top-level actions the control uses, in order of first use (LocalizeAllActions):
        the inlined locals' tables first, then the inlined apply block."""
        local_ids = {id(d) for d, _ in items if isinstance(d, ast.ActionDecl)}
        found: dict[int, ast.ActionDecl] = {}
        for decl, _ in items:
            if isinstance(decl, ast.TableDecl):
                for action in self.collector.use_order(decl):
                    found.setdefault(id(action), action)
        for event in self.uses[id(self.top)].body_events:
            if isinstance(event, ast.ActionDecl):
                found.setdefault(id(event), event)
        return [a for a in found.values() if id(a) not in local_ids and self._is_global(a)]

    def _is_global(self, decl: ast.ActionDecl) -> bool:
        return id(decl) in self.collector.global_action_ids

    def body_digests(self) -> list[ast.MethodCall]:
        return [e for e in self.uses[id(self.top)].body_events if isinstance(e, ast.MethodCall)]


class _Collector:
    def __init__(self, checked: CheckedProgram) -> None:
        self.checked = checked
        self.model = ProgramModel()
        self.no_action = next(
            (d for d in checked.program.declarations
             if isinstance(d, ast.ActionDecl) and d.name == "NoAction"),
            None,
        )
        self.global_action_ids = {id(d) for d in checked.program.declarations
                                  if isinstance(d, ast.ActionDecl)}
        self._refs: dict[int, list[ast.ActionRef]] = {}

    # --- blocks -------------------------------------------------------------------------

    def run(self) -> ProgramModel:
        for decl in self.checked.program.declarations:
            if decl is self.checked.main:
                continue
            kind = extern_type_name(decl)
            if kind is not None:
                self.model.top_externs.append(self._instance(decl, kind, None))
            elif isinstance(decl, ast.HeaderDecl) and decl.annotation("controller_header"):
                self.model.controller_headers.append(decl)
        for block in self.checked.blocks.values():
            if isinstance(block.decl, ast.ParserDecl):
                self._parser(list(self._flatten_parser(block)))
            else:
                self.model.controls.append(self._control(block))
        return self.model

    def _flatten_parser(self, block: BlockInstance,
                        ) -> Iterator[tuple[ast.Declaration, BlockInstance]]:
        """The parser's locals with used sub-parser instances expanded in place."""
        decl = block.decl
        assert isinstance(decl, ast.ParserDecl)
        used: set[int] = set()
        for state in decl.states:
            used |= referenced_decls(state)
        for local in reversed(decl.locals):  # an instance passed to a used one is used
            if isinstance(local, ast.InstanceDecl) and id(local) in used:
                for arg in local.args:
                    used |= referenced_decls(arg)
        for param in decl.ctor_params:
            # a sub-parser constructed in the argument comes first (p4c's specialisation)
            child = block.children.get(param.name)
            if (child is not None and child.path == f"{block.path}.{param.name}"
                    and id(param) in used):
                yield from self._flatten_parser(child)
        for local in decl.locals:
            child = block.children.get(local.name)
            if child is not None and isinstance(local, ast.InstanceDecl):
                if id(local) in used:
                    yield from self._flatten_parser(child)
                continue
            yield local, block

    def _parser(self, locals_: list[tuple[ast.Declaration, BlockInstance]]) -> None:
        used: set[int] = set()
        for _, block in locals_:
            assert isinstance(block.decl, ast.ParserDecl)
            for state in block.decl.states:
                used |= referenced_decls(state)
        for local, block in locals_:
            if isinstance(local, ast.ValueSetDecl) and id(local) in used:
                self.model.value_sets.append((qualified_name(local, block.path), local))
            kind = extern_type_name(local)
            if kind is not None:
                self.model.block_items.append(self._instance(local, kind, block))

    def _control(self, top: BlockInstance) -> ControlObj:
        flat = _ControlFlattener(self, top)
        items = list(flat.locals())
        control = ControlObj(top)
        tables: list[TableObj] = []
        for local, block in items:
            if isinstance(local, ast.TableDecl):
                table = TableObj(qualified_name(local, block.path), local, block,
                                 self.table_refs(local))
                tables.append(table)
                self.model.block_items.append(table)
                self.model.block_items.extend(self._table_externs(table))
            elif (kind := extern_type_name(local)) is not None:
                self.model.block_items.append(self._instance(local, kind, block))

        # localized top-level actions first, then the inlined locals' own; a sub-control
        # instantiated twice has its actions twice, so names are by (action, block)
        names: dict[tuple[int, int], str] = {}
        for decl in flat.global_actions(items):
            name = action_name(decl, None, top.path)
            names[(id(decl), 0)] = name
            control.actions.append(ActionObj(name, decl))
        for local, block in items:
            if isinstance(local, ast.ActionDecl):
                name = qualified_name(local, block.path)
                names[(id(local), id(block))] = name
                control.actions.append(ActionObj(name, local))

        table_used: set[str] = set()
        for table in tables:
            table.action_names = [
                names.get((id(r.decl), id(table.block))) or names[(id(r.decl), 0)]
                for r in table.action_refs]
            table_used.update(table.action_names)
        for action in control.actions:
            # a table's use comes first (p4c visits locals before the apply block), so the
            # copy DuplicateActions makes for a direct call shares the name but is not listed
            action.with_params = action.name in table_used
        for action in control.actions:
            control.digests.extend(self.digest_calls(action.decl.body))
        control.digests.extend(flat.body_digests())
        return control

    # --- tables -------------------------------------------------------------------------

    def table_refs(self, table: ast.TableDecl) -> list[ast.ActionRef]:
        """The table's action references: its actions list (plus the implicit NoAction), in
        order; checked to resolve."""
        refs = self._refs.get(id(table))
        if refs is None:
            refs = self._refs[id(table)] = self._action_refs(table)
        return refs

    def use_order(self, table: ast.TableDecl) -> list[ast.ActionDecl]:
        """The actions `table` names, in the order p4c's traversal meets them: its properties
        in source order, the implicit NoAction at the end of the actions list."""
        placed: list[tuple[tuple[int, int], int, ast.ActionDecl]] = []
        position = _position(table)
        for ref in self.table_refs(table):
            if ref in table.actions:
                position = _position(ref)
            assert ref.decl is not None
            placed.append((position, len(placed), ref.decl))
        others = [table.default_action] if table.default_action is not None else []
        others += [entry.action for entry in table.entries or []]
        for ref in others:
            if ref.decl is not None:
                placed.append((_position(ref), len(placed), ref.decl))
        return [decl for _, _, decl in sorted(placed, key=lambda p: (p[0], p[1]))]

    def _action_refs(self, table: ast.TableDecl) -> list[ast.ActionRef]:
        refs = list(table.actions)
        if table.default_action is None and not any(r.name == "NoAction" for r in refs):
            if self.no_action is None:
                raise P4TypeError(
                    "declaration of the action NoAction not found; did you include core.p4?",
                    table.loc,
                )
            refs.append(ast.ActionRef(
                name="NoAction", decl=self.no_action, loc=table.loc,
                annotations=[ast.Annotation(name="defaultonly", loc=table.loc)],
            ))
        for ref in refs:
            if ref.decl is None:
                raise P4TypeError(f"unknown action '{ref.name}' in table '{table.name}'",
                                  ref.loc)
        return refs

    def _table_externs(self, table: TableObj) -> list[ExternObj]:
        """Externs constructed in place in the table's implementation/counters/meters."""
        found: list[ExternObj] = []
        for prop_name in ("implementation", "counters", "meters"):
            prop = table.decl.property(prop_name)
            if prop is None or not isinstance(prop.value, ast.MethodCall):
                continue
            etype = prop.value.type
            if not isinstance(etype, ExternType):
                continue
            pname = prop.string_annotation("name")
            if pname is None:
                raise UnsupportedError(
                    f"table '{table.name}' has an anonymous table property '{prop_name}' with "
                    "no @name annotation (P4Runtime needs a name for it)",
                    prop.loc,
                )
            call = prop.value.call
            params = call.params if call is not None else []
            bound = call.args if call is not None else []
            found.append(ExternObj(
                name=pname[1:] if pname.startswith(".") else pname,
                kind=etype.name, type=etype, annotated=prop,
                args=_bound_args(params, bound, prop.value.args), prop=prop, table=table,
            ))
        return found

    # --- externs ------------------------------------------------------------------------

    @staticmethod
    def _instance(decl: ast.Declaration, kind: str, block: BlockInstance | None) -> ExternObj:
        assert isinstance(decl, ast.InstanceDecl) and isinstance(decl.resolved, ExternType)
        return ExternObj(
            name=qualified_name(decl, block.path if block is not None else None),
            kind=kind, type=decl.resolved, annotated=decl,
            args=_bound_args(decl.ctor_params, decl.ctor_args, decl.args),
        )

    def digest_calls(self, body: ast.Node) -> list[ast.MethodCall]:
        """digest() calls in `body` (an action's or function's), following the action and
        function calls p4c inlines into it."""
        found: list[ast.MethodCall] = []
        seen: set[int] = set()

        def visit(node: ast.Node) -> None:
            for n in walk(node, live=True):
                if not isinstance(n, ast.MethodCall) or n.call is None:
                    continue
                info = n.call
                if info.kind == "extern_function" and info.name == "digest":
                    found.append(n)
                elif info.kind in ("action", "function") and info.decl is not None:
                    target = info.decl
                    if id(target) not in seen and isinstance(target, ast.ActionDecl
                                                             | ast.FunctionDecl):
                        seen.add(id(target))
                        visit(target.body)
                        seen.discard(id(target))

        visit(body)
        return found


def collect(checked: CheckedProgram) -> ProgramModel:
    """The control-plane objects of `checked`, in p4c's order (see the module docstring)."""
    return _Collector(checked).run()


def digest_type(call: ast.MethodCall) -> Type | None:
    """The type T of ``digest<T>(receiver, data)``."""
    if call.call is not None and "T" in call.call.type_bindings:
        return call.call.type_bindings["T"]
    if call.type_args and call.type_args[0].resolved is not None:
        return call.type_args[0].resolved
    data = call.call.args[1] if call.call is not None and len(call.call.args) > 1 else None
    if data is None and len(call.args) > 1:
        data = call.args[1].expr
    return data.type if data is not None else None
