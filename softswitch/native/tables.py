"""The C engine's table index: a Python `Table` (the control-plane record: validation,
handles, P4Runtime reads) mirrored into its ``ss_table``, and direct counters and meters on the
C entries (one copy of the counts and buckets: the C side's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from softswitch.engine.tables import Entry, LpmMatch, Table
from softswitch.native.cgen_tables import NativeTableInfo
from softswitch.native.meters import NativeMeter

_U64 = (1 << 64) - 1


def words(values: list[int] | tuple[int, ...]) -> list[int]:
    """u128 pairs, low word first (ss_rt.h's boundary form)."""
    out = []
    for v in values:
        out += [v & _U64, (v >> 64) & _U64]
    return out


class EntryCounter:
    """An entry's direct counter ``[packets, bytes]`` as Entry.cnt, read from and written to
    the C entry (looked up by handle, so it never points at a moved or freed entry)."""

    __slots__ = ("handle", "mirror")

    def __init__(self, mirror: NativeTableMirror, handle: int) -> None:
        self.mirror = mirror
        self.handle = handle

    def _entry(self) -> Any:
        return self.mirror.c_entry(self.handle)

    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Iterator[int]:
        e = self._entry()
        return iter((int(e.packets), int(e.bytes)) if e is not None else (0, 0))

    def __getitem__(self, i: int | slice) -> Any:
        return list(self)[i]

    def __setitem__(self, i: int | slice, value: Any) -> None:
        values = list(self)
        values[i] = value
        e = self._entry()
        if e is not None:
            e.packets, e.bytes = values[0], values[1]


class _Words:
    """A uint64_t array reused for value after value, each as u128 word pairs (`words`); grown
    when a value needs more."""

    def __init__(self, ffi: Any) -> None:
        self.ffi = ffi
        self.cells = ffi.new("uint64_t[]", 2)

    def fill(self, values: list[int] | tuple[int, ...]) -> Any:
        flat = words(values)
        if len(flat) > len(self.cells):
            self.cells = self.ffi.new("uint64_t[]", len(flat))
        self.cells[0:len(flat)] = flat
        return self.cells


class NativeTableMirror:
    """Keeps one ss_table equal to a Python Table's entries and default action."""

    def __init__(self, ffi: Any, lib: Any, ctable: Any, info: NativeTableInfo,
                 table: Table) -> None:
        self.ffi, self.lib, self.ctable = ffi, lib, ctable
        self.info = info
        self.table = table
        self._lpm = next((i for i, k in enumerate(info.kinds) if k == "lpm"), -1)
        # The words handed to ss_table_insert and ss_entry_set_action, which copy them: one
        # buffer each, reused (writes hold the device's lock). A P4Runtime push inserts tens
        # of thousands.
        self._key_words = _Words(ffi)
        self._arg_words = _Words(ffi)
        self._scan = info.mode == "scan"

    def attach(self) -> None:
        """Install what the table holds already (program entries, default) and follow it."""
        self.action_set(self.table.default)
        for entry in self.table.entries.values():
            self.inserted(entry)
        self.table.native = self

    def c_entry(self, handle: int) -> Any:
        if handle < 0:
            return self.lib.ss_table_default(self.ctable)
        e = self.lib.ss_table_entry(self.ctable, handle)
        return None if e == self.ffi.NULL else e

    def _action(self, entry: Entry) -> tuple[int, Any, int]:
        """The entry's action as the C calls take it: id, argument words, argument count."""
        aid = -1 if entry.aid < 0 else self.info.actions.get(entry.action, -1)
        return aid, self._arg_words.fill(entry.args), len(entry.args)

    def inserted(self, entry: Entry, key: Any = None) -> None:
        """`entry` is in the Python table now (`key`: its index key, when the caller has it)."""
        if key is None:
            key = self.table._index_key(entry.matches)
        prefix = -1
        if self._lpm >= 0:
            m = entry.matches[self._lpm]
            assert isinstance(m, LpmMatch)
            prefix = m.prefix_len
        aid, args, nargs = self._action(entry)
        found = self.lib.ss_table_insert(
            self.ctable, entry.handle, entry.priority if self._scan else 0, prefix,
            self._key_words.fill(key if isinstance(key, tuple) else (key,)),
            aid, nargs, args)
        if found == self.ffi.NULL:
            raise RuntimeError(f"table '{self.info.name}': the C index refused entry "
                               f"{entry.handle}")
        entry.cnt = EntryCounter(self, entry.handle)  # type: ignore[assignment]
        self._point(found, entry)
        if entry.meter is not None:
            meter = NativeMeter(entry.meter.kind, self.lib, self._meter_cell(entry.handle))
            meter.copy_from(entry.meter)
            entry.meter = meter

    @staticmethod
    def _point(e: Any, entry: Entry) -> None:
        """A profile table's entry: the member or group it runs."""
        e.member = entry.member.handle if entry.member is not None else -1
        e.group = entry.group.handle if entry.group is not None else -1

    def _meter_cell(self, handle: int) -> Callable[[], Any]:
        def cell() -> Any:
            e = self.c_entry(handle)
            return None if e is None else self.ffi.addressof(e, "meter")
        return cell

    def removed(self, entry: Entry) -> None:
        self.lib.ss_table_remove(self.ctable, entry.handle)

    def cleared(self) -> None:
        self.lib.ss_table_clear(self.ctable)

    def action_set(self, entry: Entry) -> None:
        e = self.c_entry(entry.handle)
        if e is None:
            return
        aid, args, nargs = self._action(entry)
        self.lib.ss_entry_set_action(e, aid, nargs, args)
        self._point(e, entry)
        if entry.handle < 0 and not isinstance(entry.cnt, EntryCounter):
            entry.cnt = EntryCounter(self, -1)  # type: ignore[assignment]
