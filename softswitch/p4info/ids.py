"""P4Runtime ids and aliases, assigned exactly as p4c's ``P4RuntimeSymbolTable`` does.

Rule (p4c ``control-plane/p4RuntimeSymbolTable.cpp``):

1. Every control-plane symbol is registered with its kind and fully qualified name. A symbol with
   an ``@id(N)`` annotation gets ``N | (prefix << 24)`` immediately; N may already carry the
   kind's 8-bit prefix, any other prefix is an error, and two symbols with the same explicit id
   are an error.
2. Then, kind by kind, the symbols without an id are taken in ascending byte order of their
   names. Each gets ``(prefix << 24) | (h & 0xffffff)`` with ``h`` the Jenkins one-at-a-time
   hash of the name; on a collision with any id assigned so far, ``h`` (not the id) is
   incremented until the id is free. The sort makes the result independent of declaration order.
3. Registering the same (kind, name) twice is a no-op (top-level actions used by several controls).

Aliases: the shortest dot-separated suffix of a name that no other registered name (of any kind)
shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from softswitch.errors import P4Error, P4TypeError, SourceLocation


class Prefix(IntEnum):
    """The 8-bit resource prefixes of p4info.proto ``P4Ids.Prefix``."""

    ACTION = 0x01
    TABLE = 0x02
    VALUE_SET = 0x03
    CONTROLLER_HEADER = 0x04
    ACTION_PROFILE = 0x11
    COUNTER = 0x12
    DIRECT_COUNTER = 0x13
    METER = 0x14
    DIRECT_METER = 0x15
    REGISTER = 0x16
    DIGEST = 0x17


def jenkins_one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' one-at-a-time hash (32-bit), as p4c computes it over a name's bytes."""
    h = 0
    for byte in data:
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


def hashed_id(prefix: Prefix, name: str) -> int:
    """The id `name` gets when nothing collides with it."""
    return (int(prefix) << 24) | (jenkins_one_at_a_time(name.encode()) & 0xFFFFFF)


class _SuffixNode:
    __slots__ = ("edges", "instances")

    def __init__(self) -> None:
        self.instances = 0
        self.edges: dict[str, _SuffixNode] = {}


class SuffixSet:
    """Names split on '.', stored right to left, to find each name's shortest unique suffix."""

    def __init__(self) -> None:
        self._root = _SuffixNode()
        self._names: set[str] = set()

    def add(self, name: str) -> None:
        if name in self._names:
            return
        self._names.add(name)
        node = self._root
        for part in reversed(name.split(".")):
            node = node.edges.setdefault(part, _SuffixNode())
            node.instances += 1

    def shortest_unique_suffix(self, name: str) -> str:
        parts = name.split(".")
        node = self._root
        needed = 0
        for part in reversed(parts):
            node = node.edges[part]
            needed += 1
            if node.instances < 2:
                break
        return ".".join(parts[len(parts) - needed :])


@dataclass
class SymbolTable:
    """Control-plane symbols by kind, their ids and aliases (see the module docstring)."""

    _symbols: dict[Prefix, dict[str, int | None]] = field(default_factory=dict)
    _assigned: set[int] = field(default_factory=set)
    _suffixes: SuffixSet = field(default_factory=SuffixSet)
    _frozen: bool = False

    def add(self, kind: int, name: str, user_id: int | None = None,
            loc: SourceLocation | None = None) -> None:
        """Register `name`; `user_id` is the value of its ``@id`` annotation, if any."""
        if self._frozen:
            raise RuntimeError("symbols added after ids were assigned")
        table = self._symbols.setdefault(kind, {})
        if name in table:
            return
        table[name] = self._explicit_id(kind, name, user_id, loc)
        self._suffixes.add(name)

    def _explicit_id(self, kind: Prefix, name: str, user_id: int | None,
                     loc: SourceLocation | None) -> int | None:
        if user_id is None:
            return None
        if not 0 <= user_id <= 0xFFFFFFFF:
            raise P4TypeError(f"{name}: @id should be an unsigned 32-bit integer", loc)
        prefix = user_id & 0xFF000000
        if prefix not in (0, int(kind) << 24):
            raise P4TypeError(f"{name}: @id has the wrong 8-bit prefix", loc)
        full = user_id | (int(kind) << 24)
        if full in self._assigned:
            raise P4TypeError(f"@id {full} is assigned to multiple declarations", loc)
        self._assigned.add(full)
        return full

    def assign_ids(self) -> None:
        """Give every symbol without an explicit id its hashed id (idempotent)."""
        if self._frozen:
            return
        for kind in sorted(self._symbols):
            table = self._symbols[kind]
            for name in sorted(n for n, i in table.items() if i is None):
                table[name] = self._probe(kind, name)
        self._frozen = True

    def _probe(self, kind: Prefix, name: str) -> int:
        start = jenkins_one_at_a_time(name.encode())
        value = start
        while True:
            candidate = (int(kind) << 24) | (value & 0xFFFFFF)
            if candidate not in self._assigned:
                self._assigned.add(candidate)
                return candidate
            value = (value + 1) & 0xFFFFFFFF
            if value == start:
                raise P4Error(f"no available id to represent {name} in P4Runtime")

    def id(self, kind: Prefix, name: str) -> int:
        self.assign_ids()
        value = self._symbols[kind][name]
        assert value is not None
        return value

    def has(self, kind: Prefix, name: str) -> bool:
        return name in self._symbols.get(kind, {})

    def alias(self, name: str) -> str:
        return self._suffixes.shortest_unique_suffix(name)


def allocate_field_ids(user_ids: Sequence[int | None], what: Iterable[str] = (),
                       loc: SourceLocation | None = None) -> list[int]:
    """Ids of match fields, action parameters and packet metadata, as p4c's FieldIdAllocator.

    Explicit ``@id`` values are taken first; the others get 1, 2, ... by position, where a
    position holding an explicit id still consumes its number, skipping numbers already taken.
    """
    names = list(what)
    taken: set[int] = set()
    for i, uid in enumerate(user_ids):
        if uid is None:
            continue
        label = names[i] if i < len(names) else str(i + 1)
        if uid == 0:
            raise P4TypeError(f"{label}: 0 is not a valid @id value", loc)
        if uid in taken:
            raise P4TypeError(f"{label}: @id {uid} is used multiple times", loc)
        taken.add(uid)
    result: list[int] = []
    index = 1
    for uid in user_ids:
        if uid is not None:
            result.append(uid)
            index += 1
            continue
        while index in taken:
            index += 1
        result.append(index)
        taken.add(index)
    return result
