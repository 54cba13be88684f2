"""Resolution and checking of calls into CallInfo (a mixin of the Checker in typecheck.py).

Covers argument binding (positional or named, defaults, @optional), direction rules, and
type-parameter inference for generic externs (``hash``, ``register<T>.read``, ``extract<T>``...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from softswitch.errors import P4Error, P4TypeError, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.archs import V1MODEL, unknown_extern_function_message
from softswitch.frontend.blocks import check_block_argument
from softswitch.frontend.scopes import Scope
from softswitch.frontend.typeops import (
    has_type_vars,
    is_fixed_width,
    is_header_like,
    substitute,
    unify,
)
from softswitch.frontend.types import (
    ApplyResultType,
    BitType,
    BoolType,
    ExternType,
    HeaderStackType,
    HeaderType,
    HeaderUnionType,
    IntType,
    ObjectType,
    StructLikeType,
    StructType,
    Type,
    TypeVar,
    VoidType,
    unwrap_newtype,
)

if TYPE_CHECKING:
    from softswitch.frontend.typecheck import Checker

_HEADER_METHODS = {"isValid": BoolType(), "setValid": VoidType(), "setInvalid": VoidType()}
_SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")
_PACKET_EXTERNS = ("packet_in", "packet_out")

# The extern functions of core.p4 and v1model.p4 that p4c-bm2-ss translates (BMv2 primitives);
# p4c refuses a call of any other, e.g. one the program declares itself ("unknown extern
# function"), since BMv2 could not run it. (Per architecture: frontend/archs.py.)
BMV2_EXTERN_FUNCTIONS = V1MODEL.extern_functions


def _describe(kind: str, name: str) -> str:
    return {
        "action": f"action '{name}'",
        "function": f"function '{name}'",
        "extern_function": f"extern function '{name}'",
        "constructor": f"constructor of '{name}'",
        "apply": f"'{name}.apply'",
    }.get(kind, f"method '{name}'")


class CallMixin:
    """Call rules; `self` is the Checker."""

    def check_call(
        self: Checker, e: ast.MethodCall, scope: Scope, expected: Type | None = None
    ) -> Type:
        callee = e.callee
        if isinstance(callee, ast.PathExpression):
            return self._call_path(e, callee, scope, expected)
        if isinstance(callee, ast.Member):
            return self._call_member(e, callee, scope, expected)
        raise P4TypeError("this expression cannot be called", callee.loc)

    # -- calls of names -------------------------------------------------------------------------

    def _call_path(
        self: Checker,
        e: ast.MethodCall,
        callee: ast.PathExpression,
        scope: Scope,
        expected: Type | None,
    ) -> Type:
        decls = self.resolve_all(callee.name, callee.is_global, scope, callee.loc)
        decl = decls[0]
        callee.decl = decl
        if isinstance(decl, ast.ActionDecl):
            if scope.enclosing_owner((ast.ParserDecl,)) is not None:
                raise P4TypeError(f"action '{decl.name}' cannot be called from a parser", e.loc)
            callee.type = ObjectType("action", decl.name, decl)
            info = ast.CallInfo(kind="action", name=decl.name, decl=decl, params=list(decl.params))
            self._bind(e, info, scope, set(), {}, "action")
            return VoidType()
        if isinstance(decl, ast.FunctionDecl | ast.ExternFunctionDecl):
            chosen = self._overload(decls, e, callee.name)
            callee.decl = chosen
            callee.type = ObjectType("function", callee.name, chosen)
            kind = "function" if isinstance(chosen, ast.FunctionDecl) else "extern_function"
            plain = callee.name.lstrip(".")
            if kind == "extern_function" and plain not in self.arch.extern_functions:
                raise P4TypeError(unknown_extern_function_message(self.arch, plain), e.loc)
            info = ast.CallInfo(
                kind=kind, name=callee.name, decl=chosen, params=list(chosen.params)
            )
            variables = {tp.name for tp in chosen.type_params}
            self._explicit_type_args(e, chosen.type_params, info, scope)
            self._bind(e, info, scope, variables, {}, kind)
            rt = chosen.return_type.resolved
            assert rt is not None
            result = self._result_type(e, rt, info, variables, expected)
            if isinstance(chosen, ast.FunctionDecl) and chosen.type_params:
                self._bind_specialization(e, callee, chosen, info)
            if callee.name == "verify" and scope.enclosing_owner((ast.ParserDecl,)) is None:
                raise P4TypeError("verify can only be called from a parser", e.loc)
            if callee.name == "static_assert" and kind == "extern_function":
                self._static_assert(e)
            return result
        if isinstance(decl, ast.ParserDecl | ast.ControlDecl | ast.ExternDecl):
            return self.check_constructor_call(e, decl, scope)
        raise P4TypeError(f"'{callee.name}' is not a function or action", callee.loc)

    def _bind_specialization(
        self: Checker,
        e: ast.MethodCall,
        callee: ast.PathExpression,
        generic: ast.FunctionDecl,
        info: ast.CallInfo,
    ) -> None:
        """Point the call of generic function `generic` at its specialisation."""
        for tp in generic.type_params:
            t = info.type_bindings.get(tp.name)
            if t is None or isinstance(t, IntType):
                raise P4TypeError(
                    f"cannot infer type parameter '{tp.name}' of function '{generic.name}'"
                    + (" (an int literal has no fixed width; give the type argument)" if t else ""),
                    e.loc,
                )
        spec = self.specialize_function(generic, info.type_bindings)
        callee.decl = info.decl = spec
        callee.type = ObjectType("function", callee.name, spec)
        info.params = list(spec.params)

    def _static_assert(self: Checker, e: ast.MethodCall) -> None:
        cond = e.args[0].expr if e.args else None
        if cond is None or cond.value is None:
            raise P4TypeError("static_assert needs a compile-time condition", e.loc)
        if not cond.value:
            msg = e.args[1].expr.value if len(e.args) > 1 else "static_assert failed"
            raise P4TypeError(str(msg), e.loc)
        e.value = True

    def _overload(self, decls: list[ast.Node], e: ast.MethodCall, name: str) -> ast.Node:
        """Pick the declaration whose parameters accept the given number of arguments."""
        n = len(e.args)
        for d in decls:
            params: list[ast.Parameter] = d.params  # type: ignore[attr-defined]
            required = [p for p in params if p.default is None and not p.annotation("optional")]
            if len(required) <= n <= len(params):
                return d
        if len(decls) == 1:
            return decls[0]  # let binding report the precise count problem
        raise P4TypeError(f"no overload of '{name}' takes {n} arguments", e.loc)

    # -- calls of members -----------------------------------------------------------------------

    def _call_member(
        self: Checker, e: ast.MethodCall, callee: ast.Member, scope: Scope, expected: Type | None
    ) -> Type:
        base = callee.expr
        bt = self.expr(base, scope)
        name = callee.member
        callee.kind = "method"
        decl = base.decl if isinstance(base, ast.PathExpression) else None
        if isinstance(decl, ast.TableDecl):
            if name != "apply":
                raise P4TypeError(f"table '{decl.name}' has no method '{name}'", callee.loc)
            if scope.enclosing_owner((ast.ActionDecl, ast.FunctionDecl)) is not None:
                raise P4TypeError(f"table '{decl.name}' cannot be applied inside an action", e.loc)
            e.call = ast.CallInfo(kind="table_apply", name=decl.name, decl=decl, receiver=base)
            self._no_args(e, f"'{decl.name}.apply'")
            callee.type = ObjectType("function", "apply")
            return ApplyResultType(decl.name)
        if isinstance(bt, ObjectType) and bt.kind in ("parser", "control"):
            return self._call_sub_block(e, callee, decl, bt, scope)
        u = unwrap_newtype(bt)
        if isinstance(u, ExternType):
            return self._call_extern_method(e, callee, u, scope, expected)
        if isinstance(u, StructLikeType | HeaderStackType) or name in _SIZE_METHODS:
            # p4c types e.minSizeInBits() & co. for a value or type name of any type
            return self._call_builtin(e, callee, u, scope)
        raise P4TypeError(f"type {bt} has no method '{name}'", callee.loc)

    def _call_sub_block(
        self: Checker,
        e: ast.MethodCall,
        callee: ast.Member,
        decl: ast.Node | None,
        bt: ObjectType,
        scope: Scope,
    ) -> Type:
        # an instance, or a constructor parameter of parser/control type (blocks.py)
        if callee.member != "apply" or not isinstance(decl, ast.InstanceDecl | ast.Parameter):
            raise P4TypeError(f"{bt} has no method '{callee.member}'", callee.loc)
        if isinstance(decl, ast.Parameter) and id(decl) not in self.ctor_param_ids:
            raise P4TypeError(
                f"{bt.kind} parameter '{decl.name}' can only be applied as a constructor "
                "parameter (parsers and controls are not run-time arguments)",
                e.loc,
            )
        block = bt.decl
        if (bt.kind == "parser") != (scope.enclosing_owner((ast.ParserDecl,)) is not None):
            raise P4TypeError(f"{bt.kind} '{decl.name}' cannot be applied here", e.loc)
        params: list[ast.Parameter] = list(block.params)  # type: ignore[attr-defined]
        info = ast.CallInfo(
            kind="apply", name=decl.name, decl=decl, receiver=callee.expr, params=params
        )
        # a generic parser/control type (``Inner<H>``): its type arguments, else inferred
        type_params = [tp.name for tp in getattr(block, "type_params", [])]
        ref = decl.type_ref
        written = ref.type_args if isinstance(ref, ast.NamedTypeRef) else []
        fixed = {n: a.resolved for n, a in zip(type_params, written) if a.resolved is not None}
        pending = self.pending_bindings.get(id(decl))
        if pending is not None:  # a generic block's instance: T from this apply's arguments
            fixed = dict(pending)
        info.type_bindings.update(fixed)
        self._bind(e, info, scope, set(type_params) - set(fixed), fixed, "apply")
        if pending is not None:
            assert isinstance(decl, ast.InstanceDecl)
            self._specialize_applied(decl, bt, info, e.loc)
        callee.type = ObjectType("function", "apply")
        return VoidType()

    def _specialize_applied(
        self: Checker, d: ast.InstanceDecl, bt: ObjectType, info: ast.CallInfo, loc: object
    ) -> None:
        """Bind the instance `d` of a generic block to the specialisation its first apply
        infers (its type arguments were neither written nor given by constructor arguments)."""
        assert isinstance(bt.decl, ast.ParserDecl | ast.ControlDecl)
        del self.pending_bindings[id(d)]
        try:
            spec = self.specialize_block(bt.decl, info.type_bindings, loc)  # type: ignore[arg-type]
        except P4Error:
            d.type_decl = None  # reported here, not again as a block without type arguments
            raise
        d.type_decl, d.resolved = spec, ObjectType(bt.kind, bt.name, spec)
        d.ctor_params = list(spec.ctor_params)
        info.params = list(spec.params)
        if info.receiver is not None:
            info.receiver.type = d.resolved

    def _call_extern_method(
        self: Checker,
        e: ast.MethodCall,
        callee: ast.Member,
        et: ExternType,
        scope: Scope,
        expected: Type | None,
    ) -> Type:
        edecl = et.decl
        assert isinstance(edecl, ast.ExternDecl)
        methods = [m for m in edecl.methods if m.name == callee.member and not m.is_constructor]
        if not methods:
            raise P4TypeError(f"extern '{et.name}' has no method '{callee.member}'", callee.loc)
        method = self._overload(list(methods), e, callee.member)
        assert isinstance(method, ast.MethodPrototype)
        if method.is_abstract:
            raise UnsupportedError("abstract extern methods", e.loc)
        fixed = {tp.name: arg for tp, arg in zip(edecl.type_params, et.type_args)}
        kind = "packet" if et.name in _PACKET_EXTERNS else "extern_method"
        info = ast.CallInfo(
            kind=kind,
            name=callee.member,
            decl=method,
            receiver=callee.expr,
            params=list(method.params),
        )
        info.type_bindings.update(fixed)
        variables = {tp.name for tp in method.type_params}
        self._explicit_type_args(e, method.type_params, info, scope)
        self._bind(e, info, scope, variables, fixed, f"{et.name}.{callee.member}")
        assert method.return_type is not None and method.return_type.resolved is not None
        result = self._result_type(e, method.return_type.resolved, info, variables, expected)
        callee.type = ObjectType("function", callee.member, method)
        if kind == "packet":
            self._check_packet_call(e, info)
        return result

    def _check_packet_call(self: Checker, e: ast.MethodCall, info: ast.CallInfo) -> None:
        t = info.type_bindings.get("T")
        if info.name == "extract":
            if not isinstance(t, HeaderType):
                raise P4TypeError(f"extract needs a header, got {t}", e.loc)
            has_varbit = any(type(ft).__name__ == "VarbitType" for _, ft in t.fields)
            if len(info.args) == 2 and not has_varbit:
                raise P4TypeError(
                    f"two-argument extract needs a header with a varbit field, got {t}", e.loc
                )
            if len(info.args) == 1 and has_varbit:
                raise P4TypeError(f"extracting {t} needs the varbit field size argument", e.loc)
        elif info.name == "lookahead":
            if t is None or (not is_fixed_width(t) and not isinstance(t, HeaderType)):
                raise P4TypeError(f"lookahead needs a fixed-width type, got {t}", e.loc)
        elif info.name == "emit":
            u = unwrap_newtype(t) if t is not None else None
            if not (
                is_header_like(u) or isinstance(u, HeaderStackType | StructType)  # type: ignore[arg-type]
            ):
                raise P4TypeError(
                    f"emit needs a header, header stack, union or struct, got {t}", e.loc
                )

    def _call_builtin(
        self: Checker, e: ast.MethodCall, callee: ast.Member, bt: Type, scope: Scope
    ) -> Type:
        name = callee.member
        e.call = ast.CallInfo(kind="builtin", name=name, receiver=callee.expr)
        callee.type = ObjectType("function", name)
        if name in _SIZE_METHODS and not isinstance(bt, HeaderStackType):
            self._no_args(e, name)
            e.value = self._size_of(bt, name, e)
            return IntType()
        if isinstance(bt, HeaderType | HeaderUnionType) and name in _HEADER_METHODS:
            if isinstance(bt, HeaderUnionType) and name != "isValid":
                raise P4TypeError(f"header union has no method '{name}'", callee.loc)
            self._no_args(e, name)
            if name != "isValid":
                self.require_lvalue(callee.expr, f"the receiver of {name}")
            return _HEADER_METHODS[name]
        if isinstance(bt, HeaderStackType) and name in ("push_front", "pop_front"):
            if len(e.args) != 1 or e.args[0].name not in (None, "count"):
                raise P4TypeError(f"{name} expects 1 argument, got {len(e.args)}", e.loc)
            arg = e.args[0].expr
            self.expr(arg, scope)
            count = self.const_int(arg, scope, f"the argument of {name}")
            if count < 0:
                raise P4TypeError(f"{name} needs a non-negative count", arg.loc)
            self.require_lvalue(callee.expr, f"the receiver of {name}")
            e.call.args = [arg]
            return VoidType()
        raise P4TypeError(f"type {bt} has no method '{name}'", callee.loc)

    def _size_of(self, t: Type, name: str, e: ast.MethodCall) -> int:
        from softswitch.frontend.types import type_bit_width

        try:
            bits = type_bit_width(t)
        except TypeError as exc:
            raise P4TypeError(f"{name} is not defined for {t}", e.loc) from exc
        varbit = 0
        if name.startswith("max") and isinstance(t, StructLikeType):
            varbit = sum(getattr(ft, "max_width", 0) for _, ft in t.fields)
        bits += varbit
        return bits if name.endswith("Bits") else (bits + 7) // 8

    def _no_args(self, e: ast.MethodCall, what: str) -> None:
        if e.args:
            raise P4TypeError(f"{what} expects 0 arguments, got {len(e.args)}", e.loc)

    # -- constructors ---------------------------------------------------------------------------

    def check_constructor_call(
        self: Checker, e: ast.MethodCall, decl: ast.Node, scope: Scope
    ) -> Type:
        """``MyParser()`` / ``action_profile(128)`` in an argument or property position."""
        assert isinstance(e.callee, ast.PathExpression)
        name = e.callee.name
        e.callee.decl = decl
        type_args = [self.resolve_type(t, scope) for t in e.type_args]
        t, params = self.instantiable(decl, name, type_args, e.args, e.loc)
        if isinstance(decl, ast.ExternDecl):
            self.require_initializer(decl, name, e.loc)
        info = ast.CallInfo(kind="constructor", name=name, decl=decl, params=params)
        fixed = self._fixed_bindings(decl, t, type_args)
        info.type_bindings.update(fixed)
        variables = {tp.name for tp in getattr(decl, "type_params", [])} - set(fixed)
        self._bind(e, info, scope, variables, fixed, "constructor")
        self.require_constant_args(info, e.loc)
        if isinstance(t, ObjectType) and getattr(decl, "type_params", None):
            t, _ = self.specialized_instance(t, info, e.loc)
            e.callee.decl = t.decl
        if isinstance(t, ExternType) and variables:
            args = tuple(
                info.type_bindings.get(tp.name, TypeVar(tp.name)) for tp in decl.type_params
            )  # type: ignore[attr-defined]
            t = ExternType(t.name, args, t.decl)
        e.callee.type = t
        return t

    def _fixed_bindings(
        self, decl: ast.Node, t: Type, type_args: list[Type] | None = None
    ) -> dict[str, Type]:
        names = [tp.name for tp in getattr(decl, "type_params", [])]
        if isinstance(t, ExternType) and t.type_args:
            return dict(zip(names, t.type_args))
        if isinstance(t, ObjectType) and type_args:
            return dict(zip(names, type_args))  # a generic parser/control's
        return {}

    def require_constant_args(self: Checker, info: ast.CallInfo, loc: object) -> None:
        """Constructor arguments must be compile-time constants or instances."""
        for p, a in zip(info.params, info.args):
            if a is None or a.value is not None:
                continue
            if isinstance(a.type, ObjectType | ExternType):
                continue
            if isinstance(a, ast.PathExpression) and id(a.decl) in self.ctor_param_ids:
                continue  # known per instance: BlockInstance.ctor_args resolves it
            raise P4TypeError(
                f"constructor argument '{p.name}' must be a compile-time constant", a.loc
            )

    # -- argument binding -----------------------------------------------------------------------

    def _explicit_type_args(
        self: Checker,
        e: ast.MethodCall,
        type_params: list[ast.TypeParameter],
        info: ast.CallInfo,
        scope: Scope,
    ) -> None:
        if not e.type_args:
            return
        if len(e.type_args) != len(type_params):
            raise P4TypeError(
                f"'{info.name}' expects {len(type_params)} type arguments, got {len(e.type_args)}",
                e.loc,
            )
        for tp, ref in zip(type_params, e.type_args):
            t = self.resolve_type(ref, scope)
            if type(t).__name__ != "DontCareType":
                info.type_bindings[tp.name] = t

    def bind_arguments(
        self, params: list[ast.Parameter], args: list[ast.Argument], loc: object, what: str
    ) -> list[ast.Expression | None]:
        """Match `args` to `params` (positional or named; defaults and @optional filled in)."""
        named = [a for a in args if a.name is not None]
        if named and len(named) != len(args):
            raise P4TypeError(f"{what}: arguments must be all positional or all named", loc)  # type: ignore[arg-type]
        bound: dict[str, ast.Expression] = {}
        if named:
            names = {p.name for p in params}
            for a in args:
                assert a.name is not None
                if a.name not in names:
                    raise P4TypeError(f"{what} has no parameter '{a.name}'", a.loc)
                if a.name in bound:
                    raise P4TypeError(f"{what}: argument '{a.name}' given twice", a.loc)
                bound[a.name] = a.expr
        else:
            required = [p for p in params if p.default is None and not p.annotation("optional")]
            if len(args) > len(params) or len(args) < len(required):
                raise P4TypeError(f"{what} expects {len(params)} arguments, got {len(args)}", loc)  # type: ignore[arg-type]
            for p, a in zip(params, args):
                bound[p.name] = a.expr
        result: list[ast.Expression | None] = []
        for p in params:
            if p.name in bound:
                result.append(bound[p.name])
            elif p.default is not None:
                result.append(p.default)
            elif p.annotation("optional"):
                result.append(None)
            else:
                raise P4TypeError(f"{what}: missing argument for parameter '{p.name}'", loc)  # type: ignore[arg-type]
        return result

    def _bind(
        self: Checker,
        e: ast.MethodCall,
        info: ast.CallInfo,
        scope: Scope,
        variables: set[str],
        fixed: dict[str, Type],
        kind: str,
    ) -> None:
        """Bind and check the arguments of `e`, inferring `variables`; sets e.call = info."""
        what = _describe(kind, info.name)
        info.args = self.bind_arguments(info.params, e.args, e.loc, what)
        bindings = info.type_bindings
        # Arguments whose own type is known go first, so unsized literals and list expressions
        # later meet parameter types their siblings already fixed.
        deferred = []
        for p, a in zip(info.params, info.args):
            if a is None:
                continue
            pt = substitute(self._param_type(p), bindings)
            if has_type_vars(pt, variables) and self._context_typed(a):
                deferred.append((p, a))
                continue
            self._check_arg(p, a, pt, scope, bindings, variables, what)
        for p, a in deferred:
            pt = substitute(self._param_type(p), bindings)
            self._check_arg(p, a, pt, scope, bindings, variables, what)
        missing = [v for v in sorted(variables) if v not in bindings]
        if missing and any(a is not None for a in info.args):
            unresolved = [
                v
                for v in missing
                if any(has_type_vars(self._param_type(p), {v}) for p in info.params)
            ]
            if unresolved:
                raise P4TypeError(f"cannot infer type parameter '{unresolved[0]}' of {what}", e.loc)
        e.call = info

    def _param_type(self, p: ast.Parameter) -> Type:
        t = p.type_ref.resolved
        assert t is not None, f"unresolved parameter {p.name}"
        return t

    def _context_typed(self, a: ast.Expression) -> bool:
        if isinstance(a, ast.IntLiteral):
            return a.width is None
        return isinstance(a, ast.ListExpression | ast.StructExpression | ast.DontCareExpression)

    def _check_arg(
        self: Checker,
        p: ast.Parameter,
        a: ast.Expression,
        pt: Type,
        scope: Scope,
        bindings: dict[str, Type],
        variables: set[str],
        what: str,
    ) -> None:
        open_type = has_type_vars(pt, variables)
        if isinstance(a, ast.DontCareExpression):
            if p.direction != "out":
                raise P4TypeError(
                    f"'_' can only be passed to an out parameter ('{p.name}' of {what})", a.loc
                )
            a.type = pt
            return
        at = self.expr(a, scope, None if open_type else pt)
        if not p.direction and check_block_argument(p, a):
            return  # a parser/control passed to a constructor: its apply signature fits
        if open_type:
            if not unify(pt, at, bindings, variables):
                raise P4TypeError(
                    f"type mismatch for argument '{p.name}' of {what}: expected {pt}, got {at}",
                    a.loc,
                )
            pt = substitute(pt, bindings)
            if isinstance(at, IntType) and isinstance(unwrap_newtype(pt), BitType):
                self.coerce(a, pt, f"argument '{p.name}' of {what}")
        if p.direction in ("out", "inout"):
            self.require_lvalue(a, f"argument '{p.name}' of {what}")
            if a.type != pt and not has_type_vars(pt):
                raise P4TypeError(
                    f"type mismatch for {p.direction} argument '{p.name}' of {what}: "
                    f"expected {pt}, got {a.type}",
                    a.loc,
                )
            return
        if not has_type_vars(pt):
            self.coerce(a, pt, f"argument '{p.name}' of {what}")

    def _result_type(
        self,
        e: ast.MethodCall,
        rt: Type,
        info: ast.CallInfo,
        variables: set[str],
        expected: Type | None,
    ) -> Type:
        rt = substitute(rt, info.type_bindings)
        if has_type_vars(rt, variables):
            if expected is None:
                raise P4TypeError(f"cannot infer the return type of '{info.name}'", e.loc)
            unify(rt, expected, info.type_bindings, variables)
            rt = substitute(rt, info.type_bindings)
        return rt
