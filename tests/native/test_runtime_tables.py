"""The native table index (ss_tables.c) against the Python engine's: the same entries go
into a real `engine.tables.Table` and a C table; random keys must find the same handle through
the C lookup as through the lookup code engine/codegen_tables.py generates."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from native_lib import needs_cc, words

from softswitch.engine.codegen_info import TableInfo
from softswitch.engine.codegen_tables import TableGen
from softswitch.engine.tables import (
    ActionSpec,
    ExactMatch,
    KeyField,
    LpmMatch,
    Match,
    OptionalMatch,
    RangeMatch,
    Table,
    TernaryMatch,
)
from softswitch.errors import ControlPlaneError
from softswitch.native.build import SS_KIND, SS_MODE, NativeLibrary

pytestmark = needs_cc


class _LookupEmitter(TableGen):
    """The engine's own table lookup generator, emitting into a list."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.ind = 1

    def line(self, text: str) -> None:
        self.out.append("    " * self.ind + text)

    @contextmanager
    def indent(self) -> Iterator[None]:
        self.ind += 1
        yield
        self.ind -= 1


def python_lookup(table: Table) -> Callable[..., Any]:
    """`lookup(table, k0, k1, ...)` → the Entry the generated Python code finds, or None."""
    emitter = _LookupEmitter()
    info = TableInfo("T", table.name, table.key_fields, table.mode, [], "", (), False, [],
                     False, 1 << 20)
    keys = [f"k{i}" for i in range(len(table.key_fields))]
    emitter.table_lookup(info, keys, "T")
    source = f"def lookup(T, {', '.join(keys)}):\n" + "\n".join(emitter.out) + "\n    return e\n"
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    return namespace["lookup"]


def mode_of(kinds: list[str]) -> str:
    if all(k == "exact" for k in kinds):
        return "exact"
    if kinds.count("lpm") == 1 and all(k in ("exact", "lpm") for k in kinds):
        return "lpm"
    return "scan"


def prefix_mask(width: int, plen: int) -> int:
    return ((1 << plen) - 1) << (width - plen)


class Pair:
    """A Python Table and a C table fed the same requests."""

    def __init__(self, rt: NativeLibrary, fields: list[tuple[str, int]]) -> None:
        self.rt = rt
        self.fields = [KeyField(f"f{i}", kind, w) for i, (kind, w) in enumerate(fields)]
        kinds = [k for k, _ in fields]
        self.mode = mode_of(kinds)
        spec = ActionSpec("set", lambda args: None, (("h", 64), ("wide", 128)), aid=7)
        self.py = Table("t", self.fields, [spec], mode=self.mode, size=1 << 20)
        self.lookup = python_lookup(self.py)
        ffi = rt.ffi
        self.c = ffi.gc(rt.lib.ss_table_new(SS_MODE[self.mode], len(fields),
                                            ffi.new("uint16_t[]", [w for _, w in fields]),
                                            ffi.new("uint8_t[]", [SS_KIND[k] for k in kinds])),
                        rt.lib.ss_table_free)

    def c_key(self, matches: tuple[Match, ...]) -> tuple[list[int], int]:
        """(key values, prefix length) as ss_table_insert takes them: the Python index's key
        (scan: per field (mask, value) or (low, high))."""
        if self.mode == "scan":
            return list(self.py._index_key(matches)), 0
        plen = next((m.prefix_len for m in matches if isinstance(m, LpmMatch)), 0)
        return [m.value for m in matches], plen  # type: ignore[union-attr]

    def add(self, matches: tuple[Match, ...], priority: int, wide: int) -> int | None:
        handle = self.py._next_handle
        try:
            self.py.add_entry(matches, "set", [handle, wide],
                              priority if self.mode == "scan" else None)
            added = True
        except ControlPlaneError as exc:
            assert exc.code == "ALREADY_EXISTS"
            added = False
        values, plen = self.c_key(matches)
        e = self.rt.lib.ss_table_insert(self.c, handle, priority, plen, words(self.rt, values), 7,
                                        2, words(self.rt, [handle, wide]))
        assert (e != self.rt.ffi.NULL) == added, matches
        if not added:
            return None
        assert e.handle == handle and e.action == 7 and e.nargs == 2
        assert [e.args[0], e.args[1], e.args[2] | e.args[3] << 64] == [handle, 0, wide]
        return handle

    def remove(self, handle: int) -> None:
        self.py.delete_entry(handle)
        assert self.rt.lib.ss_table_remove(self.c, handle) == 0
        assert self.rt.lib.ss_table_remove(self.c, handle) == -1
        assert self.rt.lib.ss_table_entry(self.c, handle) == self.rt.ffi.NULL

    def check(self, key: list[int]) -> bool:
        e = self.lookup(self.py, *key)
        expected = -1 if e is None else e.handle
        assert self.rt.lib.ss_table_lookup_words(self.c, words(self.rt, key)) == expected, key
        return expected >= 0


def random_match(rng: random.Random, f: KeyField, pool: list[int]) -> Match:
    w, full = f.width, (1 << f.width) - 1
    v = rng.choice(pool)
    if f.match_kind == "exact":
        return ExactMatch(v)
    if f.match_kind == "lpm":
        plen = rng.choice([0, w, rng.randint(0, w), rng.randint(max(0, w - 3), w)])
        return LpmMatch(v & prefix_mask(w, plen), plen)
    if f.match_kind == "ternary":
        mask = rng.choice([0, full, rng.getrandbits(w), full ^ (1 << rng.randrange(w))])
        return TernaryMatch(v & mask, mask)
    if f.match_kind == "range":
        a, b = sorted([v, rng.choice([rng.choice(pool), rng.getrandbits(w)])])
        return RangeMatch(a, b)
    return OptionalMatch(None if rng.random() < 0.3 else v)


def random_key(rng: random.Random, pair: Pair, pools: list[list[int]],
               entries: list[tuple[Match, ...]]) -> list[int]:
    key = []
    base = rng.choice(entries) if entries and rng.random() < 0.6 else None
    for i, f in enumerate(pair.fields):
        w = f.width
        r = rng.random()
        if base is not None and r < 0.8:
            m = base[i]
            if isinstance(m, RangeMatch):
                v = rng.choice([m.low, m.high, m.low - 1, m.high + 1, rng.randint(m.low, m.high)])
            elif isinstance(m, TernaryMatch | LpmMatch):
                v = m.value | (rng.getrandbits(w) & ~(m.mask if isinstance(m, TernaryMatch)
                                                       else prefix_mask(w, m.prefix_len)))
            else:
                v = m.value if m.value is not None else rng.getrandbits(w)
        elif r < 0.9:
            v = rng.choice(pools[i])
        else:
            v = rng.getrandbits(w)
        key.append(v & ((1 << w) - 1))
    return key


def exercise(rt: NativeLibrary, fields: list[tuple[str, int]], seed: int, n: int = 120) -> None:
    rng = random.Random(seed)
    pair = Pair(rt, fields)
    # few distinct values per field: duplicates, overlaps and hits happen
    pools = [[rng.getrandbits(w) for _ in range(4)] + [0, (1 << w) - 1] for _, w in fields]
    live: dict[int, tuple[Match, ...]] = {}

    def fill(count: int) -> None:
        for _ in range(count):
            matches = tuple(random_match(rng, f, pools[i]) for i, f in enumerate(pair.fields))
            handle = pair.add(matches, rng.randint(0, 4), rng.getrandbits(128))
            if handle is not None:
                live[handle] = matches

    def probe(count: int) -> int:
        hits = sum(pair.check(random_key(rng, pair, pools, list(live.values())))
                   for _ in range(count))
        assert rt.lib.ss_table_size(pair.c) == len(pair.py.entries) == len(live)
        return hits

    fill(n)
    hits = probe(400)
    assert live and hits  # the test exercises hits, not only misses
    for handle in rng.sample(sorted(live), len(live) // 2):
        pair.remove(handle)
        del live[handle]
    probe(300)
    fill(n // 2)  # re-inserts: keys removed above come back under new handles
    probe(300)
    # modify: the C entry is set in place
    handle = next(iter(live))
    e = rt.lib.ss_table_entry(pair.c, handle)
    rt.lib.ss_entry_set_action(e, 3, 1, words(rt, [(1 << 100) + 5]))
    assert (e.action, e.nargs, e.args[0], e.args[1]) == (3, 1, 5, 1 << 36)
    pair.py.clear()
    rt.lib.ss_table_clear(pair.c)
    live.clear()
    probe(50)
    fill(n // 4)
    probe(100)


WIDTHS = [1, 9, 48, 64, 65, 128]


@pytest.mark.parametrize("width", WIDTHS)
def test_exact_one_field(rt: NativeLibrary, width: int) -> None:
    exercise(rt, [("exact", width)], seed=width)


def test_exact_multi_field(rt: NativeLibrary) -> None:
    exercise(rt, [("exact", w) for w in WIDTHS], seed=1)
    exercise(rt, [("exact", 1)] * 32, seed=2, n=60)


@pytest.mark.parametrize("width", WIDTHS)
def test_lpm_one_field(rt: NativeLibrary, width: int) -> None:
    exercise(rt, [("lpm", width)], seed=100 + width)


def test_lpm_with_exact_fields(rt: NativeLibrary) -> None:
    exercise(rt, [("exact", 9), ("lpm", 128), ("exact", 65)], seed=3)
    exercise(rt, [("lpm", 48), ("exact", 1)], seed=4)


@pytest.mark.parametrize("kind", ["ternary", "range", "optional"])
@pytest.mark.parametrize("width", [1, 9, 64, 65, 128])
def test_scan_one_field(rt: NativeLibrary, kind: str, width: int) -> None:
    exercise(rt, [(kind, width)], seed=200 + width, n=60)


def test_scan_mixed_fields(rt: NativeLibrary) -> None:
    fields = [("ternary", 128), ("range", 65), ("optional", 1), ("exact", 9), ("lpm", 64),
              ("lpm", 48)]
    exercise(rt, fields, seed=5)
    exercise(rt, [("ternary", 8)] * 32, seed=6, n=60)


def test_default_entry_and_bad_requests(rt: NativeLibrary) -> None:
    lib, ffi = rt.lib, rt.ffi
    t = ffi.gc(lib.ss_table_new(SS_MODE["exact"], 1, ffi.new("uint16_t[]", [16]),
                                ffi.new("uint8_t[]", [SS_KIND["exact"]])), lib.ss_table_free)
    d = lib.ss_table_default(t)
    assert (d.handle, d.action, d.nargs) == (-1, -1, 0)
    lib.ss_entry_set_action(d, 2, 1, words(rt, [9]))
    assert lib.ss_table_default(t).action == 2 and lib.ss_table_default(t).args[0] == 9
    assert lib.ss_table_insert(t, 0, 0, 0, words(rt, [5]), 1, 0, words(rt, [])) != ffi.NULL
    # the same handle twice, or more arguments than SS_MAX_ARGS: refused
    assert lib.ss_table_insert(t, 0, 0, 0, words(rt, [6]), 1, 0, words(rt, [])) == ffi.NULL
    assert lib.ss_table_insert(t, 1, 0, 0, words(rt, [6]), 1, 65, words(rt, [0] * 65)) == ffi.NULL
    assert lib.ss_table_lookup_words(t, words(rt, [6])) == -1
    lib.ss_table_clear(t)
    assert lib.ss_table_default(t).action == 2  # clear keeps the default
    # an lpm table needs an lpm field
    assert lib.ss_table_new(SS_MODE["lpm"], 1, ffi.new("uint16_t[]", [16]),
                            ffi.new("uint8_t[]", [SS_KIND["exact"]])) == ffi.NULL


def test_entry_pointers_stay_valid_while_the_table_grows(rt: NativeLibrary) -> None:
    lib, ffi = rt.lib, rt.ffi
    t = ffi.gc(lib.ss_table_new(SS_MODE["exact"], 1, ffi.new("uint16_t[]", [32]),
                                ffi.new("uint8_t[]", [SS_KIND["exact"]])), lib.ss_table_free)
    first = lib.ss_table_insert(t, 0, 0, 0, words(rt, [77]), 1, 1, words(rt, [1]))
    first.packets = 5
    for h in range(1, 5000):
        assert lib.ss_table_insert(t, h, 0, 0, words(rt, [h * 7919]), 1, 0, words(rt, []))
    for h in range(1, 5000, 2):
        assert lib.ss_table_remove(t, h) == 0
    assert lib.ss_table_entry(t, 0) == first and first.packets == 5
    assert lib.ss_table_lookup_words(t, words(rt, [77])) == 0
    assert all(lib.ss_table_lookup_words(t, words(rt, [h * 7919])) == (h if h % 2 == 0 else -1)
               for h in range(1, 5000))
