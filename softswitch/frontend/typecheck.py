"""The P4_16 type checker: name resolution, types and constants, producing a CheckedProgram.

`check(program)` walks the declarations in order (P4 requires declaration before use, except
parser states) and fills in the annotation fields documented in ast.py. The rules are split over
mixins, one concept each: expressions (exprcheck), calls (callcheck), statements (stmtcheck),
parsers (parsercheck) and tables (tablecheck); the main package and the instance tree are built by
blocks.py. Every problem is a located P4TypeError/UnsupportedError; unexpected internal failures
are wrapped in a P4Error naming the declaration being checked.

Errors are collected, not fatal: `recover` checks one top-level declaration, control or parser
local, parser state, statement, table key, property or entry, reports what fails and carries on
with the next one. A declaration that failed is marked erroneous in its scope, so its uses are
dropped silently instead of each reporting a follow-on error. `check` raises the one error, or a
P4Errors of all of them (at most MAX_ERRORS).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from softswitch.errors import P4Error, P4Errors, P4TypeError, SourceLocation, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.actionnames import action_name_errors
from softswitch.frontend.archs import V1MODEL, Architecture, architecture, unknown_extern_message
from softswitch.frontend.blocks import build_blocks, pipe_name
from softswitch.frontend.callcheck import CallMixin
from softswitch.frontend.checksumcheck import checksum_control_errors
from softswitch.frontend.exprcheck import ExprMixin
from softswitch.frontend.initializers import InitializerMixin
from softswitch.frontend.parsercheck import ParserMixin
from softswitch.frontend.scopes import ErroneousName, Scope
from softswitch.frontend.stmtcheck import StmtMixin
from softswitch.frontend.tablecheck import TableMixin
from softswitch.frontend.tofino_rules import tofino_rule_errors
from softswitch.frontend.typeops import has_type_vars, is_header_field_type, substitute
from softswitch.frontend.types import (
    BitType,
    BoolType,
    DontCareType,
    EnumType,
    ErrorType,
    ExternType,
    HeaderStackType,
    HeaderType,
    HeaderUnionType,
    IntType,
    MatchKindType,
    NewType,
    ObjectType,
    StringType,
    StructLikeType,
    StructType,
    TupleType,
    Type,
    TypeVar,
    VarbitType,
    VoidType,
    unwrap_newtype,
)
from softswitch.ir.checked import CheckedProgram
from softswitch.limits import DEFAULT_LIMITS, Limits

# The widest bit<W>/int<W>/varbit<W> softswitch accepts; far beyond any real header field, and a
# bound keeps a typo like bit<99999999999> from exhausting memory.
MAX_WIDTH = 1 << 16

# As compilers do, stop after this many errors: later ones are mostly consequences of earlier ones.
MAX_ERRORS = 20

# The extern objects of v1model.p4 that p4c-bm2-ss translates; it refuses an instance of any
# other, e.g. one the program declares itself. (Per architecture: frontend/archs.py.)
BMV2_EXTERN_OBJECTS = V1MODEL.extern_objects

_BASE_TYPES: dict[str, Type] = {
    "bool": BoolType(),
    "int": IntType(),
    "string": StringType(),
    "void": VoidType(),
    "error": ErrorType(),
    "match_kind": MatchKindType(),
    "_": DontCareType(),
}


def check(program: ast.Program, source_file: str = "", arch: str = "v1model",
          limits: Limits = DEFAULT_LIMITS) -> CheckedProgram:
    """Type-check `program` in place and return it with its package (v1model's V1Switch, or
    TNA's Switch of one Pipeline) bound.

    Raises the error when there is one, a P4Errors (sorted, the first error's location and
    message) when there are several. Types and instances over `limits` (header stacks, values
    per instance, sizes) are errors too."""
    return Checker(source_file, arch, limits).run(program)


def _bmv2_register_cell(arch: Architecture, t: Type) -> Type | None:
    """The cell type of a v1model register instance type (None: not one)."""
    if arch is V1MODEL and isinstance(t, ExternType) and t.name == "register" and t.type_args:
        return t.type_args[0]
    return None


def _bits_after_midend(t: Type) -> bool:
    """Whether `t` is bit<W>/int<W> once p4c's midend (EliminateNewtype, EliminateSerEnums)
    has replaced `type` declarations and serializable enums by their underlying types."""
    u = unwrap_newtype(t)
    return isinstance(u, BitType) or (isinstance(u, EnumType) and u.underlying is not None)


class _InternalError(P4Error):
    """A checker bug (wrapped so it is still located); after a reported error, it is most likely
    a consequence of that error's half-checked declaration, and is not reported."""


class _ErrorLimit(Exception):
    """MAX_ERRORS were reported: stop checking."""


class Checker(ExprMixin, CallMixin, StmtMixin, ParserMixin, TableMixin, InitializerMixin):
    """Holds the state of one check: the top scope, error/match_kind members and caches."""

    def __init__(self, source_file: str = "", arch: str = "v1model",
                 limits: Limits = DEFAULT_LIMITS) -> None:
        self.source_file = source_file
        self.limits = limits
        self._value_counts: dict[Type, int] = {}  # values an instance of a type holds
        self.arch: Architecture = architecture(arch)
        self.top = Scope()
        self.errors: list[str] = []
        self.error_codes: dict[str, int] = {}
        self.match_kinds: list[str] = []
        # where a list/struct literal was checked, to re-check it once its type is known
        self._literal_scopes: dict[int, Scope] = {}
        self.ctor_param_ids: set[int] = set()  # parser/control constructor parameters
        # instances of generic blocks whose type arguments come from their first apply
        self.pending_bindings: dict[int, dict[str, Type]] = {}
        self._generic_structs: dict[tuple[str, tuple[Type, ...]], StructLikeType] = {}
        # generic functions: the unchecked declaration and its scope; checked specialisations
        self._generic_functions: dict[int, tuple[ast.FunctionDecl, Scope]] = {}
        self._function_specs: dict[tuple[int, tuple[Type, ...]], ast.FunctionDecl] = {}
        # generic parsers/controls likewise: unchecked copy and scope; checked specialisations
        self._generic_blocks: dict[int, tuple[ast.ParserDecl | ast.ControlDecl, Scope]] = {}
        self._block_specs: dict[tuple[int, tuple[Type, ...]], ast.ParserDecl | ast.ControlDecl] = {}
        self.diagnostics: list[P4Error] = []  # the errors reported so far, in the order found
        self.incomplete: set[int] = set()  # ids of declarations checked on after an error
        # the block statement list and index being checked (a loop needs what precedes it)
        self._position: tuple[list[ast.Statement | ast.Declaration], int] = ([], 0)

    # -- driver ---------------------------------------------------------------------------------

    def run(self, program: ast.Program) -> CheckedProgram:
        try:
            checked = self._check_program(program)
        except _ErrorLimit:
            raise P4Errors(self.diagnostics, truncated=True) from None
        if self.diagnostics or checked is None:
            raise P4Errors.of(self.diagnostics)
        return checked

    def _check_program(self, program: ast.Program) -> CheckedProgram | None:
        self._collect_members(program)
        for d in program.declarations:
            self.recover(d, lambda d=d: self.top_declaration(d), self.top)
        try:
            main = self.top.lookup_local("main")
        except ErroneousName:
            return None  # its declaration's error was reported
        loc = program.loc if program.declarations == [] else program.declarations[-1].loc
        if not isinstance(main, ast.InstanceDecl):
            if not self.diagnostics:  # a program with errors is not looked at as a whole
                self.report(P4TypeError("the program has no 'main' package instance", loc))
            return None
        found: list[Any] = []
        if not self.recover(main, lambda: found.append(build_blocks(self, main))):
            return None
        if self.diagnostics:
            return None  # the annotations of a program with errors may be half-checked
        blocks = found[0]
        for exc in action_name_errors(program):  # p4c's DuplicateActionControlPlaneNameCheck
            self.report(exc)
        if self.arch.name == "v1model":
            for exc in checksum_control_errors(blocks):  # what p4c-bm2-ss allows there
                self.report(exc)
        if self.diagnostics:
            return None
        self._annotation_values(program, set())
        checked = CheckedProgram(
            program=program,
            main=main,
            blocks=blocks,
            errors=list(self.errors),
            match_kinds=list(self.match_kinds),
            source_file=self.source_file,
            arch=self.arch.name,
            pipe_name=pipe_name(main) if self.arch.name == "tna" else "",
            limits=self.limits,
        )
        if self.arch.name == "tna":
            for exc in tofino_rule_errors(checked):  # what bf-p4c refuses for Tofino
                self.report(exc)
            if self.diagnostics:
                return None
        return checked

    def recover(self, node: ast.Node, fn: Any, scope: Scope | None = None) -> bool:
        """Run `fn` (which checks `node`); on an error, report it and return False so the caller
        goes on with the next node. A failed declaration `node` (or one checked on after a bad
        parameter, in `incomplete`) is marked erroneous in `scope`."""
        try:
            self._guarded(node, fn)
            if id(node) not in self.incomplete:
                return True
        except ErroneousName:
            pass  # uses a declaration whose own error was reported
        except P4Error as exc:
            self.report(exc)
        name = getattr(node, "name", None)
        if scope is not None and isinstance(node, ast.Declaration) and isinstance(name, str):
            scope.mark_erroneous(name, node)
        return False

    def report(self, exc: P4Error) -> None:
        """Record one error; raises _ErrorLimit at MAX_ERRORS."""
        if isinstance(exc, P4Errors):
            for e in exc.errors:
                self.report(e)
            return
        if isinstance(exc, _InternalError) and self.diagnostics:
            return
        if any(e.location == exc.location and e.message == exc.message for e in self.diagnostics):
            return  # the same node checked twice (e.g. a literal re-checked once typed)
        self.diagnostics.append(exc)
        if len(self.diagnostics) >= MAX_ERRORS:
            raise _ErrorLimit

    def _guarded(self, d: ast.Node, fn: Any) -> Any:
        try:
            return fn()
        except (P4Error, _ErrorLimit):
            raise
        except RecursionError as exc:
            raise P4Error("expression nesting too deep", d.loc) from exc
        except Exception as exc:  # a checker bug must still name where it happened
            name = getattr(d, "name", type(d).__name__)
            raise _InternalError(
                f"internal error while checking '{name}': {type(exc).__name__}: {exc}", d.loc
            ) from exc

    def _annotation_values(self, node: Any, seen: set[int]) -> None:
        """Type annotation arguments where they are plain constants (``@field_list(1)``,
        ``@priority(5)``); others (names of things, free text) are not P4 expressions to check."""
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, ast.Annotation):
            for arg in node.args:
                if arg.type is None:
                    try:
                        self.expr(arg, self.top)
                    except P4Error:
                        arg.type = None
            return
        for value in vars(node).values():
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.Node):
                    self._annotation_values(child, seen)

    def _collect_members(self, program: ast.Program) -> None:
        """Number error and match_kind members first: error codes follow declaration order, and
        a use may precede a later `error {}` extension only in our numbering, not in scope."""
        for d in program.declarations:
            if isinstance(d, ast.ErrorDecl):
                for m in d.members:
                    if m in self.error_codes:
                        self.report(P4TypeError(f"duplicate declaration of 'error.{m}'", d.loc))
                        continue
                    self.error_codes[m] = len(self.errors)
                    self.errors.append(m)

    # -- names and types ------------------------------------------------------------------------

    def resolve_all(
        self, name: str, is_global: bool, scope: Scope, loc: SourceLocation
    ) -> list[ast.Node]:
        if name.startswith("."):
            name, is_global = name[1:], True
        found = (scope.root if is_global else scope).lookup_all(name)
        if not found:
            raise P4TypeError(f"undeclared name '{name}'", loc)
        return found

    def resolve_name(
        self, name: str, is_global: bool, scope: Scope, loc: SourceLocation
    ) -> ast.Node:
        return self.resolve_all(name, is_global, scope, loc)[0]

    def resolve_type(self, ref: ast.TypeRef, scope: Scope) -> Type:
        """The semantic type of `ref` (also stored in ref.resolved)."""
        t = self._resolve_type(ref, scope)
        ref.resolved = t
        return t

    def _resolve_type(self, ref: ast.TypeRef, scope: Scope) -> Type:
        if isinstance(ref, ast.BitTypeRef):
            w = self.const_int(self._typed(ref.width, scope), scope, "a width")
            if w < 0 or (ref.signed and w == 0):
                raise P4TypeError(f"invalid width {w}", ref.width.loc)
            if w > MAX_WIDTH:
                raise UnsupportedError(f"widths over {MAX_WIDTH} bits ({w})", ref.width.loc)
            return BitType(w, ref.signed)
        if isinstance(ref, ast.VarbitTypeRef):
            w = self.const_int(self._typed(ref.max_width, scope), scope, "a varbit width")
            if w <= 0:
                raise P4TypeError(f"invalid varbit width {w}", ref.max_width.loc)
            if w > MAX_WIDTH:
                raise UnsupportedError(f"widths over {MAX_WIDTH} bits ({w})", ref.max_width.loc)
            return VarbitType(w)
        if isinstance(ref, ast.BaseTypeRef):
            if ref.name not in _BASE_TYPES:
                raise P4TypeError(f"unknown type '{ref.name}'", ref.loc)
            return _BASE_TYPES[ref.name]
        if isinstance(ref, ast.StackTypeRef):
            et = self.resolve_type(ref.element, scope)
            if not isinstance(et, HeaderType | HeaderUnionType):
                raise P4TypeError(f"header stack elements must be headers, got {et}", ref.loc)
            n = self.const_int(self._typed(ref.size, scope), scope, "a header stack size")
            if n <= 0:
                raise P4TypeError(f"header stack size must be positive, got {n}", ref.size.loc)
            self.limits.check("header_stack", f"header stack {et}[{n}]", n, ref.size.loc)
            return self.bounded(HeaderStackType(et, n), ref.loc)
        if isinstance(ref, ast.TupleTypeRef):
            tt = TupleType(tuple(self.resolve_type(e, scope) for e in ref.elements))
            self.limits.check("type_fields", f"an instance of {tt}", self.value_count(tt),
                              ref.loc)
            return tt
        if isinstance(ref, ast.NamedTypeRef):
            return self._named_type(ref, scope)
        raise P4TypeError(f"unexpected type {type(ref).__name__}", ref.loc)

    def _named_type(self, ref: ast.NamedTypeRef, scope: Scope) -> Type:
        if ref.name in _BASE_TYPES and scope.lookup(ref.name) is None:
            return _BASE_TYPES[ref.name]
        decl = self.resolve_name(ref.name, False, scope, ref.loc)
        args = [self.resolve_type(a, scope) for a in ref.type_args]
        name = ref.name.lstrip(".")
        if isinstance(decl, ast.TypeParameter):
            return TypeVar(name)
        if isinstance(decl, ast.ExternDecl):
            if args and len(args) != len(decl.type_params):
                raise P4TypeError(
                    f"extern '{name}' expects {len(decl.type_params)} type arguments, got {len(args)}",
                    ref.loc,
                )
            return ExternType(name, tuple(args), decl)
        if isinstance(decl, ast.StructLikeDecl) and decl.type_params:
            return self._specialize(decl, args, ref)
        if (
            args
            and not isinstance(decl, ast.ParserTypeDecl | ast.ControlTypeDecl | ast.PackageTypeDecl)
            and not (isinstance(decl, ast.ParserDecl | ast.ControlDecl) and decl.type_params)
        ):
            raise P4TypeError(f"type '{name}' takes no type arguments", ref.loc)
        if isinstance(decl, ast.TypedefDecl | ast.StructLikeDecl | ast.EnumDecl):
            assert decl.resolved is not None
            return decl.resolved
        if isinstance(decl, ast.ErrorDecl):
            return ErrorType()
        if isinstance(decl, ast.MatchKindDecl) and name == "match_kind":
            return MatchKindType()
        kinds = {
            ast.ParserDecl: "parser",
            ast.ParserTypeDecl: "parser",
            ast.ControlDecl: "control",
            ast.ControlTypeDecl: "control",
            ast.PackageTypeDecl: "package",
        }
        for cls, kind in kinds.items():
            if isinstance(decl, cls):
                return ObjectType(kind, name, decl)
        raise P4TypeError(f"'{name}' is not a type", ref.loc)

    def _specialize(
        self, decl: ast.StructLikeDecl, args: list[Type], ref: ast.NamedTypeRef
    ) -> Type:
        if len(args) != len(decl.type_params):
            raise P4TypeError(
                f"'{decl.name}' expects {len(decl.type_params)} type arguments, got {len(args)}",
                ref.loc,
            )
        key = (decl.name, tuple(args))
        cached = self._generic_structs.get(key)
        if cached is not None:
            return cached
        generic = decl.resolved
        assert isinstance(generic, StructLikeType)
        bindings = {tp.name: a for tp, a in zip(decl.type_params, args)}
        name = f"{decl.name}<{', '.join(map(str, args))}>"
        fields = tuple((f, substitute(t, bindings)) for f, t in generic.fields)
        t = self.bounded(type(generic)(name, fields), ref.loc)
        self._generic_structs[key] = t
        return t

    def bounded(self, t: StructLikeType | HeaderStackType, loc: SourceLocation) -> Any:
        """`t`, checked against limits.type_fields: nested structs (or stacks of stacks of
        structs) multiply, and every packet holds an instance of its headers and metadata."""
        self.limits.check("type_fields", f"an instance of {t}", self.value_count(t), loc)
        return t

    def value_count(self, t: Type) -> int:
        """The values an instance of `t` holds: fields flattened, stack elements and
        validity bits counted (a type variable as one)."""
        found = self._value_counts.get(t)
        if found is not None:
            return found
        if isinstance(t, HeaderStackType):
            count = t.size * self.value_count(t.element) + 1  # + nextIndex
        elif isinstance(t, StructLikeType):
            count = sum(self.value_count(ft) for _, ft in t.fields) + isinstance(t, HeaderType)
        elif isinstance(t, TupleType):
            count = sum(self.value_count(e) for e in t.elements)
        else:
            count = 1
        self._value_counts[t] = count
        return count

    # -- parameters -----------------------------------------------------------------------------

    def declare_params(
        self, params: list[ast.Parameter], scope: Scope, what: str, ctor: bool = False
    ) -> None:
        for p in params:
            if scope.owner is None:
                self._declare_param(p, scope, what, ctor)
            elif not self.recover(p, lambda p=p: self._declare_param(p, scope, what, ctor), scope):
                # the body is still checked (without the parameter); the owner is erroneous
                self.incomplete.add(id(scope.owner))

    def _declare_param(self, p: ast.Parameter, scope: Scope, what: str, ctor: bool) -> None:
        t = self.resolve_type(p.type_ref, scope)
        if ctor and p.direction:
            raise P4TypeError(f"constructor parameter '{p.name}' cannot have a direction", p.loc)
        if ctor:
            self.ctor_param_ids.add(id(p))
        if isinstance(t, VoidType):
            raise P4TypeError(f"parameter '{p.name}' of {what} cannot be void", p.loc)
        if isinstance(t, ObjectType) and isinstance(t.decl, ast.ParserDecl | ast.ControlDecl):
            # as p4c: a parser/control declaration is not a type; its type declaration is
            raise P4TypeError(f"parameter '{p.name}' cannot have type {t}", p.loc)
        if p.default is not None:
            self.checked(p.default, scope, t, f"default value of '{p.name}'")
        scope.declare(p.name, p, p.loc)

    # -- declarations ---------------------------------------------------------------------------

    def top_declaration(self, d: ast.Declaration) -> None:
        scope = self.top
        if isinstance(d, ast.ConstantDecl):
            self.constant(d, scope)
        elif isinstance(d, ast.TypedefDecl):
            t = self.resolve_type(d.type_ref, scope)
            if isinstance(t, VoidType | DontCareType):
                raise P4TypeError(f"cannot name type {t}", d.loc)
            d.resolved = NewType(d.name, t) if d.is_newtype else t
            scope.declare(d.name, d, d.loc)
        elif isinstance(d, ast.StructLikeDecl):
            self.struct_like(d, scope)
        elif isinstance(d, ast.EnumDecl):
            self.enum(d, scope)
        elif isinstance(d, ast.ErrorDecl):
            pass  # members numbered in _collect_members
        elif isinstance(d, ast.MatchKindDecl):
            for m in d.members:
                scope.declare(m, d, d.loc)
                self.match_kinds.append(m)
        elif isinstance(d, ast.ExternDecl):
            self.extern(d, scope)
        elif isinstance(d, ast.ExternFunctionDecl):
            inner = self._type_param_scope(d.type_params, scope)
            self.resolve_type(d.return_type, inner)
            self.declare_params(d.params, Scope(inner), f"'{d.name}'")
            scope.declare(d.name, d, d.loc)
        elif isinstance(d, ast.FunctionDecl):
            self.function(d, scope)
        elif isinstance(d, ast.ActionDecl):
            self.action(d, scope)
        elif isinstance(d, ast.InstanceDecl):
            self.instance(d, scope)
        elif isinstance(d, ast.ParserTypeDecl | ast.ControlTypeDecl | ast.PackageTypeDecl):
            inner = self._type_param_scope(d.type_params, scope)
            self.declare_params(d.params, Scope(inner), f"'{d.name}'")
            scope.declare(d.name, d, d.loc)
        elif isinstance(d, ast.ParserDecl):
            scope.declare(d.name, d, d.loc)
            self.parser(d, scope)
        elif isinstance(d, ast.ControlDecl):
            scope.declare(d.name, d, d.loc)
            self.control(d, scope)
        elif isinstance(d, ast.VariableDecl):
            raise P4TypeError(f"variable '{d.name}' cannot be declared at the top level", d.loc)
        else:
            raise P4TypeError(f"'{d.name}' cannot be declared at the top level", d.loc)

    def _type_param_scope(self, type_params: list[ast.TypeParameter], scope: Scope) -> Scope:
        inner = Scope(scope)
        for tp in type_params:
            inner.declare(tp.name, tp, tp.loc)
        return inner

    def struct_like(self, d: ast.StructLikeDecl, scope: Scope) -> None:
        inner = self._type_param_scope(d.type_params, scope)
        fields: list[tuple[str, Type]] = []
        names: set[str] = set()
        varbits = 0
        for f in d.fields:
            if f.name in names:
                raise P4TypeError(f"duplicate declaration of '{f.name}'", f.loc)
            names.add(f.name)
            t = self.resolve_type(f.type_ref, inner)
            if isinstance(t, VoidType | IntType | StringType | DontCareType):
                raise P4TypeError(f"field '{f.name}' cannot have type {t}", f.loc)
            if isinstance(d, ast.HeaderDecl) and not (
                is_header_field_type(t) or isinstance(t, TypeVar)
            ):
                raise P4TypeError(
                    f"header field '{f.name}' has type {t}, which is not allowed in a header", f.loc
                )
            if isinstance(d, ast.HeaderUnionDecl) and not isinstance(t, HeaderType):
                raise P4TypeError(f"header union field '{f.name}' must be a header, got {t}", f.loc)
            varbits += isinstance(t, VarbitType)
            fields.append((f.name, t))
        if varbits > 1:
            raise P4TypeError(f"header '{d.name}' has more than one varbit field", d.loc)
        cls = {ast.HeaderDecl: HeaderType, ast.HeaderUnionDecl: HeaderUnionType}.get(
            type(d), StructType
        )
        d.resolved = self.bounded(cls(d.name, tuple(fields)), d.loc)
        scope.declare(d.name, d, d.loc)

    def enum(self, d: ast.EnumDecl, scope: Scope) -> None:
        names = [m.name for m in d.members]
        for i, m in enumerate(names):
            if m in names[:i]:
                raise P4TypeError(f"duplicate declaration of '{m}'", d.members[i].loc)
        if d.underlying is None:
            d.resolved = EnumType(d.name, tuple(names))
        else:
            ut = unwrap_newtype(self.resolve_type(d.underlying, scope))
            if not isinstance(ut, BitType):
                raise P4TypeError(
                    f"enum '{d.name}' must be based on bit<W> or int<W>, got {ut}", d.loc
                )
            values = []
            for m in d.members:
                if m.init is None:
                    raise P4TypeError(
                        f"member '{m.name}' of serializable enum '{d.name}' needs a value", m.loc
                    )
                self.checked(m.init, scope, ut, f"value of '{d.name}.{m.name}'")
                values.append(self.const_int(m.init, scope, f"value of '{d.name}.{m.name}'"))
            d.resolved = EnumType(d.name, tuple(names), ut, tuple(values))
        scope.declare(d.name, d, d.loc)

    def extern(self, d: ast.ExternDecl, scope: Scope) -> None:
        scope.declare(d.name, d, d.loc)  # methods may mention the extern's own type
        outer = self._type_param_scope(d.type_params, scope)
        methods = Scope(outer)
        for m in d.methods:
            if m.is_constructor and m.name != d.name:
                raise P4TypeError(f"constructor '{m.name}' does not match extern '{d.name}'", m.loc)
            inner = self._type_param_scope(m.type_params, outer)
            if m.return_type is not None:
                self.resolve_type(m.return_type, inner)
            self.declare_params(
                m.params, Scope(inner), f"'{d.name}.{m.name}'", ctor=m.is_constructor
            )
            methods.declare(("ctor:" if m.is_constructor else "") + m.name, m, m.loc)

    def function(self, d: ast.FunctionDecl, scope: Scope) -> None:
        """A function; directionless parameters are read-only, like `in` (as p4c treats them).

        A generic function's body is checked with its type variables (the spec allows only
        assignment on their values) and once more per specialisation (`specialize_function`)."""
        pristine = copy.deepcopy(d) if d.type_params else None
        self._function_body(d, self._type_param_scope(d.type_params, scope))
        scope.declare(d.name, d, d.loc)
        if pristine is not None:
            self._generic_functions[id(d)] = (pristine, scope)

    def _function_body(self, d: ast.FunctionDecl, scope: Scope) -> None:
        rt = self.resolve_type(d.return_type, scope)
        inner = Scope(scope, owner=d)
        self.declare_params(d.params, inner, f"function '{d.name}'")
        self.block(d.body, inner)
        if not isinstance(rt, VoidType) and not _always_returns(d.body):
            raise P4TypeError(f"function '{d.name}' does not return a value on every path", d.loc)

    def specialize_function(
        self, d: ast.FunctionDecl, bindings: dict[str, Type]
    ) -> ast.FunctionDecl:
        """The copy of generic `d` with its type parameters bound, checked (once per binding), as
        p4c's SpecializeGenericFunctions makes it; calls are bound to it, so the engine sees
        ordinary functions."""
        return self._specialization(d, bindings, self._generic_functions, self._function_specs,
                                    self._function_body)

    def _specialization(self, d: Any, bindings: dict[str, Type],
                        generics: dict[int, tuple[Any, Scope]],
                        specs: dict[tuple[int, tuple[Type, ...]], Any],
                        check: Callable[[Any, Scope], None]) -> Any:
        """The checked copy of generic declaration `d` (a function, parser or control) for
        `bindings`, made once per binding: each type parameter becomes a typedef of its
        argument in a scope around the pristine copy kept in `generics`."""
        args = tuple(bindings[tp.name] for tp in d.type_params)
        key = (id(d), args)
        spec = specs.get(key)
        if spec is None:
            pristine, outer = generics[id(d)]
            spec = copy.deepcopy(pristine)
            spec.type_params = []
            inner = Scope(outer)
            for tp, t in zip(pristine.type_params, args):
                ref = ast.NamedTypeRef(name=str(t), loc=tp.loc, resolved=t)
                inner.declare(tp.name, ast.TypedefDecl(name=tp.name, type_ref=ref, resolved=t),
                              tp.loc)
            specs[key] = spec
            check(spec, inner)
        return spec

    def action(self, d: ast.ActionDecl, scope: Scope) -> None:
        inner = Scope(scope, owner=d)
        self.declare_params(d.params, inner, f"action '{d.name}'")
        seen_directionless = False
        for p in d.params:
            if not p.direction:
                seen_directionless = True
            elif seen_directionless:
                raise P4TypeError(
                    f"action '{d.name}': directional parameter '{p.name}' must come before the "
                    "directionless ones",
                    p.loc,
                )
        self.block(d.body, inner)
        scope.declare(d.name, d, d.loc)

    def generic_block(self, d: ast.ParserDecl | ast.ControlDecl, outer: Scope) -> bool:
        """For a generic parser/control: keep an unchecked copy and check only its parameters
        (for binding instantiations); its body is checked per specialisation
        (`specialize_block`), as p4c checks it once SpecializeGenericTypes made the copies."""
        if not d.type_params:
            return False
        self._generic_blocks[id(d)] = (copy.deepcopy(d), outer)
        scope = Scope(self._type_param_scope(d.type_params, outer), owner=d)
        what = f"'{d.name}'"
        self.declare_params(d.params, scope, what)
        self.declare_params(d.ctor_params, scope, what, ctor=True)
        return True

    def specialize_block(
        self, d: ast.ParserDecl | ast.ControlDecl, bindings: dict[str, Type], loc: SourceLocation
    ) -> ast.ParserDecl | ast.ControlDecl:
        """The copy of generic parser/control `d` with its type parameters bound, checked once
        per binding; instances are bound to it, so later stages see ordinary blocks."""
        for tp in d.type_params:
            t = bindings.get(tp.name)
            if t is None or isinstance(t, IntType) or has_type_vars(t):
                raise P4TypeError(f"cannot infer type parameter '{tp.name}' of '{d.name}'", loc)
        def check(spec: ast.ParserDecl | ast.ControlDecl, inner: Scope) -> None:
            if isinstance(spec, ast.ParserDecl):
                self.parser(spec, inner)
            else:
                self.control(spec, inner)

        return self._specialization(d, bindings, self._generic_blocks, self._block_specs, check)

    def control(self, c: ast.ControlDecl, outer: Scope) -> None:
        if self.generic_block(c, outer):
            return
        scope = Scope(outer, owner=c)
        self.declare_params(c.params, scope, f"control '{c.name}'")
        self.declare_params(c.ctor_params, scope, f"control '{c.name}'", ctor=True)
        for d in c.locals:
            self.recover(d, lambda d=d: self.control_local(d, scope), scope)
        self.block(c.body, scope)

    def control_local(self, d: ast.Declaration, scope: Scope) -> None:
        if isinstance(d, ast.ActionDecl):
            self.action(d, scope)
        elif isinstance(d, ast.TableDecl):
            self.table(d, scope)
        elif isinstance(d, ast.InstanceDecl):
            self.instance(d, scope)
        elif isinstance(d, ast.VariableDecl | ast.ConstantDecl):
            self.local_declaration(d, scope)
        elif isinstance(d, ast.FunctionDecl):
            self.function(d, scope)
        else:
            raise P4TypeError(f"'{d.name}' cannot be declared inside a control", d.loc)

    # -- instances ------------------------------------------------------------------------------

    def instance(self, d: ast.InstanceDecl, scope: Scope) -> None:
        """``T(args) name;`` — externs, parsers, controls; packages are bound in blocks.py."""
        t = self.resolve_type(d.type_ref, scope)
        decl = t.decl if isinstance(t, ExternType | ObjectType) else None
        if isinstance(decl, ast.PackageTypeDecl):
            self.check_initializer(d, t, scope)  # none allowed
            d.resolved, d.type_decl = t, decl
            d.ctor_params = list(decl.params)
            scope.declare(d.name, d, d.loc)
            return  # arguments are bound and checked by build_blocks
        if decl is None:
            raise P4TypeError(f"type {t} cannot be instantiated", d.type_ref.loc)
        if scope is self.top and isinstance(decl, ast.ParserDecl | ast.ControlDecl):
            # P4_16's restriction on top-level instantiations, as p4c's TypeInference checks it
            raise P4TypeError(f"{d.name}: cannot instantiate at top-level", d.loc)
        name = getattr(decl, "name", str(t))
        type_args = list(t.type_args) if isinstance(t, ExternType) else []
        if isinstance(d.type_ref, ast.NamedTypeRef) and isinstance(t, ObjectType):
            type_args = [a.resolved for a in d.type_ref.type_args if a.resolved is not None]
        t, params = self.instantiable(decl, name, type_args, d.args, d.loc)
        info = ast.CallInfo(kind="constructor", name=name, decl=decl, params=params)
        fixed = self._fixed_bindings(decl, t, type_args)
        info.type_bindings.update(fixed)
        variables = {tp.name for tp in getattr(decl, "type_params", [])} - set(fixed)
        call = ast.MethodCall(
            callee=ast.PathExpression(name=name, loc=d.loc), args=d.args, loc=d.loc
        )
        self._bind(call, info, scope, variables, fixed, "constructor")
        self.require_constant_args(info, d.loc)
        if isinstance(t, ExternType) and variables:
            args = tuple(info.type_bindings.get(v.name, TypeVar(v.name)) for v in decl.type_params)
            t = ExternType(t.name, args, decl)
        if isinstance(t, ExternType) and has_type_vars(t):
            raise P4TypeError(f"cannot infer the type arguments of '{name}'", d.loc)
        cell = _bmv2_register_cell(self.arch, t)
        if cell is not None and not _bits_after_midend(cell):  # p4c's BMv2 back end refuses it
            raise P4TypeError(
                f"{d.name}: Only registers with bit or int types are currently supported "
                f"(got {cell})",
                d.loc,
            )
        if isinstance(t, ObjectType) and getattr(decl, "type_params", None):
            # specialised now when the type arguments are known, else at its first apply
            if set(info.type_bindings) >= variables | set(fixed):
                t, params = self.specialized_instance(t, info, d.loc)
                decl = t.decl
            else:
                self.pending_bindings[id(d)] = dict(info.type_bindings)
        d.resolved, d.type_decl = t, decl
        d.ctor_params, d.ctor_args = params, info.args
        if isinstance(decl, ast.ExternDecl):  # registers, counters, meters, profiles...
            for p, arg in zip(params, info.args):
                if p.name == "size" and arg is not None and isinstance(arg.value, int):
                    self.limits.check("size", f"{name} '{d.name}' size", arg.value, arg.loc)
        self.check_initializer(d, t, scope)
        scope.declare(d.name, d, d.loc)

    def instantiable(
        self,
        decl: Any,
        name: str,
        type_args: list[Type],
        args: list[ast.Argument],
        loc: SourceLocation,
    ) -> tuple[Type, list[ast.Parameter]]:
        """The instance type and constructor parameters for instantiating `decl`."""
        if isinstance(decl, ast.ExternDecl):
            if name not in self.arch.extern_objects:
                raise P4TypeError(unknown_extern_message(self.arch, name), loc)
            ctors = [m for m in decl.methods if m.is_constructor]
            if not ctors:
                raise P4TypeError(f"extern '{name}' has no constructor", loc)
            call = ast.MethodCall(callee=ast.PathExpression(name=name), args=args, loc=loc)
            ctor = self._overload(list(ctors), call, name)
            if type_args and len(type_args) != len(decl.type_params):
                raise P4TypeError(
                    f"extern '{name}' expects {len(decl.type_params)} type arguments, got {len(type_args)}",
                    loc,
                )
            return ExternType(name, tuple(type_args), decl), list(ctor.params)  # type: ignore[attr-defined]
        if isinstance(decl, ast.ParserDecl | ast.ControlDecl):
            if type_args and len(type_args) != len(decl.type_params):
                raise P4TypeError(
                    f"'{name}' expects {len(decl.type_params)} type arguments, got {len(type_args)}",
                    loc,
                )
            kind = "parser" if isinstance(decl, ast.ParserDecl) else "control"
            return ObjectType(kind, name, decl), list(decl.ctor_params)
        raise P4TypeError(f"'{name}' cannot be instantiated", loc)

    def specialized_instance(
        self, t: ObjectType, info: ast.CallInfo, loc: SourceLocation
    ) -> tuple[ObjectType, list[ast.Parameter]]:
        """Bind the instantiation `info` of generic block type `t` to its specialisation."""
        assert isinstance(t.decl, ast.ParserDecl | ast.ControlDecl)
        spec = self.specialize_block(t.decl, info.type_bindings, loc)
        info.decl, info.params = spec, list(spec.ctor_params)
        return ObjectType(t.kind, t.name, spec), info.params


def _always_returns(s: ast.Statement | ast.Declaration) -> bool:
    """Whether every path through `s` ends in return or exit (for non-void functions)."""
    if isinstance(s, ast.ReturnStatement | ast.ExitStatement):
        return True
    if isinstance(s, ast.BlockStatement):
        return any(_always_returns(x) for x in s.statements)
    if isinstance(s, ast.IfStatement):
        return s.otherwise is not None and _always_returns(s.then) and _always_returns(s.otherwise)
    if isinstance(s, ast.SwitchStatement):
        has_default = any(
            isinstance(label, ast.DefaultExpression) for c in s.cases for label in c.labels
        )
        return has_default and all(c.body is not None and _always_returns(c.body) for c in s.cases)
    return False


__all__ = ["Checker", "check"]
