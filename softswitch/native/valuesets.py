"""Parser value sets of the C engine: a `ValueSet` (engine/externs.py: the control-plane
record and its checks) that writes its members into the C cells the generated parser matches
(runtime/ss_prog.h ss_vset_match) after every accepted change."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from softswitch.engine.externs import ValueSet

_U64 = (1 << 64) - 1


class NativeValueSet(ValueSet):
    """A ValueSet whose members are also in `cells` (count, then value/mask words)."""

    def __init__(self, vs: ValueSet, cells: Any) -> None:
        super().__init__(vs.name, vs.size, vs.widths)
        self.cells = cells
        for member in vs.members:  # what the Python record holds already
            self.members.append(member)
        self._sync()

    def add(self, values: Sequence[int], masks: Sequence[int] | None = None) -> None:
        super().add(values, masks)
        self._sync()

    def clear(self) -> None:
        super().clear()
        self._sync()

    def _sync(self) -> None:
        words = []
        for member in self.members:
            for v, m in member:
                words += [v & _U64, v >> 64, m & _U64, m >> 64]
        cells = self.cells
        cells[1:1 + len(words)] = words
        cells[0] = len(self.members)
