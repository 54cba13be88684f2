"""ProgramCache: the checked program of a device config, made once per distinct config bytes.

An emulated fabric runs one P4Runtime server per device, and a controller pushes the same
program to each of them: without a cache every SetForwardingPipelineConfig decodes and
type-checks the same IR JSON again, and everything keyed on the program (the Python engine's
generated code, engine/compiled.py; the C engine's generated, compiled and loaded library,
native/program.py) is made again too. With it, pushes of the same bytes share one
CheckedProgram and its generated P4Info, and so those as well.

What is shared is immutable: the checked program (nothing writes it after checking) and the
P4Info generated from it (read only: compared with the client's). Each push still builds its
own Switch, with its own tables, externs' cells, PRE and C instance. The key is the IR JSON
bytes and the limits they are checked under; the engine is not part of it, because the checked
program does not depend on the engine (the engine's artefacts are keyed on the program itself).

Ownership: servers take a cache (``P4RuntimeServer(..., programs=cache)``); a fabric
(softswitch/fabric.py) owns one for all its devices' servers, a server given none makes its
own. It holds only immutable, content-keyed values and is bounded (an LRU of `capacity`
programs).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

from finsy.proto import p4i

from softswitch.ir.checked import CheckedProgram
from softswitch.ir.serialize import loads_ir
from softswitch.limits import DEFAULT_LIMITS, Limits
from softswitch.p4info import build_p4info

DEFAULT_CAPACITY = 4   # programs: a fabric runs two (switch and NIC), a test a few more


class LoadedConfig(NamedTuple):
    """A device config's checked program and the P4Info generated for it (both read-only)."""

    program: CheckedProgram
    p4info: p4i.P4Info


class ProgramCache:
    """A bounded, thread-safe LRU: (IR JSON bytes, limits) → LoadedConfig."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"program cache capacity {capacity} must be at least 1")
        self.capacity = capacity
        self._entries: OrderedDict[tuple[bytes, Limits], LoadedConfig] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def load(self, device_config: bytes, limits: Limits = DEFAULT_LIMITS) -> LoadedConfig:
        """The program of IR JSON `device_config` checked under `limits`, and its P4Info.

        Raises what ``loads_ir`` and ``build_p4info`` raise; a config that fails is not kept."""
        key = (bytes(device_config), limits)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return found
        # built outside the lock: checking a program takes a while, and two threads making
        # the same one at once only waste the work of one
        program = loads_ir(key[0], limits)
        loaded = LoadedConfig(program, build_p4info(program))
        with self._lock:
            self.misses += 1
            found = self._entries.get(key)
            if found is not None:
                return found
            self._entries[key] = loaded
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return loaded

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

