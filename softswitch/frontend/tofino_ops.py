"""Operators Tofino's match-action units cannot compute (for Tofino's rules): shifts by a run-time
amount, and multiplication, division and modulo that p4c cannot turn into a shift or a mask.

bf-p4c selects one MAU instruction per operator (DoInstructionSelection in
backends/tofino/bf-p4c/mau/instruction_selection.cpp): a shift needs a constant count ("shift
count must be a constant"), and there is no multiply, divide or modulo instruction. Before that,
p4c's strength reduction (frontends/p4/strengthReduction.cpp) rewrites ``a * 2^k`` (either side)
to ``a << k``, ``a / 2^k`` to ``a >> k`` and ``a % 2^k`` to ``a & (2^k - 1)``, and drops ``* 1``,
``* 0``, ``/ 1`` and a zero dividend or shifted value; constant operands are folded. So those
forms are accepted. (The checker already refuses ``/`` and ``%`` by a run-time value except a
local it may propagate; here that local is refused too: we do not model p4c's copy
propagation, for shift amounts either.)

This covers control code only: the ingress and egress controls with their sub-controls, actions
and functions (parsers and deparsers compute nothing of this kind). RegisterAction bodies are
the stateful ALU's, checked by tofino_salu.py.
"""

from __future__ import annotations

from collections.abc import Iterator

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.frontend.tofino_tree import NOT_CHILDREN, blocks_under, syntax_nodes
from softswitch.ir.checked import BlockInstance, CheckedProgram

_MAU_ROLES = ("ingress", "egress")
# RegisterAction bodies ("initializer") are the stateful ALU rules' (tofino_salu.py)
_SKIP = NOT_CHILDREN | {"initializer", "implements"}


def operator_errors(checked: CheckedProgram) -> list[P4TypeError]:
    """A "Tofino:" error for each shift, ``*``, ``/`` or ``%`` in control code that no MAU
    instruction computes."""
    errors: list[P4TypeError] = []
    seen: set[tuple[str, int, int]] = set()  # by location: generic blocks are copied
    for node in _control_code(checked):
        if not isinstance(node, ast.BinaryOp):
            continue
        problem = _problem(node)
        where = (node.loc.file, node.loc.line, node.loc.column)
        if problem is not None and where not in seen:
            seen.add(where)
            errors.append(P4TypeError(problem, node.loc))
    return errors


def _power_of_two(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0


def _problem(e: ast.BinaryOp) -> str | None:
    if e.value is not None:  # folded: both operands are constants
        return None
    if e.op in ("<<", ">>", "/", "%") and e.left.value == 0:
        return None  # strength reduction: 0 shifted or divided is 0
    if e.op in ("<<", ">>"):
        if e.right.value is not None:
            return None
        return (
            f"Tofino: the shift amount of '{e.op}' must be a compile-time constant (bf-p4c: "
            "shift count must be a constant); an action shifts by a fixed number of bits only"
        )
    if e.op == "*":
        if any(_power_of_two(v) or v == 0 for v in (e.left.value, e.right.value)):
            return None
        return (
            "Tofino: '*' is only possible by a constant power of two (p4c turns it into a "
            "shift); the match-action units have no multiplier"
        )
    if e.op in ("/", "%"):
        if _power_of_two(e.right.value):
            return None
        turned = "a shift" if e.op == "/" else "a mask"
        return (
            f"Tofino: '{e.op}' is only possible by a constant power of two (p4c turns it into "
            f"{turned}); the match-action units cannot divide"
        )
    return None


def _roles(checked: CheckedProgram) -> Iterator[BlockInstance]:
    return blocks_under(checked.blocks[r] for r in _MAU_ROLES if r in checked.blocks)


def _control_code(checked: CheckedProgram) -> Iterator[ast.Node]:
    """Every syntactic node of the MAU controls, and of the actions and functions declared
    outside them that the controls call or their tables run."""
    visited: set[int] = set()
    roots: list[ast.Node] = []
    for block in _roles(checked):
        decl = block.decl
        if isinstance(decl, ast.ControlDecl):
            roots += [*decl.locals, decl.body]
    while roots:
        root = roots.pop()
        for node in syntax_nodes(root, _SKIP, visited):
            yield node
            roots += _callees(node)


def _callees(node: ast.Node) -> list[ast.Node]:
    """Actions and functions `node` reaches that may be declared at the top level."""
    call = node.call if isinstance(node, ast.MethodCall) else None
    if call is not None and call.kind in ("action", "function") and call.decl is not None:
        return [call.decl]
    if isinstance(node, ast.TableDecl):
        refs = [*node.actions, *([node.default_action] if node.default_action else [])]
        return [r.decl for r in refs if isinstance(r.decl, ast.ActionDecl)]
    return []
