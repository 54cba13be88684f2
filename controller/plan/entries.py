"""The plan's unit: one table entry for one switch, in a neutral, hashable, diffable form.

The planner produces these, the checker walks them, and the pusher turns them into P4Runtime
entities (p4rt builders) and compares them with what a switch holds. Names are the P4Info names
of p4src/README.md (the switch program's control-plane API).
"""

from __future__ import annotations

from dataclasses import dataclass

# Match values by the field's match kind:
#   exact    → int
#   lpm      → (value: int, prefix_len: int)
#   ternary  → (value: int, mask: int)
#   range    → (low: int, high: int)
#   optional → int
MatchValue = int | tuple[int, int]


@dataclass(frozen=True, slots=True)
class PlannedEntry:
    """A table entry: `match` and `params` are sorted (name, value) pairs so equal entries compare
    and hash equal. `is_default` marks a table's default action (match is then empty)."""

    table: str
    match: tuple[tuple[str, MatchValue], ...]
    action: str
    params: tuple[tuple[str, int], ...] = ()
    priority: int = 0
    is_default: bool = False

    @staticmethod
    def make(table: str, match: dict[str, MatchValue], action: str,
             params: dict[str, int] | None = None, priority: int = 0) -> PlannedEntry:
        return PlannedEntry(table, tuple(sorted(match.items())), action,
                            tuple(sorted((params or {}).items())), priority)

    @staticmethod
    def default(table: str, action: str, params: dict[str, int] | None = None) -> PlannedEntry:
        return PlannedEntry(table, (), action, tuple(sorted((params or {}).items())),
                            is_default=True)

    @property
    def key(self) -> tuple[str, tuple[tuple[str, MatchValue], ...], int, bool]:
        """What identifies the entry on a switch (its action and params may change)."""
        return (self.table, self.match, self.priority, self.is_default)

    def describe(self) -> str:
        match = ", ".join(f"{k}={_fmt(v)}" for k, v in self.match) or "default"
        params = ", ".join(f"{k}={v:#x}" for k, v in self.params)
        return f"{self.table}[{match}] -> {self.action}({params})"


def _fmt(value: MatchValue) -> str:
    if isinstance(value, tuple):
        return f"{value[0]:#x}/{value[1]}"
    return f"{value:#x}"
