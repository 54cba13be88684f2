"""Tofino's compile-time rules: what bf-p4c refuses in a TNA program that type-checks (run by
the checker for arch "tna" only, on the CheckedProgram; they never change it).

* one use per path and gress (tofino_paths.py): a table is applied, a register (through its
  RegisterActions or read/write), an indirect Counter or Meter and an action profile are used
  at most once on any path through the ingress or the egress control;
* a Register, Counter or Meter lives in one gress: not used from both ingress and egress;
* a Register's cells are bit<8>, bit<16>, bit<32> (or int<> of those widths) or a struct of two
  fields of one of those types (the stateful ALU's single and dual modes);
* where the externs work (tna.p4's comments): Mirror.emit and Checksum.update in a deparser,
  Resubmit.emit and Digest.pack in the ingress deparser, the other Checksum methods and
  ParserCounter in a parser; one pack call per Digest instance (bf-p4c: "Expected single call
  to pack for digest instance");
* a deparser ``if`` tests only an intrinsic mirror_type / digest_type / resubmit_type field
  against a constant (the deparser has no other conditions);
* loops are refused by the checker itself (stmtcheck.py): bf-p4c does not unroll them;
* control code shifts by constants only, and multiplies/divides only by constant powers of
  two (tofino_ops.py);
* a RegisterAction fits one stateful ALU: its result is at most 32 bits, its body one
  instruction word, and a register's RegisterActions share the ALU's inputs (tofino_salu.py);
* each gress fits Tofino 1's 12 MAU stages, as far as a lower bound from the chains of match
  and action dependencies tells (tofino_stages.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from softswitch.errors import P4TypeError, SourceLocation
from softswitch.frontend import ast
from softswitch.frontend.tofino_ops import operator_errors
from softswitch.frontend.tofino_paths import GressWalk, Use
from softswitch.frontend.tofino_salu import Use as RegisterActionUse
from softswitch.frontend.tofino_salu import register_action_errors
from softswitch.frontend.tofino_stages import stage_errors
from softswitch.frontend.tofino_tree import blocks_under, syntax_nodes
from softswitch.frontend.types import (
    BitType,
    BoolType,
    ExternType,
    StructType,
    Type,
    unwrap_newtype,
)
from softswitch.ir.checked import BlockInstance, CheckedProgram

REGISTER_WIDTHS = (8, 16, 32)
_DEPARSERS = ("ingress_deparser", "egress_deparser")
_PARSERS = ("ingress_parser", "egress_parser")
# extern method -> the block roles it may be called in, and how to say it
_PLACES: dict[tuple[str, str | None], tuple[tuple[str, ...], str]] = {
    ("Mirror", "emit"): (_DEPARSERS, "a deparser"),
    ("Resubmit", "emit"): (("ingress_deparser",), "the ingress deparser"),
    ("Digest", "pack"): (("ingress_deparser",), "the ingress deparser"),
    ("Checksum", "update"): (_DEPARSERS, "a deparser"),
    ("Checksum", None): (_PARSERS, "a parser"),  # add, subtract, verify, get, ...
    ("ParserCounter", None): (_PARSERS, "a parser"),
}
_DEPARSER_CONDITION_FIELDS = ("mirror_type", "digest_type", "resubmit_type")
_DEPARSER_METADATA = (
    "ingress_intrinsic_metadata_for_deparser_t",
    "egress_intrinsic_metadata_for_deparser_t",
)
_ONE_GRESS = ("register", "counter", "meter")


def tofino_rule_errors(checked: CheckedProgram) -> list[P4TypeError]:
    """Every Tofino rule `checked` breaks, in source order."""
    errors: list[P4TypeError] = []
    errors += _register_types(checked)
    errors += _extern_places(checked)
    errors += _deparser_conditions(checked)
    errors += _digest_packs(checked)
    errors += _paths(checked)
    errors += operator_errors(checked)
    errors += _register_actions(checked)
    errors += stage_errors(checked)
    errors.sort(
        key=lambda e: (
            (e.location.file, e.location.line, e.location.column) if e.location else ("", 0, 0)
        )
    )
    return errors


def _where(loc: SourceLocation, here: SourceLocation) -> str:
    return f"line {loc.line}" if loc.file == here.file else f"{loc.file}:{loc.line}"


# --- one use per path and gress; one gress per stateful extern ------------------------------


def _paths(checked: CheckedProgram) -> list[P4TypeError]:
    errors: list[P4TypeError] = []
    seen: dict[str, dict[tuple[str, str], SourceLocation]] = {}
    for gress in ("ingress", "egress"):

        def report(use: Use, gress: str = gress) -> None:
            errors.append(_twice(use, gress))

        walk = GressWalk(checked.blocks[gress], report)
        walk.run()
        seen[gress] = walk.seen
    for resource, loc in seen["egress"].items():
        first = seen["ingress"].get(resource)
        if first is not None and resource[0] in _ONE_GRESS:
            kind, name = resource
            errors.append(
                P4TypeError(
                    f"Tofino: {kind} '{name}' is used in egress here and in ingress "
                    f"({_where(first, loc)}); it lives in the memory of one gress's pipeline and "
                    "can be used from one of them only",
                    loc,
                )
            )
    return errors


def _twice(use: Use, gress: str) -> P4TypeError:
    kind, name = use.resource
    first = _where(use.first, use.loc)
    if kind == "table":
        return P4TypeError(
            f"Tofino: table '{name}' is applied twice on one path through {gress} (first at "
            f"{first}); a table sits in one stage and a packet passes it once",
            use.loc,
        )
    what = {
        "register": "a register is reached through one RegisterAction (or read/write)",
        "counter": "a counter is counted",
        "meter": "a meter is executed",
        "action profile": "an action profile is used by one table",
    }[kind]
    return P4TypeError(
        f"Tofino: {kind} '{name}' is used twice on one path through {gress} (first at "
        f"{first}); {what} once per packet (bf-p4c: the tables using it are not mutually "
        "exclusive, yet share it)",
        use.loc,
    )


# --- register cells -------------------------------------------------------------------------


def _instances(checked: CheckedProgram) -> Iterator[ast.InstanceDecl]:
    for d in checked.program.declarations:
        if isinstance(d, ast.InstanceDecl):
            yield d
        elif isinstance(d, ast.ParserDecl | ast.ControlDecl):
            yield from (x for x in d.locals if isinstance(x, ast.InstanceDecl))
    for block in _blocks(checked):  # specialised copies of generic blocks
        yield from (x for x in block.decl.locals if isinstance(x, ast.InstanceDecl))


def _cell_ok(t: Type) -> bool:
    u = unwrap_newtype(t)
    if isinstance(u, BitType):
        return u.width in REGISTER_WIDTHS
    if isinstance(u, StructType) and len(u.fields) == 2:
        kinds = [unwrap_newtype(ft) for _, ft in u.fields]
        return (
            all(isinstance(k, BitType) and k.width in REGISTER_WIDTHS for k in kinds)
            and kinds[0].width == kinds[1].width
        )  # type: ignore[union-attr]
    return False


def _register_types(checked: CheckedProgram) -> list[P4TypeError]:
    errors = []
    seen: set[int] = set()
    for d in _instances(checked):
        t = d.resolved
        if id(d) in seen or not isinstance(t, ExternType):
            continue
        seen.add(id(d))
        if (
            t.name in ("Register", "DirectRegister")
            and t.type_args
            and not _cell_ok(t.type_args[0])
        ):
            errors.append(
                P4TypeError(
                    f"Tofino: register '{d.name}' has cells of type {t.type_args[0]}; a register "
                    "cell is bit<8>, bit<16> or bit<32> (int<> too), or a struct of two fields of "
                    "one of those types",
                    d.type_ref.loc,
                )
            )
    return errors


def _register_actions(checked: CheckedProgram) -> list[P4TypeError]:
    instances: dict[int, ast.InstanceDecl] = {}
    for d in _instances(checked):
        instances.setdefault(id(d), d)
    uses: list[RegisterActionUse] = []
    for block in _blocks(checked):
        local = {id(x) for x in block.decl.locals}
        for call, _, method in _extern_calls(block.decl):
            receiver = call.call.receiver if call.call is not None else None
            decl = receiver.decl if isinstance(receiver, ast.PathExpression) else None
            if method != "execute" or not isinstance(decl, ast.InstanceDecl) or not decl.ctor_args:
                continue
            reg = decl.ctor_args[0]
            target = reg.decl if isinstance(reg, ast.PathExpression) else None
            if target is None:
                continue
            # a register declared in this control is this instance's own; a top-level one (or
            # one passed in) is shared
            owner = block.path if id(target) in local else ""
            path = block.path if id(decl) in local else ""
            uses.append(RegisterActionUse(decl, path, (owner, id(target))))
    return register_action_errors(list(instances.values()), uses)


# --- where externs work ---------------------------------------------------------------------


def _blocks(checked: CheckedProgram) -> Iterator[BlockInstance]:
    return blocks_under(checked.blocks.values())


def _roles(checked: CheckedProgram) -> Iterator[tuple[str, BlockInstance]]:
    """Each block instance with the role of the main-package block it is part of."""

    def visit(block: BlockInstance, role: str) -> Iterator[tuple[str, BlockInstance]]:
        yield role, block
        for child in block.children.values():
            yield from visit(child, role)

    for role, block in checked.blocks.items():
        yield from visit(block, role)


def _extern_calls(
    decl: ast.ParserDecl | ast.ControlDecl,
) -> Iterator[tuple[ast.MethodCall, str, str]]:
    """(call, extern type, method) for each extern method call in `decl`."""
    roots: list[ast.Node] = [*decl.locals]
    roots += decl.states if isinstance(decl, ast.ParserDecl) else [decl.body]
    for root in roots:
        for n in syntax_nodes(root):
            if (
                isinstance(n, ast.MethodCall)
                and n.call is not None
                and n.call.kind == "extern_method"
                and n.call.receiver is not None
                and isinstance(n.call.receiver.type, ExternType)
            ):
                yield n, n.call.receiver.type.name, n.call.name


def _extern_places(checked: CheckedProgram) -> list[P4TypeError]:
    errors = []
    seen: set[int] = set()
    for role, block in _roles(checked):
        for call, extern, method in _extern_calls(block.decl):
            rule = _PLACES.get((extern, method)) or _PLACES.get((extern, None))
            if rule is None or role in rule[0] or id(call) in seen:
                continue
            seen.add(id(call))
            errors.append(
                P4TypeError(
                    f"Tofino: {extern}.{method} can only be used in {rule[1]}, not in the "
                    f"{role.replace('_', ' ')} ('{block.path}')",
                    call.loc,
                )
            )
    return errors


def _digest_packs(checked: CheckedProgram) -> list[P4TypeError]:
    calls: dict[int, list[ast.MethodCall]] = {}
    for block in _blocks(checked):
        for call, extern, method in _extern_calls(block.decl):
            receiver = call.call.receiver if call.call is not None else None
            if extern == "Digest" and method == "pack" and isinstance(receiver, ast.PathExpression):
                same = calls.setdefault(id(receiver.decl), [])
                if not any(c is call for c in same):
                    same.append(call)
    errors = []
    for same in calls.values():
        for call in same[1:]:
            name = call.call.receiver.name  # type: ignore[union-attr]
            errors.append(
                P4TypeError(
                    f"Tofino: Expected single call to pack for digest instance '{name}' (bf-p4c); "
                    "pack the digest in one place, choosing the data with the digest type",
                    call.loc,
                )
            )
    return errors


# --- deparser conditions --------------------------------------------------------------------


def _intrinsic_type_field(e: ast.Expression) -> bool:
    if not (isinstance(e, ast.Member) and e.member in _DEPARSER_CONDITION_FIELDS):
        return False
    base = e.expr
    t = base.type
    return getattr(t, "name", None) in _DEPARSER_METADATA


def _deparser_condition_ok(cond: ast.Expression) -> bool:
    if not (isinstance(cond, ast.BinaryOp) and cond.op == "=="):
        return False
    for field_side, const_side in ((cond.left, cond.right), (cond.right, cond.left)):
        if _intrinsic_type_field(field_side) and const_side.value is not None:
            return True
    return False


def _checksum_condition_ok(cond: ast.Expression) -> bool:
    """A header's validity or a bool field: what bf-p4c takes as a checksum update's condition."""
    if isinstance(cond, ast.MethodCall) and cond.call is not None:
        return cond.call.kind == "builtin" and cond.call.name == "isValid"
    return isinstance(cond, ast.Member) and isinstance(cond.type, BoolType)


def _only_checksum_updates(body: ast.Statement | None) -> bool:
    """Every statement of `body` is ``x = ck.update(...)`` (a Checksum extern's update)."""
    if body is None:
        return True
    stmts = body.statements if isinstance(body, ast.BlockStatement) else [body]
    for st in stmts:
        if not isinstance(st, ast.AssignmentStatement) or not isinstance(st.rhs, ast.MethodCall):
            return False
        call = st.rhs.call
        receiver = getattr(call, "receiver", None)
        rtype = getattr(getattr(receiver, "decl", None), "resolved", None)
        if call is None or call.name != "update" or getattr(rtype, "name", None) != "Checksum":
            return False
    return True


def _deparser_conditions(checked: CheckedProgram) -> list[P4TypeError]:
    errors = []
    for role in _DEPARSERS:
        decl = checked.blocks[role].decl
        for n in syntax_nodes(decl.body) if isinstance(decl, ast.ControlDecl) else ():
            if not isinstance(n, ast.IfStatement) or _deparser_condition_ok(n.cond):
                continue
            if _checksum_condition_ok(n.cond) and _only_checksum_updates(n.then) and \
                    _only_checksum_updates(n.otherwise):
                continue
            errors.append(
                P4TypeError(
                    "Tofino: an 'if' in a deparser can only compare an intrinsic "
                    "mirror_type, digest_type or resubmit_type field with a constant "
                    "(ig_dprsr_md.mirror_type == 1), or guard Checksum.update assignments "
                    "with a header's isValid() or a bool field",
                    n.cond.loc,
                )
            )
    return errors
