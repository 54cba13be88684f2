"""Compile a checked v1model program into one C translation unit (the C engine's program).

The mirror of engine/codegen.py, from the same CheckedProgram: one C function per block
instance, action (per block using it), table apply and P4 function, with the Python
generator's evaluation order and copy-in/copy-out, so both engines behave alike.

Calling conventions (every function returns a status, runtime/ss_prog.h: SS_OK, SS_EXIT,
SS_PERR, SS_ASSERT; ``_rc`` holds it and ``goto _end`` leaves, running the copy-outs):
- every function takes the program instance ``R`` first (tables, counters, registers and the
  per-pass state: packet length, time, payload, end-of-pass requests);
- composite parameters are pointers; scalar ``in`` parameters values; scalar out/inout
  parameters pointers to the caller's temporaries (the caller copies in before and out after,
  also on ``exit``; not after a parser error, as p4c's inlined sub-parsers);
- a control's scalar parameters and variables live in a frame struct ``F`` its actions share;
  an action ``A(R, ctx..., directional..., const u128 *_a)`` gets its control-plane arguments in
  `_a` (a table entry's ``args``); a table ``T(R, ctx..., &hit, &aid)``;
- a parser ``P(R, _pkt, _nb, _pp, params...)`` advances the bit position ``*_pp``.

The pass entry points (`ssp_parse`, `ssp_ingress`, `ssp_egress`, `ssp_deparse`,
`ssp_field_list`) are what native/pipeline.py calls; the split follows the walk's steps so the
end-of-pass decisions stay in the one Python walk (engine/pipeline.py) for now.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from softswitch.engine.codegen import Generator
from softswitch.engine.codegen_expr import is_runtime_element, lvalue_spine
from softswitch.errors import NativeUnsupported, P4Error
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.checked import BlockInstance, CheckedProgram
from softswitch.ir.names import top_block_paths
from softswitch.native.cgen_alias import by_reference
from softswitch.native.cgen_expr import CExprGen, CFnContext, literal
from softswitch.native.cgen_externs import CExternGen, DigestSite
from softswitch.native.cgen_loops import CLoopGen
from softswitch.native.cgen_parser import CParserGen
from softswitch.native.cgen_tables import CTableGen, NativeTableInfo
from softswitch.native.cgen_types import (
    CTypes,
    c_literal,
    is_composite,
    is_wide,
    scalar_width,
    unwrap,
)
from softswitch.native.cgen_walk import WALK_CDEF, walk_source

_CONTROL_ROLES = ("verify_checksum", "ingress", "egress", "compute_checksum")

#: a program write of an observed register cell goes to the log Python drains after the call
#: (native/externs.py); the log grows by doubling, so no allocation per packet once warm
OBSERVE_C = """
static void ss_observed(I_t *R, int slot, uint64_t idx, u128 v) {
    if (R->nobs == R->obs_cap) {
        uint32_t cap = R->obs_cap ? 2 * R->obs_cap : 64;
        ss_obs_t *grown = realloc(R->obs, cap * sizeof *grown);
        if (!grown) return;
        R->obs = grown; R->obs_cap = cap;
    }
    ss_obs_t *o = &R->obs[R->nobs++];
    o->slot = slot; o->idx = idx; o->lo = (uint64_t)v; o->hi = (uint64_t)(v >> 64);
}"""


@dataclass
class NativeExtern:
    """A counter or register array of the instance: its control-plane name and slot."""

    name: str
    kind: str  # "counter" | "register" | others in R->ext (cgen_externs.ext_slot)
    slot: int
    size: int
    width: int = 0  # registers: cell width
    signed: bool = False
    counter_type: str = "packets"  # counters and meters: packets | bytes


@dataclass
class NativeProgram:
    """The C source of one program plus what the Python side needs to drive it."""

    source: str
    cdef: str
    tables: list[NativeTableInfo]
    externs: list[NativeExtern]
    digests: list[DigestSite]
    field_lists: list[int]  # @field_list indices ssp_field_list knows
    sm_fields: list[str] = field(default_factory=list)


class CGenerator(CExprGen, CTableGen, CParserGen, CExternGen, CLoopGen):
    """Walks a CheckedProgram once and writes the C translation unit."""

    def __init__(self, checked: CheckedProgram) -> None:
        if checked.arch != self.ARCH:
            raise NativeUnsupported(f"architecture '{checked.arch}'")
        self.checked = checked
        self.types = self.new_types()
        self.top_paths = top_block_paths(checked)
        self.errors = checked.errors
        self.protos: list[str] = []
        self.funcs: list[str] = []
        self.frames: list[str] = []
        self.out: list[str] = []
        self.ind = 1
        self.fn = CFnContext("module", None)
        self.tables: list[NativeTableInfo] = []
        self.externs: list[NativeExtern] = []
        self.digest_sites: list[DigestSite] = []
        self._extern_slots: dict[tuple[int, int], NativeExtern] = {}
        self._table_fns: dict[tuple[int, int], str] = {}
        self._action_fns: dict[tuple[int, int], str] = {}
        self._aids: dict[int, int] = {}
        self._block_fns: dict[int, str] = {}
        self._frame_names: dict[int, str] = {}
        self._function_fns: dict[int, str] = {}
        self._counter = 0
        self._side_effects: dict[ast.Node, bool] = {}
        self._loops: list[tuple[CFnContext, list[ast.Statement]]] = []
        self.sm_type = self.standard_metadata_type()

    ARCH = "v1model"  # the architecture this generator compiles (cgen_tna: "tna")

    @staticmethod
    def new_types() -> CTypes:
        return CTypes()

    def standard_metadata_type(self) -> str:
        """The C name of standard_metadata's struct (cgen_alias keeps its copies)."""
        ingress = self.checked.blocks["ingress"].decl
        if len(ingress.params) < 3:
            raise NativeUnsupported("an ingress control without standard_metadata")
        return self.types.name(ingress.params[2].type)

    # -- small utilities ---------------------------------------------------------------------

    def gname(self, base: str) -> str:
        self._counter += 1
        return f"{base}{self._counter}"

    def error_code(self, name: str) -> int:
        return self.errors.index(name) if name in self.errors else 0

    def line(self, text: str) -> None:
        self.out.append("    " * self.ind + text)

    @contextmanager
    def function(self, signature: str, ctx: CFnContext, outs: list[str] | None = None
                 ) -> Iterator[None]:
        """A C function `signature` whose body the block emits; `outs` run at ``_end``."""
        saved = (self.out, self.ind, self.fn)
        self.out, self.ind, self.fn = [], 1, ctx
        try:
            self.line("int _rc = SS_OK;")
            yield
            self.line("goto _end;")
            self.out.append("_end:")
            for o in outs or []:
                self.line(o)
            self.line("return _rc;")
            self.protos.append(f"static int {signature};")
            self.funcs.append(f"static int {signature} {{\n" + "\n".join(self.out) + "\n}\n")
        finally:
            self.out, self.ind, self.fn = saved

    @contextmanager
    def indent(self) -> Iterator[None]:
        self.ind += 1
        try:
            yield
        finally:
            self.ind -= 1

    def leave(self, status: str) -> None:
        """Stop the function with `status` (copy-outs run at _end)."""
        self.line(f"{{ _rc = {status}; goto _end; }}")

    def check_rc(self) -> None:
        self.line("if (_rc) goto _end;")

    # -- entry point --------------------------------------------------------------------------

    def generate(self) -> NativeProgram:
        blocks = self.checked.blocks
        try:
            fns = {}
            for role in ("parser", *_CONTROL_ROLES, "deparser"):
                block = blocks[role]
                fns[role] = (self.parser_fn(block) if role == "parser"
                             else self.control_fn(block, top=True))
            ingress = blocks["ingress"].decl
            hdr_t, meta_t, sm_t = (p.type for p in ingress.params[:3])
            hdr, meta, sm = (self.types.name(x) for x in (hdr_t, meta_t, sm_t))
            field_lists = self.field_list_copiers(meta_t, meta)
            entry = self.entry_points(fns, blocks, hdr, meta, sm, field_lists)
            sm_u = unwrap(sm_t)
            assert isinstance(sm_u, t.StructLikeType)
            sm_cdef = self.sm_cdef(sm_u)
        except P4Error:
            raise
        except Exception as exc:  # a gap in the generator: report it, never a traceback
            raise NativeUnsupported(f"C generation failed ({type(exc).__name__}: {exc})") \
                from exc
        inst = self.instance_struct()
        source = "\n".join([
            "/* Generated by softswitch.native.cgen — do not edit. */",
            '#include "ss_prog.h"',
            "#pragma GCC diagnostic ignored \"-Wmissing-braces\"",
            "#pragma GCC diagnostic ignored \"-Wunused-label\"",
            "#pragma GCC diagnostic ignored \"-Wunused-variable\"",
            "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"",
            inst, OBSERVE_C, *self.types.lines, *self.frames, *self.protos, *self.funcs,
            *entry, *walk_source(hdr, meta, sm), ""])
        cdef = "\n".join([
            inst, sm_cdef,
            "int ssp_init(I_t *R);",
            "size_t ssp_sizeof(int which);",
            "uint32_t ssp_parse(I_t *R, void *h, void *m, void *sm, const uint8_t *pkt, "
            "uint32_t len);",
            "int ssp_ingress(I_t *R, void *h, void *m, void *sm, uint64_t plen, uint64_t now, "
            "const uint8_t *payload, uint32_t paylen);",
            "int ssp_egress(I_t *R, void *h, void *m, void *sm, uint64_t plen, uint64_t now, "
            "const uint8_t *payload, uint32_t paylen);",
            "int ssp_deparse(I_t *R, void *h, void *m, const uint8_t *payload, uint32_t paylen, "
            "uint8_t *out, uint32_t cap);",
            "void ssp_field_list(int idx, const void *src, void *dst);",
            "void ssp_free(I_t *R);",
            WALK_CDEF,
            ""])
        return NativeProgram(source, cdef, self.tables, self.externs, self.digest_sites,
                             field_lists, [f for f, _ in sm_u.fields])

    def sm_cdef(self, sm: t.StructLikeType) -> str:
        """standard_metadata's struct for cffi (the walk reads and writes its fields)."""
        fields = []
        for f, ft in sm.fields:
            ct = self.types.ctype(ft)
            if ct not in ("uint64_t", "uint8_t"):
                raise NativeUnsupported(f"standard_metadata field '{f}' of type {ft}")
            fields.append(f"{ct} {f};")
        return f"typedef struct {{ {' '.join(fields)} }} sm_t;"

    def instance_struct(self) -> str:
        """The program instance (cffi sees the same declaration): per-pass state and the
        pointers to the tables, counter and register cells Python allocates."""
        nt = max(1, len(self.tables))
        nc = max(1, sum(1 for x in self.externs if x.kind == "counter"))
        nr = max(1, sum(1 for x in self.externs if x.kind == "register"))
        nx = max(1, sum(1 for x in self.externs if x.kind not in ("counter", "register")))
        nd = max(1, max((len(s.fields) for s in self.digest_sites), default=1))
        return (
            "typedef struct ss_obs_t { int32_t slot; uint32_t pad; uint64_t idx, lo, hi; } "
            "ss_obs_t;\n"
            "typedef struct I_t {\n"
            "    uint64_t plen, now, drop_port, truncate, clone_session;\n"
            "    const uint8_t *payload; uint32_t paylen, ppos; int32_t perr;\n"
            "    uint32_t req; int32_t clone_type, clone_fl, resubmit_fl, recirc_fl;\n"
            "    uint8_t *out; uint32_t olen, ocap;\n"
            "    void *sm;\n"
            f"    int32_t ndig; int32_t dig_site[8]; uint64_t dig_recv[8];"
            f" uint64_t dig_vals[8][{2 * nd}];\n"
            f"    void *tables[{nt}];\n"
            f"    uint64_t *cnt_p[{nc}]; uint64_t *cnt_b[{nc}];\n"
            f"    void *reg[{nr}]; uint8_t reg_obs[{nr}];\n"
            "    uint32_t nobs, obs_cap; ss_obs_t *obs;\n"
            f"    void *ext[{nx}];\n"  # meters, direct meters, profiles, value sets (cgen_externs)
            "    uint32_t mt[624]; int32_t mti;\n"
            "} I_t;")

    def entry_points(self, fns: dict[str, str], blocks: dict[str, BlockInstance], hdr: str,
                     meta: str, sm: str, field_lists: list[int]) -> list[str]:
        def call(role: str, args: dict[str, str]) -> str:
            decl = blocks[role].decl
            names = []
            for p in decl.params:
                pt = unwrap(p.type)
                if isinstance(pt, t.ExternType):
                    continue
                names.append(args[self._param_role(p.type, hdr, meta, sm)])
            return ", ".join(names)

        ptrs = {"hdr": f"({hdr} *)h", "meta": f"({meta} *)m", "sm": f"({sm} *)sm"}
        begin = ("R->plen = plen; R->now = now; R->payload = payload; R->paylen = paylen; "
                 "R->req = 0; R->ndig = 0; R->truncate = 0; R->sm = sm;")
        lines = [
            "int ssp_init(I_t *R) { ss_mt_seed((ss_mt *)R->mt, 0); return 0; }",
            "void ssp_free(I_t *R) { free(R->obs); R->obs = NULL; R->obs_cap = R->nobs = 0; }",
            f"size_t ssp_sizeof(int which) {{ return which == 0 ? sizeof({hdr}) : which == 1 "
            f"? sizeof({meta}) : sizeof({sm}); }}",
            "uint32_t ssp_parse(I_t *R, void *h, void *m, void *sm, const uint8_t *pkt, "
            "uint32_t len) {",
            "    uint32_t pos = 0; R->sm = sm;",
            f"    int rc = {fns['parser']}(R, pkt, len * 8u, &pos, "
            f"{call('parser', ptrs)});",
            f"    if (rc == SS_PERR) {{ pos = R->ppos; if (R->perr >= 0) (({sm} *)sm)"
            "->parser_error = (uint64_t)R->perr; }",
            "    else if (rc) pos = 0;",
            "    return (pos + 7) >> 3;",
            "}",
            "int ssp_ingress(I_t *R, void *h, void *m, void *sm, uint64_t plen, uint64_t now, "
            "const uint8_t *payload, uint32_t paylen) {",
            f"    {begin}",
            f"    int rc = {fns['verify_checksum']}(R, {call('verify_checksum', ptrs)});",
            "    if (rc == SS_EXIT) rc = SS_OK;",
            "    if (rc) return rc;",
            f"    rc = {fns['ingress']}(R, {call('ingress', ptrs)});",
            "    return rc == SS_EXIT ? SS_OK : rc;",
            "}",
            "int ssp_egress(I_t *R, void *h, void *m, void *sm, uint64_t plen, uint64_t now, "
            "const uint8_t *payload, uint32_t paylen) {",
            f"    {begin}",
            f"    int rc = {fns['egress']}(R, {call('egress', ptrs)});",
            "    return rc == SS_EXIT ? SS_OK : rc;",
            "}",
            "int ssp_deparse(I_t *R, void *h, void *m, const uint8_t *payload, uint32_t paylen, "
            "uint8_t *out, uint32_t cap) {",
            "    R->payload = payload; R->paylen = paylen; R->out = out; R->olen = 0; "
            "R->ocap = cap;",
            f"    int rc = {fns['compute_checksum']}(R, {call('compute_checksum', ptrs)});",
            "    if (rc == SS_EXIT) rc = SS_OK;",
            "    if (rc) return -rc;",
            f"    rc = {fns['deparser']}(R, {call('deparser', ptrs)});",
            "    if (rc == SS_EXIT) rc = SS_OK;",
            "    return rc ? -rc : (int)R->olen;",
            "}",
            "void ssp_field_list(int idx, const void *src, void *dst) {",
            f"    const {meta} *s = src; {meta} *d = dst;",
            "    switch (idx) {",
        ]
        for idx in field_lists:
            lines.append(f"    case {idx}: FLP_{idx}(s, d); break;")
        lines += ["    default: break;", "    }", "}"]
        return lines

    def _param_role(self, ty: t.Type | None, hdr: str, meta: str, sm: str) -> str:
        name = self.types.name(unwrap(ty))
        for role, n in (("hdr", hdr), ("meta", meta), ("sm", sm)):
            if name == n:
                return role
        raise NativeUnsupported(f"a top-level block parameter of type {unwrap(ty)}")

    # -- names of run-time objects ---------------------------------------------------------

    def constant_code(self, decl: ast.ConstantDecl) -> str:
        v = decl.init.value
        if v is not None and not is_composite(decl.type_ref.resolved):
            return literal(v, decl.type_ref.resolved)
        return self.ex(decl.init)

    def aid(self, decl: ast.ActionDecl) -> int:
        return self._aids.setdefault(id(decl), len(self._aids))

    # -- controls -----------------------------------------------------------------------------

    def frame_name(self, block: BlockInstance) -> str | None:
        """The frame struct of a control with scalar parameters or variables (None: none)."""
        decl = block.decl
        has = any(not is_composite(p.type) and not isinstance(unwrap(p.type), t.ExternType)
                  for p in decl.params) or any(isinstance(v, ast.VariableDecl)
                                               for v in decl.locals)
        if not has:
            return None
        name = self._frame_names.get(id(block))
        if name is None:
            name = self.gname("FR")
            self._frame_names[id(block)] = name
            slots = [f"{self.types.ctype(p.type)} x_{p.name};" for p in decl.params
                     if not is_composite(p.type)
                     and not isinstance(unwrap(p.type), t.ExternType)]
            slots += [f"{self.types.ctype(v.type_ref.resolved)} v_{v.name};"
                      for v in decl.locals if isinstance(v, ast.VariableDecl)]
            self.frames.append(f"typedef struct {{ {' '.join(slots)} }} {name};")
        return name

    def block_context(self, block: BlockInstance) -> CFnContext:
        """A control's context (env for its params/locals, ctx args) without emitting it."""
        decl = block.decl
        ctx = CFnContext("control", block)
        args, params = ["R"], ["I_t *R"]
        for p in decl.params:
            pt = unwrap(p.type)
            if isinstance(pt, t.ExternType):
                if pt.name == "packet_out":
                    ctx.env[p] = ""
                    ctx.packet = p
                continue
            if is_composite(pt):
                ctx.env[p] = f"(*p_{p.name})"
                args.append(f"p_{p.name}")
                params.append(f"{self.types.ctype(pt)} *p_{p.name}")
            else:
                ctx.env[p] = f"F->x_{p.name}"
        frame = self.frame_name(block)
        for v in decl.locals:
            if isinstance(v, ast.VariableDecl):
                ctx.env[v] = f"F->v_{v.name}"
        if frame is not None:
            args.append("F")
            params.append(f"{frame} *F")
        ctx.ctx_args = ", ".join(args)
        ctx.ctx_params = ", ".join(params)
        for v in decl.locals:
            if isinstance(v, ast.ConstantDecl):
                saved, self.fn = self.fn, ctx
                try:
                    ctx.env[v] = self.constant_code(v)
                finally:
                    self.fn = saved
        return ctx

    def control_fn(self, block: BlockInstance, top: bool = False) -> str:
        name = self._block_fns.get(id(block))
        if name is not None:
            return name
        decl = block.decl
        assert isinstance(decl, ast.ControlDecl)
        name = self.gname("B")
        self._block_fns[id(block)] = name
        ctx = self.block_context(block)
        params = ["I_t *R"]
        scalars: list[ast.Parameter] = []
        for p in decl.params:
            pt = unwrap(p.type)
            if isinstance(pt, t.ExternType):
                continue
            ct = self.types.ctype(pt)
            if is_composite(pt):
                params.append(f"{ct} *p_{p.name}")
            elif p.direction in ("out", "inout"):
                params.append(f"{ct} *p_{p.name}")
                scalars.append(p)
            else:
                params.append(f"{ct} p_{p.name}")
                scalars.append(p)
        frame = self.frame_name(block)
        outs = [f"*p_{p.name} = F->x_{p.name};" for p in scalars
                if p.direction in ("out", "inout")]
        with self.function(f"{name}({', '.join(params)})", ctx, outs):
            if frame is not None:
                self.line(f"{frame} F_ = {{0}}; {frame} *F = &F_;")
            for p in scalars:
                src = f"*p_{p.name}" if p.direction in ("out", "inout") else f"p_{p.name}"
                self.line(f"F->x_{p.name} = {src};")
            for v in decl.locals:
                if isinstance(v, ast.VariableDecl):
                    self.var_init(f"F->v_{v.name}", v, declare=False)
            self.block(decl.body)
        return name

    def var_init(self, target: str, v: ast.VariableDecl, declare: bool = True) -> None:
        ty = v.type_ref.resolved
        ct = self.types.ctype(ty)
        default = self.types.default(ty)
        code = default if v.init is None else self.value_ex(v.init, default)
        self.line(f"{ct} {target} = {code};" if declare else f"{target} = {code};")

    # -- actions ------------------------------------------------------------------------------

    def action_fn(self, decl: ast.ActionDecl, block: BlockInstance) -> str:
        key = (id(decl), id(block))
        name = self._action_fns.get(key)
        if name is not None:
            return name
        name = self.gname("A")
        self._action_fns[key] = name
        block_ctx = self.block_context(block)
        ctx = CFnContext("action", block, ctx_args=block_ctx.ctx_args,
                         ctx_params=block_ctx.ctx_params)
        if decl in block.decl.locals:
            ctx.env.update(block_ctx.env)
        params = [block_ctx.ctx_params]
        for p in decl.params:
            if p.direction:
                params.append(self.c_param(p, ctx))
        params.append("const u128 *_a")
        with self.function(f"{name}({', '.join(params)})", ctx):
            cp = [p for p in decl.params if not p.direction]
            for i, p in enumerate(cp):
                if is_wide(p.type):  # an entry's arguments are u128 cells
                    raise NativeUnsupported("action data wider than 128 bits", p.loc)
                ct = self.types.ctype(p.type)
                self.line(f"{ct} a_{p.name} = ({ct})_a[{i}];")
                ctx.env[p] = f"a_{p.name}"
            self.block(decl.body)
        return name

    # -- statements ---------------------------------------------------------------------------

    def block(self, b: ast.BlockStatement) -> None:
        for s in b.statements:
            self.stmt(s)

    def stmt(self, s: ast.Statement | ast.Declaration) -> None:
        if isinstance(s, ast.BlockStatement):
            self.line("{")
            with self.indent():
                self.block(s)
            self.line("}")
        elif isinstance(s, ast.AssignmentStatement):
            self.assign_stmt(s)
        elif isinstance(s, ast.MethodCallStatement):
            self.line("{")
            with self.indent():
                self.call_stmt(s.call)
            self.line("}")
        elif isinstance(s, ast.IfStatement):
            self.line("{")
            with self.indent():
                self.line(f"if ({self.cond_ex(s.cond)}) {{")
                with self.indent():
                    self.stmt(s.then)
                if s.otherwise is not None:
                    self.line("} else {")
                    with self.indent():
                        self.stmt(s.otherwise)
                self.line("}")
            self.line("}")
        elif isinstance(s, ast.SwitchStatement):
            self.line("{")
            with self.indent():
                self.switch(s)
            self.line("}")
        elif isinstance(s, ast.ExitStatement):
            self.leave("SS_EXIT")
        elif isinstance(s, ast.ReturnStatement):
            self.ret(s)
        elif isinstance(s, ast.EmptyStatement):
            pass
        elif isinstance(s, ast.ForStatement | ast.ForInStatement | ast.BreakStatement
                        | ast.ContinueStatement):
            self.loop_stmt(s)
        elif isinstance(s, ast.VariableDecl):
            name = self.fn.fresh(f"v_{s.name}_")
            self.var_init(name, s)
            self.fn.env[s] = name
        elif isinstance(s, ast.ConstantDecl):
            self.fn.env[s] = self.constant_code(s)
        else:
            raise NativeUnsupported(f"statement {type(s).__name__}", s.loc)

    def ret(self, s: ast.ReturnStatement) -> None:
        if self.fn.kind == "function" and s.value is not None and self.fn.ret is not None:
            value = self.value_ex(s.value, self.types.default(s.value.type))
            self.line(f"{{ *{self.fn.ret} = {value}; goto _end; }}")
        else:
            self.line("goto _end;")

    def switch(self, s: ast.SwitchStatement) -> None:
        code, guards = self.collect(s.expr)
        var = self.tmp("sw", "int64_t" if self._is_action_run(s.expr) else "uint64_t", code)
        if guards:
            self.line(f"if ({' && '.join(guards)}) {{")
            with self.indent():
                self.switch_cases(s, var)
            self.line("}")
        else:
            self.switch_cases(s, var)

    @staticmethod
    def _is_action_run(e: ast.Expression) -> bool:
        return isinstance(e, ast.Member) and e.kind == "apply_action_run"

    switch_groups = Generator.switch_groups

    def switch_cases(self, s: ast.SwitchStatement, var: str) -> None:
        first = True
        groups, has_default, default_body = self.switch_groups(s)
        for vals, body in groups:
            cond = " || ".join(f"{var} == {v}" for v in vals)
            self.line(f"{'if' if first else '} else if'} ({cond}) {{")
            first = False
            with self.indent():
                if body is not None:
                    self.block(body)
        if has_default:
            # a miss of a table with an action profile runs no action (aid -1): not even
            # `default:` runs (see codegen.switch_cases)
            no_action = f"{var} != -1" if self.may_run_no_action(s.expr) else None
            if first:
                self.line(f"if ({no_action}) {{" if no_action else "{")
            else:
                self.line(f"}} else if ({no_action}) {{" if no_action else "} else {")
            with self.indent():
                if default_body is not None:
                    self.block(default_body)
            self.line("}")
        elif not first:
            self.line("}")

    may_run_no_action = staticmethod(Generator.may_run_no_action)

    def assign_stmt(self, s: ast.AssignmentStatement) -> None:
        lhs, rhs = s.lhs, s.rhs
        self.line("{")
        with self.indent():
            pinned: list[ast.Node] = []
            if (self.side_effects(rhs) or self.side_effects(lhs)) and any(
                    is_runtime_element(n) for n in lvalue_spine(lhs)):
                twin = rhs.left if s.compound and isinstance(rhs, ast.BinaryOp) else None
                pinned = self.fix_lvalue(lhs, twin)
            code = self.value_ex(rhs, self.types.default(lhs.type))
            self.assign(lhs, code)
            self.unpin(pinned)
        self.line("}")

    def assign(self, lhs: ast.Expression, rhs: str) -> None:
        if isinstance(lhs, ast.Slice):
            assert lhs.high is not None and lhs.low is not None
            if is_wide(lhs.expr.type):
                self.assign(lhs.expr, self.wide_set_slice(lhs, self.ex(lhs.expr), rhs))
                return
            bw = scalar_width(lhs.expr.type)
            field_mask = ((1 << (lhs.high - lhs.low + 1)) - 1) << lhs.low
            keep = ((1 << bw) - 1) & ~field_mask
            base = self.ex(lhs.expr)
            cast = "u128" if bw > 64 else "uint64_t"
            new = (f"(({base} & {c_literal(keep, bw)}) | ((({cast}){rhs} << {lhs.low}) & "
                   f"{c_literal(field_mask, bw)}))")
            self.assign(lhs.expr, new)
            return
        target = self.ex(lhs)
        self.line(f"{target} = {rhs};")
        self.union_member_set(lhs, f"{target}._v")

    # -- calls --------------------------------------------------------------------------------

    def emit_call(self, fn: str, ctx_args: str, params: list[ast.Parameter],
                  args: list[ast.Expression | None], result: str | None,
                  cp_exprs: list[tuple[ast.Parameter, ast.Expression | None]] | None = None,
                  parser: bool = False, cp_args: str | None = None,
                  isolated: bool = False) -> None:
        """Call `fn` with P4's copy-in/copy-out (spec 6.8): see codegen.emit_call. Every
        composite argument and every out/inout scalar goes through a temporary the callee
        gets a pointer to; the copy-out assigns them back left to right, also on exit (not
        after a parser error). `isolated`: the callee sees nothing of the caller but its
        arguments, so cgen_alias may pass some composites by pointer instead."""
        codes = [ctx_args] if ctx_args else []
        if result is not None:
            codes.append(f"&{result}")
        backs: list[tuple[str, ast.Expression]] = []
        pinned: list[ast.Node] = []
        evaluated = [*args, *(a for _, a in cp_exprs or [])]
        last_se = max((i for i, a in enumerate(evaluated) if self.side_effects(a)), default=-1)
        direct = by_reference(params, args, self.sm_type, self.types.name) if isolated \
            else set()
        for i, (p, a) in enumerate(zip(params, args)):
            if i in direct:
                assert a is not None
                codes.append(f"&{self.addressable(a, self.ex(a))}")
                continue
            composite = is_composite(p.type)
            writes = p.direction in ("out", "inout")
            ct = self.types.ctype(p.type)
            default = self.types.default(p.type)
            if a is None or isinstance(a, ast.DontCareExpression):
                if composite or writes:
                    codes.append(f"&{self.tmp('c', ct, default)}")
                else:
                    codes.append(default)
                continue
            if writes:
                pinned += self.fix_lvalue(a)
            code = default if p.direction == "out" else self.value_ex(a, default)
            if composite or writes:
                tmp = self.tmp("c", ct, code)
                codes.append(f"&{tmp}")
                if writes:
                    backs.append((tmp, a))
            else:
                if i < last_se:
                    code = self.snapshot(a, code)
                codes.append(code)
        if cp_exprs is not None:
            cp_codes = []
            for j, (p, a) in enumerate(cp_exprs, start=len(args)):
                code = "0" if a is None else self.value_ex(a, self.types.default(p.type))
                if a is not None and j < last_se:
                    code = self.snapshot(a, code)
                cp_codes.append(f"(u128){code}")
            if cp_codes:
                cp_args = self.fn.fresh("ca")
                self.line(f"u128 {cp_args}[{len(cp_codes)}] = {{{', '.join(cp_codes)}}};")
            else:
                cp_args = "NULL"
        if cp_args is not None:
            codes.append(cp_args)
        self.line(f"_rc = {fn}({', '.join(codes)});")
        if parser:
            self.check_rc()
        for tmp, a in backs:
            self.assign(a, tmp)
        if not parser:
            self.check_rc()
        self.unpin(pinned)

    def call_stmt(self, e: ast.MethodCall) -> None:
        c = e.call
        if c is None:
            raise NativeUnsupported("unresolved call", e.loc)
        if c.kind in ("builtin", "packet", "extern_method", "extern_function") \
                and self.fn.kind != "parser":
            indexed = self.runtime_indices([c.receiver, *c.args])
            if indexed:
                checks = []
                for a in indexed:
                    tmp = self.tmp("ix", "uint64_t", self.ex(a.index))
                    self.fn.pins[a.index] = tmp
                    size = unwrap(a.expr.type).size  # type: ignore[attr-defined]
                    checks.append(f"{tmp} < {size}")
                self.line(f"if ({' && '.join(dict.fromkeys(checks))}) {{")
                with self.indent():
                    self.call_stmt_unchecked(e, c)
                self.line("}")
                self.unpin([a.index for a in indexed])
                return
        self.call_stmt_unchecked(e, c)

    def call_stmt_unchecked(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        kind = c.kind
        if kind == "builtin":
            self.builtin_stmt(e, c)
        elif kind == "packet":
            self.packet_call(e, c, None)
        elif kind in ("extern_method", "extern_function"):
            pinned: list[ast.Node] = []
            if any(self.side_effects(a) for a in c.args):
                for p, a in zip(c.params, c.args):
                    if a is not None and p.direction in ("out", "inout"):
                        pinned += self.fix_lvalue(a)
            if kind == "extern_method":
                self.extern_method(e, c, None)
            else:
                self.extern_function(e, c)
            self.unpin(pinned)
        elif kind == "action":
            self.direct_action(e, c)
        elif kind == "function":
            self.function_call(e, c, None)
        elif kind == "table_apply":
            self.call_expr(e)
        elif kind == "apply":
            self.sub_block_call(e, c)
        else:
            raise NativeUnsupported(f"call of kind '{kind}'", e.loc)

    def call_expr(self, e: ast.MethodCall) -> str:
        c = e.call
        if c is None:
            raise NativeUnsupported("unresolved call", e.loc)
        if e.value is not None:
            return literal(e.value, e.type)
        kind = c.kind
        if kind == "table_apply":
            assert isinstance(c.decl, ast.TableDecl)
            block = self.fn.block
            assert block is not None
            fn = self.table_fn(c.decl, block)
            ctx = self.block_context(block)
            hit, aid = self.fn.fresh("h"), self.fn.fresh("a")
            self.line(f"uint8_t {hit} = 0; int64_t {aid} = -1;")
            self.line(f"_rc = {fn}({ctx.ctx_args}, &{hit}, &{aid});")
            self.check_rc()
            return f"{hit},{aid}"
        if kind == "builtin":
            recv = self.ex(c.receiver)
            rt = unwrap(c.receiver.type)
            if c.name == "isValid":
                if isinstance(rt, t.HeaderUnionType):
                    return self.union_valid(recv, rt)
                return f"{recv}._v"
            raise NativeUnsupported(f"builtin '{c.name}' as a value", e.loc)
        if kind == "packet":
            tmp = self.fn.fresh("t")
            self.line(f"{self.types.ctype(e.type)} {tmp} = {self.types.default(e.type)};")
            self.packet_call(e, c, tmp)
            return tmp
        if kind == "extern_method":
            tmp = self.fn.fresh("t")
            self.line(f"{self.types.ctype(e.type)} {tmp} = {self.types.default(e.type)};")
            self.extern_method(e, c, tmp)
            return tmp
        if kind == "function":
            tmp = self.fn.fresh("t")
            self.line(f"{self.types.ctype(e.type)} {tmp} = {self.types.default(e.type)};")
            self.function_call(e, c, tmp)
            return tmp
        raise NativeUnsupported(f"call of kind '{kind}' as a value", e.loc)

    def builtin_stmt(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        name = c.name
        if name == "isValid":
            return
        rt = unwrap(c.receiver.type)
        if isinstance(rt, t.HeaderUnionType):
            raise NativeUnsupported(f"{name}() of a whole header union", e.loc)
        recv = self.ex(c.receiver)
        if name == "setValid":
            self.line(f"if (!{recv}._v) {{ memset(&{recv}, 0, sizeof {recv}); {recv}._v = 1; }}")
            self.union_member_set(c.receiver, None)
        elif name == "setInvalid":
            self.line(f"{recv}._v = 0;")
        elif name in ("push_front", "pop_front"):
            op = "PUSH" if name == "push_front" else "POP"
            self.line(f"{op}_{self.types.name(rt)}(&{recv}, {self.ex(c.args[0])});")
        else:
            raise NativeUnsupported(f"builtin method '{name}'", e.loc)

    def direct_action(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        adecl = c.decl
        assert isinstance(adecl, ast.ActionDecl)
        block = self.fn.block
        assert block is not None
        fn = self.action_fn(adecl, block)
        dir_params = [p for p in adecl.params if p.direction]
        bound = dict(zip(c.params, c.args))
        cps = [(p, bound.get(p)) for p in adecl.params if not p.direction]
        ctx_args = self.block_context(block).ctx_args
        self.emit_call(fn, ctx_args, dir_params, [bound.get(p) for p in dir_params], None,
                       cp_exprs=cps)

    def function_call(self, e: ast.MethodCall, c: ast.CallInfo, result: str | None) -> None:
        fdecl = c.decl
        assert isinstance(fdecl, ast.FunctionDecl)
        fn = self.p4_function(fdecl)
        void = isinstance(unwrap(fdecl.return_type.resolved), t.VoidType)
        if not void and result is None:
            result = self.tmp("t", self.types.ctype(fdecl.return_type.resolved),
                              self.types.default(fdecl.return_type.resolved))
        self.emit_call(fn, "R", list(fdecl.params), list(c.args), None if void else result,
                       isolated=True)

    def p4_function(self, decl: ast.FunctionDecl) -> str:
        name = self._function_fns.get(id(decl))
        if name is not None:
            return name
        name = self.gname("FN")
        self._function_fns[id(decl)] = name
        ctx = CFnContext("function", None)
        params = ["I_t *R"]
        rt = unwrap(decl.return_type.resolved)
        if not isinstance(rt, t.VoidType):
            params.append(f"{self.types.ctype(rt)} *_ret")
            ctx.ret = "_ret"
        params += [self.c_param(p, ctx) for p in decl.params]
        with self.function(f"{name}({', '.join(params)})", ctx):
            self.block(decl.body)
        return name

    def c_param(self, p: ast.Parameter, ctx: CFnContext) -> str:
        """The C declaration of an action's or function's parameter `p`, its name bound in
        `ctx`: a composite, out or inout one by pointer, any other by value."""
        ct = self.types.ctype(p.type)
        if is_composite(p.type) or p.direction in ("out", "inout"):
            ctx.env[p] = f"(*a_{p.name})"
            return f"{ct} *a_{p.name}"
        ctx.env[p] = f"a_{p.name}"
        return f"{ct} a_{p.name}"

    def sub_block_call(self, e: ast.MethodCall, c: ast.CallInfo) -> None:
        inst = c.decl
        assert isinstance(inst, ast.InstanceDecl | ast.Parameter)
        block = self.fn.block
        assert block is not None
        child = block.children.get(inst.name)
        if child is None:
            raise NativeUnsupported(f"instance '{inst.name}' has no block", e.loc)
        params = [p for p in child.decl.params if not isinstance(unwrap(p.type), t.ExternType)]
        args = [a for p, a in zip(c.params, c.args)
                if not isinstance(unwrap(p.type), t.ExternType)]
        if isinstance(child.decl, ast.ParserDecl):
            fn = self.parser_fn(child)
            self.emit_call(fn, "R, _pkt, _nb, _pp", params, args, None, parser=True)
            return
        fn = self.control_fn(child)
        self.emit_call(fn, "R", params, args, None, isolated=True)


def generate(checked: CheckedProgram) -> NativeProgram:
    """Compile `checked` to C plus the descriptions of its run-time objects."""
    return CGenerator(checked).generate()
