"""Code generation for TNA programs: the v1model generator with the TNA blocks and externs.

The six blocks of the Pipeline compile with the shared generator (one Python function each;
parsers as ``P(_pkt, _nb, _pos, params...)``, controls and deparsers as ``B(params...)``, the
parameters in the program's own order); engine/tna_pipeline.py calls them with the intrinsic
metadata the program declares (`BlockInstance.arch_params` names what each parameter stands
for). What differs from v1model:

- externs (extern_method): Register/RegisterAction/DirectRegister(Action), Hash, Random,
  Counter/DirectCounter, Meter/DirectMeter, Checksum, ParserCounter, Mirror, Resubmit, Digest,
  port_metadata_unpack. A RegisterAction's ``apply`` compiles like an action of the block that
  declares it (it reads that block's parameters and locals): ``RA(ctx..., a_value)`` returns
  ``(None, new value, rv)``; ``execute(i)`` reads the cell, calls it and stores the new value.
- direct resources count only when the action calls them (TNA's ``DirectCounter.count()``,
  ``DirectMeter.execute()``, ``DirectRegisterAction.execute()``), not on every hit as BMv2
  does: table applies record the entry they hit in ``R.hit`` for those calls.
- ``ingress_intrinsic_metadata_for_tm_t.ucast_egress_port`` carries a valid bit, as Tofino's
  deparser has for it: writing the field sets it, so a packet whose ingress never chose a port
  is not unicast (TnaTypeClasses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from softswitch.engine.codegen import Generator
from softswitch.engine.codegen_expr import FnContext, mask, wrap
from softswitch.engine.codegen_info import ExternInfo, GeneratedProgram
from softswitch.engine.codegen_types import TypeClasses, bit_width, unwrap
from softswitch.errors import P4Error, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.checked import BlockInstance, CheckedProgram

TNA_ROLES = (
    "ingress_parser",
    "ingress",
    "ingress_deparser",
    "egress_parser",
    "egress",
    "egress_deparser",
)

# The intrinsic metadata types the pipeline builds (classes generated for each).
INTRINSIC_TYPES = (
    "ingress_intrinsic_metadata_t",
    "ingress_intrinsic_metadata_for_tm_t",
    "ingress_intrinsic_metadata_from_parser_t",
    "ingress_intrinsic_metadata_for_deparser_t",
    "egress_intrinsic_metadata_t",
    "egress_intrinsic_metadata_from_parser_t",
    "egress_intrinsic_metadata_for_deparser_t",
    "egress_intrinsic_metadata_for_output_port_t",
)

_TM_TYPE = "ingress_intrinsic_metadata_for_tm_t"
_UCAST_RE = re.compile(r"\b(self|n|o)\.ucast_egress_port\b")
PORT_METADATA_BITS = 64


@dataclass
class TnaGeneratedProgram(GeneratedProgram):
    """What TnaGenerator produces: `block_fns` by TNA role, and for the pipeline the class of
    each role's headers/metadata (`classes`: "ingress_hdr", "ingress_md", "egress_hdr",
    "egress_md" and the intrinsic type names), the field layouts of the two prepended intrinsic
    headers, and whether each gress reads its parser_err (else a parser error drops)."""

    classes: dict[str, str] = field(default_factory=dict)
    layouts: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    reads_parser_err: dict[str, bool] = field(default_factory=dict)


class TnaTypeClasses(TypeClasses):
    """TypeClasses whose ingress_intrinsic_metadata_for_tm_t keeps a valid bit for
    ucast_egress_port: slots ``_u`` (the value) and ``_uv`` (written), copied with the struct;
    the attribute itself is a property whose setter sets ``_uv``."""

    def _emit_struct(self, name: str, u: t.StructLikeType) -> None:
        start = len(self.lines)
        super()._emit_struct(name, u)
        if u.name != _TM_TYPE or "ucast_egress_port" not in [f for f, _ in u.fields]:
            return
        out: list[str] = []
        for line in self.lines[start:]:
            if line.startswith("    __slots__"):
                line = line.replace("'ucast_egress_port'", "'_u', '_uv'")
            new = _UCAST_RE.sub(r"\1._u", line)
            out.append(new)
            stripped = new.strip()
            if stripped == "self._u = 0":
                out.append(new.replace("self._u = 0", "self._uv = False"))
            elif stripped == "n._u = self._u":
                out.append(new.replace("n._u = self._u", "n._uv = self._uv"))
            elif stripped == "self._u = o._u":
                out.append(new.replace("self._u = o._u", "self._uv = o._uv"))
        while out and out[-1] == "":
            out.pop()
        out += [
            "    def _set_u(self, v):",
            "        self._u = v",
            "        self._uv = True",
            "    ucast_egress_port = property(lambda self: self._u, _set_u)",
            "",
        ]
        self.lines[start:] = out


def _walk(node: Any, seen: set[int]) -> Any:
    """Every AST node reachable from `node` (each once)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list | tuple):
            stack.extend(n)
            continue
        if not isinstance(n, ast.Node) or id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        stack.extend(
            v
            for k, v in vars(n).items()
            if k not in ("decl", "type", "resolved", "type_decl", "call", "value")
        )
        if isinstance(n, ast.MethodCall) and n.call is not None:
            stack.extend(a for a in n.call.args if a is not None)


class TnaGenerator(Generator):
    """Generator for a CheckedProgram of arch "tna"."""

    def __init__(self, checked: CheckedProgram, trace: bool = False) -> None:
        super().__init__(checked, trace)
        self.types = TnaTypeClasses()
        self.direct_on_hit = False  # TNA direct resources act when the action calls them
        self.record_hit = True
        self._ra_fns: dict[tuple[int, int], str] = {}

    # -- entry point --------------------------------------------------------------------------

    def generate(self) -> TnaGeneratedProgram:
        blocks = self.checked.blocks
        fns: dict[str, str] = {}
        classes: dict[str, str] = {}
        try:
            for role in TNA_ROLES:
                block = blocks[role]
                if isinstance(block.decl, ast.ParserDecl):
                    fns[role] = self.parser_fn(block)
                else:
                    fns[role] = self.control_fn(block, top=True)
            for gress, md_name in (("ingress", "ig_md"), ("egress", "eg_md")):
                params = self.arch_param_types(blocks[f"{gress}_parser"])
                classes[f"{gress}_hdr"] = self.types.class_name(params["hdr"])
                classes[f"{gress}_md"] = self.types.class_name(params[md_name])
            layouts: dict[str, list[tuple[str, int]]] = {}
            for d in self.checked.program.declarations:
                if isinstance(d, ast.StructLikeDecl) and d.name in INTRINSIC_TYPES:
                    assert isinstance(d.resolved, t.StructLikeType)
                    classes[d.name] = self.types.class_name(d.resolved)
                    if isinstance(d.resolved, t.HeaderType):
                        layouts[d.name] = [
                            (f, w) for f, _ft, w in self.types.header_layout(d.resolved)
                        ]
            missing = [n for n in INTRINSIC_TYPES if n not in classes]
            if missing:
                raise UnsupportedError(f"a TNA program without the type {missing[0]} of tna.p4")
            reads = self.parser_err_readers()
        except P4Error:
            raise
        except Exception as exc:  # a gap in the generator: report it, never a traceback
            raise UnsupportedError(f"code generation failed ({type(exc).__name__}: {exc})") from exc
        header = [
            '"""Generated by softswitch.engine.codegen_tna — do not edit."""',
            "from softswitch.engine.support import (ExitSignal, ParserErrorSignal, "
            "AssertSignal, Stack, stack_elem, read_bits, set_bits, to_signed, mk, look)",
            "from softswitch.engine.hashes import (fields_to_bytes, v1model_hash, "
            "update_checksum, verify_checksum, checksum16_get)",
            "from softswitch.engine.tna_externs import csum_update, pre_color",
            "from softswitch.engine.externs import Digest",
            "",
        ]
        source = "\n".join(header) + "\n".join(self.types.lines) + "\n" + "\n".join(self.funcs)
        return TnaGeneratedProgram(
            source=source,
            tables=self.tables,
            externs=self.externs,
            value_sets=self.value_sets,
            block_fns=fns,
            header_cls=classes["ingress_hdr"],
            meta_cls=classes["ingress_md"],
            sm_cls="",
            field_lists={},
            hash_fns=self.hash_fns,
            classes=classes,
            layouts=layouts,
            reads_parser_err=reads,
        )

    @staticmethod
    def arch_param_types(block: BlockInstance) -> dict[str, t.Type]:
        """The types of `block`'s parameters by the architecture's parameter name."""
        out: dict[str, t.Type] = {}
        for name, p in zip(block.arch_params, block.decl.params):
            out[name] = p.type
        return out

    def parser_err_readers(self) -> dict[str, bool]:
        """Whether each gress's program reads its from-parser parser_err (bf-p4c then leaves
        the parser's drop-on-error off)."""
        found = {"ingress": False, "egress": False}
        types = {
            "ingress_intrinsic_metadata_from_parser_t": "ingress",
            "egress_intrinsic_metadata_from_parser_t": "egress",
        }
        for n in _walk(self.checked.program.declarations, set()):
            if isinstance(n, ast.Member) and n.member == "parser_err" and n.expr.type is not None:
                base = unwrap(n.expr.type)
                gress = types.get(getattr(base, "name", ""))
                if gress is not None:
                    found[gress] = True
        return found

    # -- extern instances ---------------------------------------------------------------------

    def extern_global(self, decl: ast.InstanceDecl, block: BlockInstance | None) -> str:
        fresh = (
            id(decl),
            id(block) if block is not None and decl in block.decl.locals else 0,
        ) not in self._extern_names
        name = super().extern_global(decl, block)
        if fresh:
            info = next(x for x in self.externs if x.gname == name)
            self.tna_extern_args(info, decl, block)
        return name

    def tna_extern_args(
        self, info: ExternInfo, decl: ast.InstanceDecl, block: BlockInstance | None
    ) -> None:
        """What the run-time object needs beyond the constant constructor arguments."""
        by_name = dict(zip((p.name for p in decl.ctor_params), decl.ctor_args))
        targs = info.args.get("type_args", ())
        kind = info.kind
        if kind in ("RegisterAction", "DirectRegisterAction"):
            reg = by_name.get("reg")
            if not (isinstance(reg, ast.PathExpression) and isinstance(reg.decl, ast.InstanceDecl)):
                raise UnsupportedError(
                    f"{kind} '{decl.name}' on a register that is not a named instance", decl.loc
                )
            info.args["register"] = self.extern_global(reg.decl, block)
        elif kind in ("Register", "DirectRegister"):
            cell = unwrap(targs[0]) if targs else t.BitType(32)
            info.args["cell_type"] = cell
            init = by_name.get("initial_value")
            info.args["initial"] = self.const_cell(init, cell) if init is not None else 0
        elif kind == "Hash":
            info.args["width"] = bit_width(targs[0]) if targs else 32
            poly = by_name.get("poly")
            if poly is not None:
                info.args["poly"] = self.crc_polynomial(poly)
        elif kind == "ActionSelector":
            h = by_name.get("hash")
            if isinstance(h, ast.PathExpression) and isinstance(h.decl, ast.InstanceDecl):
                info.args["hash_g"] = self.extern_global(h.decl, block)
            elif isinstance(h, ast.MethodCall):
                info.args["hash_spec"] = self.inline_hash(h)
            prof = by_name.get("action_profile")
            if isinstance(prof, ast.PathExpression) and isinstance(prof.decl, ast.InstanceDecl):
                pg = self.extern_global(prof.decl, block)
                info.args["profile_g"] = pg
                pinfo = next(x for x in self.externs if x.gname == pg)
                info.args.setdefault("size", pinfo.args.get("size", 0))
        elif kind in ("Random",):
            info.args["width"] = bit_width(targs[0]) if targs else 32

    def const_cell(self, e: ast.Expression, cell: t.Type) -> int:
        """The integer a register cell starts at (a struct's fields concatenated)."""
        if isinstance(cell, t.StructLikeType):
            elems: list[ast.Expression | None]
            if isinstance(e, ast.StructExpression):
                given = {f.name: f.expr for f in e.fields}
                elems = [given.get(n) for n, _ in cell.fields]
            elif isinstance(e, ast.ListExpression):
                elems = list(e.elements)
            else:
                raise UnsupportedError("a register initial value that is not constant", e.loc)
            acc = 0
            for (_, ft), x in zip(cell.fields, elems):
                w = bit_width(ft)
                v = x.value if x is not None else 0
                if not isinstance(v, int):
                    raise UnsupportedError("a register initial value that is not constant", e.loc)
                acc = (acc << w) | (int(v) & mask(w))
            return acc
        v = e.value
        if isinstance(v, bool):
            return int(v)
        if not isinstance(v, int):
            raise UnsupportedError("a register initial value that is not constant", e.loc)
        return v

    def crc_polynomial(self, e: ast.Expression) -> dict[str, Any]:
        """The parameters of a CRCPolynomial instance or constructor call."""
        if isinstance(e, ast.PathExpression) and isinstance(e.decl, ast.InstanceDecl):
            d = e.decl
            names = [p.name for p in d.ctor_params]
            values = list(d.ctor_args)
            ty = d.resolved
        elif isinstance(e, ast.MethodCall) and e.call is not None:
            names = [p.name for p in e.call.params]
            values = list(e.call.args)
            ty = e.type
        else:
            raise UnsupportedError("a CRCPolynomial that is not an instance", e.loc)
        out: dict[str, Any] = {}
        for n, v in zip(names, values):
            if v is None or v.value is None:
                raise UnsupportedError(f"CRCPolynomial argument '{n}' is not constant", e.loc)
            out[n] = v.value
        targs = ty.type_args if isinstance(ty, t.ExternType) else ()
        out["width"] = bit_width(targs[0]) if targs else 32
        return out

    def inline_hash(self, e: ast.MethodCall) -> dict[str, Any]:
        c = e.call
        assert c is not None
        spec: dict[str, Any] = {}
        for p, a in zip(c.params, c.args):
            if a is None:
                continue
            if p.name == "poly":
                spec["poly"] = self.crc_polynomial(a)
            elif isinstance(a.value, ast.EnumValue):
                spec[p.name] = a.value.member
        ty = e.type
        targs = ty.type_args if isinstance(ty, t.ExternType) else ()
        spec["width"] = bit_width(targs[0]) if targs else 32
        return spec

    def info_of(self, gname: str) -> ExternInfo:
        return next(x for x in self.externs if x.gname == gname)

    # -- register cells -----------------------------------------------------------------------

    def cell_to_value(self, code: str, cell: t.Type) -> str:
        """The P4 value of a stored cell integer (a struct built from its fields)."""
        if isinstance(cell, t.StructLikeType):
            parts = []
            shift = sum(bit_width(ft) for _, ft in cell.fields)
            for fname, ft in cell.fields:
                w = bit_width(ft)
                shift -= w
                v = f"(({code} >> {shift}) & {mask(w)})" if shift else f"({code} & {mask(w)})"
                if isinstance(unwrap(ft), t.BitType) and unwrap(ft).signed:  # type: ignore
                    v = wrap(v, ft)
                parts.append(f"({fname!r}, {v})")
            return (
                f"mk({self.types.class_name(cell)}, False, "
                f"({', '.join(parts)}{',' if len(parts) == 1 else ''}))"
            )
        return code

    def value_to_cell(self, code: str, cell: t.Type) -> str:
        if isinstance(cell, t.StructLikeType):
            parts = []
            shift = sum(bit_width(ft) for _, ft in cell.fields)
            for fname, ft in cell.fields:
                w = bit_width(ft)
                shift -= w
                v = f"({code}.{fname} & {mask(w)})"
                parts.append(f"({v} << {shift})" if shift else v)
            return "(" + " | ".join(parts) + ")"
        return code

    def register_action_fn(
        self,
        decl: ast.InstanceDecl,
        block: BlockInstance | None,
        cell: t.Type,
        out_t: t.Type | None,
    ) -> str:
        own = block if block is not None and decl in block.decl.locals else None
        key = (id(decl), id(own))
        name = self._ra_fns.get(key)
        if name is not None:
            return name
        impl = next((f for f in decl.initializer if f.name == "apply"), None)
        if impl is None:
            raise UnsupportedError(f"'{decl.name}' has no apply implementation", decl.loc)
        name = self.gname("RA")
        self._ra_fns[key] = name
        ctx = FnContext("function", own)
        if own is not None:
            bctx = self.block_context(own)
            ctx.env.update(bctx.env)
            ctx.ctx_args = bctx.ctx_args
        value_p = impl.params[0]
        rv_p = impl.params[1] if len(impl.params) > 1 else None
        ctx.env[value_p] = "a_value"
        if rv_p is not None:
            ctx.env[rv_p] = "a_rv"
        ctx.ret_expr = "a_value, a_rv"
        args = [a for a in ctx.ctx_args.split(", ") if a] + ["a_value"]
        with self.function(f"def {name}({', '.join(args)}):", ctx):
            self.line(f"a_rv = {self.types.default(out_t) if out_t is not None else 0}")
            self.block(impl.body)
            self.line("return (None, a_value, a_rv)")
        return name

    def execute_register_action(
        self,
        c: ast.CallInfo,
        g: str,
        info: ExternInfo,
        index: ast.Expression | None,
        result: str | None,
    ) -> None:
        decl = c.receiver.decl if isinstance(c.receiver, ast.PathExpression) else None
        assert isinstance(decl, ast.InstanceDecl)
        targs = info.args.get("type_args", ())
        cell = unwrap(targs[0]) if targs else t.BitType(32)
        out_t = targs[-1] if len(targs) >= 2 else None
        fn = self.register_action_fn(decl, self.fn.block, cell, out_t)
        reg = info.args["register"]
        rinfo = self.info_of(reg)
        init = rinfo.args.get("initial", 0)
        own = (
            self.fn.block
            if self.fn.block is not None and decl in self.fn.block.decl.locals
            else None
        )
        ctx = self.block_context(own).ctx_args if own is not None else ""
        v = self.fn.fresh("rc")
        if index is None:  # DirectRegisterAction: the cell of the entry the table hit
            h = self.fn.fresh("rh")
            self.line(f"{h} = R.hit")
            self.line(f"{v} = {reg}.cells.get({h}.handle, {init}) if {h} is not None else {init}")
        else:
            i = self.fn.fresh("ri")
            size = int(rinfo.args.get("size", 0) or 0)
            self.line(f"{i} = {self.ex(index)}")
            self.line(f"{v} = {reg}.values[{i}] if 0 <= {i} < {size} else {init}")
        r = self.fn.fresh("rr")
        call_args = ", ".join(filter(None, [ctx, self.cell_to_value(v, cell)]))
        self.line(f"{r} = {fn}({call_args})")
        new = self.value_to_cell(f"{r}[1]", cell)
        if index is None:
            self.line(f"if {h} is not None: {reg}.cells[{h}.handle] = {new}")
        else:
            self.line(f"if 0 <= {i} < {size}: {reg}.values[{i}] = {new}")
        if result is not None:
            self.line(f"{result} = {r}[2]")

    # -- extern methods -----------------------------------------------------------------------

    def extern_method(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        g, info = self.receiver_global(c)
        kind, m = info.kind, c.name
        a = dict(zip((p.name for p in c.params), c.args))
        res = result or "_"
        if kind in ("RegisterAction", "DirectRegisterAction") and m == "execute":
            self.execute_register_action(c, g, info, a.get("index"), result)
        elif kind == "Register" and m in ("read", "write"):
            cell = info.args["cell_type"]
            size = int(info.args.get("size", 0) or 0)
            i = self.fn.fresh("ri")
            self.line(f"{i} = {self.ex(a['index'])}")
            if m == "read":
                cur = self.cell_to_value(f"{g}.values[{i}]", cell)
                init = self.cell_to_value(str(info.args.get("initial", 0)), cell)
                self.line(f"{res} = {cur} if 0 <= {i} < {size} else {init}")
            else:
                value = self.value_to_cell(self.ex(a["value"]), cell)
                self.line(f"if 0 <= {i} < {size}: {g}.values[{i}] = {value}")
        elif kind == "DirectRegister" and m in ("read", "write"):
            cell = info.args["cell_type"]
            init = info.args.get("initial", 0)
            h = self.fn.fresh("rh")
            self.line(f"{h} = R.hit")
            if m == "read":
                cur = self.cell_to_value(
                    f"({g}.cells.get({h}.handle, {init}) if {h} is not None else {init})", cell
                )
                self.line(f"{res} = {cur}")
            else:
                value = self.value_to_cell(self.ex(a["value"]), cell)
                self.line(f"if {h} is not None: {g}.cells[{h}.handle] = {value}")
        elif kind == "Hash" and m == "get":
            vals, widths = self.field_tuples(a["data"])
            self.line(f"{res} = {g}.get({vals}, {widths})")
        elif kind == "Random" and m == "get":
            self.line(f"{res} = R.rng.getrandbits({info.args.get('width', 32)})")
        elif kind == "Counter" and m == "count":
            size = int(info.args.get("size", 0) or 0)
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(a['index'])}")
            self.line(f"if 0 <= {i} < {size}:")
            with self.indent():
                self.line(f"{g}.packets[{i}] += 1")
                self.line(f"{g}.bytes[{i}] += {self.byte_count(a)}")
        elif kind == "DirectCounter" and m == "count":
            h = self.fn.fresh("rh")
            self.line(f"{h} = R.hit")
            self.line(f"if {h} is not None:")
            with self.indent():
                self.line(f"{h}.cnt[0] += 1")
                self.line(f"{h}.cnt[1] += {self.byte_count(a)}")
        elif kind == "Meter" and m == "execute":
            i = self.fn.fresh("i")
            self.line(f"{i} = {self.ex(a['index'])}")
            pre = f"pre_color({self.ex(a['color'])})" if a.get("color") is not None else "0"
            size = int(info.args.get("size", 0) or 0)
            self.line(
                f"{res} = {g}.colors[{g}.meters[{i}].execute(R.now, "
                f"{self.byte_count(a)}, {pre})] if 0 <= {i} < {size} else {g}.colors[0]"
            )
        elif kind == "DirectMeter" and m == "execute":
            pre = f"pre_color({self.ex(a['color'])})" if a.get("color") is not None else "0"
            h = self.fn.fresh("rh")
            self.line(f"{h} = R.hit")
            self.line(
                f"{res} = {g}.colors[{h}.meter.execute(R.now, {self.byte_count(a)}, "
                f"{pre})] if {h} is not None and {h}.meter is not None else "
                f"{g}.colors[0]"
            )
        elif kind == "Checksum":
            self.checksum_method(g, m, a, res)
        elif kind == "ParserCounter":
            if m == "set" and "max" in a:
                args = ", ".join(self.ex(a[n]) for n in ("field", "max", "rotate", "mask", "add"))
                self.line(f"{g}.set_field({args})")
            elif m == "set":
                self.line(f"{g}.set({self.ex(a['value'])})")
            elif m in ("increment", "decrement"):
                self.line(f"{g}.{m}({self.ex(a['value'])})")
            elif m in ("is_zero", "is_negative"):
                self.line(f"{res} = {g}.{m}()")
            else:
                raise UnsupportedError(f"ParserCounter.{m}", e.loc)
        elif kind == "Mirror" and m == "emit":
            data = self.serialized(a.get("hdr"))
            self.line(f"R.mirror = ({self.ex(a['session_id'])}, {data})")
        elif kind == "Resubmit" and m == "emit":
            self.line(f"R.resub = {self.serialized(a.get('hdr'))}")
        elif kind == "Digest" and m == "pack":
            data = a["data"]
            assert data is not None
            fields = self.flatten(data)
            names = tuple(f[2].split(".")[-1] for f in fields)
            self.line(
                f"R.dq.append(Digest({info.name!r}, 0, {self.tuple_of(fields, 0)}, {names!r}))"
            )
        else:
            raise UnsupportedError(f"extern method {kind}.{m}", e.loc)

    def byte_count(self, a: dict[str, ast.Expression | None]) -> str:
        adj = a.get("adjust_byte_count")
        return f"(R.plen + {self.ex(adj)})" if adj is not None else "R.plen"

    def field_tuples(self, e: ast.Expression | None) -> tuple[str, str]:
        """(values, widths) tuple codes of a field list, every field included (Tofino's hash
        crossbar reads the containers whatever the headers' validity)."""
        if e is None:
            return "()", "()"
        fields = self.flatten(e)
        return self.tuple_of(fields, 0), "(" + "".join(f"{f[1]}, " for f in fields) + ")"

    def serialized(self, e: ast.Expression | None) -> str:
        """Bytes code of a mirror/resubmit header: its fields packed in the type's order."""
        if e is None:
            return "b''"
        ty = unwrap(e.type)
        if isinstance(e, ast.StructExpression) and isinstance(ty, t.StructLikeType):
            given = {f.name: f.expr for f in e.fields}
            exprs = [given[n] for n, _ in ty.fields if n in given]
            fields = [f for x in exprs for f in self.flatten(x)]
        else:
            fields = self.flatten(e)
        vals = self.tuple_of(fields, 0)
        widths = "(" + "".join(f"{f[1]}, " for f in fields) + ")"
        return f"fields_to_bytes({vals}, {widths})"

    def checksum_method(
        self, g: str, m: str, a: dict[str, ast.Expression | None], res: str
    ) -> None:
        if m in ("add", "subtract"):
            vals, widths = self.field_tuples(a.get("data"))
            self.line(f"{g}.{m}({vals}, {widths})")
        elif m == "verify":
            self.line(f"{res} = {g}.verify()")
        elif m == "get":
            self.line(f"{res} = {g}.get()")
        elif m == "subtract_all_and_deposit":
            target = a.get("residual")
            assert target is not None
            self.assign(target, f"{g}.get()")
        elif m == "update":
            data = a.get("data")
            assert data is not None
            # the deparser's checksum engine sums the fields of valid headers only
            vals, widths = self.checksum_data(data)
            zao = a.get("zeros_as_ones")
            zcode = self.ex(zao) if zao is not None else "False"
            self.line(f"{res} = csum_update(fields_to_bytes({vals}, {widths}), {zcode})")
        else:
            raise UnsupportedError(f"Checksum.{m}")

    # -- extern functions ---------------------------------------------------------------------

    def call_expr(self, e: ast.MethodCall) -> str:
        c = e.call
        if c is not None and c.kind == "extern_function" and c.name == "port_metadata_unpack":
            return self.port_metadata_unpack(e, c)
        return super().call_expr(e)

    def extern_function(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        if c.name == "port_metadata_unpack":
            self.port_metadata_unpack(e, c)
            return
        super().extern_function(e, c)

    def port_metadata_unpack(self, e: ast.MethodCall, c: ast.CallInfo) -> str:
        """``port_metadata_unpack<T>(pkt)``: T from the next PORT_METADATA_SIZE bits (its
        first bits; the rest padding), which it consumes (the ingress parser's port metadata)."""
        if self.fn.kind != "parser":
            raise UnsupportedError("port_metadata_unpack outside a parser", e.loc)
        ty = unwrap(c.type_bindings.get("T") or e.type)
        w = t.type_bit_width(ty) if not isinstance(ty, t.BitType) else ty.width
        if w > PORT_METADATA_BITS:
            raise UnsupportedError(
                f"port metadata of {w} bits (Tofino has {PORT_METADATA_BITS})", e.loc
            )
        too_short = self.error_code("PacketTooShort")
        self.line(
            f"if _pos + {PORT_METADATA_BITS} > _nb: raise ParserErrorSignal({too_short}, _pos)"
        )
        tmp = self.fn.fresh("pm")
        raw = self.fn.fresh("lk")
        self.line(f"{raw} = read_bits(_pkt, _pos, {w})")
        if isinstance(ty, t.StructLikeType):
            self.line(f"{tmp} = {self.types.class_name(ty)}()")
            self.unpack_lookahead(tmp, ty, raw, w)
        else:
            self.line(f"{tmp} = {raw}")
        self.line(f"_pos += {PORT_METADATA_BITS}")
        return tmp


def generate(checked: CheckedProgram, trace: bool = False) -> TnaGeneratedProgram:
    """Compile a TNA program to Python source plus the descriptions of its run-time objects."""
    return TnaGenerator(checked, trace).generate()
