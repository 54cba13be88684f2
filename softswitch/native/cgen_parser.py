"""C code for parsers and packet_in/packet_out: states, select, extract, lookahead, emit.

The mirror of engine/codegen_parser.py: the same error codes at the same positions (a parser
error stores its code and the bit position in R and returns SS_PERR), the 4096-visit bound on
parsers with a state cycle, headers emitted whole into the output buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from softswitch.engine.codegen_parser import MAX_PARSER_STEPS, ParserGen
from softswitch.errors import NativeUnsupported
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.names import qualified_name
from softswitch.native.cgen_expr import CFnContext
from softswitch.native.cgen_types import (
    c_literal,
    is_composite,
    is_wide,
    limbs,
    scalar_width,
    unwrap,
)

if TYPE_CHECKING:
    from softswitch.ir.checked import BlockInstance
    from softswitch.native.cgen import NativeExtern


def perr(code: str) -> str:
    return f"{{ R->perr = (int32_t)({code}); R->ppos = *_pp; _rc = SS_PERR; goto _end; }}"


class CParserGen:
    """Mixin of `cgen.CGenerator`."""

    def packet_call(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        name = c.name
        too_short = self.error_code("PacketTooShort")
        if name == "extract":
            target = c.args[0]
            assert target is not None
            self.extract(target, c.args[1] if len(c.args) > 1 else None)
        elif name == "lookahead":
            ty = unwrap(c.type_bindings.get("T") or e.type)
            if result is None:
                return  # p4c-bm2-ss drops a lookahead whose value is unused
            w = t.type_bit_width(ty)
            self.line(f"if ((uint64_t)*_pp + {w} > _nb) {perr(str(too_short))}")
            if isinstance(ty, t.HeaderType | t.StructType):
                # as p4c's ExpandLookahead: one lookahead of the whole width, sliced
                self.unpack_at(result, ty, "*_pp")
            elif is_wide(ty):
                self.line(f"ss_get_limbs({result}.l, {limbs(w)}, _pkt, *_pp, {w});")
            else:
                get = "ss_get" if w <= 64 else "ss_get128"
                code = f"{get}(_pkt, *_pp, {w})"
                if isinstance(ty, t.BoolType):
                    code = f"({code} != 0)"
                self.line(f"{result} = {code};")
        elif name == "advance":
            arg = c.args[0]
            assert arg is not None
            amount = self.tmp("a", "uint64_t", self.ex(arg))
            if not isinstance(arg.value, int) or arg.value & 7:
                bad_arg = self.error_code("ParserInvalidArgument")
                self.line(f"if ({amount} & 7) {perr(str(bad_arg))}")
            self.line(f"if ((uint64_t)*_pp + {amount} > _nb) {perr(str(too_short))}")
            self.line(f"*_pp += (uint32_t){amount};")
        elif name == "length":
            if result is not None:
                self.line(f"{result} = _nb >> 3;")
        elif name == "emit":
            arg = c.args[0]
            assert arg is not None
            self.emit_value(self.ex(arg), unwrap(arg.type))
        else:
            raise NativeUnsupported(f"packet method '{name}'", e.loc)

    def unpack_at(self, obj: str, ty: t.StructLikeType, pos: str) -> None:
        """Fill header/struct `obj` from the packet bits at `pos` (nested structs too)."""
        off = 0
        for fname, ftype in ty.fields:
            fu = unwrap(ftype)
            w = t.type_bit_width(fu)
            if isinstance(fu, t.StructLikeType):
                self.unpack_at(f"{obj}.{fname}", fu, f"{pos} + {off}")
            elif is_wide(fu):
                self.line(f"ss_get_limbs({obj}.{fname}.l, {limbs(w)}, _pkt, {pos} + {off}, {w});")
            else:
                get = "ss_get" if scalar_width(fu) <= 64 else "ss_get128"
                code = f"{get}(_pkt, {pos} + {off}, {w})"
                if isinstance(fu, t.BoolType):
                    code = f"({code} != 0)"
                self.line(f"{obj}.{fname} = {code};")
            off += w
        if isinstance(ty, t.HeaderType):
            self.line(f"{obj}._v = 1;")

    def extract(self, target: ast.Expression, varlen: ast.Expression | None = None) -> None:
        ty = unwrap(target.type)
        if not isinstance(ty, t.HeaderType):
            raise NativeUnsupported(f"extract of {ty}", target.loc)
        too_short = self.error_code("PacketTooShort")
        is_next = isinstance(target, ast.Member) and target.kind == "stack_next"
        # `us.next.m` of a header union stack: member m of the next union (BMv2's union_stack)
        union_next = (isinstance(target, ast.Member) and target.kind == "field"
                      and isinstance(target.expr, ast.Member)
                      and target.expr.kind == "stack_next")
        h = self.fn.fresh("h")
        hc = self.types.ctype(ty)
        if is_next or union_next:
            assert isinstance(target, ast.Member)
            at = target.expr if union_next else target
            assert isinstance(at, ast.Member)
            stack = self.ex(at.expr)
            st = unwrap(at.expr.type)
            assert isinstance(st, t.HeaderStackType)
            oob = self.error_code("StackOutOfBounds")
            self.line(f"if ({stack}.nxt >= {st.size}) {perr(str(oob))}")
            elem = f"{stack}.h[{stack}.nxt]"
            self.line(f"{hc} *{h} = &{elem}{'.' + target.member if union_next else ''};")
        else:
            self.line(f"{hc} *{h} = &{self.ex(target)};")
        fixed = ty.bit_width()
        varbits = [f for f, ft in ty.fields if isinstance(unwrap(ft), t.VarbitType)]
        if varlen is None:
            if varbits:
                raise NativeUnsupported("extract of a header with a varbit field without a "
                                        "length", target.loc)
            self.line(f"if ((uint64_t)*_pp + {fixed} > _nb) {perr(str(too_short))}")
            self.unpack_at(f"(*{h})", ty, "*_pp")
            self.line(f"*_pp += {fixed};")
        else:
            self.extract_varbit(h, ty, varlen)
        if union_next:
            assert isinstance(target, ast.Member)
            u = unwrap(target.expr.type)
            assert isinstance(u, t.HeaderUnionType)
            self.line(self.types.union_only(u, elem, target.member))
        if is_next or union_next:
            self.line(f"{stack}.nxt += 1;")
        else:
            self.union_member_set(target, None)

    def extract_varbit(self, h: str, ty: t.HeaderType, varlen: ast.Expression) -> None:
        """Two-argument extract: BMv2's extract_VL checks in this order: a length that is not
        whole bytes, then the packet's end, then the varbit's maximum (p4c's max header
        bytes); the header is written only when all pass."""
        vw = self.tmp("vw", "uint64_t", f"(uint64_t)({self.ex(varlen)})")
        vmax = next(unwrap(ft).max_width for _, ft in ty.fields  # type: ignore[attr-defined]
                    if isinstance(unwrap(ft), t.VarbitType))
        fixed = ty.bit_width()
        self.line(f"if ({vw} & 7) {perr(str(self.error_code('ParserInvalidArgument')))}")
        self.line(f"if ((uint64_t)*_pp + {fixed} + {vw} > _nb) "
                  f"{perr(str(self.error_code('PacketTooShort')))}")
        self.line(f"if ({vw} > {vmax}) {perr(str(self.error_code('HeaderTooShort')))}")
        pos = self.tmp("vp", "uint32_t", "*_pp")
        for fname, ftype, w in self.types.header_layout(ty):
            if isinstance(ftype, t.VarbitType):
                self.line(f"(*{h}).{fname}.w = (uint32_t){vw};")
                self.line(f"ss_get_limbs((*{h}).{fname}.d, {limbs(ftype.max_width)}, _pkt, "
                          f"{pos}, (unsigned){vw});")
                self.line(f"{pos} += (uint32_t){vw};")
                continue
            if is_wide(ftype):
                self.line(f"ss_get_limbs((*{h}).{fname}.l, {limbs(w)}, _pkt, {pos}, {w}); "
                          f"{pos} += {w};")
                continue
            get = "ss_get" if w <= 64 else "ss_get128"
            code = f"{get}(_pkt, {pos}, {w})"
            if isinstance(ftype, t.BoolType):
                code = f"({code} != 0)"
            self.line(f"(*{h}).{fname} = {code};")
            self.line(f"{pos} += {w};")
        self.line(f"(*{h})._v = 1;")
        self.line(f"*_pp = {pos};")

    def emit_value(self, code: str, ty: t.Type) -> None:
        if isinstance(ty, t.HeaderType):
            layout = self.types.header_layout(ty)
            if any(isinstance(ft, t.VarbitType) for _, ft, _ in layout):
                self.emit_varbit_header(code, layout)
                return
            total = sum(w for _, _, w in layout)
            if total % 8:
                raise NativeUnsupported(f"emit of header '{ty.name}' of {total} bits "
                                        "(not whole bytes)")
            nbytes = total // 8
            self.line(f"if ({code}._v) {{")
            with self.indent():
                self.line(f"if (R->olen + {nbytes} > R->ocap) {{ _rc = SS_FULL; goto _end; }}")
                self.line("{")
                with self.indent():
                    self.line("uint8_t *_o = R->out + R->olen;")
                    self.line(f"memset(_o, 0, {nbytes});")
                    off = 0
                    for fname, ftype, w in layout:
                        if is_wide(ftype):
                            self.line(f"ss_put_limbs(_o, {off}, {w}, {code}.{fname}.l);")
                        elif w:
                            self.line(f"ss_put(_o, {off}, {w}, (u128){code}.{fname});")
                        off += w
                    self.line(f"R->olen += {nbytes};")
                self.line("}")
            self.line("}")
        elif isinstance(ty, t.HeaderStackType):
            for i in range(ty.size):
                self.emit_value(f"{code}.h[{i}]", unwrap(ty.element))
        elif isinstance(ty, t.StructLikeType):  # structs, and a union's members in order
            for fname, ftype in ty.fields:
                self.emit_value(f"{code}.{fname}", unwrap(ftype))
        else:
            raise NativeUnsupported(f"emit of {ty}")

    def emit_varbit_header(self, code: str, layout: list[tuple[str, t.Type, int]]) -> None:
        """A header with a varbit field: its fields at their current widths, the last byte
        zero-padded when the total is not whole bytes (as the Python engine)."""
        fixed = sum(w for _, _, w in layout)
        vbits = " + ".join(f"{code}.{f}.w" for f, ft, _ in layout
                           if isinstance(ft, t.VarbitType))
        self.line(f"if ({code}._v) {{")
        with self.indent():
            self.line(f"uint32_t _nbits = {fixed} + {vbits}, _nby = (_nbits + 7) >> 3, _off = 0;")
            self.line("if (R->olen + _nby > R->ocap) { _rc = SS_FULL; goto _end; }")
            self.line("uint8_t *_o = R->out + R->olen;")
            self.line("memset(_o, 0, _nby);")
            for fname, ftype, w in layout:
                if isinstance(ftype, t.VarbitType):
                    self.line(f"ss_put_limbs(_o, _off, {code}.{fname}.w, {code}.{fname}.d);")
                    self.line(f"_off += {code}.{fname}.w;")
                elif is_wide(ftype):
                    self.line(f"ss_put_limbs(_o, _off, {w}, {code}.{fname}.l); _off += {w};")
                elif w:
                    self.line(f"ss_put(_o, _off, {w}, (u128){code}.{fname}); _off += {w};")
            self.line("R->olen += _nby;")
        self.line("}")

    # -- parsers ------------------------------------------------------------------------------

    def parser_fn(self, block: BlockInstance) -> str:
        name = self._block_fns.get(id(block))
        if name is not None:
            return name
        decl = block.decl
        assert isinstance(decl, ast.ParserDecl)
        name = self.gname("P")
        self._block_fns[id(block)] = name
        ctx = CFnContext("parser", block)
        params = ["I_t *R", "const uint8_t *_pkt", "uint32_t _nb", "uint32_t *_pp"]
        for p in decl.params:
            pt = unwrap(p.type)
            if isinstance(pt, t.ExternType):
                ctx.env[p] = ""
                ctx.packet = p
                continue
            ct = self.types.ctype(pt)
            if is_composite(pt) or p.direction in ("out", "inout"):
                params.append(f"{ct} *p_{p.name}")
                ctx.env[p] = f"(*p_{p.name})"
            else:
                params.append(f"{ct} p_{p.name}")
                ctx.env[p] = f"p_{p.name}"
        states = {s.name: i for i, s in enumerate(decl.states)}
        start = states.get("start", 0)
        with self.function(f"{name}({', '.join(params)})", ctx):
            for p in decl.params:
                if p.direction == "out" and is_composite(p.type):
                    self.line(f"memset(p_{p.name}, 0, sizeof *p_{p.name});")
                elif p.direction == "out" and not isinstance(unwrap(p.type), t.ExternType):
                    self.line(f"*p_{p.name} = 0;")
            for local in decl.locals:
                if isinstance(local, ast.VariableDecl):
                    lname = f"v_{local.name}"
                    ctx.env[local] = lname
                    self.var_init(lname, local)
                elif isinstance(local, ast.ConstantDecl):
                    ctx.env[local] = self.constant_code(local)
            cyclic = ParserGen.parser_has_cycle(decl)
            self.line("uint32_t _steps = 0; (void)_steps;")
            self.line(f"goto st_{start};")
            timeout = self.error_code("ParserTimeout")
            for i, s in enumerate(decl.states):
                self.out.append(f"st_{i}: {{")
                if cyclic:
                    # a state loop that never runs out of packet would spin forever
                    self.line(f"if (++_steps > {MAX_PARSER_STEPS}) {perr(str(timeout))}")
                self.parser_state(s, states)
                self.line("}")
        return name

    def parser_state(self, s: ast.ParserState, states: dict[str, int]) -> None:
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
            raise NativeUnsupported("transition", tr.loc)

    def goto(self, target: str, states: dict[str, int]) -> None:
        if target == "accept":
            self.line("goto _end;")
        elif target == "reject":
            self.line(perr("-1"))
        else:
            self.line(f"goto st_{states[target]};")

    def select(self, sel: ast.SelectExpression, states: dict[str, int]) -> None:
        keys = []
        for k in sel.selectors:
            kt = unwrap(k.type)
            code = self.ex(k)
            ct = "u128" if not isinstance(kt, t.BoolType | t.IntType) and \
                scalar_width(kt) > 64 else "uint64_t"
            keys.append(self.tmp("k", ct, f"({ct}){code}"))
        no_match = perr(str(self.error_code("NoMatch")))
        for case in sel.cases:
            elems = case.keyset.elements if isinstance(case.keyset, ast.ListExpression) and len(
                keys) > 1 else [case.keyset]
            conds = []
            if len(elems) == 1 and isinstance(elems[0], ast.PathExpression) and isinstance(
                    elems[0].decl, ast.ValueSetDecl):
                conds.append(self.value_set_cond(keys, elems[0].decl))  # the whole key tuple
            else:
                for kv, el in zip(keys, elems):
                    cond = self.keyset_cond(kv, el)
                    if cond:
                        conds.append(cond)
            cond = " && ".join(conds) if conds else "1"
            self.line(f"if ({cond}) {{")
            with self.indent():
                self.goto(case.state, states)
            self.line("}")
        self.line(no_match)

    def value_set_cond(self, keys: list[str], decl: ast.ValueSetDecl) -> str:
        """A value set matching the select keys `keys` (its cells in R->ext)."""
        x = self.value_set_slot(decl)
        ks = self.fn.fresh("vk")
        self.line(f"u128 {ks}[{len(keys)}] = {{{', '.join(f'(u128){k}' for k in keys)}}};")
        return (f"ss_vset_match((const uint64_t *)R->ext[{x.slot}], {x.width}, {ks}, "
                f"{len(keys)})")

    def value_set_slot(self, decl: ast.ValueSetDecl) -> NativeExtern:
        """The value set's slot (`width`: its components), named as the Python engine names
        it (codegen.value_set_global)."""
        from softswitch.native.cgen import NativeExtern

        block = self.fn.block
        key = (id(decl), id(block) if block is not None else 0)
        found = self._extern_slots.get(key)
        if found is not None:
            return found
        et = unwrap(decl.element_type.resolved)
        ncomp = len(et.fields) if isinstance(et, t.StructLikeType) else 1
        x = NativeExtern(qualified_name(decl, block.path if block else None), "value_set",
                         self.ext_slot(), int(decl.size.value or 0), ncomp)
        self.externs.append(x)
        self._extern_slots[key] = x
        return x

    def keyset_cond(self, kv: str, el: ast.Expression) -> str:
        if isinstance(el, ast.DefaultExpression):
            return ""
        if isinstance(el, ast.MaskExpression):
            return f"(({kv} & {self.ex(el.right)}) == ({self.ex(el.left)} & {self.ex(el.right)}))"
        if isinstance(el, ast.RangeExpression):
            return f"({self.ex(el.left)} <= {kv} && {kv} <= {self.ex(el.right)})"
        if isinstance(el, ast.PathExpression) and isinstance(el.decl, ast.ValueSetDecl):
            return self.value_set_cond([kv], el.decl)
        code = self.ex(el)
        if el.value is not None and isinstance(el.value, int) and not isinstance(
                el.value, bool) and el.value < 0:
            code = c_literal(el.value, scalar_width(el.type))
        return f"({kv} == {code})"
