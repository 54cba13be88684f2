"""Code generation for v1model extern objects and functions (counters, hash, clone...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from softswitch.engine.codegen_expr import FnContext
from softswitch.engine.codegen_info import ExternInfo
from softswitch.engine.codegen_types import bit_width, is_composite, unwrap
from softswitch.errors import UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend import types as t

if TYPE_CHECKING:
    from softswitch.ir.checked import CheckedProgram


class ExternGen:
    """Mixin of `codegen.Generator`."""

    def receiver_global(self, c: ast.CallInfo) -> tuple[str, ExternInfo]:
        recv = c.receiver
        decl = recv.decl if isinstance(recv, ast.PathExpression) else None
        if not isinstance(decl, ast.InstanceDecl):
            raise UnsupportedError("extern method on a non-instance receiver", recv.loc
                                   if recv is not None else None)
        g = self.extern_global(decl, self.fn.block)
        info = next(x for x in self.externs if x.gname == g)
        return g, info

    def extern_method(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        g, info = self.receiver_global(c)
        kind, m = info.kind, c.name
        args = c.args
        if kind == "counter" and m == "count":
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(args[0])}")
            self.line(f"if 0 <= {i} < {info.args.get('size', 0)}:")
            with self.indent():
                self.line(f"{g}.packets[{i}] += 1")
                self.line(f"{g}.bytes[{i}] += R.plen")
        elif kind == "direct_counter" and m == "count":
            pass  # BMv2 counts every hit of the owning table; count() itself does nothing
        elif kind == "meter" and m == "execute_meter":
            col = self.fn.fresh("c")
            self.line(f"{col} = {g}.execute({self.ex(args[0])}, R.now, R.plen)")
            self.line(f"if {col} is not None:")
            with self.indent():
                self.assign(args[1], col)
        elif kind == "direct_meter" and m == "read":
            self.assign(args[0], f"{g}.color")
        elif kind == "register" and m == "read":
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(args[1])}")
            self.assign(args[0], f"({g}.values[{i}] if 0 <= {i} < {info.args.get('size', 0)}"
                                 " else 0)")
        elif kind == "register" and m == "write":
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(args[0])}")
            self.line(f"if 0 <= {i} < {info.args.get('size', 0)}:")
            with self.indent():
                self.line(f"{g}.values[{i}] = {self.ex(args[1])}")
        elif kind == "Checksum16" and m == "get":
            # a csum16 calculation in BMv2's JSON: invalid headers' fields are left out
            values, widths = self.checksum_data(args[0])
            self.line(f"{result or '_'} = checksum16_get({values}, {widths})")
        else:
            raise UnsupportedError(f"extern method {kind}.{m}", e.loc)

    @staticmethod
    def tuple_of(fields: list[tuple[str, int, str]], i: int) -> str:
        return "(" + "".join(f"{f[i]}, " for f in fields) + ")"

    def hash_global(self, algo: ast.Expression | None) -> str:
        v = algo.value if algo is not None else None
        if not isinstance(v, ast.EnumValue):
            raise UnsupportedError("a non-constant hash algorithm", algo.loc if algo else None)
        name = f"HF_{v.member}"
        self.hash_fns[name] = v.member
        return name

    def extern_function(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        name = c.name
        args = c.args
        sm = "R.sm"
        if name == "mark_to_drop":
            target = self.ex(args[0]) if args and args[0] is not None else sm
            self.line(f"{target}.egress_spec = R.drop_port")
            self.line(f"{target}.mcast_grp = 0")
            self.tr(repr("Primitive mark_to_drop"))
        elif name == "hash":
            # p4c-bm2-ss makes the field list a BMv2 calculation, built as a checksum's is
            # (BufBuilder): the fields of invalid headers are left out
            values, widths = self.checksum_data(args[3])
            out_w = bit_width(args[0].type)
            fn = self.hash_global(args[1])
            code = (f"v1model_hash({fn}, {self.ex(args[2])}, {values}, {widths}, "
                    f"{self.ex(args[4])}, {out_w})")
            self.assign(args[0], code)
        elif name in ("verify_checksum", "verify_checksum_with_payload"):
            cond = self.ex(args[0])
            values, widths = self.checksum_data(args[1], cond)
            fn = self.hash_global(args[3])
            payload = ", R.payload" if name.endswith("payload") else ""
            # BMv2 skips (passes) a checksum whose target field is in an invalid header
            target = self.header_valid_code(args[2])
            if target is not None and target != cond:
                cond = f"{target} and {cond}"
            self.line(f"if {cond} and not verify_checksum({fn}, {values}, {widths}, "
                      f"{self.ex(args[2])}{payload}):")
            with self.indent():
                self.line(f"{sm}.checksum_error = 1")
                self.tr(repr("Checksum verification failed"))
        elif name in ("update_checksum", "update_checksum_with_payload"):
            cond = self.ex(args[0])
            values, widths = self.checksum_data(args[1], cond)
            fn = self.hash_global(args[3])
            w = bit_width(args[2].type)
            payload = ", R.payload" if name.endswith("payload") else ""
            self.line(f"if {cond}:")
            with self.indent():
                self.assign(args[2], f"update_checksum({fn}, {values}, {widths}, {w}{payload})")
        elif name == "random":
            lo, hi = self.ex(args[1]), self.ex(args[2])
            self.assign(args[0], f"R.rng.randint({lo}, max({lo}, {hi}))")
        elif name == "digest":
            data = args[1]
            fields = self.flatten(data)
            tname = str(unwrap(data.type)) if data.type is not None else "digest"
            names = tuple(f[2].split(".")[-1] for f in fields)
            self.line(f"R.digests.append(Digest({tname!r}, {self.ex(args[0])}, "
                      f"{self.tuple_of(fields, 0)}, {names!r}))")
        elif name in ("clone", "clone3", "clone_preserving_field_list"):
            ctype = args[0].value if args[0] is not None else None
            ctype_name = ctype.member if isinstance(ctype, ast.EnumValue) else "I2E"
            fl = self.field_list_arg(name, args[2] if len(args) > 2 else None)
            self.line(f"R.clone = ({ctype_name!r}, {self.ex(args[1])}, {fl})")
        elif name in ("resubmit", "resubmit_preserving_field_list"):
            self.line(f"R.resubmit = {self.field_list_arg(name, args[0] if args else None)}")
        elif name in ("recirculate", "recirculate_preserving_field_list"):
            self.line(f"R.recirculate = {self.field_list_arg(name, args[0] if args else None)}")
        elif name == "truncate":
            self.line(f"R.truncate = {self.ex(args[0])}")
        elif name in ("assert", "assume"):
            self.line(f"if not {self.ex(args[0])}: raise AssertSignal({name!r})")
        elif name == "log_msg":
            if self.trace:
                msg = self.ex(args[0])
                if len(args) > 1 and args[1] is not None:
                    fields = self.flatten(args[1])
                    self.line(f"_T(log_format({msg}, {self.tuple_of(fields, 0)}))")
                else:
                    self.line(f"_T({msg})")
        elif name == "verify":
            self.line(f"if not {self.ex(args[0])}: raise ParserErrorSignal({self.ex(args[1])}, "
                      "_pos)")
        elif name == "static_assert":
            pass
        else:
            raise UnsupportedError(f"extern function '{name}'", e.loc)

    # -- checksum (and hash) input as BMv2 builds it ---------------------------------------

    def checksum_data(self, e: ast.Expression, known: str | None = None) -> tuple[str, str]:
        """Python expressions for the (values, widths) of a checksum's field list.

        As BMv2's BufBuilder: the fields of an invalid header are left out (not zeroed), a
        varbit field counts with its current width, everything else is always there. `known`
        is a condition already true where the code runs (``hdr.ipv4._v``): not tested again.
        """
        groups: list[tuple[str | None, list[tuple[str, str]]]] = []
        for valid, value, width in self.checksum_leaves(e):
            if groups and groups[-1][0] == valid:
                groups[-1][1].append((value, width))
            else:
                groups.append((valid, [(value, width)]))
        values, widths = [], []
        for valid, leaves in groups:
            vs = "(" + "".join(f"{v}, " for v, _ in leaves) + ")"
            ws = "(" + "".join(f"{w}, " for _, w in leaves) + ")"
            if valid is not None and valid != known:
                vs, ws = f"({vs} if {valid} else ())", f"({ws} if {valid} else ())"
            values.append(vs)
            widths.append(ws)
        return " + ".join(values) or "()", " + ".join(widths) or "()"

    def checksum_leaves(self, e: ast.Expression) -> list[tuple[str | None, str, str]]:
        """(validity code or None, value code, width code) of each scalar in `e`."""
        if isinstance(e, ast.ListExpression):
            return [leaf for el in e.elements for leaf in self.checksum_leaves(el)]
        if isinstance(e, ast.StructExpression):
            return [leaf for f in e.fields for leaf in self.checksum_leaves(f.expr)]
        ty = unwrap(e.type)
        if isinstance(ty, t.StructLikeType | t.HeaderStackType):
            # a struct field of a header (`h.row`) goes with the header's validity
            return self.checksum_value_leaves(self.ex(e), ty, self.header_valid_code(e))
        valid = self.header_valid_code(e)
        if isinstance(ty, t.VarbitType):
            code = self.ex(e)
            return [(valid, code, f"{code}__w")]
        code = self.ex(e)
        if isinstance(ty, t.BoolType):
            code = f"int({code})"
        return [(valid, code, str(bit_width(ty)))]

    def checksum_value_leaves(
        self, code: str, ty: t.Type, valid: str | None
    ) -> list[tuple[str | None, str, str]]:
        u = unwrap(ty)
        if isinstance(u, t.HeaderStackType):
            return [leaf for i in range(u.size)
                    for leaf in self.checksum_value_leaves(f"{code}.h[{i}]", u.element, None)]
        if isinstance(u, t.HeaderType):
            valid = f"{code}._v"
        if isinstance(u, t.StructLikeType):
            return [leaf for fname, ftype in u.fields
                    for leaf in self.checksum_value_leaves(f"{code}.{fname}", ftype, valid)]
        if isinstance(u, t.VarbitType):
            return [(valid, code, f"{code}__w")]
        if isinstance(u, t.BoolType):
            return [(valid, f"int({code})", "1")]
        return [(valid, code, str(bit_width(u)))]

    def header_valid_code(self, e: ast.Expression) -> str | None:
        """The validity of the header `e` is a field of, or None (metadata, locals...)."""
        while isinstance(e, ast.Member) and e.kind == "field":
            if isinstance(unwrap(e.expr.type), t.HeaderType):
                return f"{self.ex(e.expr)}._v"
            e = e.expr  # a field of a struct inside a header (`h.row.e`) is the header's
        return None

    def field_list_arg(self, name: str, arg: ast.Expression | None) -> str:
        """The copier preserving metadata into the new packet instance ('None': nothing)."""
        if arg is None:
            return "None"
        if name.endswith("preserving_field_list"):
            v = arg.value
            return f"R.field_lists.get({int(v) if isinstance(v, int) else 0})"
        # deprecated form: copy the listed lvalues of the block's parameters
        block = self.fn.block
        if block is None or not isinstance(block.decl, ast.ControlDecl):
            return "None"
        params = block.decl.params
        fn = self.gname("FL")
        elems = arg.elements if isinstance(arg, ast.ListExpression) else [arg]
        src = FnContext("function", block)
        dst = FnContext("function", block)
        for p in params:
            src.env[p] = f"s_{p.name}"
            dst.env[p] = f"d_{p.name}"
        sig = ", ".join([f"s_{p.name}" for p in params] + [f"d_{p.name}" for p in params])
        with self.function(f"def {fn}({sig}):", src):
            for el in elems:
                if isinstance(el, ast.ListExpression | ast.StructExpression) or \
                        el.value is not None:
                    continue
                self.fn = src
                s = self.ex(el)
                self.fn = dst
                d = self.ex(el)
                self.fn = src
                if is_composite(el.type):
                    self.line(f"{d}._set({s})")
                else:
                    self.line(f"{d} = {s}")
        return fn

    def preserving_field_lists(self, meta_t: t.Type | None) -> dict[int, str]:
        """One copier per @field_list index found on user metadata fields."""
        out = {}
        for idx, paths in field_list_paths(self.checked, meta_t).items():
            fn = self.gname("FLP")
            lines = [f"def {fn}(s_hdr, s_meta, s_sm, d_hdr, d_meta, d_sm):"]
            for p in paths:
                lines.append(f"    d_meta{p} = s_meta{p}")
            self.funcs.append("\n".join(lines) + "\n")
            out[idx] = fn
        return out


def field_list_paths(checked: CheckedProgram, meta_t: t.Type | None) -> dict[int, list[str]]:
    """@field_list index → the paths (``.a.b``) of the user metadata fields it preserves, by
    index (the engines' copiers for resubmit, recirculate and clone)."""
    lists: dict[int, list[str]] = {}

    def struct_decl(ty: t.Type) -> ast.StructLikeDecl | None:
        for d in checked.program.declarations:
            if isinstance(d, ast.StructLikeDecl) and d.resolved == ty:
                return d
        return None

    def walk(ty: t.Type, path: str) -> None:
        decl = struct_decl(ty)
        if decl is None:
            return
        for f in decl.fields:
            fpath = f"{path}.{f.name}"
            ann = f.annotation("field_list")
            if ann is not None:
                for a in ann.args:
                    if isinstance(a.value, int):
                        lists.setdefault(a.value, []).append(fpath)
            ft = unwrap(f.type_ref.resolved)
            if isinstance(ft, t.StructType):
                walk(ft, fpath)

    if meta_t is not None:
        walk(unwrap(meta_t), "")
    return dict(sorted(lists.items()))
