"""P4Info of a TNA program, as bf-p4c writes it with ``--p4runtime-force-std-externs``.

bf-p4c's BF-Runtime arch handler (``bf-p4c/control-plane/bfruntime_arch_handler.h``) first
writes a P4Info whose externs are Tofino-specific ``Extern`` messages, every table and extern
named with its pipe's name in front (``pipe.SwitchIngress.t``; the pipe is the Pipeline
instance's name, or Switch's parameter name ``pipe0`` for one written inline); ids are hashed
from those prefixed names. ``p4runtime_force_std.cpp`` then converts it to standard P4Info:

* the pipe prefix is cut off every table's and converted extern's name (ids and aliases stay);
* Counter, DirectCounter, Meter, DirectMeter, Register, Digest, ActionProfile, ValueSet become
  the standard messages, id = the standard prefix with the Tofino id's low 24 bits; an
  ActionSelector becomes its action profile's ``with_selector`` and ``max_group_size`` (the
  three-argument selector is its own profile of that name, max_group_size 120);
* everything else is dropped — DirectRegister (also from the tables' direct resources), Hash
  (DynHash), Snapshot, ParserChoices; RegisterAction, Random, Mirror, Resubmit, Checksum,
  ParserCounter and CRCPolynomial never appear — except PortMetadata, which stays in
  ``externs`` with its info's value replaced by ``ig_intr_md.ingress_port``;
* value sets keep only preamble and size.

Tables, actions, match fields and controller headers are p4c's frontend serializer's, as for
v1model (builder.py); action names carry no pipe prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from finsy.proto.p4.config.v1 import p4info_pb2

from softswitch.errors import P4TypeError
from softswitch.frontend import ast
from softswitch.ir.checked import BlockInstance
from softswitch.p4info.annotations import user_id
from softswitch.p4info.builder import _Builder, _const_int, _enum_member
from softswitch.p4info.collect import ExternObj, TableObj, ctor_arg, walk
from softswitch.p4info.ids import Prefix, SymbolTable


class TofinoPrefix(IntEnum):
    """Prefixes of bf-p4c's ``barefoot.P4Ids`` kept in the standard P4Info."""

    PORT_METADATA = 0x90


# bf-p4c's extern message type names and the Any type URL of PortMetadata
PORT_METADATA_TYPE = "PortMetadata"
PORT_METADATA_NAME = "$PORT_METADATA"
PORT_METADATA_URL = "type.googleapis.com/barefoot.PortMetadata"
PORT_METADATA_VALUE = b"ig_intr_md.ingress_port"  # what the force-std converter writes there
DEFAULT_MAX_GROUP_SIZE = 120  # bf-p4c's for the ActionSelector(size, hash, mode) form
INLINE_PIPE = "pipe0"  # Switch's parameter name: the pipe of a Pipeline written inline

_EXTERN_PREFIX = {
    "Counter": Prefix.COUNTER,
    "DirectCounter": Prefix.DIRECT_COUNTER,
    "Meter": Prefix.METER,
    "DirectMeter": Prefix.DIRECT_METER,
    "Register": Prefix.REGISTER,
    "ActionProfile": Prefix.ACTION_PROFILE,
    "Digest": Prefix.DIGEST,
}
# registered by bf-p4c in symbol kinds that do not reach the standard P4Info: they take part
# in the aliases only
_ALIAS_ONLY = ("DirectRegister", "Hash")
_COUNTER_UNITS = {
    "PACKETS": p4info_pb2.CounterSpec.PACKETS,
    "BYTES": p4info_pb2.CounterSpec.BYTES,
    "PACKETS_AND_BYTES": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {"PACKETS": p4info_pb2.MeterSpec.PACKETS, "BYTES": p4info_pb2.MeterSpec.BYTES}


@dataclass
class _PipeSymbols(SymbolTable):
    """The symbol table with pipe-scoped names: (kind, P4Info name) → the name bf-p4c hashes."""

    scoped: dict[tuple[int, str], str] = field(default_factory=dict)

    def add_scoped(
        self, kind: int, name: str, full: str, uid: int | None = None, loc: object = None
    ) -> None:
        self.scoped[(kind, name)] = full
        self.add(kind, full, uid, loc)  # type: ignore[arg-type]

    def alias_only(self, name: str) -> None:
        self._suffixes.add(name)

    def id(self, kind: int, name: str) -> int:  # type: ignore[override]
        return super().id(kind, self.scoped.get((kind, name), name))  # type: ignore[arg-type]

    def alias_of(self, kind: int, name: str) -> str:
        return self.alias(self.scoped.get((kind, name), name))


def _strip_pipe(name: str) -> str:
    """bf-p4c's stripPipePrefix: everything after the first '.'."""
    return name.split(".", 1)[1] if "." in name else name


def _is_sized_selector(ext: ExternObj) -> bool:
    """``ActionSelector(size, hash, mode)``: its own action profile (bf-p4c's older form)."""
    return ext.kind == "ActionSelector" and "size" in ext.args


class TnaBuilder(_Builder):
    def __init__(self, checked: object) -> None:
        super().__init__(checked)  # type: ignore[arg-type]
        self.pipe = self.checked.pipe_name or INLINE_PIPE
        self.symbols = _PipeSymbols()

    def _full(self, name: str, block: BlockInstance | None) -> str:
        """The name bf-p4c hashes: in the pipe's blocks, with the pipe name in front."""
        return f"{self.pipe}.{name}" if block is not None else name

    # --- symbols ------------------------------------------------------------------------

    def _register(self) -> None:
        symbols = self.symbols
        assert isinstance(symbols, _PipeSymbols)
        for ext in self.model.externs:
            block = self._extern_block(ext)
            full = self._full(ext.name, block)
            uid = None if ext.prop is not None else user_id(ext.annotated)
            prefix = _EXTERN_PREFIX.get(ext.kind)
            if ext.kind == "ActionSelector":
                if _is_sized_selector(ext):
                    symbols.add_scoped(
                        Prefix.ACTION_PROFILE, ext.name, full, uid, ext.annotated.loc
                    )
                    symbols.alias_only(full + "_sel")
                else:
                    symbols.alias_only(full)
            elif prefix is not None:
                symbols.add_scoped(prefix, ext.name, full, uid, ext.annotated.loc)
            elif ext.kind in _ALIAS_ONLY:
                symbols.alias_only(full)
        for control in self.model.controls:
            for action in control.actions:
                symbols.add(Prefix.ACTION, action.name, user_id(action.decl), action.decl.loc)
        for table in self.model.tables:
            symbols.add_scoped(
                Prefix.TABLE,
                table.name,
                self._full(table.name, table.block),
                user_id(table.decl),
                table.decl.loc,
            )
        for name, vs in self.model.value_sets:
            # the frontend serializer's own (later cleared) symbol, then bf-p4c's pipe-scoped one
            symbols.alias_only(name)
            symbols.add_scoped(
                Prefix.VALUE_SET, name, self._full(name, self._parser()), user_id(vs), vs.loc
            )
        for header in self.model.controller_headers:
            symbols.add(
                Prefix.CONTROLLER_HEADER,
                self.specs.type_name(header.name),
                user_id(header),
                header.loc,
            )
        for role in ("ingress", "egress"):  # bf-p4c's Snapshot symbols
            block = self.checked.blocks[role]
            own = block.decl.control_plane_name() or block.decl.name
            symbols.alias_only(f"{self.pipe}.{block.path}.{own}")
        parser = self._parser()
        symbols.add_scoped(
            TofinoPrefix.PORT_METADATA,
            self._port_metadata_name(),
            f"{self.pipe}.{parser.path}.{PORT_METADATA_NAME}",
        )
        symbols.assign_ids()

    def _parser(self) -> BlockInstance:
        return self.checked.blocks["ingress_parser"]

    def _port_metadata_name(self) -> str:
        return f"{self._parser().path}.{PORT_METADATA_NAME}"

    def _extern_block(self, ext: ExternObj) -> BlockInstance | None:
        """A block of the pipe holding `ext` (which one does not matter), None at top level."""
        if ext.table is not None:
            return ext.table.block
        return None if any(e is ext for e in self.model.top_externs) else self._parser()

    def _preamble(
        self,
        preamble: p4info_pb2.Preamble,
        prefix: Prefix,
        name: str,
        annotated: ast.Annotated | None,
        skip: Sequence[str] = (),
    ) -> None:
        super()._preamble(preamble, prefix, name, annotated, skip)
        assert isinstance(self.symbols, _PipeSymbols)
        preamble.alias = self.symbols.alias_of(prefix, name)
        if (prefix, name) not in self.symbols.scoped:
            return
        # a top-level extern has no pipe prefix, yet bf-p4c cuts a name's first part anyway
        full = self.symbols.scoped[(prefix, name)]
        preamble.name = _strip_pipe(full)

    # --- build --------------------------------------------------------------------------

    def build(self) -> p4info_pb2.P4Info:
        self._register()
        self.p4info.pkg_info.arch = "tna"
        for ext in self.model.top_externs:
            self._add_extern(ext)
        seen_actions: set[int] = set()
        for control in self.model.controls:
            for action in control.actions:
                self._add_action(action, seen_actions)
        for item in self.model.block_items:
            if isinstance(item, TableObj):
                self._add_table(item)
            elif item.prop is None:
                self._add_extern(item)
        for name, vs in self.model.value_sets:
            self._add_value_set(name, vs)
        for header in self.model.controller_headers:
            self._add_controller_header(header)
        self._add_port_metadata()
        self._add_pkg_info()
        return self.p4info

    def _add_value_set(self, name: str, vs: ast.ValueSetDecl) -> None:
        # bf-p4c writes a value set's preamble and size only, no match fields
        self._value_set_message(name, vs)

    def _add_port_metadata(self) -> None:
        ext = self.p4info.externs.add()
        ext.extern_type_id = int(TofinoPrefix.PORT_METADATA)
        ext.extern_type_name = PORT_METADATA_TYPE
        inst = ext.instances.add()
        self._preamble(
            inst.preamble,
            TofinoPrefix.PORT_METADATA,  # type: ignore[arg-type]
            self._port_metadata_name(),
            None,
        )
        inst.info.type_url = PORT_METADATA_URL
        inst.info.value = PORT_METADATA_VALUE
        # port_metadata_unpack<T>: bf-p4c converted T into type_info, which keeps it
        for node in self._parser_nodes():
            if (
                isinstance(node, ast.MethodCall)
                and node.call is not None
                and node.call.kind == "extern_function"
                and node.call.name.lstrip(".") == "port_metadata_unpack"
            ):
                t = node.call.type_bindings.get("T")
                if t is not None:
                    self.specs.convert(t)

    def _parser_nodes(self) -> list[ast.Node]:
        decl = self._parser().decl
        assert isinstance(decl, ast.ParserDecl)
        return [n for state in decl.states for n in walk(state)]

    # --- tables -------------------------------------------------------------------------

    def _add_table(self, table: TableObj) -> None:
        super()._add_table(table)
        if table.decl.annotation("hidden") is not None:
            return
        msg = self.p4info.tables[-1]
        timeout = table.decl.property("idle_timeout")
        if timeout is not None and timeout.value.value is True:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL

    DIRECT_COUNTER = "DirectCounter"
    DIRECT_METER = "DirectMeter"
    extern_prefix = _EXTERN_PREFIX
    counter_units = _COUNTER_UNITS
    meter_units = _METER_UNITS
    # `registers = <DirectRegister>`: no standard message; the converter drops it

    def _profile_of(self, impl: ExternObj) -> ExternObj:
        """The action profile (standard P4Info) a table implementation stands for."""
        if impl.kind == "ActionProfile" or _is_sized_selector(impl):
            return impl
        if impl.kind == "ActionSelector":
            arg = ctor_arg(impl.args, "action_profile", 0)
            decl = arg.decl if isinstance(arg, ast.PathExpression) else None
            found = self.instance_by_decl.get(id(decl)) if decl is not None else None
            if found is not None:
                return found
        raise P4TypeError("expected an ActionProfile or ActionSelector", impl.annotated.loc)

    # --- externs ------------------------------------------------------------------------

    def _add_extern(self, ext: ExternObj) -> None:
        if ext.kind == "Counter":
            msg = self.p4info.counters.add()
            self._preamble(msg.preamble, Prefix.COUNTER, ext.name, ext.annotated)
            msg.spec.unit = self._unit(ext, _COUNTER_UNITS)
            msg.size = _const_int(ctor_arg(ext.args, "size", 0)) or 0
        elif ext.kind == "Meter":
            msg = self.p4info.meters.add()
            self._preamble(msg.preamble, Prefix.METER, ext.name, ext.annotated)
            msg.spec.unit = self._unit(ext, _METER_UNITS)
            msg.size = _const_int(ctor_arg(ext.args, "size", 0)) or 0
        elif ext.kind == "Register":
            msg = self.p4info.registers.add()
            self._preamble(msg.preamble, Prefix.REGISTER, ext.name, ext.annotated)
            msg.type_spec.CopyFrom(self.specs.convert(ext.type.type_args[0]))
            msg.size = _const_int(ctor_arg(ext.args, "size", 0)) or 0
        elif ext.kind == "ActionProfile" or _is_sized_selector(ext):
            self._add_action_profile(ext)
        elif ext.kind == "Digest":
            self._add_digest_instance(ext)

    @staticmethod
    def _unit(ext: ExternObj, units: dict[str, int]) -> int:
        member = _enum_member(ctor_arg(ext.args, "type", 1))
        return units.get(member or "", 0)

    def _selectors_using(self, profile: ExternObj) -> list[ExternObj]:
        found = []
        for ext in self.model.externs:
            if ext.kind == "ActionSelector" and not _is_sized_selector(ext):
                arg = ctor_arg(ext.args, "action_profile", 0)
                if isinstance(arg, ast.PathExpression) and arg.decl is profile.annotated:
                    found.append(ext)
        return found

    def _add_action_profile(self, ext: ExternObj) -> None:
        msg = self.p4info.action_profiles.add()
        self._preamble(msg.preamble, Prefix.ACTION_PROFILE, ext.name, ext.annotated)
        users = sorted(
            t.name
            for t in self.model.tables
            if (impl := self._implementation(t)) is not None and self._profile_of(impl) is ext
        )
        msg.table_ids.extend(self.symbols.id(Prefix.TABLE, n) for n in users)
        if _is_sized_selector(ext):
            size = _const_int(ctor_arg(ext.args, "size", 0))
            msg.with_selector = True
            msg.max_group_size = DEFAULT_MAX_GROUP_SIZE
        else:
            size = _const_int(ctor_arg(ext.args, "size", 0))
            selectors = self._selectors_using(ext)
            if selectors:
                msg.with_selector = True
                msg.max_group_size = (
                    _const_int(ctor_arg(selectors[0].args, "max_group_size", 3)) or 0
                )
        if size is None:
            raise P4TypeError(
                f"action profile '{ext.name}' has a non-constant size", ext.annotated.loc
            )
        msg.size = size

    def _implementation(self, table: TableObj) -> ExternObj | None:
        if table.decl.property("implementation") is None:
            return None
        return self._property_extern(table, "implementation")

    def _add_digest_instance(self, ext: ExternObj) -> None:
        """A Digest<T> instance with a pack call (bf-p4c lists no other)."""
        if not self._packed(ext.annotated):
            return
        t = ext.type.type_args[0] if ext.type.type_args else None
        if t is None:
            raise P4TypeError("cannot tell the type of this digest", ext.annotated.loc)
        msg = self.p4info.digests.add()
        self._preamble(msg.preamble, Prefix.DIGEST, ext.name, ext.annotated)
        msg.type_spec.CopyFrom(self.specs.convert(t))

    def _packed(self, decl: ast.Annotated) -> bool:
        for block in self.checked.blocks.values():
            for node in walk(block.decl):
                if (
                    isinstance(node, ast.MethodCall)
                    and node.call is not None
                    and node.call.kind == "extern_method"
                    and node.call.name == "pack"
                    and isinstance(node.call.receiver, ast.PathExpression)
                    and node.call.receiver.decl is decl
                ):
                    return True
        return False
