"""P4Info index: names ⇄ ids for every P4Info object, with p4runtime-shell's name rules.

An object is found by its id, its fully qualified name, its alias, or any dot-suffix of its name
that no other object of the same kind shares ("route_v6" for "IngressPipeImpl.route_v6"). An
ambiguous suffix is refused with the candidates listed. Match fields, action parameters and
packet metadata are found the same way within their table, action or controller header.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from finsy.proto import p4i, p4t
from google.protobuf import json_format, text_format
from google.protobuf.message import DecodeError

from p4rt.errors import SchemaError


class _HasPreamble(Protocol):
    @property
    def preamble(self) -> p4i.Preamble: ...


T = TypeVar("T")
P = TypeVar("P", bound=_HasPreamble)

Key = str | int


def _suffixes(name: str) -> Iterator[str]:
    parts = name.split(".")
    for start in range(len(parts)):
        yield ".".join(parts[start:])


class NameIndex(Generic[T]):
    """Objects of one kind, found by id, full name, alias or unique dot-suffix."""

    def __init__(self, kind: str, items: Iterable[T], name_of: Callable[[T], str],
                 id_of: Callable[[T], int], alias_of: Callable[[T], str] = lambda _: "") -> None:
        self.kind = kind
        self._items = list(items)
        self._name_of = name_of
        self._by_id: dict[int, T] = {}
        self._by_name: dict[str, T] = {}
        self._by_suffix: dict[str, list[T]] = {}
        for item in self._items:
            self._by_id[id_of(item)] = item
            self._by_name[name_of(item)] = item
            names = set(_suffixes(name_of(item)))
            alias = alias_of(item)
            if alias:
                names.add(alias)
            for suffix in names:
                self._by_suffix.setdefault(suffix, []).append(item)

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        try:
            self.get(key)  # type: ignore[arg-type]
        except SchemaError:
            return False
        return True

    def names(self) -> list[str]:
        return [self._name_of(item) for item in self._items]

    def get(self, key: Key) -> T:
        """The object with this id or name; SchemaError when unknown or ambiguous."""
        if isinstance(key, bool) or not isinstance(key, int | str):
            raise SchemaError(f"{self.kind}: expected a name or an id, got {key!r}",
                              "INVALID_ARGUMENT")
        if isinstance(key, int):
            try:
                return self._by_id[key]
            except KeyError:
                raise SchemaError(f"unknown {self.kind} id {key:#x} ({key})") from None
        name = key.lstrip(".")
        exact = self._by_name.get(name)
        if exact is not None:
            return exact
        found = self._by_suffix.get(name, [])
        if len(found) == 1:
            return found[0]
        if found:
            candidates = ", ".join(sorted(self._name_of(item) for item in found))
            raise SchemaError(f"{self.kind} name '{key}' is ambiguous: it could be {candidates}",
                              "INVALID_ARGUMENT")
        raise SchemaError(f"unknown {self.kind} '{key}' (known: {self._known(name)})")

    def _known(self, name: str, limit: int = 12) -> str:
        """Names to suggest: those sharing the last name component first, at most `limit`."""
        names = sorted(self.names())
        if not names:
            return "none"
        last = name.rsplit(".", 1)[-1].lower()
        names.sort(key=lambda known: last not in known.lower())
        shown = ", ".join(names[:limit])
        return shown if len(names) <= limit else f"{shown}, ... {len(names) - limit} more"


def _preamble_index(kind: str, items: Iterable[P]) -> NameIndex[P]:
    return NameIndex(kind, items, lambda item: item.preamble.name,
                     lambda item: item.preamble.id, lambda item: item.preamble.alias)


class Schema:
    """Lookups into one P4Info. Immutable, shared freely between connections and threads."""

    def __init__(self, p4info: p4i.P4Info) -> None:
        self.p4info = p4info
        self.tables = _preamble_index("table", p4info.tables)
        self.actions = _preamble_index("action", p4info.actions)
        self.action_profiles = _preamble_index("action profile", p4info.action_profiles)
        self.counters = _preamble_index("counter", p4info.counters)
        self.direct_counters = _preamble_index("direct counter", p4info.direct_counters)
        self.meters = _preamble_index("meter", p4info.meters)
        self.direct_meters = _preamble_index("direct meter", p4info.direct_meters)
        self.registers = _preamble_index("register", p4info.registers)
        self.digests = _preamble_index("digest", p4info.digests)
        self.value_sets = _preamble_index("value set", p4info.value_sets)
        self.controller_headers = _preamble_index("controller packet metadata",
                                                  p4info.controller_packet_metadata)
        self._all = [self.tables, self.actions, self.action_profiles, self.counters,
                     self.direct_counters, self.meters, self.direct_meters, self.registers,
                     self.digests, self.value_sets, self.controller_headers]
        self._fields: dict[int, NameIndex[p4i.MatchField]] = {}
        self._params: dict[int, NameIndex[p4i.Action.Param]] = {}
        self._table_actions: dict[int, NameIndex[p4i.Action]] = {}
        self._metadata: dict[int, NameIndex[p4i.ControllerPacketMetadata.Metadata]] = {}

    @classmethod
    def load(cls, path: Path | str) -> Schema:
        """Read a P4Info file: text (.txt/.txtpb/.pb.txt), JSON (.json) or binary (others)."""
        path = Path(path)
        p4info = p4i.P4Info()
        try:
            if path.suffix == ".json":
                json_format.Parse(path.read_text(), p4info)
            elif path.suffix in (".txt", ".txtpb", ".pbtxt"):
                text_format.Parse(path.read_text(), p4info)
            else:
                p4info.ParseFromString(path.read_bytes())
        except UnicodeDecodeError as error:   # a binary file given as text or JSON
            raise SchemaError(f"{path}: cannot read P4Info: not UTF-8 text (byte "
                              f"{error.start})", "INVALID_ARGUMENT") from None
        except DecodeError:
            raise SchemaError(f"{path}: cannot read P4Info: not a binary P4Info (use .txt or "
                              ".json for text)", "INVALID_ARGUMENT") from None
        except (OSError, text_format.ParseError, json_format.ParseError) as error:
            raise SchemaError(f"{path}: cannot read P4Info: {error}", "INVALID_ARGUMENT") from None
        return cls(p4info)

    # -- top-level objects ------------------------------------------------------------------
    def table(self, key: Key) -> p4i.Table:
        return self.tables.get(key)

    def action(self, key: Key) -> p4i.Action:
        return self.actions.get(key)

    def action_profile(self, key: Key) -> p4i.ActionProfile:
        return self.action_profiles.get(key)

    def counter(self, key: Key) -> p4i.Counter:
        return self.counters.get(key)

    def direct_counter(self, key: Key) -> p4i.DirectCounter:
        return self.direct_counters.get(key)

    def meter(self, key: Key) -> p4i.Meter:
        return self.meters.get(key)

    def direct_meter(self, key: Key) -> p4i.DirectMeter:
        return self.direct_meters.get(key)

    def register(self, key: Key) -> p4i.Register:
        return self.registers.get(key)

    def digest(self, key: Key) -> p4i.Digest:
        return self.digests.get(key)

    def value_set(self, key: Key) -> p4i.ValueSet:
        return self.value_sets.get(key)

    def controller_header(self, key: Key) -> p4i.ControllerPacketMetadata:
        return self.controller_headers.get(key)

    def name(self, object_id: int) -> str:
        """The full name of any top-level object by id (any kind); str(id) when unknown."""
        for index in self._all:
            try:
                return index.get(object_id).preamble.name  # type: ignore[attr-defined]
            except SchemaError:
                continue
        return str(object_id)

    # -- members ----------------------------------------------------------------------------
    def match_fields(self, table: Key | p4i.Table) -> NameIndex[p4i.MatchField]:
        info = table if isinstance(table, p4i.Table) else self.table(table)
        index = self._fields.get(info.preamble.id)
        if index is None:
            index = NameIndex(f"match field of table {info.preamble.name}", info.match_fields,
                              lambda field: field.name, lambda field: field.id)
            self._fields[info.preamble.id] = index
        return index

    def match_field(self, table: Key | p4i.Table, key: Key) -> p4i.MatchField:
        return self.match_fields(table).get(key)

    def params(self, action: Key | p4i.Action) -> NameIndex[p4i.Action.Param]:
        info = action if isinstance(action, p4i.Action) else self.action(action)
        index = self._params.get(info.preamble.id)
        if index is None:
            index = NameIndex(f"parameter of action {info.preamble.name}", info.params,
                              lambda param: param.name, lambda param: param.id)
            self._params[info.preamble.id] = index
        return index

    def param(self, action: Key | p4i.Action, key: Key) -> p4i.Action.Param:
        return self.params(action).get(key)

    def table_actions(self, table: Key | p4i.Table) -> NameIndex[p4i.Action]:
        """The actions a table may use, so a suffix need only be unique within the table."""
        info = table if isinstance(table, p4i.Table) else self.table(table)
        index = self._table_actions.get(info.preamble.id)
        if index is None:
            actions = [self.action(ref.id) for ref in info.action_refs]
            index = _preamble_index(f"action of table {info.preamble.name}", actions)
            self._table_actions[info.preamble.id] = index
        return index

    def table_action(self, table: Key | p4i.Table, key: Key) -> p4i.Action:
        return self.table_actions(table).get(key)

    def action_ref(self, table: p4i.Table, action_id: int) -> p4i.ActionRef | None:
        for ref in table.action_refs:
            if ref.id == action_id:
                return ref
        return None

    def profile_actions(self, profile: p4i.ActionProfile) -> NameIndex[p4i.Action]:
        """Actions usable by members of a profile: those of the tables it serves."""
        seen: dict[int, p4i.Action] = {}
        for table_id in profile.table_ids:
            for action in self.table_actions(table_id):
                seen[action.preamble.id] = action
        if not seen:
            return self.actions
        return _preamble_index(f"action of action profile {profile.preamble.name}",
                               seen.values())

    def packet_metadata(self, header: Key) -> NameIndex[p4i.ControllerPacketMetadata.Metadata]:
        """Fields of a controller header ("packet_in" / "packet_out")."""
        info = self.controller_header(header)
        index = self._metadata.get(info.preamble.id)
        if index is None:
            index = NameIndex(f"{info.preamble.name} metadata", info.metadata,
                              lambda field: field.name, lambda field: field.id)
            self._metadata[info.preamble.id] = index
        return index

    def has_controller_header(self, name: str) -> bool:
        return name in self.controller_headers

    # -- types ------------------------------------------------------------------------------
    def bitwidth(self, spec: p4t.P4DataTypeSpec) -> int:
        """The width of a bitstring-like type (following new types and serializable enums)."""
        kind = spec.WhichOneof("type_spec")
        if kind == "bitstring":
            return bitstring_width(spec.bitstring)
        if kind == "bool":
            return 1
        if kind == "serializable_enum":
            enum = self.p4info.type_info.serializable_enums.get(spec.serializable_enum.name)
            return enum.underlying_type.bitwidth if enum is not None else 0
        if kind == "new_type":
            new_type = self.p4info.type_info.new_types.get(spec.new_type.name)
            if new_type is None:
                return 0
            if new_type.WhichOneof("representation") == "original_type":
                return self.bitwidth(new_type.original_type)
            return new_type.translated_type.sdn_bitwidth
        raise SchemaError(f"type {kind} is not a bitstring", "INVALID_ARGUMENT")


def bitstring_width(spec: p4t.P4BitstringLikeTypeSpec) -> int:
    kind = spec.WhichOneof("type_spec")
    if kind == "bit":
        return spec.bit.bitwidth
    if kind == "int":
        return spec.int.bitwidth
    if kind == "varbit":
        return spec.varbit.max_bitwidth
    return 0
