"""The P4_16 abstract syntax tree — which, once checked, is also softswitch's IR.

The parser builds these nodes; the type checker (typecheck.py) then fills in the *annotation*
fields marked "checker:" below, and never builds a second tree. The engine and the P4Info
generator read only checked programs and may rely on every annotation documented here.

All nodes use identity equality and hashing (``eq=False``) so they can key dicts
(e.g. ``{table_decl: runtime_table}``).

The checker's references to other parts of the tree (declarations, semantic types, which hold
declarations, resolved calls, next states) are left out of ``repr``: many nodes share them,
so a repr following them repeated whole declarations (158 million characters for one control)
and a failing test's traceback, which reprs frame arguments, could take gigabytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from softswitch.errors import UNKNOWN_LOCATION, SourceLocation
from softswitch.frontend.types import Type

# ---------------------------------------------------------------------------------------------
# Base classes


@dataclass(eq=False, kw_only=True)
class Node:
    loc: SourceLocation = UNKNOWN_LOCATION


@dataclass(eq=False, kw_only=True)
class Annotation(Node):
    """``@name("x")``, ``@priority(10)``, ``@field_list(1)``, ``@hidden``...

    `args` holds the parsed expressions when the body parses as an expression list (the usual case);
    `body` always holds the raw token text between the parentheses ("" when there are none).
    """

    name: str
    args: list[Expression] = field(default_factory=list)
    body: str = ""
    structured: bool = False  # written with brackets: ``@x[1, "a"]``, ``@x[k=1]``


@dataclass(eq=False, kw_only=True)
class Annotated(Node):
    annotations: list[Annotation] = field(default_factory=list)

    def annotation(self, name: str) -> Annotation | None:
        for a in self.annotations:
            if a.name == name:
                return a
        return None

    def string_annotation(self, name: str) -> str | None:
        """The string argument of e.g. ``@name("x")``, or None."""
        a = self.annotation(name)
        if a is not None and a.args and isinstance(a.args[0], StringLiteral):
            return a.args[0].value
        return None


# ---------------------------------------------------------------------------------------------
# Type references (syntax). The checker resolves each to a semantic Type in `.resolved`.


@dataclass(eq=False, kw_only=True)
class TypeRef(Node):
    resolved: Type | None = field(default=None, repr=False)  # checker: the semantic type


@dataclass(eq=False, kw_only=True)
class NamedTypeRef(TypeRef):
    """``H``, ``.H`` (top-level), ``register<bit<32>>`` (type_args), ``error``, ``packet_in``..."""

    name: str
    type_args: list[TypeRef] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class BitTypeRef(TypeRef):
    """``bit<W>``, ``int<W>``, ``bit`` (W=1). `width` is an expression (may be a constant name)."""

    width: Expression
    signed: bool = False


@dataclass(eq=False, kw_only=True)
class VarbitTypeRef(TypeRef):
    max_width: Expression


@dataclass(eq=False, kw_only=True)
class BaseTypeRef(TypeRef):
    """``bool``, ``int`` (arbitrary precision), ``string``, ``void``, ``error``, ``match_kind``,
    ``_`` (dont-care)."""

    name: str


@dataclass(eq=False, kw_only=True)
class StackTypeRef(TypeRef):
    element: TypeRef
    size: Expression


@dataclass(eq=False, kw_only=True)
class TupleTypeRef(TypeRef):
    elements: list[TypeRef] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Expressions. Every expression gets `type` (checker) and, when it is a compile-time constant,
# `value` (checker: Python int for bit/int/serializable enum/error? no — see below).


@dataclass(eq=False, kw_only=True)
class Expression(Node):
    # checker: the semantic type. Untyped integer literals get the type their context fixes
    # (e.g. bit<8> in `x = x + 1` with x: bit<8>); IntType only where nothing fixes it.
    type: Type | None = field(default=None, repr=False)
    # checker: the compile-time value if the expression is constant: int for bit/int/IntType
    # (already reduced modulo 2**W, signed values as Python negative ints), bool for bool,
    # str for string, an EnumValue for enum/error members. None if not constant.
    value: Any = None


@dataclass(eq=False, kw_only=True)
class IntLiteral(Expression):
    """``10``, ``0x0A``, ``8w10``, ``4s-3`` (width/signed from the prefix, else None/False)."""

    number: int
    width: int | None = None
    signed: bool = False
    base: int = 10  # the radix it is written in (0x.. is 16); p4c names table keys with it


@dataclass(eq=False, kw_only=True)
class BoolLiteral(Expression):
    bool_value: bool


@dataclass(eq=False, kw_only=True)
class StringLiteral(Expression):
    # `value` is also set by the parser for strings (it is their constant value)
    text: str = ""

    def __post_init__(self) -> None:
        self.value = self.text


@dataclass(eq=False, kw_only=True)
class PathExpression(Expression):
    """A name: a variable, parameter, constant, instance, action, table, type (``Foo`` in
    ``Foo.bar``), ``error``... `is_global` is the leading dot of ``.name``."""

    name: str
    is_global: bool = False
    # checker: the declaration the name refers to (Parameter, VariableDecl, ConstantDecl,
    # InstanceDecl, ActionDecl, TableDecl, FunctionDecl, ExternFunctionDecl, ParserState,
    # a type declaration, ...). None for `accept`/`reject` and for `error` in `error.X`
    # (several `error {}` declarations may exist).
    decl: Node | None = field(default=None, repr=False)


@dataclass(eq=False, kw_only=True)
class Member(Expression):
    """``expr.member``: struct/header field, stack ``next/last/lastIndex/size``, union member,
    enum/error member (``E.A``, ``error.NoError``), method reference (as a callee),
    ``t.apply().hit`` / ``.miss`` / ``.action_run``."""

    expr: Expression
    member: str
    # checker: what the member is: "field", "stack_next", "stack_last", "stack_last_index",
    # "stack_size", "enum_member", "error_member", "method", "apply_hit", "apply_miss",
    # "apply_action_run".
    kind: str | None = None


@dataclass(frozen=True, kw_only=True)
class EnumValue:
    """Constant value of an enum or error member (kept in Expression.value). Compares by value.
    A cast to a serializable enum of a value that names no member has member ""."""

    enum: str  # the enum's name, or "error"
    member: str
    number: int  # serializable value, or the member index (error: its code, see CheckedProgram)


@dataclass(eq=False, kw_only=True)
class ArrayIndex(Expression):
    """``stack[i]`` (also tuple element access with a constant index)."""

    expr: Expression
    index: Expression


@dataclass(eq=False, kw_only=True)
class Slice(Expression):
    """``e[hi:lo]``; the checker requires constant hi/lo and sets `high`/`low`."""

    expr: Expression
    hi: Expression
    lo: Expression
    high: int | None = None  # checker
    low: int | None = None  # checker


@dataclass(eq=False, kw_only=True)
class UnaryOp(Expression):
    """``!e``, ``~e``, ``-e``, ``+e``."""

    op: str
    operand: Expression


@dataclass(eq=False, kw_only=True)
class BinaryOp(Expression):
    """Binary operators with their P4 spelling: ``* / % + - |+| |-| << >> <= >= < > != ==
    & ^ | && || ++``."""

    op: str
    left: Expression
    right: Expression


@dataclass(eq=False, kw_only=True)
class MaskExpression(Expression):
    """``value &&& mask`` in select cases and entries."""

    left: Expression
    right: Expression


@dataclass(eq=False, kw_only=True)
class RangeExpression(Expression):
    """``lo .. hi`` in select cases and entries."""

    left: Expression
    right: Expression


@dataclass(eq=False, kw_only=True)
class DefaultExpression(Expression):
    """``default`` or ``_`` in a keyset (matches anything)."""


@dataclass(eq=False, kw_only=True)
class DontCareExpression(Expression):
    """``_`` as an argument (an unused out argument)."""


@dataclass(eq=False, kw_only=True)
class DotsExpression(Expression):
    """``...`` (P4_16 1.2.5 §8.26): the default value of the type its context gives, or, last
    in a list expression, the default values of the remaining fields/elements. The checker
    replaces it (see ExprMixin._expr_DotsExpression), so checked programs never hold one."""


@dataclass(eq=False, kw_only=True)
class Cast(Expression):
    target: TypeRef
    expr: Expression


@dataclass(eq=False, kw_only=True)
class Ternary(Expression):
    cond: Expression
    then: Expression
    otherwise: Expression


@dataclass(eq=False, kw_only=True)
class Argument(Node):
    """An argument of a call or instantiation; `name` for named arguments (``f(x = 1)``)."""

    expr: Expression
    name: str | None = None


@dataclass(eq=False, kw_only=True)
class MethodCall(Expression):
    """``callee<type_args>(args)``: functions, actions, extern functions and methods, built-in
    methods (``isValid``, ``extract``, ``push_front``...), ``t.apply()``, ``c.apply(...)``.

    Constructor calls in argument position (``V1Switch(MyParser(), ...)``) are `MethodCall`s too;
    the checker marks them with call.kind == "constructor".
    """

    callee: Expression
    type_args: list[TypeRef] = field(default_factory=list)
    args: list[Argument] = field(default_factory=list)
    call: CallInfo | None = None  # checker


@dataclass(eq=False, kw_only=True)
class CallInfo:
    """How the checker resolved a call (MethodCall.call).

    kind:
      "builtin"         — `name` is one of isValid, setValid, setInvalid, push_front, pop_front,
                          minSizeInBits, minSizeInBytes, maxSizeInBits, maxSizeInBytes
                          (receiver = the header/stack/union expression);
      "packet"          — packet_in/packet_out methods: extract (1 or 2 args), lookahead, advance,
                          length, emit (receiver = the packet parameter expression);
      "extern_method"   — a method of an extern instance (receiver = its expression, whose
                          `decl` is the InstanceDecl or a Parameter of extern type);
      "extern_function" — a top-level extern function (mark_to_drop, hash, verify_checksum...);
      "action"          — a direct action call from an apply block or another action;
      "function"        — a P4 function (FunctionDecl);
      "table_apply"     — ``t.apply()`` (decl = the TableDecl);
      "apply"           — ``c.apply(args)`` / ``p.apply(args)`` on a parser or control instance
                          (decl = the InstanceDecl of the sub-block);
      "constructor"     — instantiation in an argument position.
    params: the callee's parameters in declaration order; args: the argument expression bound to
    each parameter (named arguments reordered, default values filled in, None for an omitted
    @optional parameter). type_bindings: inferred type parameters (e.g. {"T": BitType(32)}).
    """

    kind: str
    name: str
    decl: Node | None = field(default=None, repr=False)
    receiver: Expression | None = field(default=None, repr=False)
    params: list[Parameter] = field(default_factory=list, repr=False)
    args: list[Expression | None] = field(default_factory=list, repr=False)
    type_bindings: dict[str, Type] = field(default_factory=dict, repr=False)


@dataclass(eq=False, kw_only=True)
class ListExpression(Expression):
    """``{a, b, c}`` — a tuple/list value, or a struct/header initializer once the context fixes
    the type (checker sets `type` to the target StructLikeType or TupleType)."""

    elements: list[Expression] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class NamedExpression(Node):
    name: str
    expr: Expression


@dataclass(eq=False, kw_only=True)
class StructExpression(Expression):
    """``{a = 1, b = 2}`` or ``(T){a = 1, ...}``-style struct initializer; `type_ref` optional.
    `dots`: written with a final ``...``; the checker appends the omitted fields with their
    default values (spec §7.3), so a checked one always names every field."""

    fields: list[NamedExpression] = field(default_factory=list)
    type_ref: TypeRef | None = None
    dots: bool = False


@dataclass(eq=False, kw_only=True)
class InvalidHeaderExpression(Expression):
    """``{#}`` — an invalid header or union value (P4_16 1.2.2)."""


def lvalue_root(e: Expression) -> Expression:
    """The expression an l-value selects part of: ``hs[i].f[3:0]`` → ``hs`` (a path, for any
    checked l-value)."""
    while isinstance(e, Member | ArrayIndex | Slice):
        e = e.expr
    return e


# ---------------------------------------------------------------------------------------------
# Statements


@dataclass(eq=False, kw_only=True)
class Statement(Annotated):
    pass


@dataclass(eq=False, kw_only=True)
class AssignmentStatement(Statement):
    """``lhs = rhs``. A compound assignment ``a op= b`` is parsed as ``a = a' op b`` with
    `compound` = op ("+", "<<", "|+|"...) and ``rhs.left`` a copy of `lhs`: the checker types
    it as that, the engine evaluates the location of `lhs` once (spec 12.1)."""

    lhs: Expression
    rhs: Expression
    compound: str = ""


@dataclass(eq=False, kw_only=True)
class MethodCallStatement(Statement):
    call: MethodCall


@dataclass(eq=False, kw_only=True)
class BlockStatement(Statement):
    statements: list[Statement | Declaration] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class IfStatement(Statement):
    cond: Expression
    then: Statement
    otherwise: Statement | None = None


@dataclass(eq=False, kw_only=True)
class SwitchCase(Node):
    """A case of a switch: `labels` are expressions (action names as PathExpression for
    ``switch (t.apply().action_run)``; DefaultExpression for ``default``). Consecutive labels
    sharing one body are merged into one case (P4 fall-through). `body` is None only for a
    trailing label without a block (which the checker rejects)."""

    labels: list[Expression] = field(default_factory=list)
    body: BlockStatement | None = None


@dataclass(eq=False, kw_only=True)
class SwitchStatement(Statement):
    expr: Expression
    cases: list[SwitchCase] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class ExitStatement(Statement):
    pass


@dataclass(eq=False, kw_only=True)
class ReturnStatement(Statement):
    value: Expression | None = None


@dataclass(eq=False, kw_only=True)
class EmptyStatement(Statement):
    pass


@dataclass(eq=False, kw_only=True)
class ForStatement(Statement):
    """``for (init; cond; updates) body`` (P4_16 1.2.5 §12.9). `init` holds variable
    declarations and assignment/call statements, `updates` assignment/call statements.

    checker: `index` is the loop's index variable and `index_values` the values it has at the
    start of each iteration, as p4c's loop unrolling computes them (frontend/loopcheck.py):
    BMv2 runs only unrolled loops, so the body runs exactly once per value."""

    init: list[Statement | Declaration] = field(default_factory=list)
    cond: Expression
    updates: list[Statement] = field(default_factory=list)
    body: Statement
    index: PathExpression | None = None  # checker
    index_values: list[int] | None = None  # checker
    # checker: when the body casts the index to int, one checked copy of the body per index
    # value, that cast folded to the value (p4c folds it after unrolling)
    unrolled: list[Statement] | None = None


@dataclass(eq=False, kw_only=True)
class ForInStatement(Statement):
    """``for (T x in collection) body`` (`var` declares x) or ``for (x in collection) body``
    (`var` is None, `ref` names an existing variable). `collection` is a RangeExpression
    ``lo .. hi`` (inclusive), or a header stack or list expression."""

    var: VariableDecl | None = None
    ref: PathExpression | None = None
    collection: Expression
    body: Statement
    unrolled: list[Statement] | None = None  # checker: as ForStatement.unrolled


@dataclass(eq=False, kw_only=True)
class BreakStatement(Statement):
    pass


@dataclass(eq=False, kw_only=True)
class ContinueStatement(Statement):
    pass


# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass(eq=False, kw_only=True)
class Declaration(Annotated):
    name: str

    def control_plane_name(self) -> str | None:
        """The ``@name`` annotation's string, if any (may start with '.', meaning global)."""
        return self.string_annotation("name")


@dataclass(eq=False, kw_only=True)
class Parameter(Declaration):
    """direction is "", "in", "out" or "inout"."""

    direction: str
    type_ref: TypeRef
    default: Expression | None = None

    @property
    def type(self) -> Type | None:
        return self.type_ref.resolved


@dataclass(eq=False, kw_only=True)
class TypeParameter(Declaration):
    pass


@dataclass(eq=False, kw_only=True)
class ConstantDecl(Declaration):
    type_ref: TypeRef
    init: Expression  # checker: init.value holds the constant


@dataclass(eq=False, kw_only=True)
class VariableDecl(Declaration):
    type_ref: TypeRef
    init: Expression | None = None


@dataclass(eq=False, kw_only=True)
class TypedefDecl(Declaration):
    """``typedef T N;`` (is_newtype False) or ``type T N;`` (is_newtype True)."""

    type_ref: TypeRef
    is_newtype: bool = False
    resolved: Type | None = field(default=None, repr=False)  # checker


@dataclass(eq=False, kw_only=True)
class StructField(Annotated):
    name: str
    type_ref: TypeRef


@dataclass(eq=False, kw_only=True)
class StructLikeDecl(Declaration):
    """Base for header/header_union/struct declarations."""

    fields: list[StructField] = field(default_factory=list)
    type_params: list[TypeParameter] = field(default_factory=list)
    # checker: the HeaderType/HeaderUnionType/StructType
    resolved: Type | None = field(default=None, repr=False)


@dataclass(eq=False, kw_only=True)
class HeaderDecl(StructLikeDecl):
    pass


@dataclass(eq=False, kw_only=True)
class HeaderUnionDecl(StructLikeDecl):
    pass


@dataclass(eq=False, kw_only=True)
class StructDecl(StructLikeDecl):
    pass


@dataclass(eq=False, kw_only=True)
class EnumMember(Annotated):
    name: str
    init: Expression | None = None  # serializable enums: the value expression


@dataclass(eq=False, kw_only=True)
class EnumDecl(Declaration):
    """``enum E {A, B}`` or ``enum bit<8> E {A = 1, B = 2}`` (underlying set)."""

    members: list[EnumMember] = field(default_factory=list)
    underlying: TypeRef | None = None
    resolved: Type | None = field(default=None, repr=False)  # checker: EnumType


@dataclass(eq=False, kw_only=True)
class ErrorDecl(Declaration):
    """``error { A, B }``; several may appear (members accumulate). name is "error"."""

    members: list[str] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class MatchKindDecl(Declaration):
    """``match_kind { exact, lpm }``; name is "match_kind"."""

    members: list[str] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class MethodPrototype(Declaration):
    """A method of an extern (or a constructor when `is_constructor`; then return_type is None
    and name is the extern's name). `is_abstract` for ``abstract`` methods."""

    return_type: TypeRef | None = None
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    is_constructor: bool = False
    is_abstract: bool = False


@dataclass(eq=False, kw_only=True)
class ExternDecl(Declaration):
    """``extern E<T> { E(...); void m(...); }`` — an extern object type."""

    type_params: list[TypeParameter] = field(default_factory=list)
    methods: list[MethodPrototype] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class ExternFunctionDecl(Declaration):
    """``extern void mark_to_drop(inout standard_metadata_t s);``"""

    return_type: TypeRef
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class FunctionDecl(Declaration):
    return_type: TypeRef
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)


@dataclass(eq=False, kw_only=True)
class ActionDecl(Declaration):
    """An action. Directional params are bound by the caller (or the table's action ref
    arguments); directionless params come from the control plane (table entries)."""

    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)


@dataclass(eq=False, kw_only=True)
class InstanceDecl(Declaration):
    """``counter(8, CounterType.packets) c;``, ``MyCtrl() c;``, ``V1Switch(...) main;``.

    checker: `resolved` is the instance's type (ExternType or ObjectType of the parser/control/
    package); `type_decl` the ExternDecl/ParserDecl/ControlDecl/PackageTypeDecl instantiated;
    `ctor_args` the constructor arguments bound to the constructor parameters (like CallInfo.args).

    `initializer`: the method implementations of ``T(args) x = { ... };`` (an extern with abstract
    methods, e.g. TNA's RegisterAction.apply), checked like functions declared where the
    instance is; checker: `implements` maps each implemented abstract method's name to its
    MethodPrototype.
    """

    type_ref: TypeRef
    args: list[Argument] = field(default_factory=list)
    initializer: list[FunctionDecl] = field(default_factory=list)
    resolved: Type | None = field(default=None, repr=False)
    type_decl: Node | None = field(default=None, repr=False)
    ctor_params: list[Parameter] = field(default_factory=list, repr=False)
    ctor_args: list[Expression | None] = field(default_factory=list, repr=False)
    implements: dict[str, MethodPrototype] = field(default_factory=dict, repr=False)


@dataclass(eq=False, kw_only=True)
class ValueSetDecl(Declaration):
    """``value_set<bit<16>>(4) pvs;`` inside a parser."""

    element_type: TypeRef
    size: Expression


@dataclass(eq=False, kw_only=True)
class SelectCase(Node):
    """``keyset : state;`` — `keyset` is one expression, or a ListExpression for tuple keys;
    elements may be MaskExpression, RangeExpression, DefaultExpression or a value-set name."""

    keyset: Expression
    state: str
    state_decl: ParserState | None = field(default=None, repr=False)  # checker (None: accept/reject)


@dataclass(eq=False, kw_only=True)
class SelectExpression(Expression):
    """``select (e1, e2) { ... }``; `selectors` has one element per tuple component."""

    selectors: list[Expression] = field(default_factory=list)
    cases: list[SelectCase] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class ParserState(Declaration):
    """A parser state. `transition` is None (implicit ``transition reject``), a PathExpression
    naming the next state (``accept``/``reject`` included), or a SelectExpression."""

    statements: list[Statement | Declaration] = field(default_factory=list)
    transition: Expression | None = None
    # checker: for a PathExpression transition
    next_state: ParserState | None = field(default=None, repr=False)


@dataclass(eq=False, kw_only=True)
class ParserTypeDecl(Declaration):
    """``parser Parser<H, M>(packet_in b, out H h, ...);`` (architecture declaration)."""

    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class ControlTypeDecl(Declaration):
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class PackageTypeDecl(Declaration):
    """``package V1Switch<H, M>(Parser<H, M> p, ...);``"""

    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class ParserDecl(Declaration):
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    ctor_params: list[Parameter] = field(default_factory=list)
    locals: list[Declaration] = field(default_factory=list)  # constants, variables, instances,
    # value sets
    states: list[ParserState] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class KeyElement(Annotated):
    """``hdr.ipv6.dst : lpm @name("dst");``"""

    expr: Expression
    match_kind: str


@dataclass(eq=False, kw_only=True)
class ActionRef(Annotated):
    """An action in a table's actions list, default_action, or an entry: ``a`` or ``a(1, x)``
    (arguments bind the action's leading parameters; the rest come from the control plane).
    checker: `decl` is the ActionDecl; `bound_args` maps each action parameter to its argument
    (None for control-plane parameters not given)."""

    name: str
    args: list[Argument] = field(default_factory=list)
    decl: ActionDecl | None = field(default=None, repr=False)
    bound_args: list[Expression | None] = field(default_factory=list, repr=False)


@dataclass(eq=False, kw_only=True)
class TableEntryDecl(Annotated):
    """A const/initial entry: ``(k1, k2) : act(args);`` with optional ``priority = N :``.
    `keys` has one expression per key element (MaskExpression/RangeExpression/DefaultExpression
    allowed). checker: `priority_value` is the effective P4Runtime-style priority for tables that
    need one (explicit, ``@priority``, or derived from the order as the spec says)."""

    keys: list[Expression] = field(default_factory=list)
    action: ActionRef = field(default_factory=lambda: ActionRef(name=""))
    priority: Expression | None = None
    is_const: bool = False
    priority_value: int | None = None


@dataclass(eq=False, kw_only=True)
class TableProperty(Annotated):
    """Any table property other than key/actions/default_action/entries: ``size = 1024;``,
    ``implementation = action_selector(...)``, ``counters = c;``, ``meters = m;``,
    ``support_timeout = true;``, ``largest_priority_wins = false;``, ``priority_delta = 10;``."""

    name: str
    value: Expression
    is_const: bool = False


@dataclass(eq=False, kw_only=True)
class TableDecl(Declaration):
    keys: list[KeyElement] = field(default_factory=list)
    actions: list[ActionRef] = field(default_factory=list)
    default_action: ActionRef | None = None
    default_action_const: bool = False
    entries: list[TableEntryDecl] | None = None
    entries_const: bool = False
    properties: list[TableProperty] = field(default_factory=list)

    def property(self, name: str) -> TableProperty | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None


@dataclass(eq=False, kw_only=True)
class ControlDecl(Declaration):
    type_params: list[TypeParameter] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    ctor_params: list[Parameter] = field(default_factory=list)
    locals: list[Declaration] = field(default_factory=list)  # constants, variables, actions,
    # tables, instances
    body: BlockStatement = field(default_factory=BlockStatement)


@dataclass(eq=False, kw_only=True)
class Program(Node):
    declarations: list[Declaration] = field(default_factory=list)
