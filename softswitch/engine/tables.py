"""Match-action tables at run time: control-plane API, validation and lookup structures.

The generated code of a table's ``apply()`` reads the structure matching the table's *mode*,
fixed at compile time from its key's match kinds:

- ``exact``: ``exact`` is a dict from the key (an int for one field, else a tuple) to the entry;
- ``lpm``: one exact dict per prefix length, ``lpm`` a list of ``(lpm_mask, dict)`` longest
  first (only non-empty lengths), the lpm field masked in the key;
- ``scan``: ``scan`` a list of ``(check..., entry)`` tuples sorted by priority (larger first,
  then insertion order); per field ``(mask, value)``, or ``(low, high)`` for range fields;
- ``none``: a keyless table, always the default action.

Priorities follow P4Runtime: a larger number wins.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from softswitch.engine.meters import Meter, MeterKind
from softswitch.errors import ControlPlaneError


@dataclass(frozen=True, slots=True)
class ExactMatch:
    value: int


@dataclass(frozen=True, slots=True)
class LpmMatch:
    value: int
    prefix_len: int


@dataclass(frozen=True, slots=True)
class TernaryMatch:
    value: int
    mask: int


@dataclass(frozen=True, slots=True)
class RangeMatch:
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class OptionalMatch:
    value: int | None


Match = ExactMatch | LpmMatch | TernaryMatch | RangeMatch | OptionalMatch


@dataclass(frozen=True, slots=True)
class KeyField:
    """One match field: p4c's key name (``hdr.ipv6.dstAddr`` or the ``@name``), kind, width."""

    name: str
    match_kind: str
    width: int


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """An action a table may run: its control-plane name, generated function and parameters.

    `aid` identifies the action for ``switch (t.apply().action_run)``; `fn` is called as
    ``fn(*context, args)`` by the generated table code.
    """

    name: str
    fn: Callable[..., Any]
    params: tuple[tuple[str, int], ...]
    aid: int
    default_only: bool = False
    table_only: bool = False


class Entry:
    """A table entry, or the default action (handle -1). Generated code reads fn/args/aid."""

    __slots__ = ("action", "aid", "args", "cnt", "fn", "group", "handle", "matches", "member",
                 "meter", "priority")

    def __init__(self, handle: int, matches: tuple[Match, ...], spec: ActionSpec | None,
                 args: tuple[int, ...], priority: int) -> None:
        self.handle = handle
        self.matches = matches
        self.priority = priority
        self.cnt = [0, 0]
        self.meter: Meter | None = None
        self.member: Member | None = None
        self.group: Group | None = None
        # set_action, inlined: an entry is made on every insert
        self.action = spec.name if spec else ""
        self.fn = spec.fn if spec else None
        self.aid = spec.aid if spec else -1
        self.args = args

    def set_action(self, spec: ActionSpec | None, args: tuple[int, ...]) -> None:
        self.action = spec.name if spec else ""
        self.fn = spec.fn if spec else None
        self.aid = spec.aid if spec else -1
        self.args = args


class Member:
    """An action profile member: an action with its arguments."""

    __slots__ = ("action", "aid", "args", "fn", "handle")

    def __init__(self, handle: int, spec: ActionSpec, args: tuple[int, ...]) -> None:
        self.handle = handle
        self.action = spec.name
        self.fn = spec.fn
        self.aid = spec.aid
        self.args = args


class Group:
    """An action selector group: members kept sorted by handle, as BMv2 orders them."""

    __slots__ = ("handle", "members")

    def __init__(self, handle: int) -> None:
        self.handle = handle
        self.members: list[Member] = []


class ProfileMirror(Protocol):
    """Another engine's copy of an action profile's members and groups (native/profiles.py),
    told of every change after the Python record has accepted it."""

    def member_set(self, member: Member) -> None: ...
    def member_deleted(self, member_id: int) -> None: ...
    def group_set(self, group: Group) -> None: ...
    def group_deleted(self, group_id: int) -> None: ...


class TableMirror(Protocol):
    """Another engine's copy of a table's lookup index (the C engine's, native/tables.py):
    told of every change after the Python record has accepted it."""

    def inserted(self, entry: Entry, key: Any = None) -> None: ...
    def removed(self, entry: Entry) -> None: ...
    def cleared(self) -> None: ...
    def action_set(self, entry: Entry) -> None: ...


def _fits(value: int, width: int) -> bool:
    return 0 <= value < (1 << width)


def dont_care(field: KeyField) -> Match | None:
    """The match an omitted key field stands for (None: the field needs a value)."""
    kind = field.match_kind
    if kind == "ternary":
        return TernaryMatch(0, 0)
    if kind == "lpm":
        return LpmMatch(0, 0)
    if kind == "optional":
        return OptionalMatch(None)
    if kind == "range":
        return RangeMatch(0, (1 << field.width) - 1)
    return None


def _prefix_mask(width: int, prefix_len: int) -> int:
    return ((1 << prefix_len) - 1) << (width - prefix_len)


class ActionProfile:
    """An ``action_profile`` or ``action_selector`` instance shared by one or more tables."""

    def __init__(self, name: str, size: int, actions: Mapping[str, ActionSpec],
                 selector: Callable[[bytes], int] | None = None) -> None:
        self.name = name
        self.size = size
        self.actions = dict(actions)
        self.selector = selector
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}
        self._next_member = 0
        self._next_group = 0
        # the C engine's copy (native/profiles.py), told of every change
        self.native: ProfileMirror | None = None

    def _spec(self, action: str) -> ActionSpec:
        spec = self.actions.get(action)
        if spec is None:
            for name, candidate in self.actions.items():
                if name.endswith("." + action):
                    return candidate
            raise ControlPlaneError(
                f"action profile '{self.name}': action '{action}' is not one of its tables' "
                f"actions ({', '.join(self.actions)})"
            )
        return spec

    def add_member(self, action: str, args: Sequence[int] | Mapping[str, int] = (),
                   member_id: int | None = None) -> int:
        spec = self._spec(action)
        values = check_action_args(f"action profile '{self.name}'", spec, args)
        if len(self.members) >= self.size:
            raise ControlPlaneError(f"action profile '{self.name}' is full ({self.size} members)",
                                    "RESOURCE_EXHAUSTED")
        if member_id is None:
            member_id = self._next_member
        if member_id in self.members:
            raise ControlPlaneError(f"action profile '{self.name}': member {member_id} exists")
        self._next_member = max(self._next_member, member_id + 1)
        self.members[member_id] = member = Member(member_id, spec, values)
        if self.native is not None:
            self.native.member_set(member)
        return member_id

    def modify_member(self, member_id: int, action: str,
                      args: Sequence[int] | Mapping[str, int] = ()) -> None:
        member = self.member(member_id)
        spec = self._spec(action)
        values = check_action_args(f"action profile '{self.name}'", spec, args)
        member.action, member.fn, member.aid, member.args = spec.name, spec.fn, spec.aid, values
        if self.native is not None:
            self.native.member_set(member)

    def delete_member(self, member_id: int) -> None:
        self.member(member_id)
        for group in self.groups.values():
            if any(m.handle == member_id for m in group.members):
                raise ControlPlaneError(
                    f"action profile '{self.name}': member {member_id} is in group {group.handle}"
                )
        del self.members[member_id]
        if self.native is not None:
            self.native.member_deleted(member_id)

    def member(self, member_id: int) -> Member:
        try:
            return self.members[member_id]
        except KeyError:
            raise ControlPlaneError(
                f"action profile '{self.name}': no member {member_id}"
            ) from None

    def create_group(self, group_id: int | None = None) -> int:
        if self.selector is None:
            raise ControlPlaneError(f"'{self.name}' is an action profile without a selector: "
                                    "it has no groups")
        if group_id is None:
            group_id = self._next_group
        if group_id in self.groups:
            raise ControlPlaneError(f"action selector '{self.name}': group {group_id} exists")
        self._next_group = max(self._next_group, group_id + 1)
        self.groups[group_id] = group = Group(group_id)
        if self.native is not None:
            self.native.group_set(group)
        return group_id

    def group(self, group_id: int) -> Group:
        try:
            return self.groups[group_id]
        except KeyError:
            raise ControlPlaneError(
                f"action selector '{self.name}': no group {group_id}"
            ) from None

    def add_member_to_group(self, group_id: int, member_id: int) -> None:
        group = self.group(group_id)
        member = self.member(member_id)
        if member in group.members:
            raise ControlPlaneError(f"action selector '{self.name}': member {member_id} is "
                                    f"already in group {group_id}")
        group.members.append(member)
        group.members.sort(key=lambda m: m.handle)
        if self.native is not None:
            self.native.group_set(group)

    def remove_member_from_group(self, group_id: int, member_id: int) -> None:
        group = self.group(group_id)
        member = self.member(member_id)
        if member not in group.members:
            raise ControlPlaneError(f"action selector '{self.name}': member {member_id} is "
                                    f"not in group {group_id}")
        group.members.remove(member)
        if self.native is not None:
            self.native.group_set(group)

    def delete_group(self, group_id: int) -> None:
        self.group(group_id)
        del self.groups[group_id]
        if self.native is not None:
            self.native.group_deleted(group_id)

    def choose(self, group: Group, selector_bytes: bytes) -> Member | None:
        """BMv2's choice: the selector hash over the selector key fields, modulo the group
        size, indexes the members in handle order."""
        if not group.members or self.selector is None:
            return None
        return group.members[self.selector(selector_bytes) % len(group.members)]


def check_action_args(owner: str, spec: ActionSpec,
                      args: Sequence[int] | Mapping[str, int]) -> tuple[int, ...]:
    """Validate control-plane action arguments (count, names, widths) → a tuple in order."""
    if isinstance(args, Mapping):
        names = [p for p, _ in spec.params]
        unknown = [n for n in args if n not in names]
        if unknown:
            raise ControlPlaneError(
                f"{owner}: action '{spec.name}' has no parameter '{unknown[0]}'"
            )
        missing = [n for n in names if n not in args]
        if missing:
            raise ControlPlaneError(
                f"{owner}: action '{spec.name}' needs parameter '{missing[0]}'"
            )
        values = [args[n] for n in names]
    else:
        values = list(args)
        if len(values) != len(spec.params):
            raise ControlPlaneError(
                f"{owner}: action '{spec.name}' takes {len(spec.params)} arguments, "
                f"got {len(values)}"
            )
    for (pname, width), value in zip(spec.params, values):
        if not isinstance(value, int) or not _fits(value, width):
            raise ControlPlaneError(
                f"{owner}: action '{spec.name}' parameter '{pname}' (bit<{width}>): "
                f"value {value!r} does not fit"
            )
    return tuple(values)


class Table:
    """A table of one block instance, as the control plane sees it (see DESIGN.md)."""

    def __init__(self, name: str, key_fields: Sequence[KeyField], actions: Sequence[ActionSpec],
                 *, mode: str, size: int = 1024, const_entries: bool = False,
                 const_default: bool = False, profile: ActionProfile | None = None,
                 meter_kind: MeterKind | None = None, has_counter: bool = False) -> None:
        self.name = name
        self.key_fields = list(key_fields)
        self.action_names = [a.name for a in actions]
        self.actions = {a.name: a for a in actions}
        self.mode = mode
        self.size = size
        self.const_entries = const_entries
        # BMv2 (set_immutable_entries) refuses every change to a table that got entries from
        # the program, also `entries` without `const`: the P4Runtime view says they may change
        self.immutable_entries = const_entries
        self.const_default = const_default
        self.profile = profile
        self.meter_kind = meter_kind
        self.has_counter = has_counter
        self.entries: dict[int, Entry] = {}
        self._next_handle = 0
        self.default = Entry(-1, (), None, (), 0)
        self.exact: dict[Any, Entry] = {}
        self.lpm: list[tuple[int, dict[Any, Entry]]] = []
        self.scan: list[tuple[Any, ...]] = []
        self._lpm_by_len: dict[int, dict[Any, Entry]] = {}
        # scan mode: (normalised matches, priority) → entry, so the control plane finds an
        # entry by its key in O(1) (P4Runtime MODIFY/DELETE name entries by key, not handle);
        # exact and lpm modes find it in `exact` / `_lpm_by_len`, whose keys are as unique
        self._by_key: dict[tuple[tuple[Match, ...], int], Entry] = {}
        self._lpm_index = next(
            (i for i, f in enumerate(self.key_fields) if f.match_kind == "lpm"), -1
        )
        self._installing_const = False
        # the C engine's copy of the lookup index (native/tables.py), told of every change
        self.native: TableMirror | None = None

    # -- control-plane API ------------------------------------------------------------------

    def add_entry(self, matches: Sequence[Match] | Mapping[str, Match], action: str,
                  args: Sequence[int] | Mapping[str, int] = (),
                  priority: int | None = None) -> int:
        """Add an entry; returns its handle."""
        if self.profile is not None:
            raise ControlPlaneError(
                f"table '{self.name}' uses action profile '{self.profile.name}': add entries "
                "with add_member_entry/add_group_entry"
            )
        spec = self._spec(action, for_entry=True)
        values = check_action_args(f"table '{self.name}'", spec, args)
        entry = self._new_entry(matches, priority)
        entry.set_action(spec, values)
        return self._insert(entry)

    def add_checked_entry(self, matches: tuple[Match, ...], spec: ActionSpec,
                          args: tuple[int, ...], priority: int) -> int:
        """`add_entry` for a caller that has already validated the request (the P4Runtime
        decoders): `matches` is one valid match of the field's own kind per key field, with
        don't-cares filled in as `_normalise` fills them; `spec` is one of this table's entry
        actions and `args` fit its parameters; `priority` is 0 unless `needs_priority`.
        What depends on the table's state (const, full, duplicate key) is still checked."""
        if self.profile is not None:
            raise ControlPlaneError(
                f"table '{self.name}' uses action profile '{self.profile.name}': add entries "
                "with add_member_entry/add_group_entry"
            )
        if self.immutable_entries:
            self._check_mutable()
        if self.mode == "none":
            raise ControlPlaneError(f"table '{self.name}' has no key: only its default action "
                                    "can be set")
        return self._insert(self._make_entry(matches, priority, spec, args))

    def add_member_entry(self, matches: Sequence[Match] | Mapping[str, Match], member_id: int,
                         priority: int | None = None) -> int:
        """Add an entry pointing at an action profile member."""
        profile = self._require_profile()
        member = profile.member(member_id)
        entry = self._new_entry(matches, priority)
        entry.member = member
        entry.action = member.action
        return self._insert(entry)

    def add_group_entry(self, matches: Sequence[Match] | Mapping[str, Match], group_id: int,
                        priority: int | None = None) -> int:
        """Add an entry pointing at an action selector group."""
        profile = self._require_profile()
        entry = self._new_entry(matches, priority)
        entry.group = profile.group(group_id)
        return self._insert(entry)

    def modify_entry(self, handle: int, action: str,
                     args: Sequence[int] | Mapping[str, int] = ()) -> None:
        self._check_mutable()
        entry = self._entry(handle)
        spec = self._spec(action, for_entry=True)
        values = check_action_args(f"table '{self.name}'", spec, args)
        entry.set_action(spec, values)
        if self.native is not None:
            self.native.action_set(entry)

    def modify_checked_entry(self, handle: int, spec: ActionSpec,
                             args: tuple[int, ...]) -> None:
        """`modify_entry` with an action validated as `add_checked_entry` takes it."""
        self._check_mutable()
        entry = self._entry(handle)
        entry.set_action(spec, args)
        if self.native is not None:
            self.native.action_set(entry)

    def point_entry(self, entry: Entry, member: Member | None, group: Group | None) -> None:
        """Point a profile table's entry at another member or group (P4Runtime MODIFY)."""
        entry.member, entry.group = member, group
        entry.action = member.action if member is not None else ""
        if self.native is not None:
            self.native.action_set(entry)

    def delete_entry(self, handle: int) -> None:
        self._check_mutable()
        entry = self._entry(handle)
        del self.entries[handle]
        self._remove_from_index(entry)
        if self.native is not None:
            self.native.removed(entry)

    def set_default_action(self, action: str, args: Sequence[int] | Mapping[str, int] = ()) -> None:
        if self.const_default and not self._installing_const:
            raise ControlPlaneError(f"table '{self.name}' has a const default action")
        spec = self._spec(action, for_entry=False)
        values = check_action_args(f"table '{self.name}'", spec, args)
        self.default.set_action(spec, values)
        if self.native is not None:
            self.native.action_set(self.default)

    def clear(self) -> None:
        self._check_mutable()
        self.entries.clear()
        self._by_key.clear()
        self.exact.clear()
        self.lpm.clear()
        self._lpm_by_len.clear()
        self.scan.clear()
        if self.native is not None:
            self.native.cleared()

    def get_entries(self) -> list[Entry]:
        return list(self.entries.values())

    def entry(self, handle: int) -> Entry:
        return self._entry(handle)

    def find_entry(self, matches: Sequence[Match] | Mapping[str, Match],
                   priority: int | None = None) -> Entry | None:
        """The entry with exactly this key (and priority, for tables that use one)."""
        norm = self._normalise(matches)
        prio = priority if self.needs_priority else 0
        return self.find_checked_entry(norm, prio or 0)

    def find_checked_entry(self, matches: tuple[Match, ...], priority: int) -> Entry | None:
        """`find_entry` for matches as `add_checked_entry` takes them."""
        mode = self.mode
        if mode == "scan":
            return self._by_key.get((matches, priority))
        if priority or mode == "none":  # entries of other modes all have priority 0
            return None
        key = self._index_key(matches)
        if mode == "exact":
            return self.exact.get(key)
        bucket = self._lpm_by_len.get(matches[self._lpm_index].prefix_len)  # type: ignore[union-attr]
        return None if bucket is None else bucket.get(key)

    @property
    def needs_priority(self) -> bool:
        return self.mode == "scan"

    # -- internals ------------------------------------------------------------------------

    def _require_profile(self) -> ActionProfile:
        if self.profile is None:
            raise ControlPlaneError(f"table '{self.name}' has no action profile")
        self._check_mutable()
        return self.profile

    def _check_mutable(self) -> None:
        if self.immutable_entries and not self._installing_const:
            if self.const_entries:
                raise ControlPlaneError(
                    f"table '{self.name}' has const entries: it cannot be changed")
            raise ControlPlaneError(
                f"table '{self.name}' has initial entries, which BMv2 makes immutable: it "
                "cannot be changed")

    def _entry(self, handle: int) -> Entry:
        try:
            return self.entries[handle]
        except KeyError:
            raise ControlPlaneError(f"table '{self.name}': no entry with handle {handle}",
                                    "NOT_FOUND") from None

    def _spec(self, action: str, *, for_entry: bool) -> ActionSpec:
        spec = self.actions.get(action)
        if spec is None:
            matches = [a for n, a in self.actions.items() if n.endswith("." + action)]
            if len(matches) != 1:
                raise ControlPlaneError(
                    f"table '{self.name}': action '{action}' is not in its actions list "
                    f"({', '.join(self.action_names)})"
                )
            spec = matches[0]
        if for_entry and spec.default_only:
            raise ControlPlaneError(
                f"table '{self.name}': action '{spec.name}' is @defaultonly"
            )
        if not for_entry and spec.table_only:
            raise ControlPlaneError(f"table '{self.name}': action '{spec.name}' is @tableonly")
        return spec

    def _normalise(self, matches: Sequence[Match] | Mapping[str, Match]) -> tuple[Match, ...]:
        fields = self.key_fields
        if isinstance(matches, Mapping):
            by_name = dict(matches)
            ordered: list[Match | None] = []
            for f in fields:
                ordered.append(by_name.pop(f.name, None))
            if by_name:
                raise ControlPlaneError(
                    f"table '{self.name}' has no key field '{next(iter(by_name))}' "
                    f"(fields: {', '.join(f.name for f in fields)})"
                )
        else:
            ordered = list(matches)
            if len(ordered) != len(fields):
                raise ControlPlaneError(
                    f"table '{self.name}' has {len(fields)} key fields, got {len(ordered)} matches"
                )
        return tuple(self._check_match(f, m) for f, m in zip(fields, ordered))

    def _check_match(self, f: KeyField, m: Match | None) -> Match:
        where = f"table '{self.name}' field '{f.name}' ({f.match_kind}, {f.width} bits)"
        full = (1 << f.width) - 1
        kind = f.match_kind
        if m is None:
            default = dont_care(f)
            if default is None:
                raise ControlPlaneError(f"{where}: a value is required")
            return default
        if isinstance(m, ExactMatch):
            if not _fits(m.value, f.width):
                raise ControlPlaneError(f"{where}: value {m.value:#x} does not fit")
            m = {"exact": m, "lpm": LpmMatch(m.value, f.width),
                 "ternary": TernaryMatch(m.value, full), "range": RangeMatch(m.value, m.value),
                 "optional": OptionalMatch(m.value)}.get(kind, m)
        expected = {"exact": ExactMatch, "lpm": LpmMatch, "ternary": TernaryMatch,
                    "range": RangeMatch, "optional": OptionalMatch}.get(kind)
        if expected is None or not isinstance(m, expected):
            raise ControlPlaneError(f"{where}: got a {type(m).__name__}")
        if isinstance(m, LpmMatch):
            if not 0 <= m.prefix_len <= f.width:
                raise ControlPlaneError(f"{where}: prefix length {m.prefix_len} out of range")
            if not _fits(m.value, f.width):
                raise ControlPlaneError(f"{where}: value {m.value:#x} does not fit")
            if m.value & ~_prefix_mask(f.width, m.prefix_len) & full:
                raise ControlPlaneError(
                    f"{where}: value {m.value:#x} has bits set past the /{m.prefix_len} prefix"
                )
        elif isinstance(m, TernaryMatch):
            if not _fits(m.value, f.width) or not _fits(m.mask, f.width):
                raise ControlPlaneError(f"{where}: value/mask {m.value:#x}/{m.mask:#x} do not fit")
            if m.value & ~m.mask:
                raise ControlPlaneError(
                    f"{where}: value {m.value:#x} has bits outside mask {m.mask:#x}"
                )
        elif isinstance(m, RangeMatch):
            if not _fits(m.low, f.width) or not _fits(m.high, f.width):
                raise ControlPlaneError(f"{where}: range {m.low:#x}..{m.high:#x} does not fit")
            if m.low > m.high:
                raise ControlPlaneError(f"{where}: range low {m.low:#x} > high {m.high:#x}")
        elif isinstance(m, OptionalMatch):
            if m.value is not None and not _fits(m.value, f.width):
                raise ControlPlaneError(f"{where}: value {m.value:#x} does not fit")
        elif isinstance(m, ExactMatch) and not _fits(m.value, f.width):
            raise ControlPlaneError(f"{where}: value {m.value:#x} does not fit")
        return m

    def _new_entry(self, matches: Sequence[Match] | Mapping[str, Match],
                   priority: int | None) -> Entry:
        self._check_mutable()
        if self.mode == "none":
            raise ControlPlaneError(f"table '{self.name}' has no key: only its default action "
                                    "can be set")
        norm = self._normalise(matches)
        if self.needs_priority:
            if priority is None:
                raise ControlPlaneError(
                    f"table '{self.name}' has ternary/range/optional keys: entries need a priority"
                )
            if priority < 0:
                raise ControlPlaneError(f"table '{self.name}': negative priority {priority}")
        else:
            priority = 0
        return self._make_entry(norm, priority)

    def _make_entry(self, norm: tuple[Match, ...], priority: int,
                    spec: ActionSpec | None = None, args: tuple[int, ...] = ()) -> Entry:
        if len(self.entries) >= self.size and not self._installing_const:
            raise ControlPlaneError(f"table '{self.name}' is full ({self.size} entries)",
                                    "RESOURCE_EXHAUSTED")
        entry = Entry(self._next_handle, norm, spec, args, priority)
        if self.meter_kind is not None:
            entry.meter = Meter(self.meter_kind)
        return entry

    def _insert(self, entry: Entry) -> int:
        key = self._index_key(entry.matches)
        if self.mode == "exact":
            if key in self.exact:
                raise ControlPlaneError(f"table '{self.name}': duplicate entry for this key",
                                        "ALREADY_EXISTS")
            self.exact[key] = entry
        elif self.mode == "lpm":
            plen = entry.matches[self._lpm_index].prefix_len  # type: ignore[union-attr]
            bucket = self._lpm_by_len.get(plen)
            if bucket is None:
                bucket = self._lpm_by_len[plen] = {}
                self._rebuild_lpm()  # a new prefix length; `lpm` holds the buckets themselves
            elif key in bucket:
                raise ControlPlaneError(f"table '{self.name}': duplicate entry for this key",
                                        "ALREADY_EXISTS")
            bucket[key] = entry
        else:
            by_key = (entry.matches, entry.priority)
            if by_key in self._by_key:
                raise ControlPlaneError(
                    f"table '{self.name}': duplicate entry for this key and priority",
                    "ALREADY_EXISTS")
            self._by_key[by_key] = entry
            bisect.insort(self.scan, (*key, entry),
                          key=lambda r: (-r[-1].priority, r[-1].handle))
        self.entries[entry.handle] = entry
        self._next_handle += 1
        if self.native is not None:
            self.native.inserted(entry, key)
        return entry.handle

    def _remove_from_index(self, entry: Entry) -> None:
        key = self._index_key(entry.matches)
        if self.mode == "exact":
            del self.exact[key]
        elif self.mode == "lpm":
            plen = entry.matches[self._lpm_index].prefix_len  # type: ignore[union-attr]
            bucket = self._lpm_by_len[plen]
            del bucket[key]
            if not bucket:
                del self._lpm_by_len[plen]
                self._rebuild_lpm()
        else:
            del self._by_key[(entry.matches, entry.priority)]
            self.scan = [r for r in self.scan if r[-1] is not entry]

    def _rebuild_lpm(self) -> None:
        width = self.key_fields[self._lpm_index].width
        self.lpm[:] = [
            (_prefix_mask(width, plen), self._lpm_by_len[plen])
            for plen in sorted(self._lpm_by_len, reverse=True)
        ]

    def _index_key(self, matches: tuple[Match, ...]) -> Any:
        if self.mode in ("exact", "lpm"):
            if len(matches) == 1:  # the common case, on every insert: no list
                return matches[0].value  # type: ignore[union-attr]
            parts = [m.value for m in matches]  # type: ignore[union-attr]
            return parts[0] if len(parts) == 1 else tuple(parts)
        key: list[int] = []
        for f, m in zip(self.key_fields, matches):
            full = (1 << f.width) - 1
            if isinstance(m, RangeMatch):
                key += [m.low, m.high]
            elif isinstance(m, TernaryMatch):
                key += [m.mask, m.value]
            elif isinstance(m, LpmMatch):
                key += [_prefix_mask(f.width, m.prefix_len), m.value]
            elif isinstance(m, OptionalMatch):
                key += [0, 0] if m.value is None else [full, m.value]
            else:
                key += [full, m.value]
        return tuple(key)
