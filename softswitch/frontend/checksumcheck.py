"""What p4c-bm2-ss accepts in the two checksum controls of V1Switch.

p4c's simple_switch back end (``convertChecksum``) turns the VerifyChecksum and ComputeChecksum
controls into BMv2 checksum objects, so their apply blocks may hold nothing but calls of
``verify_checksum``/``verify_checksum_with_payload`` (VerifyChecksum) or
``update_checksum``/``update_checksum_with_payload`` (ComputeChecksum), possibly inside nested
blocks; anything else is refused ("Only calls to ... allowed"). The field list of such a call
must be "simple" (``EnsureExpressionIsSimple``): names, fields, stack elements, list and struct
expressions and integer constants, since BMv2 can only concatenate fields; a slice, cast,
concatenation, comparison or a bool literal is refused ("Computations are not supported in
...").

The rules are applied to the source as p4c's mid end would leave it: ``if`` with a constant
condition keeps only the branch taken (constant folding), and calls of actions and functions,
which p4c inlines, are let through (their bodies are not looked into).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.ir.checked import BlockInstance

_CALLS = {
    "verify_checksum": ("verify_checksum", "verify_checksum_with_payload"),
    "compute_checksum": ("update_checksum", "update_checksum_with_payload"),
}


def checksum_control_errors(blocks: Mapping[str, BlockInstance]) -> list[P4TypeError]:
    """The p4c errors of the VerifyChecksum and ComputeChecksum blocks, in source order."""
    errors: list[P4TypeError] = []
    for role, names in _CALLS.items():
        block = blocks.get(role)
        if block is not None and isinstance(block.decl, ast.ControlDecl):
            errors.extend(_statement_errors(block.decl.body, names))
    return errors


def _statement_errors(
    s: ast.Statement | ast.Declaration, names: tuple[str, str]
) -> Iterator[P4TypeError]:
    if isinstance(s, ast.Declaration | ast.EmptyStatement):
        return
    if isinstance(s, ast.BlockStatement):
        for inner in s.statements:
            yield from _statement_errors(inner, names)
        return
    if isinstance(s, ast.IfStatement) and isinstance(s.cond.value, bool):
        taken = s.then if s.cond.value else s.otherwise
        if taken is not None:
            yield from _statement_errors(taken, names)
        return
    if isinstance(s, ast.ForStatement | ast.ForInStatement):
        return  # unrolled by p4c; what its body becomes is not modelled here
    if isinstance(s, ast.MethodCallStatement):
        info = s.call.call
        if info is not None and info.kind in ("action", "function"):
            return
        if info is not None and info.kind == "extern_function" and info.name in names:
            data = info.args[1] if len(info.args) > 1 else None
            if data is not None:
                yield from _data_errors(data, names[0])
            return
    if isinstance(s, ast.AssignmentStatement) and not _writes_parameter(s.lhs):
        return  # a local's assignment that p4c's copy propagation may well remove
    yield P4TypeError(f"Only calls to {names[0]} or {names[1]} allowed", s.loc)


def _writes_parameter(lhs: ast.Expression) -> bool:
    root = ast.lvalue_root(lhs)
    return isinstance(root, ast.PathExpression) and isinstance(root.decl, ast.Parameter)


def _data_errors(e: ast.Expression, function: str) -> Iterator[P4TypeError]:
    """p4c's EnsureExpressionIsSimple over a checksum's field list."""
    if e.value is not None and not isinstance(e.value, bool):
        return  # a constant (p4c has folded it); enum and error members too
    if isinstance(e, ast.PathExpression):
        return
    if isinstance(e, ast.Member):
        yield from _data_errors(e.expr, function)
        return
    if isinstance(e, ast.ArrayIndex):
        yield from _data_errors(e.expr, function)
        yield from _data_errors(e.index, function)
        return
    if isinstance(e, ast.ListExpression):
        for el in e.elements:
            yield from _data_errors(el, function)
        return
    if isinstance(e, ast.StructExpression):
        for f in e.fields:
            yield from _data_errors(f.expr, function)
        return
    yield P4TypeError(f"Computations are not supported in {function}", e.loc)
