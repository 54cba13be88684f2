"""A lower bound on the MAU stages each gress of a TNA program needs on Tofino 1 (12 per gress).

bf-p4c places tables by their dependency graph (backends/tofino/bf-p4c/mau/
table_dependency_graph.cpp, FindDataDependencyGraph and finalize_dependence_graph): a table
whose match key or gateway condition reads a field an earlier table's action writes has a match
dependency (IXBAR_READ), one whose action reads it an action dependency (ACTION_READ); both put
it at least one stage later (min_stage = the writer's + 1). Control dependencies (the tables
under an ``if``, a hit/miss, an action_run case) and anti dependencies allow the same stage. A
gress needs at least 1 + the largest min_stage of its tables.

This walk computes such min_stages the way that graph sees the program, counting only what
certainly forces a new stage, so the bound never exceeds what bf-p4c needs:

* nodes: every applied table; every ``if`` / ``switch`` on a value (a gateway); every apply-block
  statement that becomes an action of its own (p4c's SynthesizeActions and MoveActionsToTables:
  assignments, extern calls, direct action calls), grouped as bf-p4c's ActionSynthesisPolicy
  groups them (a statement reading a path an earlier one of its run wrote starts a new action);
* a node's stage is at least that of the node it is control dependent on, and at least one more
  than the last writer (on each path; merged at joins, so exclusive branches do not add up) of
  every bit it reads: key, condition, action operands, RegisterAction inputs and index;
* a table writes what any of its actions writes, at its stage + 1; a RegisterAction / Meter /
  Random result too (the stateful ALU's output is written at the end of its stage);
* not counted (bf-p4c may avoid them): write-after-write (OUTPUT), a statement's writes to a local
  variable (copy propagation may remove them: a reader sees the inputs instead), a copy into a
  header field (AutoAlias may alias it), a first unconditional constant or parser-field copy (may
  move to the parser), Hash.get results in apply blocks, Register.read results in locals, reads
  of fields written earlier in the same action, anything of a table with
  @ignore_table_dependency; the node ending the chain must be live (a keyed table, an extern
  call, or a write read later or deparsed);
* an apply-block assignment of a side-effect free value to a field: the apply block's later
  conditions and statements wait only for what the value reads, and so do table keys when it is
  a plain copy (p4c's LocalCopyPropagation, midend/local_copyprop.cpp, puts the value in the
  field's place, and into table keys through RewriteTableKeys when it is a field reference); the
  tables' actions still read the field (copy propagation does not reach into actions).

Not modelled at all (each can only add stages): PHV allocation, SRAM/TCAM and table sizes, the
input crossbar, hash and action data buses, instruction memory, gateway resources, table splits.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import pairwise

from softswitch.errors import P4TypeError, SourceLocation
from softswitch.frontend import ast
from softswitch.frontend.tofino_tree import action_run_table, extern_instance, table_actions
from softswitch.frontend.types import (
    BitType,
    BoolType,
    EnumType,
    ExternType,
    HeaderStackType,
    HeaderType,
    HeaderUnionType,
    IntType,
    StructType,
    Type,
    VarbitType,
    unwrap_newtype,
)
from softswitch.ir.checked import BlockInstance, CheckedProgram
from softswitch.ir.names import qualified_name

MAU_STAGES = 12  # Tofino 1: TofinoDevice::getNumStages (backends/tofino/bf-p4c/device.h)
GRESSES = (("ingress", "ingress_deparser"), ("egress", "egress_deparser"))
# what the gress hands to the deparser or the traffic manager: a write to it is live
_OUTPUT_TYPES = (
    "ingress_intrinsic_metadata_for_deparser_t",
    "ingress_intrinsic_metadata_for_tm_t",
    "egress_intrinsic_metadata_for_deparser_t",
    "egress_intrinsic_metadata_for_output_port_t",
)
_SALU = ("RegisterAction", "DirectRegisterAction")
_RESULT_EXTERNS = ("Meter", "DirectMeter", "Random", "Lpf", "DirectLpf", "Wred", "DirectWred")



@dataclass(frozen=True)
class Link:
    """One node of a dependency chain: its name and place; `field`: the field it reads that
    the link before it writes (a new stage), or "" (control dependent on the link before it:
    the same stage is allowed)."""

    name: str
    loc: SourceLocation
    field: str = ""


@dataclass(eq=False)
class _Node:
    """A table, gateway or synthesized action at its minimum stage; `chain` is the dependency
    chain that puts it there, ending with it (its stage = the links that read a field). `deps`: the nodes whose writes it reads or
    that control it (needed when it is); `root`: needed anyway (a keyed table, an extern
    call changing state, a write the deparser or the traffic manager gets)."""

    name: str
    loc: SourceLocation
    stage: int
    chain: tuple[Link, ...]
    root: bool
    deps: list[_Node] = field(default_factory=list)


@dataclass(frozen=True)
class _Req:
    """A lower bound on a reader's stage: `stage`, reached through `chain`; `appends`: a data
    dependency on `node`'s write (of `field`), else a control dependency on `node`."""

    stage: int
    chain: tuple[Link, ...]
    appends: bool
    node: _Node | None = None
    field: str = ""  # the field read (a data dependency)


ZERO = _Req(0, (), True)


def _key(r: _Req) -> tuple[int, int]:
    """Larger stage first; at one stage a data dependency, then a control one, then none."""
    return (r.stage, 0 if not r.chain else 2 if r.appends else 1)


def _max(reqs: Iterable[_Req]) -> _Req:
    best = ZERO
    for r in reqs:
        if _key(r) > _key(best):
            best = r
    return best


def _control(node: _Node) -> _Req:
    return _Req(node.stage, node.chain, False, node)


def _written(node: _Node) -> _Req:
    return _Req(node.stage + 1, node.chain, True, node)


# --- per-bit last writers --------------------------------------------------------------------

Seg = tuple[int, int, _Req]  # bits lo..hi of a leaf field, and what reading them requires
# leaf field path -> its written bits (unwritten bits: ZERO); COPY + leaf, EXPR + leaf: the bits
# an apply-block assignment gave a value p4c's LocalCopyPropagation may put in place of a later
# apply-block read (COPY: a plain copy, also into table keys; EXPR: another side-effect free
# value, into conditions and statements); they require what the value reads
State = dict[str, list[Seg]]
Range = tuple[str, int, int]  # a leaf field path and a bit range
COPY, EXPR = "=copy ", "=expr "  # (of one length)


def _overlapping(segs: list[Seg], lo: int, hi: int) -> Iterator[_Req]:
    for s_lo, s_hi, req in segs:
        if s_lo <= hi and lo <= s_hi:
            yield req


def _seen(segs: list[Seg], copied: list[Seg] | None, lo: int, hi: int) -> Iterator[_Req]:
    """What reading bits lo..hi requires: a copied value's inputs where there is one, else the
    field's writers."""
    rest = [(lo, hi)]
    for c_lo, c_hi, req in copied or []:
        if c_lo <= hi and lo <= c_hi:
            yield req
            rest = [part for r_lo, r_hi in rest
                    for part in ((r_lo, min(r_hi, c_lo - 1)), (max(r_lo, c_hi + 1), r_hi))
                    if part[0] <= part[1]]
    for r_lo, r_hi in rest:
        yield from _overlapping(segs, r_lo, r_hi)


def _put(segs: list[Seg], lo: int, hi: int, req: _Req) -> list[Seg]:
    """`segs` with bits lo..hi now written by `req` (the last writer of those bits)."""
    out = _cut(segs, lo, hi)
    out.append((lo, hi, req))
    out.sort(key=lambda s: s[0])
    return out


def _cut(segs: list[Seg], lo: int, hi: int) -> list[Seg]:
    """`segs` without bits lo..hi."""
    out: list[Seg] = []
    for s_lo, s_hi, r in segs:
        if s_hi < lo or s_lo > hi:
            out.append((s_lo, s_hi, r))
            continue
        if s_lo < lo:
            out.append((s_lo, lo - 1, r))
        if s_hi > hi:
            out.append((hi + 1, s_hi, r))
    return out


def _filled(state: State, copies: set[str]) -> State:
    """`state` with a copied value for each of `copies` it lacks: the field's own writers (a
    path without the copy reads the field)."""
    missing = {k: state.get(k[len(COPY):], []) for k in copies if k not in state}
    return {**state, **missing} if missing else state


def _merge(states: list[State | None]) -> State | None:
    """The state after a join: per bit, the largest requirement of the paths reaching it (the
    last writers of all of them, as bf-p4c's flow_merge unites them). A copied value on some
    paths only is merged with the others' writers of the field (never more than they need)."""
    live = [s for s in states if s is not None]
    if not live:
        return None
    if len(live) == 1:
        return live[0]
    copies = {k for s in live for k in s if k.startswith((COPY, EXPR))}
    live = [_filled(s, copies) for s in live]
    merged: State = {}
    for leaf in {k for s in live for k in s}:
        lists = [s.get(leaf, []) for s in live]
        if all(lst is lists[0] for lst in lists):
            merged[leaf] = lists[0]
            continue
        cuts = sorted({b for lst in lists for lo, hi, _ in lst for b in (lo, hi + 1)})
        segs: list[Seg] = []
        for lo, nxt in pairwise(cuts):
            hi = nxt - 1
            req = _max(r for lst in lists for r in _overlapping(lst, lo, hi))
            if req is ZERO:
                continue
            if segs and segs[-1][2] is req and segs[-1][1] == lo - 1:
                segs[-1] = (segs[-1][0], hi, req)
            else:
                segs.append((lo, hi, req))
        merged[leaf] = segs
    return merged


# --- fields -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Place:
    """An lvalue: a field path of type `type` (bits lo..hi of it when a slice), or a whole
    struct/header; `local`: a local variable (or a parameter holding an argument's value)."""

    path: str
    type: Type | None
    lo: int = -1
    hi: int = -1
    local: bool = False
    in_header: bool = False  # a field of a header (or inside a header stack or union)

    def member(self, name: str, t: Type | None) -> _Place:
        u = unwrap_newtype(self.type) if self.type is not None else None
        inside = self.in_header or isinstance(u, HeaderType | HeaderUnionType | HeaderStackType)
        return _Place(f"{self.path}{name}", t, local=self.local, in_header=inside)


@dataclass
class _Bound:
    """What a parameter stands for: an lvalue (`place`), or (an action's or function's
    argument that is not one) the fields its argument reads."""

    place: _Place | None = None
    reads: list[Range] = field(default_factory=list)


def _width(t: Type | None) -> int:
    u = unwrap_newtype(t) if t is not None else None
    if isinstance(u, BitType | IntType) and isinstance(u.width, int):
        return max(u.width, 1)
    if isinstance(u, BoolType):
        return 1
    if isinstance(u, VarbitType):
        return u.max_width
    if isinstance(u, EnumType) and u.underlying is not None:
        return u.underlying.width
    return 32


# (path, id of the type, in a header) -> (the type, its leaves); by identity, as struct and header
# types compare by name and another program's `md_t` may have other fields (cleared per program)
_LEAVES: dict[tuple[str, int, bool], tuple[Type | None, list[tuple[str, int, bool]]]] = {}


def _leaves(path: str, t: Type | None, in_header: bool = False) -> list[tuple[str, int, bool]]:
    """The scalar fields under `path` (of type `t`): (path, width, inside a header)."""
    key = (path, id(t), in_header)
    hit = _LEAVES.get(key)
    if hit is not None and hit[0] is t:
        return hit[1]
    u = unwrap_newtype(t) if t is not None else None
    out: list[tuple[str, int, bool]] = []
    if isinstance(u, HeaderType):
        for name, ft in u.fields:
            out += _leaves(f"{path}.{name}", ft, True)
        out.append((f"{path}.$valid", 1, True))
    elif isinstance(u, HeaderUnionType | StructType):
        for name, ft in u.fields:
            out += _leaves(f"{path}.{name}", ft, in_header)
    elif isinstance(u, HeaderStackType):
        for i in range(u.size):
            out += _leaves(f"{path}[{i}]", u.element, True)
    else:
        out.append((path, _width(t), in_header))
    _LEAVES[key] = (t, out)
    return out


def _ranges(place: _Place) -> list[tuple[str, int, int, bool]]:
    """The leaf bit ranges `place` covers: (leaf, lo, hi, inside a header)."""
    leaves = _leaves(place.path, place.type, place.in_header)
    if len(leaves) == 1 and leaves[0][0] == place.path:
        leaf, width, in_header = leaves[0]
        lo, hi = (place.lo, place.hi) if place.lo >= 0 else (0, width - 1)
        return [(leaf, lo, hi, in_header)]
    return [(leaf, 0, width - 1, in_header) for leaf, width, in_header in leaves]


def _bits(place: _Place) -> list[Range]:
    return [(leaf, lo, hi) for leaf, lo, hi, _ in _ranges(place)]


def _plain_source(e: ast.Expression | None) -> ast.Expression | None:
    """The field a right-hand side copies (through casts and slices), if it is a plain copy."""
    while isinstance(e, ast.Cast):
        e = e.expr
    if isinstance(e, ast.PathExpression | ast.Member | ast.Slice | ast.ArrayIndex):
        return e
    return None


def _constant(e: ast.Expression) -> bool:
    return e.value is not None and not isinstance(e, ast.MethodCall)


def _subexpressions(e: ast.Node) -> Iterator[ast.Expression]:
    for name, value in vars(e).items():
        if name in ("type", "value", "decl", "loc", "call"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.Argument | ast.NamedExpression):
                child = child.expr
            if isinstance(child, ast.Expression):
                yield child


# --- scopes and what code reads and writes -----------------------------------------------------


@dataclass
class _Scope:
    """The block whose code is walked, what parameters stand for, and where its `return`s go
    (the states they leave with). `body_locals`: in an action or function body, whose own
    variables are not fields (the action reads what their values read)."""

    block: BlockInstance
    parents: list[BlockInstance]
    bound: dict[int, _Bound]
    returns: list[State] = field(default_factory=list)
    body_locals: bool = False


@dataclass
class _Ext:
    """An extern method call and what it reads (index, a RegisterAction's field inputs)."""

    call: ast.MethodCall
    reads: list[Range]
    result_later: bool  # its result is written at the end of its stage (stateful ALU, meter)
    effect: bool  # it changes state: the node making it is needed
    hashing: bool  # Hash.get: bf-p4c keeps it in the action using the result


@dataclass
class _Write:
    """A write of `place`; `source`: the field it copies (a plain copy), `rhs` what it is."""

    place: _Place
    rhs: ast.Expression | None
    source: _Place | None = None


@dataclass
class _Uses:
    """What an expression, statement or action body reads and writes, for one node."""

    reads: list[Range] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # paths read (ActionSynthesisPolicy)
    tables: list[tuple[ast.MethodCall, ast.TableDecl]] = field(default_factory=list)
    externs: list[_Ext] = field(default_factory=list)
    writes: list[_Write] = field(default_factory=list)
    written: set[str] = field(default_factory=set)  # leaves this action wrote already

    def read(self, place: _Place) -> None:
        self.texts.append(place.path)
        self.reads += [r for r in _bits(place) if r[0] not in self.written]

    def write(self, w: _Write) -> None:
        self.writes.append(w)
        self.written.update(leaf for leaf, _, _ in _bits(w.place))

    @property
    def result_later(self) -> bool:
        return any(x.result_later for x in self.externs)

    @property
    def effect(self) -> bool:
        return any(x.effect for x in self.externs)

    @property
    def other_externs(self) -> bool:
        return any(not x.hashing for x in self.externs)


def _type_root(p: ast.Parameter) -> str:
    """The name a gress's parameter is known by: its type's (the deparser names it too)."""
    t = p.type_ref.resolved
    name = getattr(unwrap_newtype(t), "name", None) if t is not None else None
    return name or p.name


def _top_scope(block: BlockInstance) -> _Scope:
    bound = {id(p): _Bound(place=_Place(_type_root(p), p.type_ref.resolved))
             for p in block.decl.params}
    return _Scope(block, [], bound)


class _Resolver:
    """Field paths of lvalues in a scope, and what expressions and bodies read and write."""

    def place(self, e: ast.Expression, scope: _Scope) -> _Place | None:
        if isinstance(e, ast.PathExpression):
            return self._name(e, e.decl, scope)
        if isinstance(e, ast.Member) and e.kind in (None, "field"):
            base = self.place(e.expr, scope)
            return base.member(f".{e.member}", e.type) if base else None
        if isinstance(e, ast.Member) and e.kind in ("stack_next", "stack_last"):
            return self.place(e.expr, scope)  # any element
        if isinstance(e, ast.ArrayIndex):
            base = self.place(e.expr, scope)
            if base is None:
                return None
            idx = e.index.value
            if isinstance(idx, int) and not isinstance(idx, bool):
                return base.member(f"[{idx}]", e.type)
            return base  # any element
        if isinstance(e, ast.Slice) and e.low is not None and e.high is not None:
            base = self.place(e.expr, scope)
            if base is None or len(_leaves(base.path, base.type, base.in_header)) != 1:
                return None
            off = max(base.lo, 0)
            return replace(base, lo=off + e.low, hi=off + e.high)
        return None

    def _name(self, e: ast.Expression, decl: ast.Node | None, scope: _Scope) -> _Place | None:
        if isinstance(decl, ast.Parameter):
            bound = scope.bound.get(id(decl))
            return bound.place if bound is not None else None
        if isinstance(decl, ast.VariableDecl):
            block = scope.block
            if any(x is decl for x in block.decl.locals):
                return _Place(f"{block.path}.{decl.name}", e.type or decl.type_ref.resolved,
                              local=True)
            if scope.body_locals:
                return None
            # declared in an apply block: p4c makes it a local of the control
            where = f"{decl.loc.line}:{decl.loc.column}"
            return _Place(f"{block.path}.{decl.name}@{where}", e.type or decl.type_ref.resolved,
                          local=True)
        return None

    def uses(self, e: ast.Expression | None, scope: _Scope, acc: _Uses) -> None:
        """Add what evaluating `e` reads (fields, tables applied, extern calls) to `acc`."""
        if e is None or _constant(e):
            return
        if isinstance(e, ast.PathExpression) and isinstance(e.decl, ast.Parameter):
            bound = scope.bound.get(id(e.decl))
            if bound is not None and bound.place is None:
                acc.reads += [r for r in bound.reads if r[0] not in acc.written]
                return
        place = self.place(e, scope)
        if place is not None:
            acc.read(place)
            if isinstance(e, ast.ArrayIndex):
                self.uses(e.index, scope, acc)
            return
        if isinstance(e, ast.MethodCall):
            self._call(e, scope, acc)
            return
        for child in _subexpressions(e):
            self.uses(child, scope, acc)

    def _call(self, e: ast.MethodCall, scope: _Scope, acc: _Uses) -> None:
        info = e.call
        if info is None:
            return
        if info.kind == "builtin":
            receiver = self.place(info.receiver, scope) if info.receiver is not None else None
            if receiver is None:
                return
            if info.name == "isValid":
                acc.reads += _valid_bits(receiver)
                acc.texts.append(receiver.path)
            elif info.name in ("setValid", "setInvalid"):
                for leaf, _, _ in _valid_bits(receiver):
                    acc.write(_Write(_Place(leaf, BoolType(), in_header=True), None))
            elif info.name in ("push_front", "pop_front"):
                acc.read(receiver)
                acc.write(_Write(receiver, None))
            return
        if info.kind == "table_apply" and isinstance(info.decl, ast.TableDecl):
            acc.tables.append((e, info.decl))
            return
        if info.kind in ("action", "function") and isinstance(
            info.decl, ast.ActionDecl | ast.FunctionDecl
        ):
            self.body(info.decl, info.params, info.args, scope, acc)
            return
        if info.kind == "extern_method" and info.receiver is not None:
            inner = _Uses(written=set(acc.written))
            for arg in info.args:
                self.uses(arg, scope, inner)
            ext = self._extern(e, info.receiver, info.name, scope, inner)
            acc.reads += inner.reads
            acc.texts += inner.texts
            acc.tables += inner.tables
            acc.externs += [*inner.externs, ext]
            return
        for arg in info.args:
            self.uses(arg, scope, acc)

    def _extern(self, call: ast.MethodCall, receiver: ast.Expression, method: str,
                scope: _Scope, acc: _Uses) -> _Ext:
        found = _instance(receiver, scope)
        kind = found[0].resolved.name if found is not None else ""  # type: ignore[union-attr]
        if found is not None and kind in _SALU:
            decl, owner = found
            fn = next((f for f in decl.initializer if f.name == "apply"), None)
            if fn is not None:  # the stateful ALU reads the fields its body names
                inner = _Scope(owner, [], scope.bound if owner is scope.block else {},
                               body_locals=True)
                self.statements(fn.body, inner, acc, outputs=False)
            return _Ext(call, acc.reads, True, True, False)
        if kind == "Register":
            return _Ext(call, acc.reads, False, method == "write", False)
        if kind == "Hash":
            return _Ext(call, acc.reads, False, False, True)
        if kind in ("Counter", "DirectCounter"):
            return _Ext(call, acc.reads, False, True, False)
        return _Ext(call, acc.reads, True, True, False)  # meters, Random, Lpf, Wred, ...

    def body(
        self,
        decl: ast.ActionDecl | ast.FunctionDecl,
        params: list[ast.Parameter],
        args: list[ast.Expression | None],
        scope: _Scope,
        acc: _Uses,
    ) -> None:
        """An action's or function's body as one action: its reads and writes into `acc`, its
        arguments bound (an lvalue stands for the parameter; another argument's reads are read
        where the body reads the parameter)."""
        bound = dict(scope.bound)
        for p, a in zip(params, args, strict=False):
            if a is None:
                continue
            place = self.place(a, scope)
            if place is not None:
                bound[id(p)] = _Bound(place=place)
                continue
            arg = _Uses(written=set(acc.written))
            self.uses(a, scope, arg)
            acc.tables += arg.tables
            acc.externs += arg.externs
            acc.texts += arg.texts
            bound[id(p)] = _Bound(reads=arg.reads)
        inner = _Scope(scope.block, scope.parents, bound, body_locals=True)
        self.statements(decl.body, inner, acc)

    def statements(self, s: ast.Node | None, scope: _Scope, acc: _Uses, outputs: bool = True
                   ) -> None:
        """A body's statements in order, every branch of them (one action: whichever branch
        runs, it may read or write these). Without `outputs`, writes are left out (a
        RegisterAction writes its cell and its result, not fields)."""
        if s is None:
            return
        if isinstance(s, ast.BlockStatement):
            for item in s.statements:
                self.statements(item, scope, acc, outputs)
        elif isinstance(s, ast.AssignmentStatement):
            self.assignment(s, scope, acc, outputs)
        elif isinstance(s, ast.VariableDecl):
            self.uses(s.init, scope, acc)
        elif isinstance(s, ast.MethodCallStatement):
            self.uses(s.call, scope, acc)
        elif isinstance(s, ast.IfStatement):
            self.uses(s.cond, scope, acc)
            self.statements(s.then, scope, acc, outputs)
            self.statements(s.otherwise, scope, acc, outputs)
        elif isinstance(s, ast.SwitchStatement):
            self.uses(s.expr, scope, acc)
            for case in s.cases:
                self.statements(case.body, scope, acc, outputs)
        elif isinstance(s, ast.ReturnStatement):
            self.uses(s.value, scope, acc)

    def assignment(self, s: ast.AssignmentStatement, scope: _Scope, acc: _Uses,
                   outputs: bool = True) -> None:
        """`lhs = rhs`. A plain copy of a field into a header field reads nothing: bf-p4c's
        AutoAlias may alias the two (the instruction goes), so only its readers wait."""
        if isinstance(s.lhs, ast.ArrayIndex):
            self.uses(s.lhs.index, scope, acc)
        place = self.place(s.lhs, scope) if outputs else None
        src = _plain_source(s.rhs)
        source = self.place(src, scope) if src is not None and not s.compound else None
        if place is not None and source is not None and _header_part(place):
            acc.texts.append(source.path)
            acc.write(_Write(place, s.rhs, source))
            return
        self.uses(s.rhs, scope, acc)
        if s.compound:
            self.uses(s.lhs, scope, acc)
        if place is not None:
            acc.write(_Write(place, s.rhs, source))


def _header_part(place: _Place) -> bool:
    """A header, or a field of one (a header stack's, a union's)."""
    u = unwrap_newtype(place.type) if place.type is not None else None
    return place.in_header or isinstance(u, HeaderType | HeaderUnionType | HeaderStackType)


def _valid_bits(place: _Place) -> list[Range]:
    u = unwrap_newtype(place.type) if place.type is not None else None
    if isinstance(u, HeaderType):
        return [(f"{place.path}.$valid", 0, 0)]
    return [(leaf, 0, 0) for leaf, _, _ in _leaves(place.path, place.type, place.in_header)
            if leaf.endswith(".$valid")]


def _instance(e: ast.Expression, scope: _Scope) -> tuple[ast.InstanceDecl, BlockInstance] | None:
    """The extern instance `e` names and the block declaring it (the walked block for a
    top-level one: a top-level RegisterAction's body names top-level things only)."""
    found = extern_instance(e, scope.block, scope.parents)
    return None if found is None else (found[0], found[1])


# --- the walk ------------------------------------------------------------------------------


@dataclass
class _Run:
    """Consecutive apply-block statements bf-p4c may put into one synthesized action
    (ActionSynthesisPolicy::can_combine): the paths they wrote, whether they call externs,
    and the bits they wrote as they were before the run (what the action reads)."""

    started: bool = False
    writes: set[str] = field(default_factory=set)
    externs: bool = False
    before: dict[str, list[Seg] | None] = field(default_factory=dict)

    def reset(self) -> None:
        self.started = False
        self.writes.clear()
        self.externs = False
        self.before.clear()

    def depends(self, uses: _Uses) -> bool:
        for r in uses.texts:
            for w in self.writes:
                if r == w or r.startswith(w + ".") or r.startswith(w + "["):
                    return True
        return self.externs and uses.other_externs


@dataclass(frozen=True)
class StageBound:
    """A gress's lower bound: it needs at least `stages` MAU stages, because of `chain`
    (each link reads what the one before it writes; the last one is in stage `stages`)."""

    gress: str
    stages: int
    chain: tuple[Link, ...]

    def chain_text(self, fields: bool = False) -> str:
        """The chain: "a -> b" when b reads what a writes (`fields`: "a -[f]-> b"), "a ~> b"
        when b is control dependent on a (under its condition, or its hit/miss/action)."""
        text = self.chain[0].name if self.chain else ""
        for link in self.chain[1:]:
            if not link.field:
                text += f" ~> {link.name}"
            elif fields:
                text += f" -[{link.field}]-> {link.name}"
            else:
                text += f" -> {link.name}"
        return text

    def report(self) -> str:
        """The line `softswitch compile` prints."""
        if not self.chain:
            return (f"Tofino: {self.gress} needs at least 0 of {MAU_STAGES} MAU stages (no "
                    "table or action whose work is used)")
        return (
            f"Tofino: {self.gress} needs at least {self.stages} of {MAU_STAGES} MAU stages "
            f"(longest chain: {self.chain_text()})"
        )


class _StageWalk(_Resolver):
    """Walks one gress's control, giving every node its minimum stage."""

    def __init__(self, top: BlockInstance) -> None:
        self.top = top
        self.nodes: list[_Node] = []
        self._deps: list[_Node] = []

    def run(self) -> State | None:
        return self._control(self.top, _top_scope(self.top), {}, ZERO)

    # --- nodes ---------------------------------------------------------------------------

    def _need(self, reads: list[Range], state: State,
              before: dict[str, list[Seg] | None] | None = None, record: bool = True,
              view: str = "") -> _Req:
        """What reading `reads` requires (the bits as `before` has them, else as `state`);
        with `record`, the writers read are dependencies of the next node made. `view`: COPY
        (a table key) or EXPR (a condition, an apply-block statement) where a copied value
        may stand in for the field (LocalCopyPropagation), "" where it may not (an action)."""
        best, why = ZERO, ""
        for leaf, lo, hi in reads:
            segs = before[leaf] if before is not None and leaf in before else state.get(leaf)
            for r in _seen(segs or [], state.get(view + leaf) if view else None, lo, hi):
                if record and r.node is not None:
                    self._deps.append(r.node)
                if _key(r) > _key(best):
                    best, why = r, leaf
        return replace(best, field=why) if best is not ZERO and best.appends else best

    def _node(self, name: str, loc: SourceLocation, reqs: list[_Req], root: bool) -> _Node:
        req = _max(reqs)
        chain = (*req.chain, Link(name, loc, req.field if req.appends else ""))
        deps = self._deps + [r.node for r in reqs if r.node is not None]
        self._deps = []
        node = _Node(name, loc, req.stage, chain, root, deps)
        self.nodes.append(node)
        return node

    def _write(self, state: State, place: _Place, req: _Req, run: _Run | None = None) -> None:
        for leaf, lo, hi in _bits(place):
            if run is not None and leaf not in run.before:
                run.before[leaf] = state.get(leaf)
            state[leaf] = _put(state.get(leaf, []), lo, hi, req)
            for key in (COPY + leaf, EXPR + leaf):  # a copied value is gone when overwritten
                if key in state:
                    left = _cut(state[key], lo, hi)
                    if left:
                        state[key] = left
                    else:
                        del state[key]

    @staticmethod
    def _copied(state: State, place: _Place, req: _Req, plain: bool) -> None:
        """An apply-block assignment's value, which later apply-block reads of `place` may see
        instead of the field (a plain copy: table keys too), requiring `req`."""
        for leaf, lo, hi in _bits(place):
            for key in (EXPR, COPY) if plain else (EXPR,):
                state[key + leaf] = _put(state.get(key + leaf, []), lo, hi, req)

    @staticmethod
    def _label(what: str, loc: SourceLocation) -> str:
        return f"{what} ({os.path.basename(loc.file)}:{loc.line})"

    # --- blocks --------------------------------------------------------------------------

    def _control(self, block: BlockInstance, scope: _Scope, state: State, floor: _Req
                 ) -> State | None:
        decl = block.decl
        assert isinstance(decl, ast.ControlDecl)
        inits: list[ast.Node] = [
            x for x in decl.locals if isinstance(x, ast.VariableDecl) and x.init is not None
        ]
        end = self._block([*inits, *decl.body.statements], state, scope, floor)
        return _merge([end, *scope.returns])

    def _block(self, items: list[ast.Node], state: State | None, scope: _Scope, floor: _Req
               ) -> State | None:
        run = _Run()
        for item in items:
            if state is None:
                return None
            if _synthesized(item):
                state = self._statement(item, state, scope, floor, run)
            else:
                run.reset()
                state = self._stmt(item, state, scope, floor)
        return state

    def _stmt(self, s: ast.Node, state: State, scope: _Scope, floor: _Req) -> State | None:
        if isinstance(s, ast.BlockStatement):
            return self._block(list(s.statements), state, scope, floor)
        if isinstance(s, ast.IfStatement):
            return self._if(s, state, scope, floor)
        if isinstance(s, ast.SwitchStatement):
            return self._switch(s, state, scope, floor)
        if isinstance(s, ast.MethodCallStatement) and s.call.call is not None:
            info = s.call.call
            if info.kind == "table_apply" and isinstance(info.decl, ast.TableDecl):
                self._table(s.call, info.decl, state, scope, floor)
            elif info.kind == "apply":
                return self._apply(s.call, state, scope, floor)
            return state
        if isinstance(s, ast.ExitStatement):
            return None
        if isinstance(s, ast.ReturnStatement):
            scope.returns.append(state)
            return None
        return state  # empty statements, constants, variables declared without a value

    def _tables_first(self, uses: _Uses, state: State, scope: _Scope, floor: _Req) -> _Req:
        """Apply the tables an expression applies, in order, each under the one before (a
        hit/miss or action_run picks what follows): the floor after them."""
        for call, decl in uses.tables:
            floor = _control(self._table(call, decl, state, scope, floor))
        return floor

    def _if(self, s: ast.IfStatement, state: State, scope: _Scope, floor: _Req) -> State | None:
        if isinstance(s.cond.value, bool):  # folded, as p4c folds it
            branch = s.then if s.cond.value else s.otherwise
            return self._stmt(branch, state, scope, floor) if branch is not None else state
        inner = self._condition(s.cond, state, scope, floor, "if")
        then = self._stmt(s.then, dict(state), scope, inner)
        other = (self._stmt(s.otherwise, dict(state), scope, inner)
                 if s.otherwise is not None else state)
        return _merge([then, other])

    def _condition(self, cond: ast.Expression, state: State, scope: _Scope, floor: _Req,
                   what: str) -> _Req:
        """The gateway of a condition, after the tables it applies and the extern calls it
        makes (p4c hoists those before it): the floor of the code it controls."""
        uses = _Uses()
        self.uses(cond, scope, uses)
        floor = self._tables_first(uses, state, scope, floor)
        reqs = [floor]
        for ext in uses.externs:  # a RegisterAction in a condition: its own action first
            if ext.result_later:
                need = self._need(ext.reads, state, view=EXPR)
                node = self._node(self._label(_call_name(ext.call), ext.call.loc),
                                  ext.call.loc, [floor, need], ext.effect)
                reqs.append(_written(node))
        reqs.append(self._need(uses.reads, state, view=EXPR))
        if not uses.reads and len(reqs) == 1:
            self._deps = []
            return floor  # only hits and misses: the tables control what follows
        gateway = self._node(self._label(what, cond.loc), cond.loc, reqs, False)
        return _control(gateway)

    def _switch(self, s: ast.SwitchStatement, state: State, scope: _Scope, floor: _Req
                ) -> State | None:
        run_of = action_run_table(s.expr)
        if run_of is not None:
            inner = _control(self._table(run_of[0], run_of[1], state, scope, floor))
        else:
            inner = self._condition(s.expr, state, scope, floor, "switch")
        ends = [self._stmt(c.body, dict(state), scope, inner) if c.body is not None else state
                for c in s.cases]
        if not any(isinstance(lbl, ast.DefaultExpression) for c in s.cases for lbl in c.labels):
            ends.append(state)
        return _merge(ends)

    def _apply(self, call: ast.MethodCall, state: State, scope: _Scope, floor: _Req
               ) -> State | None:
        info = call.call
        assert info is not None
        child = None
        if isinstance(info.decl, ast.InstanceDecl | ast.Parameter):
            child = scope.block.children.get(info.decl.name)
        if child is None or not isinstance(child.decl, ast.ControlDecl):
            return state
        bound: dict[int, _Bound] = {}
        for p, a in zip(child.decl.params, info.args, strict=False):
            if a is None:
                continue
            place = self.place(a, scope)
            if place is None:  # a value: the parameter is a local holding it (copy-in)
                place = _Place(f"{child.path}.{p.name}", p.type_ref.resolved, local=True)
                uses = _Uses()
                self.uses(a, scope, uses)
                after = self._tables_first(uses, state, scope, floor)
                need = _max([after if uses.tables else ZERO,
                             self._need(uses.reads, state, view=EXPR)])
                self._deps = []
                self._write(state, place, need)
            bound[id(p)] = _Bound(place=place)
        inner = _Scope(child, [*scope.parents, scope.block], bound)
        return self._control(child, inner, state, floor)

    # --- tables and synthesized actions ---------------------------------------------------

    def _table(self, call: ast.MethodCall, decl: ast.TableDecl, state: State, scope: _Scope,
               floor: _Req) -> _Node:
        """A table: after what its keys and its actions read; its actions' writes after it."""
        uses = _Uses()
        for key in decl.keys:
            self.uses(key.expr, scope, uses)
        keys = len(uses.reads)
        for action in table_actions(decl):
            uses.written = set()  # each action on its own (one of them runs)
            self.body(action, action.params, [], scope, uses)
        reqs = [floor]
        if decl.annotation("ignore_table_dependency") is None:
            # LocalCopyPropagation may key the table on what a field was copied from, but it
            # does not look into the actions
            reqs.append(self._need(uses.reads[:keys], state, view=COPY))
            reqs.append(self._need(uses.reads[keys:], state))
        name = qualified_name(decl, scope.block.path)
        node = self._node(name, call.loc, reqs, bool(decl.keys) or uses.effect)
        for w in uses.writes:
            self._write(state, w.place, self._alias(w, state, None) or _written(node))
        return node

    def _alias(self, w: _Write, state: State, run: _Run | None) -> _Req | None:
        """A plain copy into a header field: bf-p4c's AutoAlias may make the header field an
        alias of its source (no instruction), so a reader waits only for the source."""
        if w.source is None or not _header_part(w.place):
            return None
        return self._need(_bits(w.source), state, run.before if run is not None else None,
                          record=False)

    def _statement(self, s: ast.Node, state: State, scope: _Scope, floor: _Req, run: _Run
                   ) -> State:
        """An apply-block statement: part of the synthesized action of its run."""
        uses = _Uses()
        rhs: ast.Expression | None = None
        direct = False  # a direct action call: MoveActionsToTables makes it a table
        if isinstance(s, ast.AssignmentStatement):
            rhs = s.rhs
            self.assignment(s, scope, uses)
        elif isinstance(s, ast.VariableDecl):
            rhs = s.init
            self.uses(rhs, scope, uses)
            place = self._name(ast.PathExpression(name=s.name), s, scope)
            if place is not None:
                src = _plain_source(rhs)
                uses.write(_Write(place, rhs, self.place(src, scope) if src else None))
        elif isinstance(s, ast.MethodCallStatement):
            direct = s.call.call is not None and s.call.call.kind == "action"
            self.uses(s.call, scope, uses)
        if uses.tables:  # `bool hit = t.apply().hit;`: the tables first, under this floor
            run.reset()
            floor = self._tables_first(uses, state, scope, floor)
        if not run.started or run.depends(uses):
            run.reset()
            run.started = True
        # a direct action call's body is an action (no copied values); other statements'
        # expressions are the apply block's
        need = _max([floor, self._need(uses.reads, state, run.before,
                                       view="" if direct else EXPR)])
        value = need  # what a copy-propagated value requires
        hashed = any(x.hashing for x in uses.externs) and not uses.result_later
        plain = rhs is None or _constant(rhs) or _plain_source(rhs) is not None
        # a first copy of a parser value or a constant may become parser work (no stage)
        first = floor is ZERO and need.stage == 0 and plain and not uses.externs
        real = [w for w in uses.writes
                if direct or uses.result_later or not (w.place.local or hashed or first)]
        # p4c's LocalCopyPropagation: an assignment of a value without side effects (no
        # extern, table or action call), not of the field itself, gives later apply-block
        # reads that value
        copyable = (isinstance(s, ast.AssignmentStatement) and not s.compound
                    and not uses.externs and not uses.tables
                    and not isinstance(s.rhs, ast.ListExpression | ast.StructExpression)
                    and not _reads_itself(uses, s.lhs, scope, self))
        node = None
        if real or uses.effect or uses.result_later:
            what = _call_name(s.call) if isinstance(s, ast.MethodCallStatement) else "assignment"
            node = self._node(self._label(what, s.loc), s.loc, [need], uses.effect)
        else:
            self._deps = []
        for w in uses.writes:
            alias = self._alias(w, state, run)
            # readers of a local or of an aliased header field wait for the value anyway
            copied = copyable and alias is None and not w.place.local
            if alias is None:
                alias = _written(node) if node is not None and w in real else value
            self._deps = []
            self._write(state, w.place, alias, run)
            if copied:
                self._copied(state, w.place, value, w.source is not None)
        run.writes.update(w.place.path for w in uses.writes
                          if not (isinstance(w.rhs, ast.MethodCall) and _hash_get(w.rhs)))
        run.externs = run.externs or uses.other_externs
        return state


def _reads_itself(uses: _Uses, lhs: ast.Expression, scope: _Scope, resolver: _Resolver
                  ) -> bool:
    """Whether an assignment's value reads the field it assigns (p4c does not propagate it)."""
    place = resolver.place(lhs, scope)
    if place is None:
        return True
    leaves = {leaf for leaf, _, _ in _bits(place)}
    return any(leaf in leaves for leaf, _, _ in uses.reads)


def _hash_get(e: ast.MethodCall) -> bool:
    info = e.call
    receiver = info.receiver if info is not None else None
    t = receiver.type if receiver is not None else None
    return isinstance(t, ExternType) and t.name == "Hash" and info is not None \
        and info.name == "get"


def _call_name(call: ast.MethodCall) -> str:
    info = call.call
    if info is None:
        return "call"
    if isinstance(info.receiver, ast.PathExpression):
        return f"{info.receiver.name}.{info.name}"
    return f"{info.name}()"


def _synthesized(s: ast.Node) -> bool:
    """Apply-block statements p4c turns into synthesized actions (assignments, extern and
    action calls); the others are tables, gateways, blocks."""
    if isinstance(s, ast.AssignmentStatement):
        return True
    if isinstance(s, ast.VariableDecl):
        return s.init is not None
    if isinstance(s, ast.MethodCallStatement):
        info = s.call.call
        return info is not None and info.kind in (
            "extern_method", "builtin", "extern_function", "action", "function"
        )
    return False


# --- results ----------------------------------------------------------------------------------


def _deparsed(checked: CheckedProgram, role: str) -> set[str]:
    """The leaf fields the deparser of `role` reads (emits, mirror sessions, digests...)."""
    block = checked.blocks.get(role)
    if block is None or not isinstance(block.decl, ast.ControlDecl):
        return set()
    scope = _top_scope(block)
    scope.body_locals = True
    uses = _Uses()
    _Resolver().statements(block.decl.body, scope, uses)
    return {leaf for leaf, _, _ in uses.reads}


def _bound(checked: CheckedProgram, gress: str, deparser: str) -> StageBound | None:
    top = checked.blocks.get(gress)
    if top is None or not isinstance(top.decl, ast.ControlDecl):
        return None
    walk = _StageWalk(top)
    end = walk.run() or {}
    # what leaves the gress: read by its deparser, inside a header (deparsed when valid,
    # bridged, mirrored), or for the deparser and the traffic manager
    leaving = _deparsed(checked, deparser)
    for p in top.decl.params:
        root = _type_root(p)
        leaving |= {leaf for leaf, _, in_header in _leaves(root, p.type_ref.resolved)
                    if in_header or root in _OUTPUT_TYPES}
    needed = [n for n in walk.nodes if n.root]
    needed += [req.node for leaf, segs in end.items() if leaf in leaving
               for _, _, req in segs if req.node is not None]
    live: set[int] = set()
    while needed:
        node = needed.pop()
        if id(node) not in live:
            live.add(id(node))
            needed.extend(node.deps)
    best: _Node | None = None
    for node in walk.nodes:
        # the deepest: at the largest stage, the longest chain (a table under the gateway)
        if id(node) in live and (best is None or (node.stage, len(node.chain)) >
                                 (best.stage, len(best.chain))):
            best = node
    if best is None:
        return StageBound(gress, 0, ())
    return StageBound(gress, best.stage + 1, best.chain)


def stage_bounds(checked: CheckedProgram) -> list[StageBound]:
    """The lower bound of each gress of a TNA program (ingress, then egress)."""
    _LEAVES.clear()
    found = (_bound(checked, gress, deparser) for gress, deparser in GRESSES)
    return [b for b in found if b is not None]


def stage_errors(checked: CheckedProgram) -> list[P4TypeError]:
    """A "Tofino:" error for each gress whose lower bound exceeds Tofino 1's 12 stages, at
    the last link of its chain."""
    errors = []
    for bound in stage_bounds(checked):
        if bound.stages <= MAU_STAGES:
            continue
        errors.append(
            P4TypeError(
                f"Tofino: {bound.gress} needs at least {bound.stages} MAU stages, Tofino 1 has "
                f"{MAU_STAGES}: {bound.chain_text(fields=True)} (a -[f]-> b: b reads field f "
                "that a writes, a match or action dependency, so bf-p4c places b a stage after "
                "a; a ~> b: b is under a's condition or result); shorten the chain (compute in "
                "parallel, or move part of it to the egress)",
                bound.chain[-1].loc,
            )
        )
    return errors
