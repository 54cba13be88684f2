"""C code for v1model externs: counters, registers, hash, checksums, random, digest, clone,
resubmit, recirculate, truncate, mark_to_drop, assert/assume, meters and direct meters
(engine/codegen_externs.py's mirror). End-of-pass requests set bits in ``R->req`` with their
arguments; the walk acts on them. Meter cells (``ss_meter``) and a direct meter's colour live
in ``R->ext``. The deprecated clone3 field lists raise `NativeUnsupported`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from softswitch.engine.codegen_expr import key_text
from softswitch.engine.codegen_externs import field_list_paths
from softswitch.errors import NativeUnsupported, SourceLocation
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.checked import BlockInstance
from softswitch.ir.names import qualified_name
from softswitch.native.cgen_expr import signed_width
from softswitch.native.cgen_types import bit_width, is_wide, limbs, scalar_width, unwrap

if TYPE_CHECKING:
    from softswitch.native.cgen import NativeExtern

# HashAlgorithm member → SS_HASH_* (runtime/ss_rt.h)
HASH_IDS = {"crc32": 0, "crc32_custom": 1, "crc16": 2, "crc16_custom": 3, "random": 4,
            "identity": 5, "csum16": 6, "xor16": 7}
MAX_DIGESTS = 8  # digest() calls kept per pass (R->dig_*)


@dataclass
class DigestSite:
    """One ``digest(receiver, data)`` call: the Digest's name and its fields'
    (name, width, signed)."""

    site: int
    name: str
    fields: list[tuple[str, int, bool]] = field(default_factory=list)


class CExternGen:
    """Mixin of `cgen.CGenerator`."""

    def instance_of(self, decl: ast.InstanceDecl
                    ) -> tuple[tuple[int, int], BlockInstance | None, str]:
        """The extern instance `decl` names where the code being generated runs: its key (one
        per declaration and declaring block instance), that block (None: top level) and its
        control-plane name."""
        block = self.fn.block
        in_block = block if block is not None and decl in block.decl.locals else None
        key = (id(decl), id(in_block) if in_block is not None else 0)
        return key, in_block, qualified_name(decl, in_block.path if in_block else None)

    def extern_slot(self, decl: ast.InstanceDecl) -> NativeExtern:
        from softswitch.native.cgen import NativeExtern

        key, _, cp_name = self.instance_of(decl)
        found = self._extern_slots.get(key)
        if found is not None:
            return found
        et = decl.resolved
        assert isinstance(et, t.ExternType)
        args = {p.name: a.value for p, a in zip(decl.ctor_params, decl.ctor_args)
                if a is not None}
        kind = et.name
        if kind == "counter":
            ctype = args.get("type")
            slot = sum(1 for x in self.externs if x.kind == "counter")
            x = NativeExtern(cp_name, "counter", slot, int(args.get("size") or 0),
                             counter_type=ctype.member if isinstance(ctype, ast.EnumValue)
                             else str(ctype or "packets"))
        elif kind == "register":
            elem = unwrap(et.type_args[0]) if et.type_args else t.BitType(32)
            width = bit_width(elem)
            if width > 128:
                raise NativeUnsupported(f"register cells of {width} bits")
            slot = sum(1 for x in self.externs if x.kind == "register")
            x = NativeExtern(cp_name, "register", slot, int(args.get("size") or 0), width,
                             isinstance(elem, t.BitType) and elem.signed)
        elif kind in ("action_profile", "action_selector"):
            x = self.profile_extern(cp_name, kind, args, decl.loc)
        elif kind in ("meter", "direct_meter"):
            mtype = args.get("type")
            mname = mtype.member if isinstance(mtype, ast.EnumValue) else str(mtype or "")
            x = NativeExtern(cp_name, kind, self.ext_slot(), int(args.get("size") or 1),
                             counter_type="bytes" if mname == "bytes" else "packets")
        else:
            raise NativeUnsupported(f"extern '{kind}'", decl.loc)
        self.externs.append(x)
        self._extern_slots[key] = x
        return x

    def profile_extern(self, cp_name: str, kind: str, args: dict[str, object],
                       loc: SourceLocation | None) -> NativeExtern:
        """An action profile or selector (its ss_profile in R->ext); a selector's hash
        algorithm is its `width` (the HASH_IDS number)."""
        from softswitch.native.cgen import NativeExtern

        algo = -1
        if kind == "action_selector":
            v = args.get("algorithm")
            name = v.member if isinstance(v, ast.EnumValue) else str(v)
            if name not in HASH_IDS or name == "random":
                raise NativeUnsupported(f"action selector algorithm '{name}'", loc)
            algo = HASH_IDS[name]
        return NativeExtern(cp_name, kind, self.ext_slot(), 1, width=algo)

    def ext_slot(self) -> int:
        """The next slot of R->ext (every extern kind but counters and registers)."""
        return sum(1 for x in self.externs if x.kind not in ("counter", "register"))

    @staticmethod
    def meter_need(x: NativeExtern) -> str:
        """The tokens a packet takes: 1, or its bytes (R->plen, as the Python engine's R.plen)."""
        return "R->plen" if x.counter_type == "bytes" else "1"

    def extern_method(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        recv = c.receiver
        decl = recv.decl if isinstance(recv, ast.PathExpression) else None
        if not isinstance(decl, ast.InstanceDecl):
            raise NativeUnsupported("extern method on a non-instance receiver", e.loc)
        et = decl.resolved
        kind = et.name if isinstance(et, t.ExternType) else ""
        m = c.name
        args = c.args
        if kind == "direct_counter" and m == "count":
            return  # BMv2 counts every hit of the owning table; count() itself does nothing
        if kind == "Checksum16" and m == "get":
            self.line("{")
            with self.indent():
                self.field_data(args[0])
                if result is not None:
                    self.line(f"{result} = ss_calc({HASH_IDS['csum16']}, _fv, _fw, _fn, NULL, 0);")
            self.line("}")
            return
        x = self.extern_slot(decl)
        if kind == "counter" and m == "count":
            i = self.tmp("i", "uint64_t", self.ex(args[0]))
            self.line(f"if ({i} < {x.size}) {{ R->cnt_p[{x.slot}][{i}]++; "
                      f"R->cnt_b[{x.slot}][{i}] += R->plen; }}")
        elif kind == "register" and m == "read":
            i = self.tmp("i", "uint64_t", self.ex(args[1]))
            ct = "u128" if x.width > 64 else "uint64_t"
            self.assign(args[0], f"({i} < {x.size} ? (({ct} *)R->reg[{x.slot}])[{i}] : 0)")
        elif kind == "register" and m == "write":
            i = self.tmp("i", "uint64_t", self.ex(args[0]))
            ct = "u128" if x.width > 64 else "uint64_t"
            v = self.tmp("v", ct, self.ex(args[1]))
            self.line(f"if ({i} < {x.size}) {{ (({ct} *)R->reg[{x.slot}])[{i}] = {v}; "
                      f"if (R->reg_obs[{x.slot}]) ss_observed(R, {x.slot}, {i}, {v}); }}")
        elif kind == "meter" and m == "execute_meter":
            # out of range: no meter runs and the result keeps its value (as BMv2)
            i = self.tmp("i", "uint64_t", self.ex(args[0]))
            self.line(f"if ({i} < {x.size}) {{")
            with self.indent():
                self.assign(args[1], f"(uint64_t)ss_meter_execute(&((ss_meter *)R->ext[{x.slot}])"
                                     f"[{i}], R->now, {self.meter_need(x)})")
            self.line("}")
        elif kind == "direct_meter" and m == "read":
            self.assign(args[0], f"(*(uint64_t *)R->ext[{x.slot}])")
        else:
            raise NativeUnsupported(f"extern method {kind}.{m}", e.loc)

    def hash_id(self, algo: ast.Expression | None) -> int:
        v = algo.value if algo is not None else None
        if not isinstance(v, ast.EnumValue) or v.member not in HASH_IDS:
            raise NativeUnsupported("a non-constant hash algorithm", algo.loc if algo else None)
        if v.member == "random":
            raise NativeUnsupported("HashAlgorithm.random", algo.loc if algo else None)
        return HASH_IDS[v.member]

    def sm_ref(self) -> str:
        return f"(*({self.sm_type} *)R->sm)"

    def extern_function(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        name = c.name
        args = c.args
        if name == "mark_to_drop":
            target = self.ex(args[0]) if args and args[0] is not None else self.sm_ref()
            self.line(f"{target}.egress_spec = R->drop_port; {target}.mcast_grp = 0;")
        elif name == "hash":
            out_w = scalar_width(args[0].type)
            algo = self.hash_id(args[1])
            self.line("{")
            with self.indent():
                self.field_data(args[3])
                base, mx = self.ex(args[2]), self.ex(args[4])
                self.assign(args[0], f"ss_hash_offset(ss_calc({algo}, _fv, _fw, _fn, NULL, 0), "
                                     f"(uint64_t){base}, (uint64_t){mx}, {out_w})")
            self.line("}")
        elif name in ("verify_checksum", "verify_checksum_with_payload"):
            cond = self.ex(args[0])
            algo = self.hash_id(args[3])
            payload = "R->payload, R->paylen" if name.endswith("payload") else "NULL, 0"
            target = self.header_valid_code(args[2])
            if target is not None and target != cond:
                cond = f"{target} && {cond}"
            self.line(f"if ({cond}) {{")
            with self.indent():
                self.field_data(args[1], cond)
                self.line(f"if (ss_calc({algo}, _fv, _fw, _fn, {payload}) != "
                          f"(uint64_t){self.ex(args[2])}) {self.sm_ref()}.checksum_error = 1;")
            self.line("}")
        elif name in ("update_checksum", "update_checksum_with_payload"):
            cond = self.ex(args[0])
            algo = self.hash_id(args[3])
            w = scalar_width(args[2].type)
            payload = "R->payload, R->paylen" if name.endswith("payload") else "NULL, 0"
            self.line(f"if ({cond}) {{")
            with self.indent():
                self.field_data(args[1], cond)
                self.assign(args[2], f"(ss_calc({algo}, _fv, _fw, _fn, {payload}) & "
                                     f"ss_mask64({w}))")
            self.line("}")
        elif name == "random":
            # Python's randint(lo, max(lo, hi)), drawing the same words
            ct, fn = ("u128", "ss_randint128") if scalar_width(args[0].type) > 64 \
                else ("uint64_t", "ss_randint")
            lo = self.tmp("o", ct, self.ex(args[1]))
            hi = self.ex(args[2])
            self.assign(args[0], f"{fn}((ss_mt *)R->mt, {lo}, {hi} > {lo} ? {hi} : {lo})")
        elif name == "digest":
            self.digest(args[0], args[1])
        elif name in ("clone", "clone3", "clone_preserving_field_list"):
            ctype = args[0].value if args[0] is not None else None
            ctype_name = ctype.member if isinstance(ctype, ast.EnumValue) else "I2E"
            fl = self.field_list_index(name, args[2] if len(args) > 2 else None)
            self.line(f"R->req |= SS_REQ_CLONE; R->clone_type = {1 if ctype_name == 'I2E' else 2}; "
                      f"R->clone_session = {self.ex(args[1])}; R->clone_fl = {fl};")
        elif name in ("resubmit", "resubmit_preserving_field_list"):
            fl = self.field_list_index(name, args[0] if args else None)
            self.line(f"R->req |= SS_REQ_RESUBMIT; R->resubmit_fl = {fl};")
        elif name in ("recirculate", "recirculate_preserving_field_list"):
            fl = self.field_list_index(name, args[0] if args else None)
            self.line(f"R->req |= SS_REQ_RECIRC; R->recirc_fl = {fl};")
        elif name == "truncate":
            self.line(f"R->req |= SS_REQ_TRUNCATE; R->truncate = {self.ex(args[0])};")
        elif name in ("assert", "assume"):
            self.line(f"if (!({self.ex(args[0])})) {{ _rc = SS_ASSERT; goto _end; }}")
        elif name in ("log_msg", "static_assert"):
            pass  # log_msg only writes to the trace, which the C engine does not have
        elif name == "verify":
            code = self.tmp("o", "uint64_t", self.ex(args[1]))
            self.line(f"if (!({self.ex(args[0])})) {{ R->perr = (int32_t){code}; "
                      "R->ppos = *_pp; _rc = SS_PERR; goto _end; }")
        else:
            raise NativeUnsupported(f"extern function '{name}'", e.loc)

    # -- field lists ----------------------------------------------------------------------

    def field_data(self, e: ast.Expression, known: str | None = None) -> None:
        """Declare ``_fv``/``_fw``/``_fn``: the values and widths of a calculation's field
        list as BMv2 builds it (fields of invalid headers left out)."""
        self.leaf_data(self.checksum_leaves(e), known)

    def leaf_data(self, leaves: list[tuple[str | None, str, int]], known: str | None = None
                  ) -> None:
        """`field_data` of the (validity, value, width) leaves of one or more expressions (a
        leaf of width -K is K limbs, its value the ``limbs, width`` arguments of
        ss_push_limbs: a varbit at its current width, a wide value)."""
        n = max(1, sum(-w if w < 0 else 1 for _, _, w in leaves))
        self.line(f"u128 _fv[{n}]; uint16_t _fw[{n}]; int _fn = 0;")
        current: str | None = None
        for valid, value, width in leaves:
            if valid == known:
                valid = None
            if valid != current:
                if current is not None:
                    self.line("}")
                if valid is not None:
                    self.line(f"if ({valid}) {{")
                current = valid
            if width < 0:
                self.line(f"ss_push_limbs(_fv, _fw, &_fn, {value});")
            else:
                self.line(f"_fv[_fn] = (u128)({value}); _fw[_fn++] = {width};")
        if current is not None:
            self.line("}")

    def checksum_leaves(self, e: ast.Expression) -> list[tuple[str | None, str, int]]:
        if isinstance(e, ast.ListExpression):
            return [leaf for el in e.elements for leaf in self.checksum_leaves(el)]
        if isinstance(e, ast.StructExpression):
            return [leaf for f in e.fields for leaf in self.checksum_leaves(f.expr)]
        ty = unwrap(e.type)
        if isinstance(ty, t.StructLikeType | t.HeaderStackType):
            return self.value_leaves(self.ex(e), ty, self.header_valid_code(e))
        return self.value_leaves(self.ex(e), ty, self.header_valid_code(e))

    def value_leaves(self, code: str, ty: t.Type, valid: str | None
                     ) -> list[tuple[str | None, str, int]]:
        u = unwrap(ty)
        if isinstance(u, t.HeaderStackType):
            return [leaf for i in range(u.size)
                    for leaf in self.value_leaves(f"{code}.h[{i}]", u.element, None)]
        if isinstance(u, t.HeaderType):
            valid = f"{code}._v"
        if isinstance(u, t.StructLikeType):
            return [leaf for fname, ftype in u.fields
                    for leaf in self.value_leaves(f"{code}.{fname}", ftype, valid)]
        if isinstance(u, t.VarbitType):
            return [(valid, f"{code}.d, {code}.w", -limbs(u.max_width))]
        if is_wide(u):
            w = bit_width(u)
            held = self.addressable_value(code, u)
            return [(valid, f"{held}.l, {w}", -limbs(w))]
        return [(valid, code, scalar_width(u))]

    def header_valid_code(self, e: ast.Expression) -> str | None:
        while isinstance(e, ast.Member) and e.kind == "field":
            if isinstance(unwrap(e.expr.type), t.HeaderType):
                return f"{self.ex(e.expr)}._v"
            e = e.expr
        return None

    def digest(self, receiver: ast.Expression, data: ast.Expression) -> None:
        leaves = self.flat_fields(data)
        site = DigestSite(len(self.digest_sites),
                          str(unwrap(data.type)) if data.type is not None else "digest",
                          [(n.split(".")[-1], w, s) for _, w, n, s in leaves])
        self.digest_sites.append(site)
        self.line(f"if (R->ndig < {MAX_DIGESTS}) {{")
        with self.indent():
            self.line("int _d = R->ndig++;")
            self.line(f"R->req |= SS_REQ_DIGEST; R->dig_site[_d] = {site.site}; "
                      f"R->dig_recv[_d] = {self.ex(receiver)};")
            for i, (code, _w, _n, _s) in enumerate(leaves):
                self.line(f"{{ u128 _dv = (u128)({code}); R->dig_vals[_d][{2 * i}] = "
                          f"(uint64_t)_dv; R->dig_vals[_d][{2 * i + 1}] = (uint64_t)(_dv >> 64); }}")
        self.line("}")

    def flat_fields(self, e: ast.Expression) -> list[tuple[str, int, str, bool]]:
        """(code, width, name, signed) of each scalar leaf, as codegen_expr.flatten."""
        if isinstance(e, ast.ListExpression):
            return [x for el in e.elements for x in self.flat_fields(el)]
        if isinstance(e, ast.StructExpression):
            return [x for f in e.fields for x in self.flat_fields(f.expr)]
        ty = unwrap(e.type)
        if isinstance(ty, t.StructLikeType | t.HeaderStackType):
            return self.flat_value(self.ex(e), ty, key_text(e))
        return [(self.ex(e), scalar_width(ty), key_text(e), bool(signed_width(ty)))]

    def flat_value(self, code: str, ty: t.Type, name: str) -> list[tuple[str, int, str, bool]]:
        u = unwrap(ty)
        if isinstance(u, t.HeaderStackType):
            return [x for i in range(u.size)
                    for x in self.flat_value(f"{code}.h[{i}]", u.element, f"{name}[{i}]")]
        if isinstance(u, t.StructLikeType):
            return [x for fname, ftype in u.fields
                    for x in self.flat_value(f"{code}.{fname}", ftype, f"{name}.{fname}")]
        if isinstance(u, t.VarbitType):
            return []
        return [(code, scalar_width(u), name, bool(signed_width(u)))]

    def field_list_index(self, name: str, arg: ast.Expression | None) -> int:
        """The @field_list index the new packet instance preserves (-1: nothing)."""
        if arg is None:
            return -1
        if name.endswith("preserving_field_list"):
            v = arg.value
            idx = int(v) if isinstance(v, int) else 0
            return idx
        raise NativeUnsupported(f"{name} with a field list (deprecated form)", arg.loc)

    def field_list_copiers(self, meta_t: t.Type | None, meta: str) -> list[int]:
        """One C copier per @field_list index on user metadata fields (FLP_<idx>)."""
        lists = field_list_paths(self.checked, meta_t)
        for idx, paths in lists.items():
            body = " ".join(f"d->{p[1:]} = s->{p[1:]};" for p in paths)
            self.funcs.append(f"static void FLP_{idx}(const {meta} *s, {meta} *d) {{ {body} }}")
        return list(lists)
