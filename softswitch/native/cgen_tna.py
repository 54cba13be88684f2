"""Compile a checked TNA program into one C translation unit: the v1model C generator
(native/cgen.py) with the TNA blocks and externs, as engine/codegen_tna.py subclasses
engine/codegen.py.

The six blocks compile as the v1model ones do; their entry points take the pass's objects as
``void **o`` in a fixed order (`OBJECT_SLOTS`: headers, metadata, intrinsic metadata, from-parser,
for-deparser, for-tm / for-output-port) whatever the program's parameter order:
``sst_parse(R, gress, o, buf, len, plen, now)`` (the bit position reached in ``R->ppos``, a
parser error's code in ``R->perr``), ``sst_control(R, gress, o)``, ``sst_deparse(R, gress, o,
out, cap)``. native/tna_pipeline.py calls them from TnaPipeline's walk, which keeps every
decision between them (engine/tna_pipeline.py, the one copy). The intrinsic metadata structs
are declared for cffi too, so that walk reads and writes their fields; the for-tm struct keeps
``_uv``, ucast_egress_port's valid bit, set by every write of the field (TnaTypeClasses).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from softswitch.engine.codegen_tna import INTRINSIC_TYPES, TNA_ROLES, TnaGenerator
from softswitch.errors import NativeUnsupported, P4Error
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.checked import BlockInstance, CheckedProgram
from softswitch.native.cgen import OBSERVE_C, CGenerator, NativeProgram
from softswitch.native.cgen_tna_externs import (
    EMIT_BYTES,
    PARSE_STATE,
    REQ_MIRROR,
    REQ_RESUBMIT_TNA,
    CTnaExternGen,
    TnaExtern,
)
from softswitch.native.cgen_tna_walk import TW_CDEF, tna_walk_source
from softswitch.native.cgen_types import CTypes, bit_width, is_composite, unwrap

__all__ = ["OBJECT_SLOTS", "REQ_MIRROR", "REQ_RESUBMIT_TNA", "TnaNativeProgram", "generate"]

_TM_TYPE = "ingress_intrinsic_metadata_for_tm_t"

#: the pass objects by TnaPipeline's key (BlockInstance.arch_params) → index in ``void **o``
OBJECT_SLOTS = {
    "hdr": 0, "ig_md": 1, "eg_md": 1, "metadata": 1,
    "ig_intr_md": 2, "eg_intr_md": 2,
    "ig_intr_md_from_prsr": 3, "eg_intr_md_from_prsr": 3,
    "ig_intr_md_for_dprsr": 4, "eg_intr_md_for_dprsr": 4,
    "ig_intr_md_for_tm": 5, "eg_intr_md_for_oport": 5,
}
OBJECTS = 6

TNA_CDEF = f"""
int ssp_init(I_t *R);
void ssp_free(I_t *R);
size_t ssp_sizeof(int which);
int sst_parse(I_t *R, int g, void **o, const uint8_t *pkt, uint32_t len, uint64_t plen,
              uint64_t now);
int sst_control(I_t *R, int g, void **o);
int sst_deparse(I_t *R, int g, void **o, uint8_t *out, uint32_t cap);
#define SST_OBJECTS {OBJECTS}
"""


@dataclass
class TnaNativeProgram(NativeProgram):
    """NativeProgram plus the C struct name of each of TnaPipeline's classes ("ingress_hdr",
    "ingress_md", "egress_hdr", "egress_md" and the intrinsic type names), each Register's
    initial cell and a struct cell's (field, width)s (by control-plane name)."""

    classes: dict[str, str] = field(default_factory=dict)
    initial: dict[str, int] = field(default_factory=dict)
    cell_fields: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    walk: bool = False  # the C walk (cgen_tna_walk.py) is there


class CTnaTypes(CTypes):
    """CTypes whose ingress_intrinsic_metadata_for_tm_t has ``uint8_t _uv`` last."""

    def name(self, ty: t.Type) -> str:
        u = unwrap(ty)
        fresh = isinstance(u, t.StructLikeType) and u.name == _TM_TYPE and \
            (type(u).__name__, u.name, 0) not in self._names
        name = super().name(ty)
        if fresh:
            end = f"}} {name};"
            for i, line in enumerate(self.lines):
                if line.startswith("typedef struct") and line.endswith(end):
                    self.lines[i] = line[: -len(end)] + f"uint8_t _uv; {end}"
                    break
        return name

    def cdef(self, u: t.StructLikeType) -> str:
        """The struct of an intrinsic metadata type for cffi (the C generator's layout)."""
        body = ["uint8_t _v;"] if isinstance(u, t.HeaderType) else []
        for f, ft in u.fields:
            ct = self.ctype(ft)
            if ct not in ("uint64_t", "uint8_t"):
                raise NativeUnsupported(f"intrinsic metadata field '{f}' of type {ft}")
            body.append(f"{ct} {f};")
        if u.name == _TM_TYPE:
            body.append("uint8_t _uv;")
        if not body:
            body = ["uint8_t _empty;"]
        return f"typedef struct {{ {' '.join(body)} }} {self.name(u)};"


class CTnaGenerator(CTnaExternGen, CGenerator):
    """Walks a CheckedProgram of arch "tna" once and writes the C translation unit."""

    ARCH = "tna"
    direct_on_hit = False
    record_hit = True

    def __init__(self, checked: CheckedProgram) -> None:
        super().__init__(checked)
        self.tna_externs: dict[tuple[int, int], TnaExtern] = {}
        self.ra_fns: dict[tuple[int, int], tuple[str, str]] = {}

    @staticmethod
    def new_types() -> CTypes:
        return CTnaTypes()

    def standard_metadata_type(self) -> str:
        return ""  # TNA has none

    # -- the ucast_egress_port valid bit ------------------------------------------------------

    def assign(self, lhs: ast.Expression, rhs: str) -> None:
        super().assign(lhs, rhs)
        if isinstance(lhs, ast.Member) and lhs.member == "ucast_egress_port":
            base = unwrap(lhs.expr.type)
            if isinstance(base, t.StructLikeType) and base.name == _TM_TYPE:
                self.line(f"{self.ex(lhs.expr)}._uv = 1;")

    # -- port_metadata_unpack -----------------------------------------------------------------

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

    # -- entry point --------------------------------------------------------------------------

    def generate(self) -> TnaNativeProgram:
        blocks = self.checked.blocks
        try:
            fns = {}
            for role in TNA_ROLES:
                block = blocks[role]
                fns[role] = (self.parser_fn(block) if isinstance(block.decl, ast.ParserDecl)
                             else self.control_fn(block, top=True))
            classes: dict[str, str] = {}
            for gress in ("ingress", "egress"):
                block = blocks[f"{gress}_parser"]
                params = dict(zip(block.arch_params, block.decl.params))
                md = params.get("ig_md" if gress == "ingress" else "eg_md")
                if "hdr" not in params or md is None:
                    raise NativeUnsupported(f"a {gress} parser without headers or metadata")
                classes[f"{gress}_hdr"] = self.types.name(params["hdr"].type)
                classes[f"{gress}_md"] = self.types.name(md.type)
            intrinsic: list[str] = []
            layouts: dict[str, list[tuple[str, int]]] = {}
            for d in self.checked.program.declarations:
                if isinstance(d, ast.StructLikeDecl) and d.name in INTRINSIC_TYPES:
                    assert isinstance(d.resolved, t.StructLikeType)
                    classes[d.name] = self.types.name(d.resolved)
                    assert isinstance(self.types, CTnaTypes)
                    intrinsic.append(self.types.cdef(d.resolved))
                    layouts[d.name] = [(f, bit_width(ft)) for f, ft in d.resolved.fields]
            missing = [n for n in INTRINSIC_TYPES if n not in classes]
            if missing:
                raise NativeUnsupported(f"a TNA program without the type {missing[0]}")
            entry = self.entry_points(fns, blocks, classes)
            # the walk packs the intrinsic headers the parsers extract (else Python fills them)
            walk = all(k in blocks[f"{g}_parser"].arch_params
                       for g, k in (("ingress", "ig_intr_md"), ("egress", "eg_intr_md")))
            if walk:
                drop = {g: not r for g, r in TnaGenerator.parser_err_readers(self).items()}  # type: ignore[arg-type]
                entry += tna_walk_source(classes, layouts, self.checked.errors, drop)
        except P4Error:
            raise
        except Exception as exc:  # a gap in the generator: report it, never a traceback
            raise NativeUnsupported(f"C generation failed ({type(exc).__name__}: {exc})") \
                from exc
        inst = self.instance_struct()
        source = "\n".join([
            "/* Generated by softswitch.native.cgen_tna — do not edit. */",
            '#include "ss_tna.h"',
            "#pragma GCC diagnostic ignored \"-Wmissing-braces\"",
            "#pragma GCC diagnostic ignored \"-Wunused-label\"",
            "#pragma GCC diagnostic ignored \"-Wunused-variable\"",
            "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"",
            inst, OBSERVE_C, *self.types.lines, *self.frames, *self.protos, *self.funcs,
            *entry, ""])
        cdef = "\n".join([inst, *intrinsic, TNA_CDEF, TW_CDEF if walk else ""])
        regs = [x for x in self.tna_externs.values() if x.native.kind == "register"]
        initial = {x.native.name: int(x.args["initial"]) for x in regs}
        cell_fields = {x.native.name: tuple((f, w) for f, w, _ in self.cell_fields(
            x.args["cell"])) for x in regs if isinstance(x.args["cell"], t.StructLikeType)}
        return TnaNativeProgram(source, cdef, self.tables, self.externs, self.digest_sites, [],
                                [], classes, initial, cell_fields, walk)

    def instance_struct(self) -> str:
        """CGenerator's instance plus the TNA pass state: the entry the last table hit, the
        Mirror and Resubmit headers."""
        extra = (f"    void *hit; uint64_t mir_sid; uint32_t mir_len, res_len;"
                 f" uint8_t mir[{EMIT_BYTES}], res[{EMIT_BYTES}];\n")
        return super().instance_struct().replace("} I_t;", extra + "} I_t;")

    def entry_points(self, fns: dict[str, str], blocks: dict[str, BlockInstance],
                     classes: dict[str, str]) -> list[str]:
        def call(role: str) -> str:
            block = blocks[role]
            names = []
            for key, p in zip(block.arch_params, block.decl.params):
                pt = unwrap(p.type)
                if isinstance(pt, t.ExternType):
                    continue
                slot = OBJECT_SLOTS.get(key)
                if slot is None or not is_composite(pt):
                    raise NativeUnsupported(f"a TNA {role} parameter '{p.name}' ({key})")
                names.append(f"({self.types.name(pt)} *)o[{slot}]")
            return ", ".join(names)

        resets = " ".join(f"((uint64_t *)R->ext[{x.slot}])[0] = 0; "
                          f"((uint64_t *)R->ext[{x.slot}])[1] = 0;"
                          for x in self.externs if x.kind in PARSE_STATE)
        lines = [
            "int ssp_init(I_t *R) { ss_mt_seed((ss_mt *)R->mt, 0); return 0; }",
            "void ssp_free(I_t *R) { free(R->obs); R->obs = NULL; R->obs_cap = R->nobs = 0; }",
            "size_t ssp_sizeof(int which) {",
            f"    switch (which) {{ case 0: return sizeof({classes['ingress_hdr']}); "
            f"case 1: return sizeof({classes['ingress_md']}); "
            f"case 2: return sizeof({classes['egress_hdr']}); "
            f"default: return sizeof({classes['egress_md']}); }}",
            "}",
            "int sst_parse(I_t *R, int g, void **o, const uint8_t *pkt, uint32_t len, "
            "uint64_t plen, uint64_t now) {",
            "    R->plen = plen; R->now = now; R->payload = NULL; R->paylen = 0; R->req = 0; "
            "R->ndig = 0; R->hit = NULL; R->perr = 0; R->mir_len = R->res_len = 0;",
            f"    {resets}",
            "    uint32_t pos = 0;",
            f"    int rc = g == 0 ? {fns['ingress_parser']}(R, pkt, len * 8u, &pos, "
            f"{call('ingress_parser')})",
            f"                    : {fns['egress_parser']}(R, pkt, len * 8u, &pos, "
            f"{call('egress_parser')});",
            "    if (rc == SS_PERR) return 1;",
            "    R->ppos = pos;",
            "    return rc ? -rc : 0;",
            "}",
            "int sst_control(I_t *R, int g, void **o) {",
            f"    int rc = g == 0 ? {fns['ingress']}(R, {call('ingress')}) "
            f": {fns['egress']}(R, {call('egress')});",
            "    return rc == SS_EXIT ? SS_OK : rc;",
            "}",
            "int sst_deparse(I_t *R, int g, void **o, uint8_t *out, uint32_t cap) {",
            "    R->out = out; R->olen = 0; R->ocap = cap;",
            f"    int rc = g == 0 ? {fns['ingress_deparser']}(R, {call('ingress_deparser')}) "
            f": {fns['egress_deparser']}(R, {call('egress_deparser')});",
            "    if (rc == SS_EXIT) rc = SS_OK;",
            "    return rc ? -rc : (int)R->olen;",
            "}",
        ]
        return lines


def generate(checked: CheckedProgram) -> TnaNativeProgram:
    """Compile the TNA program `checked` to C plus the descriptions of its run-time objects."""
    return CTnaGenerator(checked).generate()
