"""What a checked program exposes to the control plane, in the order p4c serializes it.

p4c builds P4Info from the program as its frontend leaves it, which matters here:

* sub-controls and sub-parsers are inlined into their parent, their locals taking the place of
  the instance declaration (so they follow the parent's declaration order);
* unused tables, actions and value sets are removed (unused extern instances are kept); actions
  called directly from apply blocks or other actions are inlined, so an action is kept only if
  a table refers to it;
* a table without ``default_action`` gets ``@defaultonly NoAction`` appended to its actions and
  ``default_action = NoAction()``;
* top-level actions are copied into each control whose tables use them, before that control's
  own locals, in order of first use.

P4Info objects then come in the order p4c visits the evaluated blocks (breadth first): top-level
extern instances first, then actions, digests and value sets block by block (package order),
then each block's extern instances and tables in declaration order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from softswitch.errors import P4TypeError, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.types import ExternType, Type
from softswitch.ir.checked import BlockInstance, CheckedProgram
from softswitch.ir.names import qualified_name

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


def walk(node: ast.Node) -> Iterator[ast.Node]:
    """`node` and everything under it, pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))


def referenced_decls(node: ast.Node) -> set[int]:
    """ids of the declarations named anywhere under `node` (paths and resolved calls)."""
    found: set[int] = set()
    for n in walk(node):
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


class _Collector:
    def __init__(self, checked: CheckedProgram) -> None:
        self.checked = checked
        self.model = ProgramModel()
        self.no_action = next(
            (d for d in checked.program.declarations
             if isinstance(d, ast.ActionDecl) and d.name == "NoAction"),
            None,
        )

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
            locals_ = list(self._flatten(block))
            if isinstance(block.decl, ast.ParserDecl):
                self._parser(locals_)
            else:
                self.model.controls.append(self._control(block, locals_))
        return self.model

    def _flatten(self, block: BlockInstance) -> Iterator[tuple[ast.Declaration, BlockInstance]]:
        """The block's locals with used sub-block instances expanded in place."""
        decl = block.decl
        used = referenced_decls(decl.body) if isinstance(decl, ast.ControlDecl) else set()
        if isinstance(decl, ast.ParserDecl):
            for state in decl.states:
                used |= referenced_decls(state)
        for local in decl.locals:
            child = block.children.get(local.name)
            if child is not None and isinstance(local, ast.InstanceDecl):
                if id(local) in used:
                    yield from self._flatten(child)
                continue
            if isinstance(local, ast.TableDecl) and id(local) not in used:
                continue  # p4c removes tables nothing applies
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

    def _control(self, top: BlockInstance,
                 locals_: list[tuple[ast.Declaration, BlockInstance]]) -> ControlObj:
        control = ControlObj(top)
        tables: list[TableObj] = []
        for local, block in locals_:
            if isinstance(local, ast.TableDecl):
                table = TableObj(qualified_name(local, block.path), local, block,
                                 self._action_refs(local))
                tables.append(table)
                self.model.block_items.append(table)
                self.model.block_items.extend(self._table_externs(table))
            elif (kind := extern_type_name(local)) is not None:
                self.model.block_items.append(self._instance(local, kind, block))

        used_actions: dict[int, ast.ActionDecl] = {}
        for table in tables:
            for ref in table.action_refs:
                if ref.decl is None:
                    raise P4TypeError(f"unknown action '{ref.name}' in table '{table.name}'",
                                      ref.loc)
                used_actions.setdefault(id(ref.decl), ref.decl)
        own = {id(local) for local, _ in locals_ if isinstance(local, ast.ActionDecl)}
        # top-level actions are localized first, in order of first use
        for decl in used_actions.values():
            if id(decl) not in own:
                control.actions.append(ActionObj(self._global_action_name(decl, top), decl))
        for local, block in locals_:
            if isinstance(local, ast.ActionDecl) and id(local) in used_actions:
                control.actions.append(ActionObj(qualified_name(local, block.path), local))

        by_decl = {id(a.decl): a.name for a in control.actions}
        for table in tables:
            table.action_names = [by_decl[id(r.decl)] for r in table.action_refs]
        for action in control.actions:
            control.digests.extend(self._digest_calls(action.decl.body))
        assert isinstance(top.decl, ast.ControlDecl)
        control.digests.extend(self._digest_calls(top.decl.body))
        return control

    @staticmethod
    def _global_action_name(decl: ast.ActionDecl, top: BlockInstance) -> str:
        # p4c tags top-level actions with @name(".a") unless they already carry a @name; a
        # relative @name("x") is then prefixed with the control it is localized into.
        annotated = decl.control_plane_name()
        if annotated is not None and not annotated.startswith("."):
            return f"{top.path}.{annotated}"
        return qualified_name(decl, None)

    # --- tables -------------------------------------------------------------------------

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

    def _digest_calls(self, body: ast.Node) -> list[ast.MethodCall]:
        """digest() calls in `body`, following direct action/function calls and sub-controls."""
        found: list[ast.MethodCall] = []
        seen: set[int] = set()

        def visit(node: ast.Node) -> None:
            for n in walk(node):
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
                elif info.kind == "apply" and isinstance(info.decl, ast.InstanceDecl):
                    sub = info.decl.type_decl
                    if isinstance(sub, ast.ControlDecl) and id(sub) not in seen:
                        seen.add(id(sub))
                        visit(sub.body)
                        seen.discard(id(sub))

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

