"""Binding the v1model main package: its six block arguments and the BlockInstance tree.

A block argument is a constructor call (``MyIngress()``) or the name of a top-level instance.
Each block's parameters are matched against the architecture's block type (``Parser<H, M>``...),
inferring the package's type parameters (H, M) across all six so they agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.frontend.typeops import substitute, unify
from softswitch.frontend.types import Type, TypeVar
from softswitch.ir.checked import BlockInstance

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker

ROLES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")
PACKAGE = "V1Switch"


def build_blocks(ck: Checker, main: ast.InstanceDecl) -> dict[str, BlockInstance]:
    pkg = main.type_decl
    if not isinstance(pkg, ast.PackageTypeDecl) or pkg.name != PACKAGE:
        raise P4TypeError(f"'main' must be an instance of the v1model package {PACKAGE}", main.loc)
    args = ck.bind_arguments(pkg.params, main.args, main.loc, f"package '{PACKAGE}'")
    main.ctor_params, main.ctor_args = list(pkg.params), args
    variables = {tp.name for tp in pkg.type_params}
    bindings: dict[str, Type] = {}
    blocks: dict[str, BlockInstance] = {}
    for role, param, arg in zip(ROLES, pkg.params, args):
        if arg is None:
            raise P4TypeError(f"package '{PACKAGE}' needs its '{param.name}' argument", main.loc)
        decl, ctor_args = _block_argument(ck, arg)
        _match_signature(decl, param, bindings, variables, arg)
        blocks[role] = instantiate(decl, decl.name, ctor_args)
    return blocks


def instantiate(
    decl: ast.ParserDecl | ast.ControlDecl, path: str, ctor_args: dict[str, Any]
) -> BlockInstance:
    """The BlockInstance of `decl` at `path`, with its nested parser/control instances."""
    block = BlockInstance(decl=decl, path=path, ctor_args=ctor_args)
    for local in decl.locals:
        if isinstance(local, ast.InstanceDecl) and isinstance(
            local.type_decl, ast.ParserDecl | ast.ControlDecl
        ):
            values = _ctor_values(local.ctor_params, local.ctor_args, ctor_args)
            block.children[local.name] = instantiate(
                local.type_decl, f"{path}.{local.name}", values
            )
    return block


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
    ck: Checker, arg: ast.Expression
) -> tuple[ast.ParserDecl | ast.ControlDecl, dict[str, Any]]:
    if isinstance(arg, ast.MethodCall) and isinstance(arg.callee, ast.PathExpression):
        decl = ck.resolve_name(arg.callee.name, arg.callee.is_global, ck.top, arg.callee.loc)
        if isinstance(decl, ast.ParserDecl | ast.ControlDecl):
            arg.type = ck.check_constructor_call(arg, decl, ck.top)
            assert arg.call is not None
            return decl, _ctor_values(arg.call.params, arg.call.args)
    if isinstance(arg, ast.PathExpression):
        inst = ck.resolve_name(arg.name, arg.is_global, ck.top, arg.loc)
        arg.decl = inst
        if isinstance(inst, ast.InstanceDecl) and isinstance(
            inst.type_decl, ast.ParserDecl | ast.ControlDecl
        ):
            arg.type = inst.resolved
            return inst.type_decl, _ctor_values(inst.ctor_params, inst.ctor_args)
    raise P4TypeError(
        f"argument of package '{PACKAGE}' must be a parser or control instance", arg.loc
    )


def _match_signature(
    decl: ast.ParserDecl | ast.ControlDecl,
    param: ast.Parameter,
    bindings: dict[str, Type],
    variables: set[str],
    arg: ast.Expression,
) -> None:
    """Check `decl`'s apply parameters against the architecture block type of `param`."""
    ref = param.type_ref
    arch = getattr(param.type_ref.resolved, "decl", None)
    if not isinstance(ref, ast.NamedTypeRef) or not isinstance(
        arch, ast.ParserTypeDecl | ast.ControlTypeDecl
    ):
        raise P4TypeError(
            f"package parameter '{param.name}' is not a parser or control type", param.loc
        )
    want_parser = isinstance(arch, ast.ParserTypeDecl)
    if want_parser != isinstance(decl, ast.ParserDecl):
        kind = "parser" if want_parser else "control"
        raise P4TypeError(f"'{decl.name}' must be a {kind} to be passed as '{param.name}'", arg.loc)
    # arch's own type parameters -> the package's (Parser<H, M> inside V1Switch<H, M>)
    to_package = {
        tp.name: (a.resolved or TypeVar(tp.name)) for tp, a in zip(arch.type_params, ref.type_args)
    }
    what = f"'{decl.name}' (passed as '{param.name}' of {PACKAGE})"
    if len(decl.params) != len(arch.params):
        raise P4TypeError(
            f"{what} has {len(decl.params)} parameters, {arch.name} has {len(arch.params)}",
            decl.loc,
        )
    for mine, theirs in zip(decl.params, arch.params):
        if mine.direction != theirs.direction:
            need = f"direction '{theirs.direction}'" if theirs.direction else "no direction"
            raise P4TypeError(f"{what}: parameter '{mine.name}' must have {need}", mine.loc)
        want = substitute(theirs.type_ref.resolved, to_package)  # type: ignore[arg-type]
        have = mine.type_ref.resolved
        assert have is not None
        if not unify(want, have, bindings, variables) or substitute(want, bindings) != have:
            raise P4TypeError(
                f"{what}: parameter '{mine.name}' has type {have}, expected {substitute(want, bindings)}",
                mine.loc,
            )
