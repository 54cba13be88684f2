"""Plan ⇄ switch: PlannedEntry ⇄ P4Runtime TableEntry through the P4Info, and the difference.

Both sides are brought to one canonical form before comparing: a PlannedEntry whose names are
the P4Info's full names and whose values are what a server reads back (bits outside an LPM
prefix or a ternary mask cleared, don't-care fields left out). A planned entry written as
`"dst_addr": (addr, 48)` and the entry a switch returns for it then compare equal.

The difference (`diff`) is what a push writes: DELETE stale entries first (they may hold table
space the new ones need), then MODIFY changed ones, then INSERT missing ones. A table's default
action is never inserted or deleted, only modified, and only when the plan names one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from finsy.proto import p4r

from controller.devices.codec import PlanCodec
from controller.plan.entries import MatchValue, PlannedEntry
from p4rt.entities import DELETE, INSERT, MODIFY
from p4rt.matches import ExactMatch, LpmMatch, Match, OptionalMatch, RangeMatch, TernaryMatch
from p4rt.schema import Schema
from p4rt.tables import TableEntry


def to_table_entry(schema: Schema, entry: PlannedEntry) -> TableEntry:
    """The p4rt builder for a planned entry; EncodeError/SchemaError name the bad field."""
    return TableEntry(schema, entry.table, match=dict(entry.match), action=entry.action or None,
                      params=dict(entry.params), priority=entry.priority,
                      is_default=entry.is_default)


def _match_value(match: Match) -> MatchValue:
    if isinstance(match, ExactMatch | OptionalMatch):
        return match.value
    if isinstance(match, LpmMatch):
        return (match.value, match.prefix_len)
    if isinstance(match, TernaryMatch):
        return (match.value, match.mask)
    assert isinstance(match, RangeMatch)
    return (match.low, match.high)


def from_table_entry(entry: TableEntry) -> PlannedEntry:
    """The canonical PlannedEntry of a builder (full P4Info names, canonical values)."""
    call = entry.action_call
    action = call.name if call is not None else ""
    params: tuple[tuple[str, int], ...] = ()
    if call is not None:
        params = tuple(sorted((name, value if isinstance(value, int)
                               else int.from_bytes(value, "big"))
                              for name, value in call.params.items()))
    match = tuple(sorted((name, _match_value(value)) for name, value in entry.matches.items()))
    return PlannedEntry(entry.name, match, action, params, entry.priority, entry.is_default)


def canonical(schema: Schema, entry: PlannedEntry) -> PlannedEntry:
    return from_table_entry(to_table_entry(schema, entry))


def from_entity(schema: Schema, entity: p4r.Entity) -> PlannedEntry:
    return from_table_entry(TableEntry.from_proto(schema, entity.table_entry))


def read_requests(schema: Schema, planned: Iterable[PlannedEntry]) -> list[p4r.Entity]:
    """What to read to know a switch's state as far as the plan goes: every table entry
    (one wildcard), and the default entry of each table whose default the plan sets (asked one
    table at a time: PI does not answer a default-entry wildcard over all tables)."""
    wanted = [p4r.Entity(table_entry=p4r.TableEntry())]
    tables = sorted({schema.table(entry.table).preamble.id
                     for entry in planned if entry.is_default})
    for table_id in tables:
        wanted.append(p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id,
                                                            is_default_action=True)))
    return wanted


@dataclass
class Diff:
    """What to write to bring a switch from its state to the plan."""

    deletes: list[PlannedEntry] = field(default_factory=list)
    modifies: list[PlannedEntry] = field(default_factory=list)
    inserts: list[PlannedEntry] = field(default_factory=list)
    unchanged: int = 0

    @property
    def writes(self) -> int:
        return len(self.deletes) + len(self.modifies) + len(self.inserts)

    def steps(self) -> list[tuple[str, int, list[PlannedEntry]]]:
        """("deleted" | "modified" | "inserted", update type, entries), one per non-empty
        phase, in the order they must run: each phase finishes before the next starts
        (deletes free the table space inserts may need)."""
        kinds = (("deleted", DELETE, self.deletes), ("modified", MODIFY, self.modifies),
                 ("inserted", INSERT, self.inserts))
        return [(name, kind, entries) for name, kind, entries in kinds if entries]

    def phases(self, schema: Schema, codec: PlanCodec | None = None
               ) -> list[tuple[str, list[p4r.Update]]]:
        """(phase name, updates) for each of `steps`."""
        codec = codec or PlanCodec(schema)
        return [(name, [codec.update(kind, entry) for entry in entries])
                for name, kind, entries in self.steps()]

    def encoded_phases(self, codec: PlanCodec) -> list[tuple[str, Counted]]:
        """`phases` as wire bytes for Session.write_encoded: (phase name, its updates).
        Every entry is checked now, as `phases` checks them; each is encoded only when its
        request is sent, so encoding overlaps the switch's work."""
        return [(name, Counted(codec.encoding(kind, entries)))
                for name, kind, entries in self.steps()]


def diff(schema: Schema, planned: Sequence[PlannedEntry],
         current: Iterable[p4r.Entity | bytes], codec: PlanCodec | None = None) -> Diff:
    """Plan vs switch state (`current`: what `read_requests` returned, as entities or as
    their wire bytes).

    Const entries (in the program, not the controller's) are left alone; so is a default
    action the plan does not set. Two planned entries with one key are a plan bug, refused.
    """
    codec = codec or PlanCodec(schema)
    return compare(codec, planned, read_back(codec, current))


def read_back(codec: PlanCodec, current: Iterable[p4r.Entity | bytes]
              ) -> dict[tuple[object, ...], PlannedEntry]:
    """The switch's entries that a diff compares, canonical, by key: const entries left out."""
    have: dict[tuple[object, ...], PlannedEntry] = {}
    for entity in current:
        if isinstance(entity, bytes):   # Session.read_encoded's form
            decoded = codec.decode_entity(entity)
            if decoded is not None:
                have[decoded.key] = decoded
            continue
        if entity.WhichOneof("entity") != "table_entry" or entity.table_entry.is_const:
            continue
        entry = codec.from_entity(entity)
        have[entry.key] = entry
    return have


class PlanConflict(ValueError):
    """Two planned entries for one key: a plan bug no retry mends."""


class _Wanted:
    """Canonical planned entries by key; a second entry for a key must be the same entry."""

    def __init__(self, codec: PlanCodec) -> None:
        self.codec = codec
        self.entries: dict[tuple[object, ...], PlannedEntry] = {}

    def add(self, entry: PlannedEntry) -> PlannedEntry | None:
        """`entry`'s canonical form, or None when the plan has it already."""
        return self.keep(self.codec.canonical(entry))

    def keep(self, canon: PlannedEntry) -> PlannedEntry | None:
        """`add` of an entry in canonical form."""
        other = self.entries.setdefault(canon.key, canon)   # one hash of the key per entry
        if other is canon:
            return canon
        if other != canon:
            raise PlanConflict(f"the plan has two entries for one key: {other.describe()} "
                               f"and {canon.describe()}")
        return None


def compare(codec: PlanCodec, planned: Sequence[PlannedEntry],
            have: Mapping[tuple[object, ...], PlannedEntry]) -> Diff:
    """`diff` against a switch's entries as `read_back` gives them."""
    wanted = _Wanted(codec)
    for entry in planned:
        wanted.add(entry)
    want = wanted.entries
    result = Diff()
    if not have:   # a new or wiped switch: everything is written (defaults as MODIFY)
        for entry in want.values():
            (result.modifies if entry.is_default else result.inserts).append(entry)
        return result
    found = 0
    for key, entry in have.items():
        target = want.get(key)
        if target is None:
            if not entry.is_default:
                result.deletes.append(entry)
            continue
        found += 1
        if target.action == entry.action and target.params == entry.params:
            result.unchanged += 1
        else:
            result.modifies.append(target)
    if found < len(want):   # some planned entries are not on the switch
        for key, entry in want.items():
            if key not in have:
                # A default the read did not return still exists on the switch: MODIFY it.
                (result.modifies if entry.is_default else result.inserts).append(entry)
    return result


class Counted:
    """An iterator of update bytes that counts what it has given."""

    def __init__(self, updates: Iterable[bytes]) -> None:
        self._updates = updates
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        for update in self._updates:
            self.count += 1
            yield update


def fresh_phases(codec: PlanCodec, planned: Sequence[PlannedEntry]
                 ) -> list[tuple[str, Counted]]:
    """What `compare(codec, planned, {}).encoded_phases(codec)` writes, for a switch that
    holds none of the plan's entries (a new or wiped one), without waiting for the whole
    plan to be checked: the defaults are checked and modified first; each insert is then
    canonicalised, checked against the entries before it and encoded when its request is
    filled, so the switch applies the first requests while the client makes the next.

    The cost: a plan error (two entries for one key, a name the P4Info lacks) is raised
    when it is reached, and the entries sent before it stay written. A plan that
    `mrc-ctl check` passes has none; the next push of a fixed plan puts the switch right."""
    wanted = _Wanted(codec)
    defaults = [canon for entry in planned if entry.is_default
                if (canon := wanted.add(entry)) is not None]

    def inserts() -> Iterator[bytes]:
        encode = codec.canonical_update
        keep = wanted.keep
        for entry in planned:
            if not entry.is_default:
                canon, update = encode(INSERT, entry)
                if keep(canon) is not None:
                    yield update

    phases = [("modified", Counted(codec.encoding(MODIFY, defaults)))] if defaults else []
    return [*phases, ("inserted", Counted(inserts()))]
