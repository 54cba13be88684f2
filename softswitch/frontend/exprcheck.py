"""Typing and constant folding of expressions (a mixin of the Checker in typecheck.py).

Every checked expression gets `type` and, when it is a compile-time constant, `value`. Unsized
integer literals stay `IntType` until a context fixes their type: `coerce` then retypes them
(with the value wrapped to the new width), which is how ``x + 1`` with x: bit<8> becomes
bit<8> + bit<8>.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from softswitch.errors import P4TypeError, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.constfold import fold_binary, fold_cast, fold_unary, wrap
from softswitch.frontend.scopes import Scope
from softswitch.frontend.typeops import castable, extern_fits, is_numeric, list_to_tuple
from softswitch.frontend.types import (
    ActionEnumType,
    ApplyResultType,
    BitType,
    BoolType,
    EnumType,
    ErrorType,
    ExternType,
    HeaderStackType,
    HeaderType,
    HeaderUnionType,
    IntType,
    ListType,
    MatchKindType,
    NewType,
    ObjectType,
    StringType,
    StructLikeType,
    TupleType,
    Type,
    VarbitType,
    unwrap_newtype,
)

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker

_ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}
_COMPARE = {"<", "<=", ">", ">="}


def _may_be_propagated(e: ast.Expression, scope: Scope) -> bool:
    """A local variable, or a parameter of the function being checked: p4c inlines functions and
    propagates constants copied into locals before it looks for run-time divisions, so such a
    divisor may still become a power of two; softswitch, without that data-flow analysis, lets it
    run. (Action parameters stay parameters in p4c: never constant.)"""
    if not isinstance(e, ast.PathExpression):
        return False
    if isinstance(e.decl, ast.VariableDecl):
        return True
    fn = scope.enclosing_owner((ast.FunctionDecl,))
    return fn is not None and any(p is e.decl for p in fn.params)  # type: ignore[attr-defined]


def expression_text(e: ast.Expression) -> str:
    """`e` written back as P4 source, the way p4c quotes expressions in its messages."""
    if isinstance(e, ast.PathExpression):
        return ("." if e.is_global else "") + e.name
    if isinstance(e, ast.IntLiteral):
        if e.width is None:
            return str(e.number)
        return f"{e.width}{'s' if e.signed else 'w'}{e.number}"
    if isinstance(e, ast.BoolLiteral):
        return "true" if e.bool_value else "false"
    if isinstance(e, ast.StringLiteral):
        return f'"{e.text}"'
    if isinstance(e, ast.Member):
        return f"{expression_text(e.expr)}.{e.member}"
    if isinstance(e, ast.ArrayIndex):
        return f"{expression_text(e.expr)}[{expression_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{expression_text(e.expr)}[{expression_text(e.hi)}:{expression_text(e.lo)}]"
    if isinstance(e, ast.UnaryOp):
        return f"{e.op}{expression_text(e.operand)}"
    if isinstance(e, ast.BinaryOp):
        return f"{_operand_text(e.left)} {e.op} {_operand_text(e.right)}"
    if isinstance(e, ast.Cast):
        target = e.target.resolved
        return f"({target if target is not None else '...'}){_operand_text(e.expr)}"
    if isinstance(e, ast.Ternary):
        parts = (e.cond, e.then, e.otherwise)
        return "{} ? {} : {}".format(*map(_operand_text, parts))
    if isinstance(e, ast.MethodCall):
        args = ", ".join(expression_text(a.expr) for a in e.args)
        return f"{expression_text(e.callee)}({args})"
    if isinstance(e, ast.ListExpression):
        return "{" + ", ".join(map(expression_text, e.elements)) + "}"
    return "..."


def _operand_text(e: ast.Expression) -> str:
    text = expression_text(e)
    return f"({text})" if isinstance(e, ast.BinaryOp | ast.Ternary) else text


def _const_key(v: Any) -> Any:
    """A hashable, comparable form of a constant (EnumValue compares by identity)."""
    if isinstance(v, ast.EnumValue):
        return (v.enum, v.member, v.number)
    return v


def default_value(t: Type, loc: Any) -> ast.Expression:
    """An unchecked expression for the default value of `t` (spec 7.3), as p4c's
    getDefaultValue: 0, false, error.NoError, "", the first member of an enum, 0 cast to a
    serializable enum, an invalid header/union, and structs/tuples field by field."""
    u = unwrap_newtype(t)
    if isinstance(u, BitType | IntType):
        return ast.IntLiteral(number=0, loc=loc)
    if isinstance(u, BoolType):
        return ast.BoolLiteral(bool_value=False, loc=loc)
    if isinstance(u, StringType):
        return ast.StringLiteral(text="", loc=loc)
    if isinstance(u, ErrorType):
        return ast.Member(expr=ast.PathExpression(name="error", loc=loc), member="NoError", loc=loc)
    if isinstance(u, EnumType):
        enum = ast.PathExpression(name=u.name, is_global=True, loc=loc)
        if u.underlying is None:
            return ast.Member(expr=enum, member=u.members[0], loc=loc)
        ref = ast.NamedTypeRef(name="." + u.name, loc=loc)
        return ast.Cast(target=ref, expr=ast.IntLiteral(number=0, loc=loc), loc=loc)
    if isinstance(u, HeaderType | HeaderUnionType):
        return ast.InvalidHeaderExpression(loc=loc)
    if isinstance(u, StructLikeType):
        fields = [
            ast.NamedExpression(name=f, expr=default_value(ft, loc), loc=loc) for f, ft in u.fields
        ]
        return ast.StructExpression(fields=fields, loc=loc)
    if isinstance(u, TupleType):
        return ast.ListExpression(elements=[default_value(et, loc) for et in u.elements], loc=loc)
    if isinstance(u, VarbitType):
        # p4c: "Unsupported: default values for varbit types"
        raise P4TypeError(f"no default value for type {t} (varbit types have none)", loc)
    if isinstance(u, HeaderStackType):
        raise UnsupportedError("default values of header stacks", loc)
    raise P4TypeError(f"type {t} has no default value", loc)


class ExprMixin:
    """Expression rules; `self` is the Checker."""

    # -- entry points ---------------------------------------------------------------------------

    def expr(self: Checker, e: ast.Expression, scope: Scope, expected: Type | None = None) -> Type:
        """Type `e` (filling `type`/`value`) in `scope`; `expected` types list/struct literals."""
        method = getattr(self, "_expr_" + type(e).__name__, None)
        if method is None:
            raise P4TypeError(f"unexpected {type(e).__name__} in this position", e.loc)
        t = method(e, scope, expected)
        e.type = t
        return t

    def coerce(self: Checker, e: ast.Expression, target: Type, what: str) -> None:
        """Make the checked `e` a value of `target` (retyping an unsized constant) or fail."""
        t = e.type
        assert t is not None
        if t == target:
            return
        if isinstance(target, ObjectType | ExternType) and t == target:
            return
        if isinstance(target, ExternType) and extern_fits(t, target):
            return  # a parameter of type E<_> takes any E (TNA's Hash<_>, CRCPolynomial<_>)
        u = unwrap_newtype(target)
        if isinstance(t, IntType) and isinstance(u, BitType | IntType):
            if e.value is None:
                raise P4TypeError(
                    f"{what}: an expression of type int must be a compile-time constant", e.loc
                )
            e.type = target
            e.value = wrap(e.value, u)
            return
        if isinstance(t, EnumType) and t.underlying is not None and u == t.underlying:
            return  # the spec's one implicit cast besides int literals: to the underlying type
        if (
            isinstance(t, ListType | TupleType)
            and isinstance(target, StructLikeType | TupleType)
            and isinstance(e, ast.ListExpression | ast.StructExpression)
        ):
            self.expr(e, self._scope_of_literal(e), target)
            return
        raise P4TypeError(f"type mismatch in {what}: expected {target}, got {t}", e.loc)

    def checked(
        self: Checker, e: ast.Expression, scope: Scope, target: Type, what: str
    ) -> ast.Expression:
        """Check `e` against `target` (expected + coerce); returns `e` for chaining."""
        self._literal_scopes[id(e)] = scope
        self.expr(e, scope, target)
        self.coerce(e, target, what)
        return e

    def const_value(self: Checker, e: ast.Expression, scope: Scope, what: str) -> Any:
        if e.type is None:
            self.expr(e, scope)
        if e.value is None:
            raise P4TypeError(f"{what} must be a compile-time constant", e.loc)
        return e.value

    def const_int(self: Checker, e: ast.Expression, scope: Scope, what: str) -> int:
        v = self.const_value(e, scope, what)
        if isinstance(v, ast.EnumValue):
            v = v.number
        if not isinstance(v, int) or isinstance(v, bool):
            raise P4TypeError(f"{what} must be an integer constant", e.loc)
        return v

    def _scope_of_literal(self: Checker, e: ast.Expression) -> Scope:
        return self._literal_scopes.get(id(e), self.top)

    # -- leaves -----------------------------------------------------------------------------------

    def _expr_IntLiteral(self, e: ast.IntLiteral, scope: Scope, expected: Type | None) -> Type:
        if e.width is None:
            e.value = e.number
            return IntType()
        t = BitType(e.width, e.signed)
        e.value = wrap(e.number, t)
        return t

    def _expr_BoolLiteral(self, e: ast.BoolLiteral, scope: Scope, expected: Type | None) -> Type:
        e.value = e.bool_value
        return BoolType()

    def _expr_StringLiteral(
        self, e: ast.StringLiteral, scope: Scope, expected: Type | None
    ) -> Type:
        e.value = e.text
        return StringType()

    def _expr_DontCareExpression(
        self, e: ast.DontCareExpression, scope: Scope, expected: Type | None
    ) -> Type:
        if expected is None:
            raise P4TypeError("'_' is only allowed as an out argument or in a keyset", e.loc)
        return expected

    def _expr_DefaultExpression(
        self, e: ast.DefaultExpression, scope: Scope, expected: Type | None
    ) -> Type:
        raise P4TypeError("'default' is only allowed in a select case or table entry", e.loc)

    def _expr_MaskExpression(
        self, e: ast.MaskExpression, scope: Scope, expected: Type | None
    ) -> Type:
        raise P4TypeError("'&&&' is only allowed in a select case or table entry", e.loc)

    def _expr_RangeExpression(
        self, e: ast.RangeExpression, scope: Scope, expected: Type | None
    ) -> Type:
        raise P4TypeError("'..' is only allowed in a select case or table entry", e.loc)

    def _expr_SelectExpression(
        self, e: ast.SelectExpression, scope: Scope, expected: Type | None
    ) -> Type:
        raise P4TypeError("'select' is only allowed as a parser state transition", e.loc)

    def _expr_PathExpression(
        self: Checker, e: ast.PathExpression, scope: Scope, expected: Type | None
    ) -> Type:
        if e.name == "this":
            raise UnsupportedError("'this'", e.loc)
        decl = self.resolve_name(e.name, e.is_global, scope, e.loc)
        e.decl = decl
        return self.type_of_decl(decl, e)

    def type_of_decl(self: Checker, decl: ast.Node, e: ast.PathExpression) -> Type:
        """The type a name has as an expression (and its value when constant)."""
        if isinstance(decl, ast.ConstantDecl):
            e.value = decl.init.value
            assert decl.type_ref.resolved is not None
            return decl.type_ref.resolved
        if isinstance(decl, ast.Parameter | ast.VariableDecl):
            t = decl.type_ref.resolved
            assert t is not None
            return t
        if isinstance(decl, ast.InstanceDecl):
            assert decl.resolved is not None
            return decl.resolved
        if isinstance(decl, ast.MatchKindDecl):
            e.value = ast.EnumValue(
                enum="match_kind", member=e.name, number=self.match_kinds.index(e.name)
            )
            return MatchKindType()
        if isinstance(decl, ast.ValueSetDecl):
            assert decl.element_type.resolved is not None
            return decl.element_type.resolved
        if isinstance(decl, ast.EnumDecl | ast.StructLikeDecl | ast.TypedefDecl):
            if decl.resolved is None:
                raise P4TypeError(f"'{e.name}' is a generic type and needs type arguments", e.loc)
            return decl.resolved
        if isinstance(decl, ast.ErrorDecl):
            return ErrorType()
        kinds = {
            ast.TableDecl: "table",
            ast.ActionDecl: "action",
            ast.FunctionDecl: "function",
            ast.ExternFunctionDecl: "function",
            ast.ParserState: "state",
            ast.ParserDecl: "parser",
            ast.ControlDecl: "control",
            ast.ExternDecl: "extern",
            ast.PackageTypeDecl: "package",
            ast.ParserTypeDecl: "parser",
            ast.ControlTypeDecl: "control",
        }
        for cls, kind in kinds.items():
            if isinstance(decl, cls):
                return ObjectType(kind, e.name, decl)
        raise P4TypeError(f"'{e.name}' cannot be used as a value", e.loc)

    # -- members, indexing, slices ----------------------------------------------------------------

    def _expr_Member(self: Checker, e: ast.Member, scope: Scope, expected: Type | None) -> Type:
        base = e.expr
        if (
            isinstance(base, ast.PathExpression)
            and base.name == "error"
            and isinstance(scope.lookup("error"), ast.ErrorDecl | None)
        ):
            base.type = ErrorType()
            return self._error_member(e)
        bt = self.expr(base, scope)
        decl = base.decl if isinstance(base, ast.PathExpression) else None
        if isinstance(decl, ast.ErrorDecl):
            return self._error_member(e)
        if isinstance(decl, ast.EnumDecl) or (
            isinstance(decl, ast.TypedefDecl) and isinstance(bt, EnumType)
        ):
            assert isinstance(bt, EnumType)
            if e.member not in bt.members:
                raise P4TypeError(f"enum '{bt.name}' has no member '{e.member}'", e.loc)
            e.kind = "enum_member"
            e.value = ast.EnumValue(enum=bt.name, member=e.member, number=bt.value_of(e.member))
            return bt
        if isinstance(decl, ast.StructLikeDecl | ast.TypedefDecl | ast.ExternDecl):
            raise P4TypeError(f"'{base.name}' is a type, not a value", base.loc)  # type: ignore[union-attr]
        u = unwrap_newtype(bt)
        if isinstance(u, StructLikeType):
            ft = u.field_type(e.member)
            if ft is None:
                kind = type(u).__name__.replace("Type", "").lower().replace("headerunion", "union")
                raise P4TypeError(f"{kind} '{u.name}' has no field '{e.member}'", e.loc)
            e.kind = "field"
            return ft
        if isinstance(u, HeaderStackType):
            return self._stack_member(e, u)
        if isinstance(u, ApplyResultType):
            if e.member in ("hit", "miss"):
                e.kind = "apply_" + e.member
                return BoolType()
            if e.member == "action_run":
                e.kind = "apply_action_run"
                return ActionEnumType(u.table)
        raise P4TypeError(f"type {bt} has no member '{e.member}'", e.loc)

    def _error_member(self: Checker, e: ast.Member) -> Type:
        if e.member not in self.error_codes:
            raise P4TypeError(f"error member 'error.{e.member}' is not declared", e.loc)
        e.kind = "error_member"
        e.value = ast.EnumValue(enum="error", member=e.member, number=self.error_codes[e.member])
        return ErrorType()

    def _stack_member(self, e: ast.Member, t: HeaderStackType) -> Type:
        if e.member == "next":
            e.kind = "stack_next"
            return t.element
        if e.member == "last":
            e.kind = "stack_last"
            return t.element
        if e.member == "lastIndex":
            e.kind = "stack_last_index"
            return BitType(32)
        if e.member == "size":
            e.kind = "stack_size"
            e.value = t.size
            return BitType(32)
        raise P4TypeError(f"header stack has no member '{e.member}'", e.loc)

    def _expr_ArrayIndex(
        self: Checker, e: ast.ArrayIndex, scope: Scope, expected: Type | None
    ) -> Type:
        bt = self.expr(e.expr, scope)
        it = self.expr(e.index, scope)
        iu = unwrap_newtype(it)
        if isinstance(bt, HeaderStackType) and isinstance(iu, EnumType) and iu.underlying:
            # a serializable enum indexes by its value, as p4c takes it (`enum int<8> Index_t`)
            it = iu.underlying
            if isinstance(e.index.value, ast.EnumValue):
                e.index.value = e.index.value.number
        if not is_numeric(it):
            raise P4TypeError(f"array index must be an integer, got {it}", e.index.loc)
        if isinstance(bt, HeaderStackType):
            if isinstance(it, IntType):
                self.coerce(e.index, BitType(32), "array index")
            if e.index.value is not None and not 0 <= e.index.value < bt.size:
                raise P4TypeError(
                    f"index {e.index.value} out of bounds for header stack of size {bt.size}",
                    e.index.loc,
                )
            return bt.element
        if isinstance(bt, TupleType | ListType):
            if not isinstance(e.index.value, int) or not 0 <= e.index.value < len(bt.elements):
                raise P4TypeError("tuple index must be a constant within the tuple", e.index.loc)
            return bt.elements[e.index.value]
        raise P4TypeError(f"cannot index a value of type {bt}", e.loc)

    def _expr_Slice(self: Checker, e: ast.Slice, scope: Scope, expected: Type | None) -> Type:
        bt = self.expr(e.expr, scope)
        u = unwrap_newtype(bt)
        hi = self.const_int(self._typed(e.hi, scope), scope, "slice bound")
        lo = self.const_int(self._typed(e.lo, scope), scope, "slice bound")
        if isinstance(u, BitType):
            width = u.width
        elif isinstance(u, IntType) and e.expr.value is not None:
            width = max(hi + 1, 1)
        else:
            raise P4TypeError(f"cannot slice a value of type {bt}", e.loc)
        if not 0 <= lo <= hi < width:
            raise P4TypeError(f"slice [{hi}:{lo}] out of range for type {bt}", e.loc)
        e.high, e.low = hi, lo
        if e.expr.value is not None:
            e.value = (e.expr.value >> lo) & ((1 << (hi - lo + 1)) - 1)
        return BitType(hi - lo + 1)

    def _typed(self: Checker, e: ast.Expression, scope: Scope) -> ast.Expression:
        self.expr(e, scope)
        return e

    # -- operators --------------------------------------------------------------------------------

    def _expr_UnaryOp(self: Checker, e: ast.UnaryOp, scope: Scope, expected: Type | None) -> Type:
        t = self.expr(e.operand, scope, expected)
        if e.op == "!":
            if not isinstance(t, BoolType):
                raise P4TypeError(f"operator ! needs a bool, got {t}", e.loc)
        elif e.op in ("-", "+", "~"):
            if not is_numeric(t):
                raise P4TypeError(f"operator {e.op} needs an integer, got {t}", e.loc)
            if e.op == "~" and isinstance(t, IntType):
                raise P4TypeError("operator ~ needs a value of known width, not an int", e.loc)
        else:
            raise P4TypeError(f"unknown unary operator {e.op}", e.loc)
        if e.operand.value is not None:
            e.value = fold_unary(e.op, e.operand.value, t)
        return t

    def _expr_BinaryOp(self: Checker, e: ast.BinaryOp, scope: Scope, expected: Type | None) -> Type:
        op = e.op
        if op in ("&&", "||"):
            for side in (e.left, e.right):
                t = self.expr(side, scope)
                if not isinstance(t, BoolType):
                    raise P4TypeError(f"operator {op} needs bool operands, got {t}", side.loc)
            return self._fold(e, BoolType(), BoolType())
        if op == "++":
            return self._concat(e, scope)
        if op in ("<<", ">>"):
            return self._shift(e, scope, expected)
        lt = self.expr(e.left, scope, expected if op in _ARITH else None)
        rt = self.expr(e.right, scope, expected if op in _ARITH else lt)
        if op in ("==", "!="):
            t = self._unify_operands(e, lt, rt, numeric=False)
            return self._fold(e, t, BoolType())
        if op not in _ARITH and op not in _COMPARE:
            raise P4TypeError(f"unknown operator {op}", e.loc)
        t = self._unify_operands(e, lt, rt, numeric=True)
        u = unwrap_newtype(t)
        if op in ("/", "%") and isinstance(u, BitType) and u.signed:
            raise P4TypeError(f"operator {op} is not defined for signed type {t}", e.loc)
        if op in _COMPARE:
            return self._fold(e, t, BoolType())
        result = self._fold(e, t, u if isinstance(t, NewType) else t)
        if op in ("/", "%") and e.value is None:
            self._runtime_division(e, scope)
        return result

    def _runtime_division(self, e: ast.BinaryOp, scope: Scope) -> None:
        """``/`` and ``%`` left for run time: p4c-bm2-ss keeps only those its strength reduction
        turns into shifts and masks (a power-of-two divisor, or a zero dividend); BMv2 has no
        division, so p4c refuses the rest (midend CompileTimeOperations)."""
        divisor = e.right.value
        if isinstance(divisor, ast.EnumValue):
            divisor = divisor.number
        if isinstance(divisor, int) and not isinstance(divisor, bool):
            if divisor == 0:
                kind = "Division" if e.op == "/" else "Modulo"
                raise P4TypeError(f"{expression_text(e)}: {kind} by zero", e.loc)
            if divisor > 0 and divisor & (divisor - 1) == 0:
                return
        elif e.left.value == 0 or _may_be_propagated(e.right, scope):
            return
        raise P4TypeError(
            f"{expression_text(e)}: could not evaluate expression at compilation time", e.loc
        )

    def _unify_operands(self: Checker, e: ast.BinaryOp, lt: Type, rt: Type, numeric: bool) -> Type:
        """The common operand type of a binary operator (unsized literals take the other side's)."""
        if numeric:
            for side, t in ((e.left, lt), (e.right, rt)):
                if not is_numeric(t):
                    raise P4TypeError(f"operator {e.op} needs integer operands, got {t}", side.loc)
        if isinstance(lt, IntType) and not isinstance(rt, IntType):
            self.coerce(e.left, rt, f"operand of {e.op}")
            return rt
        if isinstance(rt, IntType) and not isinstance(lt, IntType):
            self.coerce(e.right, lt, f"operand of {e.op}")
            return lt
        if lt == rt:
            return lt
        for enum_side, other in ((lt, rt), (rt, lt)):
            if isinstance(enum_side, EnumType) and enum_side.underlying == unwrap_newtype(other):
                return other
        lu, ru = unwrap_newtype(lt), unwrap_newtype(rt)
        if numeric and lu == ru:
            return lu  # a `type` meets its own representation in arithmetic
        if isinstance(lu, BitType) and isinstance(ru, BitType):
            if lu.signed == ru.signed:
                raise P4TypeError(f"width mismatch: {lt} {e.op} {rt}", e.loc)
            raise P4TypeError(f"signedness mismatch: {lt} {e.op} {rt}", e.loc)
        if isinstance(lt, ListType | TupleType) and isinstance(rt, StructLikeType | TupleType):
            self.coerce(e.left, rt, f"operand of {e.op}")
            return rt
        if isinstance(rt, ListType | TupleType) and isinstance(lt, StructLikeType | TupleType):
            self.coerce(e.right, lt, f"operand of {e.op}")
            return lt
        raise P4TypeError(f"type mismatch: {lt} {e.op} {rt}", e.loc)

    def _fold(self, e: ast.BinaryOp, operand_type: Type, result_type: Type) -> Type:
        a, b = e.left.value, e.right.value
        if isinstance(operand_type, BitType):
            # a serializable enum member met its underlying type: compare numbers
            a = a.number if isinstance(a, ast.EnumValue) else a
            b = b.number if isinstance(b, ast.EnumValue) else b
        if a is not None and b is not None:
            if e.op in ("/", "%") and isinstance(a, int) and isinstance(b, int) and min(a, b) < 0:
                # the spec defines / and % on int for positive values only (p4c: an error)
                kind = "Division" if e.op == "/" else "Modulo"
                raise P4TypeError(
                    f"{expression_text(e)}: {kind} is not defined for negative numbers", e.loc
                )
            v = fold_binary(e.op, _const_key(a), _const_key(b), operand_type, result_type)
            if v is None and e.op in ("/", "%"):
                raise P4TypeError("division by zero", e.loc)
            e.value = v
        return result_type

    def _concat(self: Checker, e: ast.BinaryOp, scope: Scope) -> Type:
        widths = []
        for side in (e.left, e.right):
            t = unwrap_newtype(self.expr(side, scope))
            if not isinstance(t, BitType):
                raise P4TypeError(f"operator ++ needs operands of known width, got {t}", side.loc)
            widths.append(t)
        result = BitType(widths[0].width + widths[1].width, widths[0].signed)
        return self._fold(e, widths[0], result)

    def _shift(self: Checker, e: ast.BinaryOp, scope: Scope, expected: Type | None) -> Type:
        lt = self.expr(e.left, scope)
        rt = self.expr(e.right, scope)
        if not is_numeric(lt):
            raise P4TypeError(
                f"operator {e.op} needs an integer left operand, got {lt}", e.left.loc
            )
        ru = unwrap_newtype(rt)
        if not isinstance(ru, IntType | BitType):
            raise P4TypeError(f"shift amount must be an unsigned number, not {rt}", e.right.loc)
        # as p4c's TypeInference::shift: a constant amount is checked for its value (a signed
        # one that is not negative is made unsigned), a run-time one for its type
        amount = e.right.value
        if isinstance(amount, int) and amount < 0:
            raise P4TypeError(
                f"{expression_text(e)}: Negative shift amount {amount}", e.loc
            )
        if isinstance(ru, BitType) and ru.signed and not isinstance(amount, int):
            raise P4TypeError(
                f"{expression_text(e.right)}: Shift amount must be an unsigned number", e.right.loc
            )
        if isinstance(lt, IntType) and e.right.value is None:
            # as p4c: no inference from the context for the width of a shifted literal
            raise P4TypeError(
                f"width of the left operand of {e.op} must be known when the shift amount is not "
                "a constant",
                e.left.loc,
            )
        result = unwrap_newtype(lt)
        return self._fold(e, result, result)

    def _expr_Cast(self: Checker, e: ast.Cast, scope: Scope, expected: Type | None) -> Type:
        target = self.resolve_type(e.target, scope)
        st = self.expr(e.expr, scope, target)
        if isinstance(e.expr, ast.ListExpression | ast.StructExpression) and st == target:
            return target
        if not castable(st, target):
            raise P4TypeError(f"cannot cast {st} to {target}", e.loc)
        v = e.expr.value
        index_values = getattr(self, "loop_int_values", {})
        if isinstance(target, IntType) and v is None and isinstance(e.expr, ast.PathExpression) \
                and id(e.expr.decl) in index_values:
            # a loop index in one unrolled copy of the body (stmtcheck): p4c folds it there
            e.value = index_values[id(e.expr.decl)]
            return target
        if isinstance(target, IntType) and v is None:
            raise P4TypeError(
                f"{expression_text(e)}: a cast to int needs a compile-time known value", e.loc
            )
        if (
            isinstance(st, IntType)
            and isinstance(unwrap_newtype(target), BoolType)
            and v not in (0, 1)
        ):
            # only 0 and 1 name a bool (spec 8.11.1; p4c: an error)
            raise P4TypeError(f"{expression_text(e)}: only 0 and 1 can be cast to bool", e.loc)
        if v is not None:
            if isinstance(v, ast.EnumValue):
                v = v.number
            u = unwrap_newtype(target)
            if isinstance(u, EnumType):
                e.value = self._enum_value(u, fold_cast(v, st, u.underlying or IntType()))
            else:
                e.value = fold_cast(v, st, target)
        return target

    def _enum_value(self, t: EnumType, number: Any) -> ast.EnumValue | None:
        if not isinstance(number, int):
            return None
        for m in t.members:
            if t.value_of(m) == number:
                return ast.EnumValue(enum=t.name, member=m, number=number)
        return ast.EnumValue(enum=t.name, member="", number=number)

    def _expr_Ternary(self: Checker, e: ast.Ternary, scope: Scope, expected: Type | None) -> Type:
        ct = self.expr(e.cond, scope)
        if not isinstance(ct, BoolType):
            raise P4TypeError(f"condition of ?: must be bool, got {ct}", e.cond.loc)
        tt = self.expr(e.then, scope, expected)
        ot = self.expr(e.otherwise, scope, expected)
        both_unsized = isinstance(tt, IntType) and isinstance(ot, IntType)
        if both_unsized and expected is not None and isinstance(unwrap_newtype(expected), BitType):
            self.coerce(e.then, expected, "?: branch")
            self.coerce(e.otherwise, expected, "?: branch")
            tt = ot = expected
        if isinstance(tt, IntType) and not isinstance(ot, IntType):
            self.coerce(e.then, ot, "?: branch")
            tt = ot
        elif isinstance(ot, IntType) and not isinstance(tt, IntType):
            self.coerce(e.otherwise, tt, "?: branch")
            ot = tt
        if tt != ot:
            raise P4TypeError(f"type mismatch: ?: branches are {tt} and {ot}", e.loc)
        if e.cond.value is not None:
            e.value = e.then.value if e.cond.value else e.otherwise.value
        return tt

    # -- aggregate literals -----------------------------------------------------------------------

    def _expr_ListExpression(
        self: Checker, e: ast.ListExpression, scope: Scope, expected: Type | None
    ) -> Type:
        self._literal_scopes[id(e)] = scope
        target = expected
        if any(isinstance(el, ast.DotsExpression) for el in e.elements):
            self._expand_list_dots(e, target)
        if isinstance(target, StructLikeType):
            if isinstance(target, HeaderUnionType):
                raise P4TypeError("a header union cannot be initialized from a list", e.loc)
            if len(e.elements) != len(target.fields):
                raise P4TypeError(
                    f"{target} has {len(target.fields)} fields, the list has {len(e.elements)}",
                    e.loc,
                )
            for el, (fname, ftype) in zip(e.elements, target.fields):
                self.checked(el, scope, ftype, f"field '{fname}' of {target}")
            self._fold_aggregate(e, [el.value for el in e.elements])
            return target
        if isinstance(target, TupleType):
            if len(target.elements) != len(e.elements):
                raise P4TypeError(
                    f"{target} has {len(target.elements)} elements, the list has {len(e.elements)}",
                    e.loc,
                )
            for el, et in zip(e.elements, target.elements):
                self.checked(el, scope, et, "tuple element")
            self._fold_aggregate(e, [el.value for el in e.elements])
            return target
        types = tuple(list_to_tuple(self.expr(el, scope)) for el in e.elements)
        self._fold_aggregate(e, [el.value for el in e.elements])
        return TupleType(types)

    def _fold_aggregate(self, e: ast.Expression, values: list[Any]) -> None:
        if all(v is not None for v in values):
            e.value = tuple(values)

    def _expr_StructExpression(
        self: Checker, e: ast.StructExpression, scope: Scope, expected: Type | None
    ) -> Type:
        self._literal_scopes[id(e)] = scope
        target = self.resolve_type(e.type_ref, scope) if e.type_ref is not None else expected
        target_u = unwrap_newtype(target) if target is not None else None
        if not isinstance(target_u, StructLikeType):
            raise P4TypeError("cannot tell the type of this struct initializer", e.loc)
        given = {}
        for nf in e.fields:
            if nf.name in given:
                raise P4TypeError(f"field '{nf.name}' initialized twice", nf.loc)
            ft = target_u.field_type(nf.name)
            if ft is None:
                raise P4TypeError(f"{target_u} has no field '{nf.name}'", nf.loc)
            self.checked(nf.expr, scope, ft, f"field '{nf.name}' of {target_u}")
            given[nf.name] = nf.expr.value
        if e.dots and not isinstance(target_u, HeaderUnionType):
            for nf in self._default_fields(e, target_u, given):
                self.checked(nf.expr, scope, target_u.field_type(nf.name), "default value")
            given = {nf.name: nf.expr.value for nf in e.fields}
        if not isinstance(target_u, HeaderUnionType):
            missing = [f for f, _ in target_u.fields if f not in given]
            if missing:
                raise P4TypeError(f"field '{missing[0]}' of {target_u} is not initialized", e.loc)
        self._fold_aggregate(e, list(given.values()))
        return target_u

    def _expr_InvalidHeaderExpression(
        self, e: ast.InvalidHeaderExpression, scope: Scope, expected: Type | None
    ) -> Type:
        if not isinstance(expected, HeaderType | HeaderUnionType):
            raise P4TypeError("'{#}' needs a header or header union context", e.loc)
        return expected

    # -- default values (`...`, spec 7.3 and 8.26) -------------------------------------------
    # As p4c's DoDefaultValues, `...` is replaced by expressions for the default values: the
    # checked program holds only ordinary literals, so the engine and P4Info need nothing new.

    def _expr_DotsExpression(
        self: Checker, e: ast.DotsExpression, scope: Scope, expected: Type | None
    ) -> Type:
        if expected is None:
            raise P4TypeError("cannot tell the type of '...' (its default value)", e.loc)
        d = default_value(expected, e.loc)
        t = self.expr(d, scope, expected)
        self.coerce(d, expected, "default value")
        # the node becomes its default value in place, so every parent sees the replacement
        e.__class__ = d.__class__  # type: ignore[assignment]
        e.__dict__ = d.__dict__
        return e.type if e.type is not None else t

    def _expand_list_dots(self, e: ast.ListExpression, target: Type | None) -> None:
        """``{a, b, ...}``: the elements past the written ones get their default values."""
        dots = [i for i, el in enumerate(e.elements) if isinstance(el, ast.DotsExpression)]
        loc = e.elements[dots[0]].loc
        if dots != [len(e.elements) - 1]:
            raise P4TypeError("'...' must be the last element of the list", loc)
        u = unwrap_newtype(target) if target is not None else None
        if isinstance(u, StructLikeType) and not isinstance(u, HeaderUnionType):
            rest = [ft for _, ft in u.fields]
        elif isinstance(u, TupleType):
            rest = list(u.elements)
        else:
            raise P4TypeError("cannot tell the type of '...' (its default values)", loc)
        given = len(e.elements) - 1
        if given > len(rest):
            raise P4TypeError(f"{target} has {len(rest)} fields, the list has {given}", e.loc)
        e.elements[given:] = [default_value(ft, loc) for ft in rest[given:]]

    @staticmethod
    def _default_fields(
        e: ast.StructExpression, t: StructLikeType, given: dict[str, Any]
    ) -> list[ast.NamedExpression]:
        """Append the fields `e` omits, with default values, to e.fields (after the written
        ones, in the type's order, as p4c's DoDefaultValues does)."""
        loc = e.fields[-1].loc if e.fields else e.loc
        added = [
            ast.NamedExpression(name=f, expr=default_value(ft, loc), loc=loc)
            for f, ft in t.fields
            if f not in given
        ]
        e.fields = e.fields + added
        e.dots = False
        return added

    def _expr_MethodCall(
        self: Checker, e: ast.MethodCall, scope: Scope, expected: Type | None
    ) -> Type:
        return self.check_call(e, scope, expected)

    # -- l-values ---------------------------------------------------------------------------------

    def require_lvalue(self: Checker, e: ast.Expression, what: str) -> None:
        """Fail unless `e` (already checked) may be written."""
        if isinstance(e, ast.PathExpression):
            d = e.decl
            if isinstance(d, ast.VariableDecl):
                self.check_initializer_write(e)
                return
            if isinstance(d, ast.Parameter):
                if d.direction in ("out", "inout"):
                    self.check_initializer_write(e)
                    return
                if d.direction == "in":
                    raise P4TypeError(f"cannot assign to in parameter '{e.name}'", e.loc)
                raise P4TypeError(
                    f"cannot assign to in parameter '{e.name}' (directionless parameters are "
                    "read-only)",
                    e.loc,
                )
            if isinstance(d, ast.ConstantDecl):
                raise P4TypeError(f"cannot assign to constant '{e.name}'", e.loc)
            raise P4TypeError(f"cannot assign to '{e.name}' in {what}", e.loc)
        if isinstance(e, ast.Member) and e.kind in ("field", "stack_next", "stack_last"):
            self.require_lvalue(e.expr, what)
            return
        if isinstance(e, ast.ArrayIndex | ast.Slice):
            self.require_lvalue(e.expr, what)
            return
        raise P4TypeError(f"{what} must be a variable, field or writable parameter", e.loc)
