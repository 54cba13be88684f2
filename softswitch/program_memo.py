"""Programs loaded from files, once per process while none of the files they were read from
changes: the emulator builds a fabric per mode (four in a run, more in a test session), each
with the same NIC program by path, and compiling it (parse, type check) took a third of a tiny
fabric's setup. A program loaded again is the same CheckedProgram object, so what is kept per
program object (the generated Python and C code, the loaded C library, a fabric's P4Info and
IR bytes: engine/compiled.py, native/program.py, fabric.py) is found again too.

An entry holds the (path, mtime_ns, size) of every file the preprocessor read, the main file
first; any of them changed, moved or gone, and the program is compiled again. A file that
would now shadow an include found further down the search path is not seen (as make would
not); `ProgramMemo.clear` forgets everything.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path

from softswitch.compiler import load_program_and_files
from softswitch.ir.checked import CheckedProgram
from softswitch.limits import DEFAULT_LIMITS, Limits

Stamp = tuple[str, int, int]   # a file's resolved path, mtime_ns, size


def _stamp(path: str) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), st.st_mtime_ns, st.st_size)


class ProgramMemo:
    """load_program, remembered by its arguments while its files are unchanged (at most
    `limit` programs, the least recently used forgotten first)."""

    def __init__(self, limit: int = 16) -> None:
        self.limit = limit
        self._entries: OrderedDict[tuple[object, ...],
                                   tuple[tuple[Stamp | None, ...], CheckedProgram]] = \
            OrderedDict()
        self._lock = threading.Lock()
        self.compiled = 0   # programs compiled (misses), for tests and benchmarks

    def load(self, path: str | Path, include_dirs: Sequence[str | Path] = (),
             defines: Mapping[str, str] | None = None, arch: str | None = None,
             limits: Limits = DEFAULT_LIMITS) -> CheckedProgram:
        """The program at `path` as load_program compiles it; raises what it raises (nothing
        is remembered then)."""
        key = (os.path.realpath(path), tuple(os.path.realpath(d) for d in include_dirs),
               tuple(sorted((defines or {}).items())), arch, limits)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                stamps, program = found
                if all(s is not None and _stamp(s[0]) == s for s in stamps):
                    self._entries.move_to_end(key)
                    return program
                del self._entries[key]
        program, files = load_program_and_files(path, include_dirs, defines, arch, limits)
        stamps = tuple(_stamp(f) for f in files)
        with self._lock:
            self.compiled += 1
            self._entries[key] = (stamps, program)
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)
        return program

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
