"""C code for the TNA externs (engine/codegen_tna.py's extern methods, bit-exact with
engine/tna_externs.py): Register/RegisterAction (its apply compiled like an action of the
declaring control; an index past the size reads the initial value and stores nothing), Counter
and DirectCounter (+ the FCS bytes in R->plen; a direct counter counts the entry the table hit,
``R->hit``, when the action calls count()), Hash (bf-utils CRCs, IDENTITY, the RANDOM matrix,
runtime/ss_tna.h), Random (Python's Random(0) in R->mt), the parser Checksum and ParserCounter
(cells in R->ext the parse entry resets), the deparser's Checksum.update, Mirror/Resubmit/Digest
(requests in R the pipeline turns into TnaRunState's), port_metadata_unpack, Meter and
DirectMeter (runtime/ss_meters.c's cells; TNA's colour values, pre-coloured execute), DirectRegister
and DirectRegisterAction (the cell in the hit ``ss_entry``), ActionProfile and ActionSelector (the
v1model C profiles, the selector hashing with its TnaHash)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from softswitch.engine.codegen import Generator
from softswitch.engine.codegen_tna import PORT_METADATA_BITS, TnaGenerator
from softswitch.engine.tna_objects import _colors, _counter_kind, _hash, _meter_kind
from softswitch.errors import NativeUnsupported
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.names import qualified_name
from softswitch.native.cgen_expr import CFnContext, signed_width
from softswitch.native.cgen_externs import MAX_DIGESTS, DigestSite
from softswitch.native.cgen_types import bit_width, c_literal, scalar_width, unwrap

if TYPE_CHECKING:
    pass

#: R->req bits of the TNA deparser externs (after ss_prog.h's)
REQ_MIRROR, REQ_RESUBMIT_TNA = 32, 64
#: bytes kept of a Mirror/Resubmit header (R->mir, R->res)
EMIT_BYTES = 256
#: ext kinds whose cells reset at the start of each parse
PARSE_STATE = ("tna_csum", "tna_pcnt")


@dataclass
class TnaExtern:
    """What a TNA extern instance needs beyond NativeExtern (`native`): a register's initial
    cell and struct fields, a Hash's parameters."""

    native: Any
    args: dict[str, Any] = field(default_factory=dict)


class CTnaExternGen:
    """Mixin of `cgen_tna.CTnaGenerator`."""

    def extern_slot(self, decl: ast.InstanceDecl) -> Any:
        et = decl.resolved
        kind = et.name if isinstance(et, t.ExternType) else ""
        if kind not in ("Register", "Counter", "Hash", "Checksum", "ParserCounter", "Meter",
                        "DirectMeter", "DirectRegister", "ActionProfile", "ActionSelector"):
            raise NativeUnsupported(f"extern '{kind}'", decl.loc)
        return self.tna_slot(decl, kind).native

    def tna_slot(self, decl: ast.InstanceDecl, kind: str) -> TnaExtern:
        from softswitch.native.cgen import NativeExtern

        key, in_block, cp_name = self.instance_of(decl)
        found = self.tna_externs.get(key)
        if found is not None:
            return found
        et = decl.resolved
        assert isinstance(et, t.ExternType)
        args = Generator.ctor_args(self, decl, in_block)  # type: ignore[arg-type]
        targs = et.type_args
        extra: dict[str, Any] = {}
        if kind in ("Register", "DirectRegister"):
            cell = unwrap(targs[0]) if targs else t.BitType(32)
            init = dict(zip((p.name for p in decl.ctor_params), decl.ctor_args)).get(
                "initial_value")
            initial = TnaGenerator.const_cell(self, init, cell) if init is not None else 0  # type: ignore[arg-type]
            width = bit_width(cell)
            if width > 128:
                raise NativeUnsupported(f"register cells of {width} bits", decl.loc)
            extra = {"cell": cell, "initial": initial & ((1 << width) - 1)}
            if kind == "Register":
                slot = sum(1 for x in self.externs if x.kind == "register")
                x = NativeExtern(cp_name, "register", slot, int(args.get("size") or 0), width,
                                 isinstance(cell, t.BitType) and cell.signed)
            else:  # its cells are in the entries (ss_entry.dreg)
                x = NativeExtern(cp_name, "tna_dreg", self.ext_slot(), 1, width)
        elif kind == "Counter":
            slot = sum(1 for x in self.externs if x.kind == "counter")
            x = NativeExtern(cp_name, "counter", slot, int(args.get("size") or 0),
                             counter_type=_counter_kind(args.get("type")))
        elif kind == "Hash":
            spec = dict(args)
            spec["width"] = bit_width(targs[0]) if targs else 32
            poly = dict(zip((p.name for p in decl.ctor_params), decl.ctor_args)).get("poly")
            if poly is not None:
                spec["poly"] = TnaGenerator.crc_polynomial(self, poly)  # type: ignore[arg-type]
            extra = {"hash": self.hash_params(_hash(spec, cp_name))}
            x = NativeExtern(cp_name, "tna_hash", self.ext_slot(), 1)
        elif kind in ("Meter", "DirectMeter"):
            mkind = _meter_kind(args.get("type"))
            x = NativeExtern(cp_name, "meter" if kind == "Meter" else "direct_meter",
                             self.ext_slot(), int(args.get("size") or 1) if kind == "Meter" else 1,
                             counter_type=mkind)
            extra = {"colors": _colors(args)}
        elif kind in ("ActionProfile", "ActionSelector"):
            extra = self.selector_hash(decl) if kind == "ActionSelector" else {}
            x = NativeExtern(cp_name, "action_selector" if extra else "action_profile",
                             self.ext_slot(), 1, width=-1)
        else:
            x = NativeExtern(cp_name, "tna_csum" if kind == "Checksum" else "tna_pcnt",
                             self.ext_slot(), 2)
        self.externs.append(x)
        found = self.tna_externs[key] = TnaExtern(x, extra)
        return found

    def selector_hash(self, decl: ast.InstanceDecl) -> dict[str, Any]:
        """An ActionSelector's hash: its Hash instance's parameters and RANDOM columns
        (`hash`, `cols`: the TnaExtern holding them), or an inline ``Hash<W>(...)``'s."""
        h = dict(zip((p.name for p in decl.ctor_params), decl.ctor_args)).get("hash")
        if isinstance(h, ast.PathExpression) and isinstance(h.decl, ast.InstanceDecl):
            found = self.tna_slot(h.decl, "Hash")
            return {"hash": found.args["hash"], "cols": found}
        if isinstance(h, ast.MethodCall) and h.call is not None:
            spec = TnaGenerator.inline_hash(self, h)  # type: ignore[arg-type]
            name = f"{decl.name}.hash"
            from softswitch.native.cgen import NativeExtern

            x = NativeExtern(name, "tna_hash", self.ext_slot(), 1)
            self.externs.append(x)
            return {"hash": self.hash_params(_hash(spec, name)), "cols": TnaExtern(x)}
        raise NativeUnsupported(f"ActionSelector '{decl.name}' without a Hash", decl.loc)

    def crc_polynomial(self, e: ast.Expression) -> dict[str, Any]:
        return TnaGenerator.crc_polynomial(self, e)  # type: ignore[arg-type]

    def profile_choice(self, profile: Any, sel_keys: list[ast.KeyElement]) -> None:
        """On a hit, the entry's member, or the member its selector's TnaHash of the selector
        fields' bytes picks (engine/codegen_tables.py: invalid headers left out); none: the
        default action."""
        sel = next((x for x in self.tna_externs.values() if x.native is profile), None)
        p = f"(ss_profile *)R->ext[{profile.slot}]"
        self.line(f"if (_e->member >= 0) _x = ss_profile_member({p}, _e->member);")
        self.line("else {")
        with self.indent():
            if sel is not None and sel.args:
                leaves = [leaf for k in sel_keys for leaf in self.checksum_leaves(k.expr)]
                nbits = (sum(w for _, _, w in leaves) + 7) // 8 * 8
                hp, cols = sel.args["hash"], sel.args["cols"].native
                cols.size = max(cols.size, 1 + nbits)
                colp = f"(uint64_t *)R->ext[{cols.slot}]" if hp["random"] else "NULL"
                self.leaf_data(leaves)
                self.line(f"_x = ss_profile_choose({p}, _e->group, ss_tna_select({hp['cfg']}, "
                          f"{hp['random']}, {hp['width']}, {hp['msb']}, {hp['extend']}, "
                          f"{colp}, _fv, _fw, _fn));")
            else:
                self.line("_x = NULL;")
        self.line("}")
        self.line("if (!_x) _x = ss_table_default(_t);")

    def hash_params(self, h: Any) -> dict[str, Any]:
        """The C form of a TnaHash: its CRC config (a static ss_crc_config), RANDOM or not."""
        if h.width > 64:
            raise NativeUnsupported(f"Hash results of {h.width} bits")
        cfg = "NULL"
        if h._crc is not None:
            c = h._crc.config
            cfg = self.gname("HCFG")
            self.funcs.insert(0, f"static const ss_crc_config {cfg} = {{{c.width}, "
                                 f"{c.polynomial:#x}ULL, {c.initial_remainder:#x}ULL, "
                                 f"{c.final_xor_value:#x}ULL, {int(c.data_reflected)}, "
                                 f"{int(c.remainder_reflected)}}};")
            cfg = f"&{cfg}"
        return {"cfg": cfg, "random": int(h.algorithm == "RANDOM"), "width": h.width,
                "msb": int(h.msb), "extend": int(h.extend)}

    # -- register cells -----------------------------------------------------------------------

    @staticmethod
    def cell_fields(cell: t.StructLikeType) -> list[tuple[str, int, int]]:
        """(field, width, shift) of a struct cell's fields in the packed integer, first field
        highest (codegen_tna.cell_to_value)."""
        shift = sum(bit_width(ft) for _, ft in cell.fields)
        out = []
        for fname, ft in cell.fields:
            w = bit_width(ft)
            shift -= w
            out.append((fname, w, shift))
        return out

    def cell_get(self, raw: str, cell: t.Type) -> str:
        """The value of a stored cell `raw` (a struct: its fields from the packed integer)."""
        if not isinstance(cell, t.StructLikeType):
            return raw
        parts = [f".{f} = (uint64_t)(({raw}) >> {shift}) & {c_literal((1 << w) - 1, 64)}"
                 for f, w, shift in self.cell_fields(cell)]
        return f"(({self.types.ctype(cell)}){{{', '.join(parts)}}})"

    def cell_put(self, value: str, cell: t.Type) -> str:
        if not isinstance(cell, t.StructLikeType):
            return value
        return "(" + " | ".join(
            f"(((u128)({value}.{f}) & {c_literal((1 << w) - 1, 128)}) << {shift})"
            for f, w, shift in self.cell_fields(cell)) + ")"

    def register_access(self, reg: TnaExtern) -> tuple[str, str, str]:
        """(raw C type, cells pointer, initial constant) of a register."""
        x = reg.native
        raw = "u128" if x.width > 64 else "uint64_t"
        return raw, f"(({raw} *)R->reg[{x.slot}])", c_literal(reg.args["initial"], x.width)

    def store_cell(self, reg: TnaExtern, i: str, value: str) -> None:
        raw, cells, _ = self.register_access(reg)
        x = reg.native
        v = self.tmp("rv", raw, f"({raw})({self.cell_put(value, reg.args['cell'])})")
        self.line(f"if ({i} < {x.size}) {{ {cells}[{i}] = {v}; "
                  f"if (R->reg_obs[{x.slot}]) ss_observed(R, {x.slot}, {i}, {v}); }}")

    def register_action_fn(self, decl: ast.InstanceDecl, cell: t.Type, out_t: t.Type | None
                           ) -> tuple[str, str]:
        """The C function of a RegisterAction's apply, and the context arguments to call it
        with: ``RA(ctx..., cell *a_value, out *a_rv)``, compiled like an action of the control
        declaring it."""
        block = self.fn.block
        own = block if block is not None and decl in block.decl.locals else None
        key = (id(decl), id(own))
        found = self.ra_fns.get(key)
        if found is not None:
            return found
        impl = next((f for f in decl.initializer if f.name == "apply"), None)
        if impl is None:
            raise NativeUnsupported(f"'{decl.name}' has no apply implementation", decl.loc)
        name = self.gname("RA")
        if own is not None:
            bctx = self.block_context(own)
            ctx = CFnContext("action", own, ctx_args=bctx.ctx_args, ctx_params=bctx.ctx_params)
            ctx.env.update(bctx.env)
        else:
            ctx = CFnContext("action", None, ctx_args="R", ctx_params="I_t *R")
        self.ra_fns[key] = (name, ctx.ctx_args)
        ctx.env[impl.params[0]] = "(*a_value)"
        out_ct = self.types.ctype(out_t) if out_t is not None else "uint64_t"
        if len(impl.params) > 1:
            ctx.env[impl.params[1]] = "(*a_rv)"
        sig = f"{name}({ctx.ctx_params}, {self.types.ctype(cell)} *a_value, {out_ct} *a_rv)"
        with self.function(sig, ctx):
            self.block(impl.body)
        return name, ctx.ctx_args

    def dreg_access(self, reg: TnaExtern) -> tuple[str, str, str]:
        """(the hit entry, its cell's raw value or the initial one, the raw C type) of a
        DirectRegister: the cell of the entry the last table apply hit (R->hit)."""
        raw = "u128" if reg.native.width > 64 else "uint64_t"
        init = c_literal(reg.args["initial"], reg.native.width)
        h = self.tmp("rh", "ss_entry *", "(ss_entry *)R->hit")
        cur = (f"((u128)({h})->dreg[1] << 64 | ({h})->dreg[0])" if raw == "u128"
               else f"({h})->dreg[0]")
        return h, f"({h} && {h}->dreg_set ? ({raw}){cur} : ({raw}){init})", raw

    def dreg_store(self, h: str, raw: str, value: str) -> None:
        v = self.tmp("rv", raw, f"({raw})({value})")
        hi = f"(uint64_t)({v} >> 64)" if raw == "u128" else "0"
        self.line(f"if ({h}) {{ {h}->dreg[0] = (uint64_t){v}; {h}->dreg[1] = {hi}; "
                  f"{h}->dreg_set = 1; }}")

    def execute_register_action(self, decl: ast.InstanceDecl, c: ast.CallInfo,
                                index: ast.Expression | None, result: str | None) -> None:
        et = decl.resolved
        assert isinstance(et, t.ExternType)
        targs = et.type_args
        cell = unwrap(targs[0]) if targs else t.BitType(32)
        out_t = targs[-1] if len(targs) >= 2 else None
        reg_arg = dict(zip((p.name for p in decl.ctor_params), decl.ctor_args)).get("reg")
        if not (isinstance(reg_arg, ast.PathExpression)
                and isinstance(reg_arg.decl, ast.InstanceDecl)):
            raise NativeUnsupported(f"RegisterAction '{decl.name}' on a register that is not "
                                    "a named instance", decl.loc)
        rk = reg_arg.decl.resolved
        direct = index is None
        want = "DirectRegister" if direct else "Register"
        if not (isinstance(rk, t.ExternType) and rk.name == want):
            raise NativeUnsupported(f"{et.name} '{decl.name}' on a {rk}", decl.loc)
        reg = self.tna_slot(reg_arg.decl, want)
        fn, ctx_args = self.register_action_fn(decl, cell, out_t)
        out_ct = self.types.ctype(out_t) if out_t is not None else "uint64_t"
        if index is None:  # the cell of the entry the table hit
            h, cur, raw = self.dreg_access(reg)
            v = self.tmp("rc", self.types.ctype(cell), self.cell_get(cur, cell))
            rv = self.tmp("rr", out_ct, self.types.default(out_t) if out_t is not None else "0")
            self.line(f"_rc = {fn}({ctx_args}, &{v}, &{rv});")
            self.check_rc()
            self.dreg_store(h, raw, self.cell_put(v, cell))
            if result is not None:
                self.line(f"{result} = {rv};")
            return
        raw, cells, init = self.register_access(reg)
        x = reg.native
        i = self.tmp("ri", "uint64_t", f"(uint64_t)({self.ex(index)})")
        v = self.tmp("rc", self.types.ctype(cell),
                     self.cell_get(f"({i} < {x.size} ? {cells}[{i}] : ({raw}){init})", cell))
        rv = self.tmp("rr", out_ct, self.types.default(out_t) if out_t is not None else "0")
        self.line(f"_rc = {fn}({ctx_args}, &{v}, &{rv});")
        self.check_rc()
        self.store_cell(reg, i, v)
        if result is not None:
            self.line(f"{result} = {rv};")

    # -- extern methods -----------------------------------------------------------------------

    def extern_method(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        recv = c.receiver
        decl = recv.decl if isinstance(recv, ast.PathExpression) else None
        if not isinstance(decl, ast.InstanceDecl):
            raise NativeUnsupported("extern method on a non-instance receiver", e.loc)
        et = decl.resolved
        kind = et.name if isinstance(et, t.ExternType) else ""
        m = c.name
        a = dict(zip((p.name for p in c.params), c.args))
        if kind in ("RegisterAction", "DirectRegisterAction") and m == "execute":
            self.execute_register_action(decl, c, a.get("index"), result)
        elif kind == "Register" and m in ("read", "write"):
            reg = self.tna_slot(decl, kind)
            raw, cells, init = self.register_access(reg)
            x = reg.native
            i = self.tmp("ri", "uint64_t", f"(uint64_t)({self.ex(a['index'])})")
            if m == "read":
                if result is not None:
                    self.line(f"{result} = " + self.cell_get(
                        f"({i} < {x.size} ? {cells}[{i}] : ({raw}){init})", reg.args["cell"])
                        + ";")
            else:
                value = a["value"]
                assert value is not None
                self.store_cell(reg, i, self.value_ex(value, self.types.default(value.type)))
        elif kind == "DirectRegister" and m in ("read", "write"):
            reg = self.tna_slot(decl, kind)
            h, cur, raw = self.dreg_access(reg)
            if m == "read":
                if result is not None:
                    self.line(f"{result} = {self.cell_get(cur, reg.args['cell'])};")
            else:
                value = a["value"]
                assert value is not None
                self.dreg_store(h, raw, self.cell_put(
                    self.value_ex(value, self.types.default(value.type)), reg.args["cell"]))
        elif kind in ("Meter", "DirectMeter") and m == "execute":
            self.meter_execute(decl, kind, a, result)
        elif kind == "Counter" and m == "count":
            x = self.tna_slot(decl, kind).native
            i = self.tmp("i", "uint64_t", f"(uint64_t)({self.ex(a['index'])})")
            self.line(f"if ({i} < {x.size}) {{ R->cnt_p[{x.slot}][{i}]++; "
                      f"R->cnt_b[{x.slot}][{i}] += {self.byte_count(a)}; }}")
        elif kind == "DirectCounter" and m == "count":
            self.line(f"if (R->hit) {{ ((ss_entry *)R->hit)->packets++; "
                      f"((ss_entry *)R->hit)->bytes += {self.byte_count(a)}; }}")
        elif kind == "Hash" and m == "get":
            h = self.tna_slot(decl, kind)
            p = h.args["hash"]
            leaves = self.flat_fields(a["data"]) if a.get("data") is not None else []
            nbits = sum(w for _, w, _, _ in leaves)
            h.native.size = max(h.native.size, 1 + nbits)
            cols = f"(uint64_t *)R->ext[{h.native.slot}]" if p["random"] else "NULL"
            self.line("{")
            with self.indent():
                self.leaf_data([(None, code, w) for code, w, _, _ in leaves])
                if result is not None:
                    self.line(f"{result} = ss_tna_hash({p['cfg']}, {p['random']}, {p['width']}, "
                              f"{p['msb']}, {p['extend']}, {cols}, _fv, _fw, _fn);")
            self.line("}")
        elif kind == "Random" and m == "get":
            w = bit_width(et.type_args[0]) if et.type_args else 32
            if w > 128:
                raise NativeUnsupported(f"Random of {w} bits", e.loc)
            if result is not None:
                self.line(f"{result} = ss_mt_bits((ss_mt *)R->mt, {w});")
        elif kind == "Checksum":
            self.checksum_method(decl, m, a, result, e)
        elif kind == "ParserCounter":
            self.parser_counter(decl, m, a, result, e)
        elif kind == "Mirror" and m == "emit":
            self.emit_bytes(a.get("hdr"), "mir")
            self.line(f"R->mir_sid = {self.ex(a['session_id'])}; R->req |= {REQ_MIRROR};")
        elif kind == "Resubmit" and m == "emit":
            self.emit_bytes(a.get("hdr"), "res")
            self.line(f"R->req |= {REQ_RESUBMIT_TNA};")
        elif kind == "Digest" and m == "pack":
            data = a["data"]
            assert data is not None
            in_block = self.fn.block if self.fn.block is not None \
                and decl in self.fn.block.decl.locals else None
            self.tna_digest(qualified_name(decl, in_block.path if in_block else None), data)
        else:
            raise NativeUnsupported(f"extern method {kind}.{m}", e.loc)

    def meter_execute(self, decl: ast.InstanceDecl, kind: str,
                      a: dict[str, ast.Expression | None], result: str | None) -> None:
        """``Meter.execute(index[, color][, adjust])`` / ``DirectMeter.execute(...)``: BMv2's
        trTCM (ss_meter_execute), at least the pre-colour (MeterColor_t RED 3 as BMv2's 2), as
        the constructor's colour value; an index out of range or no entry hit: the green value
        and no meter runs (engine/codegen_tna.py)."""
        m = self.tna_slot(decl, kind)
        x = m.native
        green, yellow, red = m.args["colors"]
        need = self.byte_count(a) if x.counter_type == "bytes" else "1"
        color = a.get("color")
        pre = self.tmp("mp", "uint64_t", f"(uint64_t)({self.ex(color)})" if color is not None
                       else "0")
        c = self.tmp("mc", "int", "0")
        if kind == "Meter":
            i = self.tmp("i", "uint64_t", f"(uint64_t)({self.ex(a['index'])})")
            cell, cond = f"&((ss_meter *)R->ext[{x.slot}])[{i}]", f"{i} < {x.size}"
        else:
            cell, cond = "&((ss_entry *)R->hit)->meter", "R->hit"
        self.line(f"if ({cond}) {{ {c} = ss_meter_execute({cell}, R->now, {need}); "
                  f"if ((uint64_t){c} < ({pre} >= 2 ? 2 : {pre})) {c} = (int)({pre} >= 2 ? 2 "
                  f": {pre}); }}")
        if result is not None:
            self.line(f"{result} = {c} == 0 ? {green} : {c} == 1 ? {yellow} : {red};")

    def byte_count(self, a: dict[str, ast.Expression | None]) -> str:
        adj = a.get("adjust_byte_count")
        if adj is None:
            return "R->plen"
        sw = signed_width(adj.type)
        code = f"ss_sx64((uint64_t)({self.ex(adj)}), {sw})" if sw else f"(int64_t)({self.ex(adj)})"
        return f"(uint64_t)((int64_t)R->plen + {code})"

    def emit_bytes(self, e: ast.Expression | None, buf: str) -> None:
        """A Mirror/Resubmit header serialized into R->{buf} (its length in R->{buf}_len): the
        fields in the type's order, as codegen_tna.serialized."""
        leaves: list[tuple[str, int, str, bool]] = []
        if e is not None:
            ty = unwrap(e.type)
            if isinstance(e, ast.StructExpression) and isinstance(ty, t.StructLikeType):
                given = {f.name: f.expr for f in e.fields}
                leaves = [leaf for n, _ in ty.fields if n in given
                          for leaf in self.flat_fields(given[n])]
            else:
                leaves = self.flat_fields(e)
        self.line("{")
        with self.indent():
            self.leaf_data([(None, code, w) for code, w, _, _ in leaves])
            self.line(f"R->{buf}_len = (uint32_t)ss_fields_to_bytes(_fv, _fw, _fn, R->{buf}, "
                      f"{EMIT_BYTES});")
        self.line("}")

    def tna_digest(self, name: str, data: ast.Expression) -> None:
        leaves = self.flat_fields(data)
        site = DigestSite(len(self.digest_sites), name,
                          [(n.split(".")[-1], w, s) for _, w, n, s in leaves])
        self.digest_sites.append(site)
        self.line(f"if (R->ndig < {MAX_DIGESTS}) {{")
        with self.indent():
            self.line("int _d = R->ndig++;")
            self.line(f"R->req |= SS_REQ_DIGEST; R->dig_site[_d] = {site.site}; "
                      "R->dig_recv[_d] = 0;")
            for i, (code, _w, _n, _s) in enumerate(leaves):
                self.line(f"{{ u128 _dv = (u128)({code}); R->dig_vals[_d][{2 * i}] = "
                          f"(uint64_t)_dv; R->dig_vals[_d][{2 * i + 1}] = (uint64_t)(_dv >> 64); }}")
        self.line("}")

    def checksum_method(self, decl: ast.InstanceDecl, m: str,
                        a: dict[str, ast.Expression | None], result: str | None,
                        e: ast.MethodCall) -> None:
        x = self.tna_slot(decl, "Checksum").native
        st = f"((uint64_t *)R->ext[{x.slot}])"
        if m in ("add", "subtract"):
            data = a.get("data")
            leaves = self.flat_fields(data) if data is not None else []
            self.line("{")
            with self.indent():
                self.leaf_data([(None, code, w) for code, w, _, _ in leaves])
                self.line(f"ss_tna_csum_feed({st}, _fv, _fw, _fn, {int(m == 'subtract')});")
            self.line("}")
        elif m == "verify":
            if result is not None:
                self.line(f"{result} = {st}[0] != 0xFFFF;")
        elif m == "get":
            if result is not None:
                self.line(f"{result} = {st}[0];")
        elif m == "subtract_all_and_deposit":
            target = a.get("residual")
            assert target is not None
            self.assign(target, f"{st}[0]")
        elif m == "update":
            data = a.get("data")
            assert data is not None
            zao = a.get("zeros_as_ones")
            zcode = self.ex(zao) if zao is not None else "0"
            self.line("{")
            with self.indent():
                self.field_data(data)  # the fields of valid headers only
                if result is not None:
                    self.line(f"{result} = ss_tna_csum_update(_fv, _fw, _fn, {zcode});")
            self.line("}")
        else:
            raise NativeUnsupported(f"Checksum.{m}", e.loc)

    def parser_counter(self, decl: ast.InstanceDecl, m: str,
                       a: dict[str, ast.Expression | None], result: str | None,
                       e: ast.MethodCall) -> None:
        x = self.tna_slot(decl, "ParserCounter").native
        v = f"((uint64_t *)R->ext[{x.slot}])[0]"
        if m == "set" and "max" in a:
            args = ", ".join(f"(uint64_t)({self.ex(a[n])})"  # type: ignore[arg-type]
                             for n in ("field", "max", "rotate", "mask", "add"))
            self.line(f"{v} = ss_tna_pcnt_set({args});")
        elif m == "set":
            self.line(f"{v} = (uint64_t)({self.ex(a['value'])}) & 0xFF;")  # type: ignore[arg-type]
        elif m in ("increment", "decrement"):
            op = "+" if m == "increment" else "-"
            self.line(f"{v} = ({v} {op} (uint64_t)({self.ex(a['value'])})) & 0xFF;")  # type: ignore[arg-type]
        elif m in ("is_zero", "is_negative"):
            if result is not None:
                self.line(f"{result} = " + (f"{v} == 0;" if m == "is_zero" else f"{v} >= 0x80;"))
        else:
            raise NativeUnsupported(f"ParserCounter.{m}", e.loc)

    # -- extern functions ---------------------------------------------------------------------

    def port_metadata_unpack(self, e: ast.MethodCall, c: ast.CallInfo) -> str:
        """``port_metadata_unpack<T>(pkt)``: T from the next 64 bits, which it consumes."""
        if self.fn.kind != "parser":
            raise NativeUnsupported("port_metadata_unpack outside a parser", e.loc)
        ty = unwrap(c.type_bindings.get("T") or e.type)
        w = t.type_bit_width(ty)
        if w > PORT_METADATA_BITS:
            raise NativeUnsupported(f"port metadata of {w} bits", e.loc)
        too_short = self.error_code("PacketTooShort")
        from softswitch.native.cgen_parser import perr

        self.line(f"if ((uint64_t)*_pp + {PORT_METADATA_BITS} > _nb) {perr(str(too_short))}")
        tmp = self.fn.fresh("pm")
        self.line(f"{self.types.ctype(ty)} {tmp} = {self.types.default(ty)};")
        if isinstance(ty, t.StructLikeType):
            self.unpack_at(tmp, ty, "*_pp")
        elif w:
            get = "ss_get" if scalar_width(ty) <= 64 else "ss_get128"
            self.line(f"{tmp} = {get}(_pkt, *_pp, {w});")
        self.line(f"*_pp += {PORT_METADATA_BITS};")
        return tmp

