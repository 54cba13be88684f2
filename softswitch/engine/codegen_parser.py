"""Code generation for parsers and packet_in/packet_out: states, select, extract, emit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from softswitch.engine.codegen_expr import FnContext, key_text, mask, wrap
from softswitch.engine.codegen_types import bit_width, is_composite, unwrap
from softswitch.errors import UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend import types as t

if TYPE_CHECKING:
    from softswitch.ir.checked import BlockInstance

MAX_PARSER_STEPS = 4096  # state visits per parser run before ParserTimeout (loops only)


class ParserGen:
    """Mixin of `codegen.Generator`."""

    def packet_call(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        name = c.name
        too_short = self.error_code("PacketTooShort")
        if name == "extract":
            target = c.args[0]
            assert target is not None
            varlen = c.args[1] if len(c.args) > 1 else None
            self.extract(target, varlen)
        elif name == "lookahead":
            ty = unwrap(c.type_bindings.get("T") or e.type)
            if result is None:
                pass  # p4c-bm2-ss drops a lookahead whose value is unused: no PacketTooShort
            elif isinstance(ty, t.HeaderType | t.StructType):
                # as p4c's ExpandLookahead: one bit<W> lookahead sliced into the fields; the
                # headers in it become valid
                w = t.type_bit_width(ty)
                tmp = self.fn.fresh("lk")
                self.line(f"{tmp} = look(_pkt, _nb, _pos, {w}, {too_short})")
                self.line(f"{result} = {self.types.class_name(ty)}()")
                self.unpack_lookahead(result, ty, tmp, w)
            else:
                w = bit_width(ty)
                code = f"look(_pkt, _nb, _pos, {w}, {too_short})"
                if isinstance(ty, t.BoolType):
                    code = f"({code} != 0)"
                elif isinstance(ty, t.BitType) and ty.signed:
                    code = wrap(code, ty)
                self.line(f"{result or '_'} = {code}")
        elif name == "advance":
            arg = c.args[0]
            assert arg is not None
            amount = self.ex(arg)
            if not isinstance(arg.value, int):
                code, amount = amount, self.fn.fresh("a")
                self.line(f"{amount} = {code}")
            if not isinstance(arg.value, int) or arg.value & 7:
                # BMv2 advances by whole bytes only
                bad_arg = self.error_code("ParserInvalidArgument")
                self.line(f"if {amount} & 7: raise ParserErrorSignal({bad_arg}, _pos)")
            self.line(f"if _pos + {amount} > _nb: raise ParserErrorSignal({too_short}, _pos)")
            self.line(f"_pos += {amount}")
        elif name == "length":
            self.line(f"{result or '_'} = _nb >> 3")
        elif name == "emit":
            arg = c.args[0]
            assert arg is not None
            self.emit_value(self.ex(arg), unwrap(arg.type), key_text(arg))
        else:
            raise UnsupportedError(f"packet method '{name}'", e.loc)

    def extract(self, target: ast.Expression, varlen: ast.Expression | None) -> None:
        ty = unwrap(target.type)
        assert isinstance(ty, t.HeaderType)
        too_short = self.error_code("PacketTooShort")
        is_next = isinstance(target, ast.Member) and target.kind == "stack_next"
        # `us.next.m` of a header union stack: member m of the next union (BMv2's union_stack)
        union_next = (
            isinstance(target, ast.Member)
            and target.kind == "field"
            and isinstance(target.expr, ast.Member)
            and target.expr.kind == "stack_next"
        )
        if is_next or union_next:
            at = target.expr if union_next else target  # type: ignore[attr-defined]
            stack = self.ex(at.expr)
            st = unwrap(at.expr.type)
            assert isinstance(st, t.HeaderStackType)
            oob = self.error_code("StackOutOfBounds")
            self.line(f"if {stack}.nxt >= {st.size}: raise ParserErrorSignal({oob}, _pos)")
            h = self.fn.fresh("h")
            if union_next:
                u = self.fn.fresh("u")
                self.line(f"{u} = {stack}.h[{stack}.nxt]")
                self.line(f"{h} = {u}.{target.member}")  # type: ignore[attr-defined]
            else:
                self.line(f"{h} = {stack}.h[{stack}.nxt]")
        else:
            h = self.fn.fresh("h")
            self.line(f"{h} = {self.ex(target)}")
        fixed = ty.bit_width()
        if varlen is None:
            self.line(f"if _pos + {fixed} > _nb: raise ParserErrorSignal({too_short}, _pos)")
            v = self.fn.fresh("x")
            self.line(f"{v} = int.from_bytes(_pkt[_pos >> 3:(_pos + {fixed + 7}) >> 3], 'big')"
                      f" >> (-(_pos + {fixed}) & 7)")
            self.unpack_fields(h, ty, v, fixed)
            self.line(f"_pos += {fixed}")
        else:
            vw = self.fn.fresh("vw")
            self.line(f"{vw} = {self.ex(varlen)}")
            vmax = next(unwrap(ft).max_width for _, ft in ty.fields
                        if isinstance(unwrap(ft), t.VarbitType))
            # BMv2's extract_VL checks in this order: a length that is not whole bytes, then the
            # packet's end, then the varbit's maximum (p4c's max header bytes)
            bad_arg = self.error_code("ParserInvalidArgument")
            self.line(f"if {vw} & 7: raise ParserErrorSignal({bad_arg}, _pos)")
            total = self.fn.fresh("tw")
            self.line(f"{total} = {fixed} + {vw}")
            self.line(f"if _pos + {total} > _nb: raise ParserErrorSignal({too_short}, _pos)")
            too_long = self.error_code("HeaderTooShort")
            self.line(f"if {vw} > {vmax}: raise ParserErrorSignal({too_long}, _pos)")
            v = self.fn.fresh("x")
            self.line(f"{v} = read_bits(_pkt, _pos, {total})")
            self.unpack_varbit(h, ty, v, vw)
            self.line(f"_pos += {total}")
        self.line(f"{h}._v = True")
        if union_next:
            self.line(f"{u}._only({target.member!r})")  # type: ignore[attr-defined]
        if is_next or union_next:
            self.line(f"{stack}.nxt += 1")
        else:
            self.union_only(target)
        self.tr(repr(f"Extracting header '{key_text(target)}'"))

    def unpack_fields(self, h: str, ty: t.HeaderType, v: str, total: int) -> None:
        shift = total
        for fname, ftype, w in self.types.header_layout(ty):
            shift -= w
            code = f"({v} >> {shift}) & {mask(w)}" if shift else f"{v} & {mask(w)}"
            if isinstance(ftype, t.BitType) and ftype.signed:
                code = wrap(code, ftype)
            elif isinstance(ftype, t.BoolType):
                code = f"({code}) != 0"
            self.line(f"{h}.{fname} = {code}")

    def unpack_lookahead(self, obj: str, ty: t.StructLikeType, v: str, total: int) -> None:
        """Fill header or struct `obj` from the `total`-bit value `v` (nested structs too)."""
        shift = total
        for fname, ftype in ty.fields:
            fu = unwrap(ftype)
            w = t.type_bit_width(fu)
            shift -= w
            part = f"({v} >> {shift})" if shift else v
            if isinstance(fu, t.StructLikeType):
                self.unpack_lookahead(f"{obj}.{fname}", fu, part, w)
                continue
            code = f"{part} & {mask(w)}"
            if isinstance(fu, t.BitType) and fu.signed:
                code = wrap(code, fu)
            elif isinstance(fu, t.BoolType):
                code = f"({code}) != 0"
            self.line(f"{obj}.{fname} = {code}")
        if isinstance(ty, t.HeaderType):
            self.line(f"{obj}._v = True")

    def unpack_varbit(self, h: str, ty: t.HeaderType, v: str, vw: str) -> None:
        layout = self.types.header_layout(ty)
        vi = next(i for i, (_, ft, _) in enumerate(layout) if isinstance(ft, t.VarbitType))
        after = sum(w for _, _, w in layout[vi + 1:])
        # fields before the varbit: shift = after + vw + (widths after them, before varbit)
        for i, (fname, _ftype, w) in enumerate(layout):
            if i < vi:
                rest = sum(x for _, _, x in layout[i + 1:vi]) + after
                shift = f"({vw} + {rest})"
                self.line(f"{h}.{fname} = ({v} >> {shift}) & {mask(w)}")
            elif i == vi:
                self.line(f"{h}.{fname} = ({v} >> {after}) & ((1 << {vw}) - 1)")
                self.line(f"{h}.{fname}__w = {vw}")
            else:
                rest = sum(x for _, _, x in layout[i + 1:])
                self.line(f"{h}.{fname} = ({v} >> {rest}) & {mask(w)}")

    def emit_value(self, code: str, ty: t.Type, name: str) -> None:
        if isinstance(ty, t.HeaderType):
            layout = self.types.header_layout(ty)
            has_varbit = any(isinstance(ft, t.VarbitType) for _, ft, _ in layout)
            h = self.fn.fresh("h")
            self.line(f"{h} = {code}")
            self.line(f"if {h}._v:")
            with self.indent():
                if not has_varbit:
                    total = ty.bit_width()
                    parts = []
                    shift = total
                    for fname, ftype, w in layout:
                        shift -= w
                        f = f"{h}.{fname}"
                        if isinstance(ftype, t.BitType) and ftype.signed:
                            f = f"({f} & {mask(w)})"
                        elif isinstance(ftype, t.BoolType):
                            f = f"int({f})"
                        parts.append(f"({f} << {shift})" if shift else f)
                    self.line(f"_ap(({' | '.join(parts) or '0'}).to_bytes({total // 8}, 'big'))")
                else:
                    acc = self.fn.fresh("acc")
                    self.line(f"{acc} = 0")
                    bits = self.fn.fresh("n")
                    self.line(f"{bits} = 0")
                    for fname, ftype, w in layout:
                        if isinstance(ftype, t.VarbitType):
                            self.line(f"{acc} = ({acc} << {h}.{fname}__w) | {h}.{fname}")
                            self.line(f"{bits} += {h}.{fname}__w")
                        else:
                            self.line(f"{acc} = ({acc} << {w}) | ({h}.{fname} & {mask(w)})")
                            self.line(f"{bits} += {w}")
                    # pad a non byte-aligned total rather than fail (BMv2 needs whole bytes)
                    self.line(f"_ap(({acc} << (-{bits} & 7)).to_bytes(({bits} + 7) >> 3, 'big'))")
                self.tr(repr(f"Deparsing header '{name}'"))
        elif isinstance(ty, t.HeaderStackType):
            for i in range(ty.size):
                self.emit_value(f"{code}.h[{i}]", unwrap(ty.element), f"{name}[{i}]")
        elif isinstance(ty, t.StructLikeType):
            for fname, ftype in ty.fields:
                self.emit_value(f"{code}.{fname}", unwrap(ftype), f"{name}.{fname}")
        else:
            raise UnsupportedError(f"emit of {ty}")

    # -- parsers ------------------------------------------------------------------------------

    def parser_fn(self, block: BlockInstance) -> str:
        name = self._block_fns.get(id(block))
        if name is not None:
            return name
        decl = block.decl
        assert isinstance(decl, ast.ParserDecl)
        name = self.gname("P")
        self._block_fns[id(block)] = name
        ctx = FnContext("parser", block)
        params = ["_pkt", "_nb", "_pos"]
        outs = []
        for p in decl.params:
            pt = unwrap(p.type)
            if isinstance(pt, t.ExternType):
                ctx.env[p] = "_pkt"
                ctx.packet = p
                continue
            pname = f"p_{p.name}"
            ctx.env[p] = pname
            params.append(pname)
            if p.direction in ("out", "inout") and not is_composite(pt):
                outs.append(pname)
        ctx.ret_expr = "_pos" if not outs else "(_pos, " + ", ".join(outs) + ")"
        states = {s.name: i for i, s in enumerate(decl.states)}
        start = states.get("start", 0)
        with self.function(f"def {name}({', '.join(params)}):", ctx):
            for p in decl.params:
                if p.direction == "out" and is_composite(p.type):
                    self.line(f"{ctx.env[p]}._reset()")
            for local in decl.locals:
                if isinstance(local, ast.VariableDecl):
                    lname = f"v_{local.name}"
                    ctx.env[local] = lname
                    self.var_init(lname, local)
                elif isinstance(local, ast.ConstantDecl):
                    ctx.env[local] = self.constant_code(local)
            self.line(f"_st = {start}")
            cyclic = self.parser_has_cycle(decl)
            if cyclic:
                self.line("_steps = 0")
            self.line("while True:")
            with self.indent():
                if cyclic:
                    # a state loop that never runs out of packet would spin forever
                    self.line("_steps += 1")
                    self.line(f"if _steps > {MAX_PARSER_STEPS}: raise ParserErrorSignal("
                              f"{self.error_code('ParserTimeout')}, _pos)")
                for i, s in enumerate(decl.states):
                    self.line(f"{'if' if i == 0 else 'elif'} _st == {i}:")
                    with self.indent():
                        self.parser_state(s, states)
                self.line("else:")
                with self.indent():
                    self.line("break")
            self.line(f"return {ctx.ret_expr}")
        return name

    @staticmethod
    def parser_has_cycle(decl: ast.ParserDecl) -> bool:
        succ: dict[str, list[str]] = {}
        for st in decl.states:
            tr = st.transition
            if isinstance(tr, ast.PathExpression):
                succ[st.name] = [tr.name]
            elif isinstance(tr, ast.SelectExpression):
                succ[st.name] = [c.state for c in tr.cases]
            else:
                succ[st.name] = []
        done: set[str] = set()
        active: set[str] = set()

        def visit(name: str) -> bool:
            if name in active:
                return True
            if name in done or name not in succ:
                return False
            active.add(name)
            found = any(visit(n) for n in succ[name])
            active.discard(name)
            done.add(name)
            return found

        return any(visit(n) for n in succ)

    def parser_state(self, s: ast.ParserState, states: dict[str, int]) -> None:
        self.tr(repr(f"Parser state '{s.name}'"))
        self.fn.state = s.name
        for st in s.statements:
            self.stmt(st)
        tr = s.transition
        if tr is None:
            self.goto("reject", states)
        elif isinstance(tr, ast.PathExpression):
            self.goto(tr.name, states)
        elif isinstance(tr, ast.SelectExpression):
            self.select(tr, states)
        else:
            raise UnsupportedError("transition", tr.loc)

    def goto(self, target: str, states: dict[str, int]) -> None:
        if target == "accept":
            self.line("break")
        elif target == "reject":
            self.line("raise ParserErrorSignal(-1, _pos)")
        else:
            self.line(f"_st = {states[target]}")

    def select(self, sel: ast.SelectExpression, states: dict[str, int]) -> None:
        keys = []
        widths = []
        for i, k in enumerate(sel.selectors):
            kv = f"_k{i}"
            code = self.ex(k)
            kt = unwrap(k.type)
            if isinstance(kt, t.BoolType):
                code = f"int({code})"
            elif isinstance(kt, t.BitType) and kt.signed:
                code = f"({code} & {mask(kt.width)})"
            self.line(f"{kv} = {code}")
            keys.append(kv)
            widths.append(bit_width(kt) if not isinstance(kt, t.IntType) else 64)
        if self.trace:
            self.tr(f"{f'Parser state {self.fn.state!r}: key is '!r} + ' '.join("
                    "format(x, 'x') for x in (" + ", ".join(keys) + ",))")
        first = True
        for case in sel.cases:
            elems = case.keyset.elements if isinstance(case.keyset, ast.ListExpression) and len(
                keys) > 1 else [case.keyset]
            conds = []
            if len(elems) == 1 and isinstance(elems[0], ast.PathExpression) and isinstance(
                    elems[0].decl, ast.ValueSetDecl):
                vs = self.value_set_global(elems[0].decl, self.fn.block)
                conds.append(f"{vs}.match(({', '.join(keys)},))")
            else:
                for kv, w, el in zip(keys, widths, elems):
                    c = self.keyset_cond(kv, w, el)
                    if c:
                        conds.append(c)
            cond = " and ".join(conds) if conds else "True"
            self.line(f"{'if' if first else 'elif'} {cond}:")
            first = False
            with self.indent():
                self.goto(case.state, states)
        if first:
            self.line(f"raise ParserErrorSignal({self.error_code('NoMatch')}, _pos)")
        else:
            self.line("else:")
            with self.indent():
                self.line(f"raise ParserErrorSignal({self.error_code('NoMatch')}, _pos)")

    def keyset_cond(self, kv: str, width: int, el: ast.Expression) -> str:
        full = mask(width)
        if isinstance(el, ast.DefaultExpression):
            return ""
        if isinstance(el, ast.MaskExpression):
            return f"({kv} & {self.ex(el.right)}) == ({self.ex(el.left)} & {self.ex(el.right)})"
        if isinstance(el, ast.RangeExpression):
            return f"{self.ex(el.left)} <= {kv} <= {self.ex(el.right)}"
        if isinstance(el, ast.PathExpression) and isinstance(el.decl, ast.ValueSetDecl):
            vs = self.value_set_global(el.decl, self.fn.block)
            return f"{vs}.match(({kv},))"
        code = self.ex(el)
        if isinstance(unwrap(el.type), t.BoolType):
            code = f"int({code})"
        elif el.value is not None and isinstance(el.value, int) and el.value < 0:
            code = str(el.value & full)
        return f"{kv} == {code}"

    # -- externs ------------------------------------------------------------------------------
