"""Binding the main package (v1model's V1Switch, TNA's Switch of a Pipeline): its six block
arguments and the BlockInstance tree.

A block argument is a constructor call (``MyIngress()``) or the name of a top-level instance.
Each block's parameters are matched against the architecture's block type (``Parser<H, M>``...),
inferring the package's type parameters (H, M) across all six so they agree.

Parsers and controls can also be passed to a parser or control as constructor arguments
(``control C(...)(Inner i)``, instantiated ``C(InnerImpl()) c;``). The block built for such an
argument is a child of the instance, named after the constructor parameter (``<c's path>.i``):
p4c specialises C and declares the argument's instance there under the parameter's name. An
argument naming an existing instance (``C(inner) c;``) is that instance, not a copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from softswitch.errors import P4TypeError, SourceLocation
from softswitch.frontend import ast
from softswitch.frontend.typeops import substitute, unify
from softswitch.frontend.types import ObjectType, Type, TypeVar
from softswitch.ir.checked import BlockInstance
from softswitch.ir.names import block_path, qualified_name

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker

ROLES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")
PACKAGE = "V1Switch"

# TNA: main is ``Switch(pipe)`` of one ``Pipeline(...)``, whose parameters are the block roles.
TNA_PACKAGE = "Switch"
TNA_PIPELINE = "Pipeline"
TNA_ROLES = (
    "ingress_parser", "ingress", "ingress_deparser", "egress_parser", "egress", "egress_deparser"
)  # fmt: skip

_BlockDecl = ast.ParserDecl | ast.ControlDecl
_BlockTypeDecl = ast.ParserDecl | ast.ControlDecl | ast.ParserTypeDecl | ast.ControlTypeDecl


def build_blocks(ck: Checker, main: ast.InstanceDecl) -> dict[str, BlockInstance]:
    """The main package's blocks by role (v1model's ROLES, or TNA_ROLES)."""
    if ck.arch.name == "tna":
        return _build_tna_blocks(ck, main)
    pkg = main.type_decl
    if not isinstance(pkg, ast.PackageTypeDecl) or pkg.name != PACKAGE:
        raise P4TypeError(f"'main' must be an instance of the v1model package {PACKAGE}", main.loc)
    args = ck.bind_arguments(pkg.params, main.args, main.loc, f"package '{PACKAGE}'")
    main.ctor_params, main.ctor_args = list(pkg.params), args
    return _bind_roles(ck, pkg, args, ROLES, main.loc)


def _bind_roles(
    ck: Checker,
    pkg: ast.PackageTypeDecl,
    args: list[ast.Expression | None],
    roles: tuple[str, ...],
    loc: SourceLocation,
) -> dict[str, BlockInstance]:
    """Match the block arguments `args` of package `pkg` to its parameters (inferring the
    package's type parameters across all of them) and build their BlockInstances by role."""
    variables = {tp.name for tp in pkg.type_params}
    bindings: dict[str, Type] = {}
    blocks: dict[str, BlockInstance] = {}
    tree = _Instances()
    for role, param, arg in zip(roles, pkg.params, args):
        if arg is None:
            raise P4TypeError(f"package '{pkg.name}' needs its '{param.name}' argument", loc)
        decl, params, ctor_args = _block_argument(ck, arg, pkg.name)
        what = f"'{decl.name}' (passed as '{param.name}' of {pkg.name})"
        arch_params = match_signature(decl, param, bindings, variables, what, arg.loc)
        blocks[role] = tree.block(decl, decl.name, params, ctor_args, None)
        blocks[role].arch_params = arch_params
    return blocks


def _build_tna_blocks(ck: Checker, main: ast.InstanceDecl) -> dict[str, BlockInstance]:
    """``Switch(pipe) main;`` with ``Pipeline(...) pipe;`` (or the Pipeline written inline):
    the six blocks of the one pipeline."""
    pkg = main.type_decl
    if not isinstance(pkg, ast.PackageTypeDecl) or pkg.name != TNA_PACKAGE:
        raise P4TypeError(f"'main' must be an instance of the TNA package {TNA_PACKAGE}", main.loc)
    args = ck.bind_arguments(pkg.params, main.args, main.loc, f"package '{TNA_PACKAGE}'")
    main.ctor_params, main.ctor_args = list(pkg.params), args
    pipe = args[0] if args else None
    if pipe is None:
        raise P4TypeError(f"package '{TNA_PACKAGE}' needs its pipeline argument", main.loc)
    pipeline, pipe_args = _pipeline_argument(ck, pipe)
    bound = ck.bind_arguments(pipeline.params, pipe_args, pipe.loc, f"package '{TNA_PIPELINE}'")
    if isinstance(pipe, ast.PathExpression) and isinstance(pipe.decl, ast.InstanceDecl):
        pipe.decl.ctor_params, pipe.decl.ctor_args = list(pipeline.params), bound
    return _bind_roles(ck, pipeline, bound, TNA_ROLES, pipe.loc)


def _pipeline_argument(
    ck: Checker, arg: ast.Expression
) -> tuple[ast.PackageTypeDecl, list[ast.Argument]]:
    """The Pipeline package a Switch argument names (a top-level instance) or constructs."""
    decl: ast.Node | None = None
    args: list[ast.Argument] = []
    if isinstance(arg, ast.PathExpression):
        inst = ck.resolve_name(arg.name, arg.is_global, ck.top, arg.loc)
        arg.decl = inst
        if isinstance(inst, ast.InstanceDecl):
            decl, args = inst.type_decl, inst.args
            arg.type = inst.resolved
    elif isinstance(arg, ast.MethodCall) and isinstance(arg.callee, ast.PathExpression):
        decl = ck.resolve_name(arg.callee.name, arg.callee.is_global, ck.top, arg.callee.loc)
        arg.callee.decl = decl
        args = arg.args
        if isinstance(decl, ast.PackageTypeDecl):
            arg.type = ObjectType("package", decl.name, decl)
    if not isinstance(decl, ast.PackageTypeDecl) or decl.name != TNA_PIPELINE:
        raise P4TypeError(
            f"the argument of package '{TNA_PACKAGE}' must be a {TNA_PIPELINE}", arg.loc
        )
    return decl, args


def pipe_name(main: ast.InstanceDecl) -> str:
    """The name of the Pipeline instance a TNA main is built of ("" when written inline), as
    bf-p4c names the pipe (its output folder, the BF-Runtime prefix)."""
    arg = main.ctor_args[0] if main.ctor_args else None
    return arg.name if isinstance(arg, ast.PathExpression) else ""


class _Instances:
    """Builds BlockInstances; a top-level instance named in several places is built once."""

    def __init__(self) -> None:
        self.top: dict[int, BlockInstance] = {}
        self.building: list[_BlockDecl] = []  # the blocks being built, outermost first

    def block(
        self,
        decl: _BlockDecl,
        path: str,
        params: list[ast.Parameter],
        args: list[ast.Expression | None],
        site: BlockInstance | None,
    ) -> BlockInstance:
        """The BlockInstance of `decl` at `path`, its constructor bound to `args` (written in
        the block `site`, None at the top level), with its nested parser/control instances."""
        with self._building(decl):
            outer = site.ctor_args if site is not None else None
            block = BlockInstance(decl=decl, path=path, ctor_args=_ctor_values(params, args, outer))
            for p, a in zip(params, args):
                if a is not None and _is_block_type(p.type):
                    block.children[p.name] = self.argument(a, f"{path}.{p.name}", site)
                    del block.ctor_args[p.name]  # a block, not a value
            for local in decl.locals:
                if isinstance(local, ast.InstanceDecl) and isinstance(local.type_decl, _BlockDecl):
                    if local.type_decl.type_params:  # never applied, so never specialised
                        raise P4TypeError(
                            f"cannot infer the type arguments of '{local.type_decl.name}'",
                            local.loc,
                        )
                    block.children[local.name] = self.block(
                        local.type_decl,
                        block_path(path, local),
                        local.ctor_params,
                        local.ctor_args,
                        block,
                    )
            return block

    @contextmanager
    def _building(self, decl: _BlockDecl) -> Iterator[None]:
        """Refuse a block that (through its locals or arguments) instantiates itself."""
        if any(d is decl for d in self.building):
            raise P4TypeError(f"'{decl.name}' instantiates itself", decl.loc)
        self.building.append(decl)
        try:
            yield
        finally:
            self.building.pop()

    def argument(self, a: ast.Expression, path: str, site: BlockInstance | None) -> BlockInstance:
        """The block a parser/control constructor argument `a` (written in `site`) stands for:
        a new one at `path` for a constructor call, else the instance it names."""
        info = a.call if isinstance(a, ast.MethodCall) else None
        if info is not None and info.kind == "constructor" and isinstance(info.decl, _BlockDecl):
            return self.block(info.decl, path, info.params, info.args, site)
        decl = a.decl if isinstance(a, ast.PathExpression) else None
        if site is not None and isinstance(decl, ast.Parameter | ast.InstanceDecl):
            found = site.children.get(decl.name)
            if found is not None:
                return found
        if isinstance(decl, ast.InstanceDecl) and isinstance(decl.type_decl, _BlockDecl):
            top = self.top.get(id(decl))
            if top is None:
                name = qualified_name(decl, None)
                top = self.block(decl.type_decl, name, decl.ctor_params, decl.ctor_args, None)
                self.top[id(decl)] = top
            return top
        raise P4TypeError("this argument does not name a parser or control instance", a.loc)


def _is_block_type(t: Type | None) -> bool:
    return isinstance(t, ObjectType) and t.kind in ("parser", "control")


def _ctor_values(
    params: list[ast.Parameter],
    args: list[ast.Expression | None],
    outer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Constant values by parameter name; an argument naming one of the enclosing block's own
    constructor parameters takes that parameter's value; non-constants (instances) stay
    expressions."""
    values: dict[str, Any] = {}
    for p, a in zip(params, args):
        if a is None:
            continue
        if a.value is not None:
            values[p.name] = a.value
        elif (
            outer
            and isinstance(a, ast.PathExpression)
            and a.name in outer
            and (isinstance(a.decl, ast.Parameter))
        ):
            values[p.name] = outer[a.name]
        else:
            values[p.name] = a
    return values


def _block_argument(
    ck: Checker, arg: ast.Expression, package: str = PACKAGE
) -> tuple[_BlockDecl, list[ast.Parameter], list[ast.Expression | None]]:
    """The parser/control a package argument instantiates, with its constructor binding."""
    if isinstance(arg, ast.MethodCall) and isinstance(arg.callee, ast.PathExpression):
        decl = ck.resolve_name(arg.callee.name, arg.callee.is_global, ck.top, arg.callee.loc)
        if isinstance(decl, _BlockDecl):
            arg.type = ck.check_constructor_call(arg, decl, ck.top)
            assert arg.call is not None and isinstance(arg.call.decl, _BlockDecl)
            return arg.call.decl, arg.call.params, arg.call.args  # a generic one's specialisation
    if isinstance(arg, ast.PathExpression):
        inst = ck.resolve_name(arg.name, arg.is_global, ck.top, arg.loc)
        arg.decl = inst
        if isinstance(inst, ast.InstanceDecl) and isinstance(inst.type_decl, _BlockDecl):
            arg.type = inst.resolved
            return inst.type_decl, inst.ctor_params, inst.ctor_args
    raise P4TypeError(
        f"argument of package '{package}' must be a parser or control instance", arg.loc
    )


def check_block_argument(param: ast.Parameter, arg: ast.Expression) -> bool:
    """For an argument of parser/control type `arg` (checked) bound to a parameter of
    parser/control type: check that its apply parameters fit the parameter's type. False when
    the parameter or argument is not of parser/control type (the caller checks as usual)."""
    pt, at = param.type, arg.type
    if not (_is_block_type(pt) and _is_block_type(at)):
        return False
    assert isinstance(pt, ObjectType) and isinstance(at, ObjectType)
    decl = at.decl
    if not isinstance(decl, _BlockTypeDecl):
        return False
    arch = pt.decl
    variables = {tp.name for tp in getattr(arch, "type_params", [])}
    what = f"'{decl.name}' (passed as '{param.name}')"
    match_signature(decl, param, {}, variables, what, arg.loc)
    return True


def match_signature(
    decl: _BlockTypeDecl,
    param: ast.Parameter,
    bindings: dict[str, Type],
    variables: set[str],
    what: str,
    loc: SourceLocation,
) -> list[str]:
    """Check `decl`'s apply parameters against the parser/control type of `param` (an
    architecture block type such as ``Parser<H, M>``, or a parser/control declaration),
    binding the `variables` of that type (across calls, for the package's H and M).

    `decl` may leave out trailing @optional parameters of the type (TNA's blocks mostly do);
    the others match by position. Returns the type's parameter names `decl`'s parameters stand
    for, in order."""
    ref = param.type_ref
    arch = getattr(param.type_ref.resolved, "decl", None)
    if not isinstance(ref, ast.NamedTypeRef) or not isinstance(arch, _BlockTypeDecl):
        raise P4TypeError(f"parameter '{param.name}' is not a parser or control type", param.loc)
    want_parser = isinstance(arch, ast.ParserTypeDecl | ast.ParserDecl)
    if want_parser != isinstance(decl, ast.ParserTypeDecl | ast.ParserDecl):
        kind = "parser" if want_parser else "control"
        raise P4TypeError(f"'{decl.name}' must be a {kind} to be passed as '{param.name}'", loc)
    # the type's own type parameters -> the arguments written (Parser<H, M> in V1Switch<H, M>)
    to_args = {
        tp.name: (a.resolved or TypeVar(tp.name))
        for tp, a in zip(getattr(arch, "type_params", []), ref.type_args)
    }
    required = len(arch.params)
    while required and arch.params[required - 1].annotation("optional"):
        required -= 1
    if not required <= len(decl.params) <= len(arch.params):
        count = (
            str(len(arch.params))
            if required == len(arch.params)
            else (f"{required} to {len(arch.params)}")
        )
        raise P4TypeError(
            f"{what} has {len(decl.params)} parameters, {arch.name} has {count}", decl.loc
        )
    for mine, theirs in zip(decl.params, arch.params):
        if mine.direction != theirs.direction:
            need = f"direction '{theirs.direction}'" if theirs.direction else "no direction"
            raise P4TypeError(f"{what}: parameter '{mine.name}' must have {need}", mine.loc)
        want = substitute(theirs.type_ref.resolved, to_args)  # type: ignore[arg-type]
        have = mine.type_ref.resolved
        assert have is not None
        if not unify(want, have, bindings, variables) or substitute(want, bindings) != have:
            raise P4TypeError(
                f"{what}: parameter '{mine.name}' has type {have}, expected {substitute(want, bindings)}",
                mine.loc,
            )
    return [p.name for p in arch.params[: len(decl.params)]]
