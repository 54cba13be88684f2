"""A checked program compiled to C and loaded (once per CheckedProgram per process), and the
instances Switches run it with: the ``I_t`` state struct plus the tables, counter and register
cells it points to, allocated here and owned by the instance."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from softswitch.ir.checked import CheckedProgram
from softswitch.native import cgen, cgen_tna
from softswitch.native.build import SS_KIND, SS_MODE, NativeLibrary, load_library
from softswitch.native.cgen import NativeExtern, NativeProgram


@dataclass(frozen=True)
class LoadedProgram:
    """The generated program and its loaded library."""

    gen: NativeProgram
    native: NativeLibrary

    @property
    def ffi(self) -> Any:
        return self.native.ffi

    @property
    def lib(self) -> Any:
        return self.native.lib


_loaded: weakref.WeakKeyDictionary[CheckedProgram, LoadedProgram] = weakref.WeakKeyDictionary()


def load_program(checked: CheckedProgram) -> LoadedProgram:
    """Generate, compile (cached by content) and load `checked`'s C program.

    Raises NativeUnsupported (a construct C does not have yet) or NativeBuildError."""
    found = _loaded.get(checked)
    if found is not None:
        return found
    tna = checked.arch == "tna"
    gen = cgen_tna.generate(checked) if tna else cgen.generate(checked)
    name = (checked.source_file or "program").rsplit("/", 1)[-1].removesuffix(".p4")
    native = load_library(f"p4_{name}", [gen.source], gen.cdef)
    sizes = [native.lib.ssp_sizeof(i) for i in range(3)]
    if not tna and sizes[2] != native.ffi.sizeof("sm_t"):  # the cdef and C layouts must agree
        raise RuntimeError("standard_metadata layout differs between C and cffi")
    loaded = LoadedProgram(gen, native)
    _loaded[checked] = loaded
    return loaded


class NativeInstance:
    """One switch's state in C: `inst` (``I_t *``), its tables and cells."""

    def __init__(self, program: LoadedProgram, drop_port: int) -> None:
        ffi, lib = program.ffi, program.lib
        self.program = program
        self.ffi, self.lib = ffi, lib
        self.inst = ffi.new("I_t *")
        self.inst.drop_port = drop_port
        lib.ssp_init(self.inst)
        self._keep: list[Any] = []  # cells the instance points to live as long as it
        self.tables: dict[str, Any] = {}
        for info in program.gen.tables:
            n = len(info.widths)
            widths = ffi.new("uint16_t[]", info.widths or [0])
            kinds = ffi.new("uint8_t[]", [SS_KIND[k] for k in info.kinds] or [0])
            mode = SS_MODE.get(info.mode, SS_MODE["exact"])
            table = ffi.gc(lib.ss_table_new(mode, n, widths, kinds), lib.ss_table_free)
            if table == ffi.NULL:
                raise RuntimeError(f"ss_table_new failed for table '{info.name}'")
            self.inst.tables[info.slot] = table
            self.tables[info.name] = table
        self.cells: dict[str, tuple[Any, ...]] = {}
        for x in program.gen.externs:
            self.cells[x.name] = self._alloc(x)
        sizes = [lib.ssp_sizeof(i) for i in range(3)]
        self.hdr_size, self.meta_size = sizes[0], sizes[1]
        # observed registers by slot: what to tell of each program write the C log holds
        self.observers: dict[int, Callable[[int, int], None]] = {}
        weakref.finalize(self, lib.ssp_free, self.inst)

    def observe(self, slot: int, report: Callable[[int, int], None] | None) -> None:
        """Log the program's writes of register `slot` for `report(index, raw cell value)`
        (None: stop)."""
        self.drain_observed()
        if report is None:
            self.observers.pop(slot, None)
        else:
            self.observers[slot] = report
        self.inst.reg_obs[slot] = report is not None

    def drain_observed(self) -> None:
        """Report the logged writes, in the order the program made them."""
        inst = self.inst
        n = inst.nobs
        if not n:
            return
        log = self.ffi.unpack(inst.obs, n)
        inst.nobs = 0
        observers = self.observers
        for o in log:
            report = observers.get(o.slot)
            if report is not None:
                report(int(o.idx), int(o.lo) | (int(o.hi) << 64))

    def _alloc(self, x: NativeExtern) -> tuple[Any, ...]:
        ffi = self.ffi
        if x.kind == "counter":
            packets = ffi.new("uint64_t[]", max(1, x.size))
            nbytes = ffi.new("uint64_t[]", max(1, x.size))
            self.inst.cnt_p[x.slot] = packets
            self.inst.cnt_b[x.slot] = nbytes
            self._keep += [packets, nbytes]
            return packets, nbytes
        if x.kind == "meter":
            cells = ffi.new("ss_meter[]", max(1, x.size))
            self.inst.ext[x.slot] = cells
            self._keep.append(cells)
            return (cells,)
        if x.kind in ("action_profile", "action_selector"):
            profile = ffi.gc(self.lib.ss_profile_new(), self.lib.ss_profile_free)
            if profile == ffi.NULL:
                raise RuntimeError(f"ss_profile_new failed for '{x.name}'")
            self.inst.ext[x.slot] = profile
            self._keep.append(profile)
            return (profile,)
        if x.kind == "value_set":
            cells = ffi.new("uint64_t[]", 1 + 4 * max(1, x.size) * max(1, x.width))
            self.inst.ext[x.slot] = cells
            self._keep.append(cells)
            return (cells,)
        if x.kind.startswith("tna_"):  # TNA hash matrices, parser checksums and counters
            cells = ffi.new("uint64_t[]", max(1, x.size))
            self.inst.ext[x.slot] = cells
            self._keep.append(cells)
            return (cells,)
        if x.kind == "direct_meter":
            color = ffi.new("uint64_t[1]")
            self.inst.ext[x.slot] = color
            self._keep.append(color)
            return (color,)
        words = 2 if x.width > 64 else 1
        cells = ffi.new("uint64_t[]", max(1, x.size) * words)
        self.inst.reg[x.slot] = cells
        self._keep.append(cells)
        return (cells,)
