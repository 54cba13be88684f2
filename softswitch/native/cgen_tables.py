"""C code for tables: the apply function (key array, `ss_table_lookup`, direct counter and
meter, the action by entry id) and the description native/tables.py installs entries with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from softswitch.engine.codegen_tables import table_mode
from softswitch.errors import NativeUnsupported
from softswitch.frontend import ast
from softswitch.frontend import types as t
from softswitch.ir.names import action_name, qualified_name
from softswitch.native.cgen_types import scalar_width

if TYPE_CHECKING:
    from softswitch.ir.checked import BlockInstance
    from softswitch.native.cgen import NativeExtern

# match kinds as ss_rt.h numbers them (SS_KIND_*)
KINDS = {"exact": 0, "lpm": 1, "ternary": 2, "range": 3, "optional": 4}


@dataclass
class NativeTableInfo:
    """One table of the C program: control-plane name, slot in R->tables, index mode (as
    engine/tables.py's: none, exact, lpm, scan), key widths and kinds, and the C id of
    each action by control-plane name."""

    name: str
    slot: int
    mode: str
    widths: list[int]
    kinds: list[str]
    actions: dict[str, int] = field(default_factory=dict)
    direct_counter: bool = False
    direct_meter: str | None = None  # its control-plane name
    profile: str | None = None  # the action profile's or selector's control-plane name


class CTableGen:
    """Mixin of `cgen.CGenerator`."""

    # BMv2 counts and meters a table's direct counter and meter on every hit; TNA (cgen_tna)
    # turns that off (the action's count()/execute() does it) and records the entry hit in
    # R->hit for those calls, as engine/codegen_tables.py
    direct_on_hit = True
    record_hit = False

    def table_fn(self, decl: ast.TableDecl, block: BlockInstance) -> str:
        key = (id(decl), id(block))
        name = self._table_fns.get(key)
        if name is not None:
            return name
        name = self.gname("T")
        self._table_fns[key] = name
        keys = [k for k in decl.keys if k.match_kind != "selector"]
        sel_keys = [k for k in decl.keys if k.match_kind == "selector"]
        for k in keys:
            if k.match_kind not in KINDS:
                raise NativeUnsupported(f"table match kind '{k.match_kind}'", decl.loc)
        info = self.table_info(decl, block)
        ctx = self.block_context(block)
        ctx.kind = "table"
        meter = self.direct_meter(decl, block)
        info.direct_meter = meter.name if meter is not None else None
        profile = self.table_profile(decl, block)
        info.profile = profile.name if profile is not None else None
        with self.function(f"{name}({ctx.ctx_params}, uint8_t *_hit, int64_t *_aid)", ctx):
            n = len(keys)
            self.line(f"u128 _k[{max(1, n)}];")
            for i, k in enumerate(keys):
                code = self.value_ex(k.expr, self.types.default(k.expr.type))
                self.line(f"_k[{i}] = (u128)({code});")
            self.line(f"ss_table *_t = (ss_table *)R->tables[{info.slot}];")
            if info.mode == "none":
                self.line("ss_entry *_e = NULL;")
            else:
                self.line("ss_entry *_e = ss_table_lookup(_t, _k);")
            self.line("ss_entry *_x = _e;")
            self.line("if (!_e) {")
            with self.indent():
                self.line("_x = ss_table_default(_t);")
                if meter is not None:
                    self.line(f"*(uint64_t *)R->ext[{meter.slot}] = 0;")
            self.line("} else {")
            with self.indent():
                if info.direct_counter and self.direct_on_hit:
                    # BMv2 counts a direct counter on every hit of its table, and meters it
                    self.line("_e->packets++; _e->bytes += R->plen;")
                if meter is not None and self.direct_on_hit:
                    self.line(f"*(uint64_t *)R->ext[{meter.slot}] = (uint64_t)ss_meter_execute("
                              f"&_e->meter, R->now, {self.meter_need(meter)});")
                if profile is not None:
                    self.profile_choice(profile, sel_keys)
            self.line("}")
            self.line("*_hit = _e != NULL; *_aid = _x->action;")
            if self.record_hit:
                self.line("R->hit = _e;")
            self.line("switch (_x->action) {")
            dispatched: set[int] = set()
            for ref in decl.actions:
                adecl = ref.decl
                assert adecl is not None
                aid = self.aid(adecl)
                if aid in dispatched:
                    continue
                dispatched.add(aid)
                fn = self.table_action_fn(ref, block)
                self.line(f"case {aid}: _rc = {fn}({ctx.ctx_args}, _x->args); break;")
            self.line("default: break;")
            self.line("}")
        return name

    def direct_meter(self, decl: ast.TableDecl, block: BlockInstance) -> NativeExtern | None:
        """The table's direct meter (its colour cell), or None."""
        prop = decl.property("meters")
        if prop is None:
            return None
        value = prop.value
        if not (isinstance(value, ast.PathExpression)
                and isinstance(value.decl, ast.InstanceDecl)):
            raise NativeUnsupported("a direct meter that is not a named instance", decl.loc)
        saved = self.fn
        self.fn = self.block_context(block)  # the instance is named from the table's block
        try:
            return self.extern_slot(value.decl)
        finally:
            self.fn = saved

    def table_profile(self, decl: ast.TableDecl, block: BlockInstance) -> NativeExtern | None:
        """The table's action profile or selector (``implementation``), or None; an anonymous
        instance is named as the Python engine names it (<block>.implementation)."""
        prop = decl.property("implementation")
        if prop is None:
            return None
        value = prop.value
        if isinstance(value, ast.PathExpression) and isinstance(value.decl, ast.InstanceDecl):
            saved = self.fn
            self.fn = self.block_context(block)
            try:
                return self.extern_slot(value.decl)
            finally:
                self.fn = saved
        et = value.type
        if isinstance(value, ast.MethodCall) and isinstance(et, t.ExternType) \
                and value.call is not None:
            key = (id(value), 0)
            found = self._extern_slots.get(key)
            if found is not None:
                return found
            args = {p.name: a.value for p, a in zip(value.call.params, value.call.args)
                    if a is not None}
            x = self.profile_extern(f"{block.path}.implementation", et.name, args, value.loc)
            self.externs.append(x)
            self._extern_slots[key] = x
            return x
        raise NativeUnsupported("a table implementation of this form", decl.loc)

    def profile_choice(self, profile: NativeExtern, sel_keys: list[ast.KeyElement]) -> None:
        """On a hit, the action of the entry's member, or of the member the selector hash
        picks in its group (engine/codegen_tables.py; BMv2 hashes the selector fields as a
        calculation: fields of invalid headers left out); none: the default action."""
        p = f"(ss_profile *)R->ext[{profile.slot}]"
        self.line(f"if (_e->member >= 0) _x = ss_profile_member({p}, _e->member);")
        self.line("else {")
        with self.indent():
            if profile.kind == "action_selector":
                leaves = [leaf for k in sel_keys for leaf in self.checksum_leaves(k.expr)]
                self.leaf_data(leaves)
                self.line(f"_x = ss_profile_choose({p}, _e->group, ss_calc({profile.width}, "
                          "_fv, _fw, _fn, NULL, 0));")
            else:
                self.line("_x = NULL;")
        self.line("}")
        self.line("if (!_x) _x = ss_table_default(_t);")

    def table_info(self, decl: ast.TableDecl, block: BlockInstance) -> NativeTableInfo:
        widths, kinds = [], []
        for k in decl.keys:
            if k.match_kind == "selector":
                continue
            widths.append(scalar_width(k.expr.type))
            kinds.append(k.match_kind)
        info = NativeTableInfo(qualified_name(decl, block.path), len(self.tables),
                               table_mode(kinds),
                               widths, kinds)
        for ref in decl.actions:
            adecl = ref.decl
            assert adecl is not None
            an = action_name(adecl, block, self.top_paths.get(id(block)))
            info.actions[an] = self.aid(adecl)
        info.direct_counter = decl.property("counters") is not None
        self.tables.append(info)
        return info

    def table_action_fn(self, ref: ast.ActionRef, block: BlockInstance) -> str:
        """The function a table calls for `ref`: the action itself, or a wrapper binding the
        directional arguments written in the actions list."""
        adecl = ref.decl
        assert adecl is not None
        fn = self.action_fn(adecl, block)
        dir_params = [p for p in adecl.params if p.direction]
        if not dir_params:
            return fn
        ctx = self.block_context(block)
        wrapper = self.gname("W")
        bound = dict(zip(adecl.params, ref.bound_args or []))
        with self.function(f"{wrapper}({ctx.ctx_params}, const u128 *_a)", ctx):
            self.emit_call(fn, ctx.ctx_args, dir_params, [bound.get(p) for p in dir_params],
                           None, cp_args="_a")
        return wrapper
