"""What one Tofino 1 stateful ALU can do: the RegisterAction / DirectRegisterAction rules.

bf-p4c turns a RegisterAction's ``apply`` into one stateful-ALU instruction word
(CreateSaluInstruction in backends/tofino/bf-p4c/mau/stateful_alu.cpp; the assembler's
backends/tofino/bf-asm/salu_inst.cpp encodes it; Tofino's numbers are TofinoDevice::
getStatefulAluSpec in backends/tofino/bf-p4c/specs/device.cpp). We check a conservative model
of it (softswitch/DESIGN.md, "Tofino's rules", lists each limit and its source):

* the ALU works on W bits: the cell width, or the field width of a two-field ("dual") cell;
  the first field is the LO half, the second the HI half (a one-field cell is LO; computed
  locals and computed outputs use HI);
* statements: assignments, if/else, blocks, locals of W bits or of the cell type;
* a condition is &&, ||, ! over at most two distinct comparisons (two compare units), each
  ``[±memory] [±field] [±constant] relop 0``;
* an update is one ALU instruction (operand, ``a op b`` for + - |+| |-| & | ^, ~a, -a, or an
  outer | of two): per instruction one memory operand, one field, one constant, at width W;
  at most two distinct update instructions per half, writes of one destination mutually
  exclusive; the cell is not read after it is written (compares and updates read the old
  cell);
* rv: one output word of at most 32 bits; sources as the output mux allows;
* per register (all its RegisterActions: one ALU): at most 4 RegisterActions, two distinct
  field inputs of at most W bits, four constants outside [-8, 7] (register-file rows).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from softswitch.errors import P4TypeError, SourceLocation
from softswitch.frontend import ast
from softswitch.frontend.exprcheck import expression_text
from softswitch.frontend.types import (
    BitType,
    BoolType,
    ExternType,
    StructType,
    Type,
    unwrap_newtype,
)

MAX_OUTPUT_BITS = 32  # Tofino: one 32-bit output word (StatefulAluSpec MaxSize, OutputWords 1)
MAX_COMPARES = 2  # CmpUnits {lo, hi}
MAX_PER_HALF = 2  # alu1 and alu2 of each half (bf-asm AluOP::pass1 slots)
MAX_ACTIONS = 4  # MaxInstructions: RegisterActions per register
MAX_REGFILE = 4  # MaxRegfileRows: constants outside the immediate range
IMMEDIATE = (-8, 7)  # Min/MaxInstructionConstValue
HASH_INPUT_BITS = 51  # Tofino's METER_ALU_HASH_BITS: two field inputs through the hash
_ALU_OPS = ("+", "-", "|+|", "|-|", "&", "|", "^")
_RELOPS = {"==": "eq", "!=": "eq", "<": "lt", ">=": "lt", ">": "gt", "<=": "gt"}
_ACTIONS = ("RegisterAction", "DirectRegisterAction")
_WIDTHS = (8, 16, 32)

Pred = tuple[tuple[int, bool], ...]  # the if-arms a statement is in: (id(cond), which arm)


class _Refused(Exception):
    def __init__(self, message: str, loc: SourceLocation) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc


@dataclass(frozen=True)
class _Cell:
    width: int  # W
    dual: bool
    fields: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"two bit<{self.width}> fields" if self.dual else f"bit<{self.width}> cells"


@dataclass(frozen=True)
class _Operand:
    kind: str  # "mem", "phv" or "const"
    key: str  # identity: "value", "value.hi", "meta.x", "5"
    width: int = 0
    const: int | None = None
    half: str = "lo"  # mem: the half it is in


@dataclass
class ActionModel:
    """What one RegisterAction needs from its register's ALU (for the per-register limits)."""

    decl: ast.InstanceDecl
    register_name: str
    cell: _Cell
    phv: dict[str, tuple[int, SourceLocation]] = field(default_factory=dict)
    constants: dict[int, SourceLocation] = field(default_factory=dict)


def _cell(t: Type) -> _Cell | None:
    u = unwrap_newtype(t)
    if isinstance(u, BitType) and u.width in _WIDTHS:
        return _Cell(u.width, False)
    if isinstance(u, StructType) and len(u.fields) == 2:
        kinds = [unwrap_newtype(ft) for _, ft in u.fields]
        if all(isinstance(k, BitType) and k.width in _WIDTHS for k in kinds):
            return _Cell(kinds[0].width, True, tuple(n for n, _ in u.fields))  # type: ignore[union-attr]
    return None  # refused by the register cell rule (tofino_rules.py)


def _width(t: Type | None) -> int | None:
    u = unwrap_newtype(t) if t is not None else None
    if isinstance(u, BitType):
        return u.width
    if isinstance(u, BoolType):
        return 1
    return None


def _signed(t: Type | None) -> bool:
    u = unwrap_newtype(t) if t is not None else None
    return isinstance(u, BitType) and u.signed


def _int(v: object) -> int | None:
    if isinstance(v, bool):
        return int(v)
    return v if isinstance(v, int) else None


Where = tuple[str, int, int]  # a declaration's location: generic blocks' copies are one


@dataclass(frozen=True)
class Use:
    """One executed RegisterAction instance: `decl` inside the control instance `path` (""
    at the top level), on the register `register` identifies (its declaration, and the
    control instance owning it when it is a control's local)."""

    decl: ast.InstanceDecl
    path: str
    register: Hashable


def _where(d: ast.Node) -> Where:
    return (d.loc.file, d.loc.line, d.loc.column)


def register_action_errors(
    instances: list[ast.InstanceDecl], uses: list[Use]
) -> list[P4TypeError]:
    """The stateful-ALU errors of the RegisterActions among `instances` (each body once), and
    the per-register limits over `uses` (after p4c inlines the controls, each control instance
    has its own RegisterActions)."""
    errors: list[P4TypeError] = []
    models: dict[Where, ActionModel] = {}
    seen: set[Where] = set()
    for d in instances:
        t = d.resolved
        if not isinstance(t, ExternType) or t.name not in _ACTIONS or not t.type_args:
            continue
        if _where(d) in seen:
            continue
        seen.add(_where(d))
        cell = _cell(t.type_args[0])
        result = t.type_args[-1]
        rw = _width(result)
        if rw is not None and rw > MAX_OUTPUT_BITS:
            errors.append(
                P4TypeError(
                    f"Tofino: {t.name} '{d.name}' returns {result}; Tofino's stateful ALU "
                    f"outputs one word of at most {MAX_OUTPUT_BITS} bits (bf-p4c: Wide "
                    "operations not supported in Stateful ALU)",
                    d.type_ref.loc,
                )
            )
        fn = next((f for f in d.initializer if f.name == "apply"), None)
        reg = d.ctor_args[0] if d.ctor_args else None
        if cell is None or fn is None or not isinstance(reg, ast.PathExpression):
            continue
        model = ActionModel(d, reg.name, cell)
        models[_where(d)] = model
        errors += _ActionCheck(d, fn, model).run()
    errors += _register_limits(uses, models)
    return errors


# --- one RegisterAction ---------------------------------------------------------------------


class _ActionCheck:
    """Walks one apply body, building the instruction word it needs and refusing what does not
    fit (each refusal is one error; the walk goes on with the next statement)."""

    def __init__(self, decl: ast.InstanceDecl, fn: ast.FunctionDecl, model: ActionModel) -> None:
        self.decl = decl
        self.fn = fn
        self.model = model
        self.cell = model.cell
        self.value = fn.params[0] if fn.params else None
        self.rv = fn.params[1] if len(fn.params) > 1 else None
        self.errors: list[P4TypeError] = []
        self.compares: dict[tuple[str, str, str], SourceLocation] = {}
        self.instrs: dict[str, dict[str, SourceLocation]] = {"lo": {}, "hi": {}}
        self.writes: dict[str, list[tuple[Pred, SourceLocation]]] = {}
        self.outputs: list[tuple[str, str, SourceLocation]] = []  # key, kind, where
        self.locals: dict[int, str] = {}  # id(VariableDecl) -> the memory key it copies, or ""
        self.local_names: dict[int, str] = {}

    def where(self) -> str:
        return f"{self.decl.resolved.name} '{self.decl.name}'"  # type: ignore[union-attr]

    def run(self) -> list[P4TypeError]:
        self._stmt(self.fn.body, (), frozenset())
        self._finish()
        return self.errors

    def refuse(self, message: str, loc: SourceLocation) -> _Refused:
        return _Refused(f"Tofino: {self.where()}: {message}", loc)

    # --- statements ---------------------------------------------------------------------

    def _stmt(self, s: ast.Node, pred: Pred, written: frozenset[str]) -> frozenset[str]:
        try:
            return self._stmt_checked(s, pred, written)
        except _Refused as r:
            self.errors.append(P4TypeError(r.message, r.loc))
            return written

    def _stmt_checked(self, s: ast.Node, pred: Pred, written: frozenset[str]) -> frozenset[str]:
        if isinstance(s, ast.BlockStatement):
            for item in s.statements:
                written = self._stmt(item, pred, written)
            return written
        if isinstance(s, ast.EmptyStatement | ast.ConstantDecl):
            return written
        if isinstance(s, ast.VariableDecl):
            self._local(s)
            if s.init is None:
                return written
            return self._assign(s, ast.PathExpression(name=s.name, decl=s, loc=s.loc), s.init,
                                pred, written)
        if isinstance(s, ast.AssignmentStatement):
            return self._assign(s, s.lhs, s.rhs, pred, written)
        if isinstance(s, ast.IfStatement):
            if isinstance(s.cond.value, bool):  # folded, as p4c folds it
                taken = s.then if s.cond.value else s.otherwise
                return self._stmt(taken, pred, written) if taken is not None else written
            self._condition(s.cond, written)
            then = self._stmt(s.then, (*pred, (id(s), True)), written)
            other = written
            if s.otherwise is not None:
                other = self._stmt(s.otherwise, (*pred, (id(s), False)), written)
            return then | other
        raise self.refuse(
            "a RegisterAction can only assign, test with if/else and declare locals; this "
            "statement is too complex for the stateful ALU (bf-p4c: statement too complex for "
            "register action)",
            s.loc,
        )

    def _local(self, s: ast.VariableDecl) -> None:
        self.locals[id(s)] = ""  # known as a local even when refused: no follow-on errors
        self.local_names[id(s)] = s.name
        t = s.type_ref.resolved
        u = unwrap_newtype(t) if t is not None else None
        plain = isinstance(u, BitType) and u.width == self.cell.width
        if not plain and not (t is not None and self.cell.dual and _cell(t) == self.cell):
            raise self.refuse(
                f"local '{s.name}' has type {t}; a RegisterAction's locals are "
                f"bit<{self.cell.width}> (the ALU width) or the cell type (bf-p4c: "
                "RegisterAction can't support local var)",
                s.loc,
            )

    # --- assignments --------------------------------------------------------------------

    def _assign(
        self,
        s: ast.Node,
        lhs: ast.Expression,
        rhs: ast.Expression,
        pred: Pred,
        written: frozenset[str],
    ) -> frozenset[str]:
        target = lhs.decl if isinstance(lhs, ast.PathExpression) else None
        if target is not None and target is self.rv:
            self._write("rv", rhs, pred, s.loc)
            self._output(rhs, pred, written)
            return written
        if target is not None and id(target) in self.locals:
            name = self.local_names[id(target)]
            self._write(name, rhs, pred, s.loc)
            op = self._operand(rhs, written)
            if op is not None and op.kind == "mem":
                self.locals[id(target)] = op.key  # a copy of the cell: no ALU needed
            else:
                self.locals[id(target)] = ""
                self._update("hi", rhs, written, split=False)
            return written | {name}
        dests = self._destinations(lhs, rhs)
        for key, half, part in dests:
            self._write(key, part, pred, s.loc)
            self._update(half, part, written, split=True)
        return written | {key for key, _, _ in dests}

    def _destinations(
        self, lhs: ast.Expression, rhs: ast.Expression
    ) -> list[tuple[str, str, ast.Expression]]:
        """(key, half, right side) for each cell half `lhs = rhs` writes."""
        if isinstance(lhs, ast.PathExpression) and lhs.decl is self.value:
            if not self.cell.dual:
                return [("value", "lo", rhs)]
            if isinstance(rhs, ast.StructExpression):
                parts = {f.name: f.expr for f in rhs.fields}
                return [
                    (f"value.{name}", ("lo", "hi")[i], parts[name])
                    for i, name in enumerate(self.cell.fields)
                    if name in parts
                ]
            raise self.refuse(
                "a two-field cell is written field by field (value.f = ...) or from a "
                "{...} of the two fields",
                rhs.loc,
            )
        if (
            isinstance(lhs, ast.Member)
            and isinstance(lhs.expr, ast.PathExpression)
            and lhs.expr.decl is self.value
            and lhs.member in self.cell.fields
        ):
            half = ("lo", "hi")[self.cell.fields.index(lhs.member)]
            return [(f"value.{lhs.member}", half, rhs)]
        raise self.refuse(
            "a RegisterAction writes only its value, its rv and its own locals", lhs.loc
        )

    def _write(self, key: str, rhs: ast.Expression, pred: Pred, loc: SourceLocation) -> None:
        """Writes of one destination must be mutually exclusive (bf-p4c checkWriteAfterWrite:
        an unconditional first ``x = 0`` is free)."""
        earlier = self.writes.setdefault(key, [])
        if not earlier and not pred and _int(rhs.value) == 0:
            return
        for other_pred, other_loc in earlier:
            if not other_pred or not pred or other_pred == pred:
                raise self.refuse(
                    f"two assignments to '{key}' are not mutually exclusive (the other at line "
                    f"{other_loc.line}); the stateful ALU computes each value once per "
                    "packet, so assign it at most once on every path (bf-p4c: not mutually "
                    "exclusive and thus cannot be implemented in Tofino Stateful ALU)",
                    loc,
                )
        earlier.append((pred, loc))

    def _update(self, half: str, rhs: ast.Expression, written: frozenset[str], split: bool) -> None:
        if isinstance(rhs, ast.Ternary) and rhs.value is None:
            self._condition(rhs.cond, written)
            self._update(half, rhs.then, written, split)
            self._update(half, rhs.otherwise, written, split)
            return
        for key in self._instructions(rhs, written, split):
            self.instrs[half].setdefault(key, rhs.loc)

    # --- instructions -------------------------------------------------------------------

    def _instructions(self, e: ast.Expression, written: frozenset[str], split: bool) -> list[str]:
        """The ALU instructions computing `e` (one, or two for an outer | when `split`)."""
        op = self._operand(e, written)
        if op is not None:
            return [f"set {op.key}"]
        if isinstance(e, ast.BinaryOp) and e.op in _ALU_OPS:
            left = self._side(e.op, e.left, written)
            right = self._side(e.op, e.right, written)
            if left is not None and right is not None:
                return [self._instruction(e, e.op, [left, right])]
            if e.op == "|" and split:  # bf-p4c: two instructions OR-ed into the destination
                return [*self._instructions(e.left, written, False),
                        *self._instructions(e.right, written, False)]
            inner = e.left if left is None else e.right
            raise self._complex(inner)
        if isinstance(e, ast.Cast) and (_width(e.type) or 0) >= (_width(e.expr.type) or 0):
            # bf-p4c drops a zero-extension (0 ++ x) and computes x: its width is checked
            return self._instructions(e.expr, written, split)
        if isinstance(e, ast.UnaryOp) and e.op in ("~", "-"):
            child = self._operand(e.operand, written)
            if child is None:
                raise self._complex(e.operand)
            return [self._instruction(e, e.op, [child])]
        raise self._complex(e)

    def _side(self, op: str, e: ast.Expression, written: frozenset[str]) -> _Operand | None:
        """An operand of `op`; & | ^ also take a complemented one (andca/andcb, orca/orcb,
        xnor: bf-p4c's postorder(BAnd/BOr/BXor))."""
        if op in ("&", "|", "^") and isinstance(e, ast.UnaryOp) and e.op == "~":
            inner = self._operand(e.operand, written)
            if inner is not None and inner.kind != "const":
                return _Operand(inner.kind, "~" + inner.key, inner.width, half=inner.half)
        return self._operand(e, written)

    def _instruction(self, e: ast.Expression, op: str, operands: list[_Operand]) -> str:
        w = _width(e.type)
        if w != self.cell.width:
            raise self.refuse(
                f"'{expression_text(e)}' computes on {w} bits, but the stateful ALU of "
                f"register '{self.model.register_name}' ({self.cell.describe()}) computes on "
                f"{self.cell.width}: a narrower result would need a mask the ALU does not have "
                "(cast the operands, not the result)",
                e.loc,
            )
        mems = [o for o in operands if o.kind == "mem"]
        phvs = [o for o in operands if o.kind == "phv"]
        consts = {o.const for o in operands if o.kind == "const"}
        if len(mems) > 1 or len(phvs) > 1 or len(consts) > 1:
            raise self.refuse(
                f"'{expression_text(e)}': one stateful ALU instruction takes at most one "
                "register value, one field and one constant (bf-asm: Can't reference memory/"
                "phv in ... operand)",
                e.loc,
            )
        return f"{op} " + " ".join(o.key for o in operands)

    def _complex(self, e: ast.Expression) -> _Refused:
        if isinstance(e, ast.BinaryOp) and e.op in ("*", "/", "%"):
            why = "Tofino 1's stateful ALU cannot multiply, divide or take a modulo"
        elif isinstance(e, ast.BinaryOp) and e.op in ("<<", ">>"):
            why = "the stateful ALU cannot shift (not even by a constant)"
        elif isinstance(e, ast.BinaryOp) and e.op == "++":
            why = "the stateful ALU cannot concatenate bits"
        elif isinstance(e, ast.BinaryOp) and e.op in _ALU_OPS:
            why = (
                "one assignment is one stateful ALU operation: nested arithmetic does not fit "
                "(bf-p4c: You can only have more than one binary operator in a statement if "
                "the outer one is |)"
            )
        elif isinstance(e, ast.BinaryOp) and (e.op in _RELOPS or e.op in ("&&", "||")):
            why = "a comparison can only be used in a condition or as the value of rv"
        elif isinstance(e, ast.Slice | ast.Cast):
            why = (
                "a slice or narrowing cast of the register value or of a result needs a mask "
                "the stateful ALU does not have (bf-p4c: result of an instruction cannot be "
                "sliced)"
            )
        else:
            why = "expression too complex for the stateful ALU"
        return self.refuse(f"'{expression_text(e)}': {why}", e.loc)

    # --- operands -----------------------------------------------------------------------

    def _operand(
        self, e: ast.Expression, written: frozenset[str], record: bool = True
    ) -> _Operand | None:
        """`e` as one ALU operand (None: it needs computing). Records fields (unless `record`
        is False: the caller slices it) and constants."""
        v = _int(e.value)
        if v is not None:
            if not IMMEDIATE[0] <= v <= IMMEDIATE[1]:
                self.model.constants.setdefault(v, e.loc)
            return _Operand("const", str(v), const=v)
        if isinstance(e, ast.Cast):
            return self._cast(e, written)
        if isinstance(e, ast.Slice):
            inner = self._operand(e.expr, written, record=False)
            if inner is None or inner.kind != "phv":
                raise self._complex(e)
            return self._phv(f"{inner.key}[{e.high}:{e.low}]", _width(e.type) or 0, e)
        if isinstance(e, ast.PathExpression):
            if e.decl is self.rv and self.rv is not None:
                raise self.refuse(
                    "rv is only written (bf-p4c: Reading out param ... not supported)", e.loc
                )
            if e.decl is self.value:
                if self.cell.dual:
                    return None
                return self._mem("value", "lo", e, written)
            if id(e.decl) in self.locals:
                copy = self.locals[id(e.decl)]
                if copy:
                    return self._mem(copy, "lo" if copy in ("value", self._field(0)) else "hi",
                                     e, written)
                return _Operand("mem", self.local_names[id(e.decl)], self.cell.width, half="hi")
        if (
            isinstance(e, ast.Member)
            and isinstance(e.expr, ast.PathExpression)
            and e.expr.decl is self.value
        ):
            if e.member not in self.cell.fields:
                return None
            half = ("lo", "hi")[self.cell.fields.index(e.member)]
            return self._mem(f"value.{e.member}", half, e, written)
        if _is_field(e) and _width(e.type) is not None:
            if not record:
                return _Operand("phv", expression_text(e), _width(e.type) or 0)
            return self._phv(expression_text(e), _width(e.type) or 0, e)
        return None

    def _field(self, i: int) -> str:
        return f"value.{self.cell.fields[i]}" if self.cell.dual else "value"

    def _cast(self, e: ast.Cast, written: frozenset[str]) -> _Operand | None:
        to, frm = _width(e.type), _width(e.expr.type)
        narrowing = to is not None and frm is not None and to < frm
        inner = self._operand(e.expr, written, record=not narrowing)
        if inner is None or to is None or frm is None:
            if to is not None and frm is not None and to < frm:
                raise self._complex(e)
            return None
        if to >= frm or inner.kind == "const":
            return inner  # a widened field comes zero-extended through the input crossbar
        if inner.kind == "phv":
            return self._phv(f"{inner.key}[{to - 1}:0]", to, e)
        raise self._complex(e)

    def _mem(self, key: str, half: str, e: ast.Expression, written: frozenset[str]) -> _Operand:
        if key in written:
            raise self.refuse(
                f"'{key}' is read after it was written: the stateful ALU's compares and "
                "updates read the cell as it was before the RegisterAction (only rv = "
                f"{key}; may follow the write)",
                e.loc,
            )
        return _Operand("mem", key, self.cell.width, half=half)

    def _phv(self, key: str, width: int, e: ast.Expression) -> _Operand:
        if width > self.cell.width:
            raise self.refuse(
                f"'{key}' is {width} bits wide; the stateful ALU of register "
                f"'{self.model.register_name}' ({self.cell.describe()}) reads fields of at "
                f"most {self.cell.width} bits (bf-p4c: can only access header/metadata fields "
                f"of the type bit<{self.cell.width}>)",
                e.loc,
            )
        self.model.phv.setdefault(key, (width, e.loc))
        return _Operand("phv", key, width)

    # --- conditions ---------------------------------------------------------------------

    def _condition(self, e: ast.Expression, written: frozenset[str]) -> None:
        if isinstance(e.value, bool):
            return
        if isinstance(e, ast.BinaryOp) and e.op in ("&&", "||"):
            self._condition(e.left, written)
            self._condition(e.right, written)
            return
        if isinstance(e, ast.UnaryOp) and e.op == "!":
            self._condition(e.operand, written)
            return
        if isinstance(e, ast.BinaryOp) and e.op in _RELOPS:
            self._comparison(e, written)
            return
        op = self._operand(e, written)
        if op is not None and isinstance(unwrap_newtype(e.type), BoolType):  # b: b != 0
            self._compare((op.key, "0", "eq"), e.loc)
            return
        raise self.refuse(
            f"'{expression_text(e)}': a condition in a RegisterAction combines comparisons "
            "with &&, || and !",
            e.loc,
        )

    def _comparison(self, e: ast.BinaryOp, written: frozenset[str]) -> None:
        terms = self._terms(e.left, 1, written) + self._terms(e.right, -1, written)
        mems = {o.key for _, o in terms if o.kind == "mem"}
        phvs = {o.key for _, o in terms if o.kind == "phv"}
        consts = [s * (o.const or 0) for s, o in terms if o.kind == "const" and o.const]
        if len(mems) > 1 or len(phvs) > 1 or len(consts) > 1:
            raise self.refuse(
                f"'{expression_text(e)}': a stateful ALU comparison is [±register value] "
                "[±field] [±constant] against 0 — at most one of each (bf-asm: Can't have more "
                "than one ... operand to an SALU compare)",
                e.loc,
            )
        ordering = e.op not in ("==", "!=")
        if ordering and consts and not _signed(e.left.type) and not -(2**31) <= consts[0] < 2**31:
            raise self.refuse(
                f"'{expression_text(e)}': an unsigned comparison's constant (moved to the left "
                f"side: {consts[0]}) must fit 32 signed bits on Tofino (bf-p4c: constant value "
                "is out of range for stateful ALU)",
                e.loc,
            )
        for c in consts:
            if not IMMEDIATE[0] <= c <= IMMEDIATE[1]:
                self.model.constants.setdefault(c, e.loc)
        self._compare((expression_text(e.left), expression_text(e.right), _RELOPS[e.op]), e.loc)

    def _terms(
        self, e: ast.Expression, sign: int, written: frozenset[str]
    ) -> list[tuple[int, _Operand]]:
        if e.value is None and isinstance(e, ast.BinaryOp) and e.op in ("+", "-"):
            w = _width(e.type)
            if w != self.cell.width:
                raise self.refuse(
                    f"'{expression_text(e)}' computes on {w} bits in a comparison of a "
                    f"{self.cell.width}-bit stateful ALU (bf-p4c: Can't do {w}-bit comparison "
                    f"in a {self.cell.width}-bit SALU)",
                    e.loc,
                )
            right = sign if e.op == "+" else -sign
            return self._terms(e.left, sign, written) + self._terms(e.right, right, written)
        op = self._operand(e, written)
        if op is None:
            raise self._complex(e)
        return [(sign, op)]

    def _compare(self, key: tuple[str, str, str], loc: SourceLocation) -> None:
        if key not in self.compares:
            self.compares[key] = loc
            if len(self.compares) == MAX_COMPARES + 1:
                raise self.refuse(
                    f"this is a {MAX_COMPARES + 1}rd distinct comparison; Tofino's stateful ALU "
                    f"has {MAX_COMPARES} compare units (bf-p4c: needs N comparisons but the "
                    "device only has 2 comparison units)",
                    loc,
                )

    # --- rv -----------------------------------------------------------------------------

    def _output(self, rhs: ast.Expression, pred: Pred, written: frozenset[str]) -> None:
        if isinstance(rhs, ast.Ternary) and rhs.value is None:
            self._condition(rhs.cond, written)
            self._output(rhs.then, pred, written)
            self._output(rhs.otherwise, pred, written)
            return
        inner = rhs
        while isinstance(inner, ast.Cast):
            inner = inner.expr
        if inner is not rhs and isinstance(unwrap_newtype(inner.type), BoolType):
            rhs = inner  # (bit<8>)(bit<1>)(a == b): the comparison's 1 or 0
        v = _int(rhs.value)
        if v is not None:
            kind = "zero" if v == 0 else "pow2" if v > 0 and v & (v - 1) == 0 else "const"
            if kind == "const" and not IMMEDIATE[0] <= v <= IMMEDIATE[1]:
                self.model.constants.setdefault(v, rhs.loc)
            self.outputs.append((str(v), kind, rhs.loc))
            return
        if (isinstance(rhs, ast.BinaryOp) and rhs.op in (*_RELOPS, "&&", "||")) or (
            isinstance(rhs, ast.UnaryOp) and rhs.op == "!"
        ):
            self._condition(rhs, written)  # rv is 1 under the condition
            self.outputs.append(("1", "pow2", rhs.loc))
            return
        op = self._operand(rhs, written - {"value", *(f"value.{f}" for f in self.cell.fields)})
        if op is not None:
            key = op.key + (" (new)" if op.key in written else "")
            self.outputs.append((key, op.kind, rhs.loc))
            return
        keys = self._instructions(rhs, written, split=False)
        self.outputs.append((keys[0], "instr", rhs.loc))

    # --- the whole action ---------------------------------------------------------------

    def _finish(self) -> None:
        try:
            self._finish_outputs()
        except _Refused as r:
            self.errors.append(P4TypeError(r.message, r.loc))
        computed = [n for i, n in self.local_names.items() if not self.locals[i]]
        if computed and (self.cell.dual or len(computed) > 1):
            self.errors.append(
                P4TypeError(
                    f"Tofino: {self.where()}: locals {', '.join(computed)} need the ALU's high "
                    "half, which has room for one computed local and none in a two-field "
                    "register (bf-p4c: too many local variables in RegisterAction)",
                    self.fn.loc,
                )
            )
        for half, instrs in self.instrs.items():
            if len(instrs) > MAX_PER_HALF:
                loc = list(instrs.values())[MAX_PER_HALF]
                self.errors.append(
                    P4TypeError(
                        f"Tofino: {self.where()}: {len(instrs)} different values computed in "
                        f"the {half} half of the stateful ALU ({'; '.join(instrs)}); each half "
                        f"has {MAX_PER_HALF} ALUs (bf-p4c: only two values can be computed per "
                        "apply)",
                        loc,
                    )
                )

    def _finish_outputs(self) -> None:
        nonzero: dict[str, tuple[str, SourceLocation]] = {}
        for key, kind, loc in self.outputs:
            if kind != "zero":
                nonzero.setdefault(key, (kind, loc))
        if not nonzero:
            return
        if self.cell.dual or self.local_names:
            place = "a two-field register" if self.cell.dual else "a RegisterAction with a local"
            for key, (kind, loc) in nonzero.items():
                if kind in ("const", "instr"):
                    raise self.refuse(
                        f"rv = {key}: in {place} the stateful ALU has no free ALU to compute "
                        "an output; rv can be the cell's value, a field, 0 or a power of two "
                        "(bf-p4c: can't output ... from a RegisterAction)",
                        loc,
                    )
            if len(nonzero) > 1:
                loc = list(nonzero.values())[1][1]
                raise self.refuse(
                    f"rv takes {len(nonzero)} different values ({', '.join(nonzero)}); in "
                    f"{place} the output has one source (bf-p4c: Incompatible outputs in "
                    "RegisterAction)",
                    loc,
                )
            return
        if len(nonzero) == 1:
            key, (kind, loc) = next(iter(nonzero.items()))
            if kind not in ("mem", "phv"):
                self.instrs["hi"].setdefault(f"out {key}", loc)
            return
        for key, (kind, loc) in nonzero.items():
            if kind == "phv":
                raise self.refuse(
                    f"rv = {key}: a field is output directly, so rv cannot also take other "
                    "values (bf-p4c: Incompatible outputs in RegisterAction)",
                    loc,
                )
            self.instrs["hi"].setdefault(f"out {key}", loc)


def _is_field(e: ast.Expression) -> bool:
    """A header/metadata field or a control's variable: a PHV container the ALU reads."""
    if isinstance(e, ast.PathExpression):
        return isinstance(e.decl, ast.VariableDecl | ast.Parameter)
    if isinstance(e, ast.Member):
        return _is_field(e.expr)
    if isinstance(e, ast.ArrayIndex):
        return _is_field(e.expr) and e.index.value is not None
    return False


# --- per register ---------------------------------------------------------------------------


def _register_limits(uses: list[Use], models: dict[Where, ActionModel]) -> list[P4TypeError]:
    errors: list[P4TypeError] = []
    by_register: dict[Hashable, dict[tuple[str, Where], Use]] = {}
    for u in uses:
        if _where(u.decl) in models:
            by_register.setdefault(u.register, {}).setdefault((u.path, _where(u.decl)), u)
    for found in by_register.values():
        same = sorted(found.values(), key=lambda u: (_where(u.decl), u.path))
        actions = [models[_where(u.decl)] for u in same]
        name, cell = actions[0].register_name, actions[0].cell
        if len(same) > MAX_ACTIONS:
            names = ", ".join(f"{u.path}.{u.decl.name}" if u.path else u.decl.name for u in same)
            errors.append(
                P4TypeError(
                    f"Tofino: register '{name}' is executed by {len(same)} RegisterActions "
                    f"({names}); its stateful ALU holds {MAX_ACTIONS} (bf-p4c: too many "
                    "actions try to access the register)",
                    same[MAX_ACTIONS].decl.loc,
                )
            )
        unique = list({_where(m.decl): m for m in actions}.values())
        errors += _inputs(name, cell, unique)
        errors += _constants(name, unique)
    return errors


def _inputs(name: str, cell: _Cell, same: list[ActionModel]) -> list[P4TypeError]:
    fields: dict[str, tuple[int, SourceLocation]] = {}
    for m in same:
        for key, (width, loc) in m.phv.items():
            fields.setdefault(key, (width, loc))
            if len(fields) == 3:
                return [
                    P4TypeError(
                        f"Tofino: register '{name}': its RegisterActions read three fields "
                        f"({', '.join(fields)}); the stateful ALU has two field inputs "
                        "(phv_lo, phv_hi), shared by all RegisterActions of the register",
                        loc,
                    )
                ]
    if len(fields) == 2 and not cell.dual:
        widths = [w for w, _ in fields.values()]
        if cell.width + min(widths) > HASH_INPUT_BITS:
            loc = list(fields.values())[1][1]
            return [
                P4TypeError(
                    f"Tofino: register '{name}': two field inputs ({', '.join(fields)}) of "
                    f"{widths[0]} and {widths[1]} bits do not fit the {HASH_INPUT_BITS}-bit "
                    f"input of a {cell.width}-bit stateful ALU (the second starts at bit "
                    f"{cell.width}: one of them must be at most "
                    f"{HASH_INPUT_BITS - cell.width} bits)",
                    loc,
                )
            ]
    return []


def _constants(name: str, same: list[ActionModel]) -> list[P4TypeError]:
    seen: dict[int, SourceLocation] = {}
    for m in same:
        for value, loc in m.constants.items():
            seen.setdefault(value, loc)
            if len(seen) == MAX_REGFILE + 1:
                return [
                    P4TypeError(
                        f"Tofino: register '{name}': its RegisterActions use "
                        f"{len(seen)} constants outside [{IMMEDIATE[0]}, {IMMEDIATE[1]}] "
                        f"({', '.join(map(str, seen))}); the stateful ALU keeps {MAX_REGFILE} "
                        "in its register file (bf-p4c: do not fit on the device ... register "
                        "action parameter slots)",
                        loc,
                    )
                ]
    return []
