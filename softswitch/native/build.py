"""Compile C sources into a shared library, cached by content hash, and load it with cffi.

Every library gets the runtime (runtime/*.c, with runtime/ on the include path for
``#include "ss_rt.h"``) and the cffi declarations of its boundary (`RUNTIME_CDEF`). The cache
key covers the sources, the cdef, the compiler (path and ``--version``), the flags and
`RUNTIME_VERSION`, so a changed input never loads a stale library. A library is compiled to a
temporary name and renamed into place, so processes building the same program at once are safe.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from softswitch.errors import NativeBuildError

#: bump when the build procedure changes in a way the cache key does not see
RUNTIME_VERSION = "1"
RUNTIME_DIR = Path(__file__).parent / "runtime"
RUNTIME_FILES = ("ss_tables.c", "ss_hash.c", "ss_meters.c", "ss_profile.c")
BASE_CFLAGS = ("-O2", "-shared", "-fPIC", "-std=gnu11")
_ERROR_LINES = 20

#: The cffi view of ss_rt.h's boundary: no u128 (cffi cannot parse __int128), so ss_entry's
#: ``u128 args[SS_MAX_ARGS]`` is ``uint64_t args[2 * SS_MAX_ARGS]`` (low word first), with the
#: same offsets (tests/native checks them against the C compiler's).
RUNTIME_CDEF = """
typedef struct ss_meter {
    double rate[2];
    uint64_t burst[2];
    uint64_t tokens[2];
    double last[2];
    int64_t configured;
    int64_t reserved;
} ss_meter;
typedef struct ss_entry {
    int64_t handle;
    int32_t action;
    int32_t nargs;
    uint64_t args[128];
    uint64_t packets;
    uint64_t bytes;
    ss_meter meter;
    int64_t member;
    int64_t group;
    uint64_t dreg[2];
    int64_t dreg_set;
    int64_t dreg_pad;
} ss_entry;
typedef struct ss_table ss_table;
ss_entry *ss_table_default(ss_table *t);
ss_table *ss_table_new(int mode, int nfields, const uint16_t *widths, const uint8_t *kinds);
void ss_table_free(ss_table *t);
ss_entry *ss_table_insert(ss_table *t, int64_t handle, int32_t priority, int32_t prefix_len,
                          const uint64_t *key_words, int32_t action, int32_t nargs,
                          const uint64_t *arg_words);
int ss_table_remove(ss_table *t, int64_t handle);
ss_entry *ss_table_entry(ss_table *t, int64_t handle);
void ss_entry_set_action(ss_entry *e, int32_t action, int32_t nargs, const uint64_t *arg_words);
void ss_table_clear(ss_table *t);
int64_t ss_table_size(ss_table *t);
int64_t ss_table_lookup_words(ss_table *t, const uint64_t *key_words);
typedef struct ss_crc_config {
    unsigned width; uint64_t polynomial, initial_remainder, final_xor_value;
    int data_reflected, remainder_reflected;
} ss_crc_config;
void ss_meter_set(ss_meter *m, double cir, uint64_t cburst, double pir, uint64_t pburst);
int ss_meter_execute(ss_meter *m, uint64_t now_us, uint64_t need);
typedef struct ss_profile ss_profile;
ss_profile *ss_profile_new(void);
void ss_profile_free(ss_profile *p);
ss_entry *ss_profile_member_set(ss_profile *p, int64_t member, int32_t action, int32_t nargs,
                                const uint64_t *arg_words);
void ss_profile_member_del(ss_profile *p, int64_t member);
int ss_profile_group_set(ss_profile *p, int64_t group, int32_t n, const int64_t *members);
void ss_profile_group_del(ss_profile *p, int64_t group);
ss_entry *ss_profile_member(ss_profile *p, int64_t member);
ss_entry *ss_profile_choose(ss_profile *p, int64_t group, uint64_t hash);
uint64_t ss_crc(const ss_crc_config *c, const uint8_t *data, size_t len);
uint64_t ss_hash(int algo, const ss_crc_config *custom, const uint8_t *data, size_t len);
uint16_t ss_csum16(const uint8_t *data, size_t len);
size_t ss_fields_to_bytes_words(const uint64_t *value_words, const uint16_t *widths, int n,
                                uint8_t *out, size_t cap);
"""

# the enums of ss_rt.h, for Python callers
SS_MODE = {"exact": 0, "lpm": 1, "scan": 2}
SS_KIND = {"exact": 0, "lpm": 1, "ternary": 2, "range": 3, "optional": 4}
SS_HASH = {"crc32": 0, "crc32_custom": 1, "crc16": 2, "crc16_custom": 3, "random": 4,
           "identity": 5, "csum16": 6, "xor16": 7}


@dataclass(frozen=True)
class NativeLibrary:
    """A loaded library: `ffi` and `lib` from cffi (ABI mode), `path` of the .so."""

    ffi: Any
    lib: Any
    path: Path


def runtime_sources() -> list[str]:
    """The text of the runtime's C files, compiled into every library."""
    return [(RUNTIME_DIR / name).read_text() for name in RUNTIME_FILES]


def runtime_header() -> str:
    return (RUNTIME_DIR / "ss_rt.h").read_text()


def _runtime_headers() -> list[tuple[str, str]]:
    """Every header in runtime/ (generated code may include any): part of the cache key."""
    return [(p.name, p.read_text()) for p in sorted(RUNTIME_DIR.glob("*.h"))]


@functools.cache
def _compiler() -> tuple[tuple[str, ...], str] | None:
    """(command, version line) of a C compiler that compiles a trivial file, or None."""
    words = shlex.split(os.environ.get("CC") or "cc")
    if not words:
        return None
    path = shutil.which(words[0])
    if path is None:
        return None
    cmd = (path, *words[1:])
    try:
        version = subprocess.run([*cmd, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.splitlines()
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "probe.c"
            src.write_text("int ss_probe(void) { return 1; }\n")
            probe = subprocess.run([*cmd, *BASE_CFLAGS, str(src), "-o", str(Path(tmp) / "p.so")],
                                   capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if probe.returncode != 0:
        return None
    return cmd, (version[0] if version else "")


def compiler_available() -> str | None:
    """The path of a working C compiler (``$CC`` or ``cc``), probed once per process."""
    found = _compiler()
    return found[0][0] if found else None


def cache_dir() -> Path:
    env = os.environ.get("SOFTSWITCH_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "softswitch" / "native"


def _first_lines(text: str) -> str:
    lines = text.strip().splitlines()
    more = len(lines) - _ERROR_LINES
    return "\n".join(lines[:_ERROR_LINES]) + (f"\n... ({more} more lines)" if more > 0 else "")


def load_library(name: str, sources: Sequence[str], cdef: str, *,
                 include_dirs: Sequence[str] = (), extra_cflags: Sequence[str] = ()
                 ) -> NativeLibrary:
    """Compile `sources` (C text; the runtime is added) unless cached, and load the library.

    `cdef` declares what Python calls; `RUNTIME_CDEF` is prepended unless `cdef` contains it.
    The cache key sees the sources and runtime/*.h, not headers in `include_dirs`.
    Raises `NativeBuildError` when there is no compiler or it fails. Keep the returned
    NativeLibrary while anything calls into it: a function taken from its `lib` does not hold
    the library, which is closed once its Lib and FFI are collected (the FFI cache below keeps
    only the last eight declarations' FFIs).
    """
    found = _compiler()
    if found is None:
        raise NativeBuildError("no working C compiler (set CC, or install cc): "
                               "use the Python engine")
    cmd, version = found
    runtime = runtime_sources()
    all_sources = runtime + [s for s in sources if s not in runtime]
    full_cdef = cdef if RUNTIME_CDEF in cdef else RUNTIME_CDEF + cdef
    incs = [str(RUNTIME_DIR), *map(str, include_dirs)]
    flags = [*BASE_CFLAGS, *extra_cflags]
    key = hashlib.sha256(json.dumps(
        [RUNTIME_VERSION, list(cmd), version, flags, incs, _runtime_headers(), all_sources,
         full_cdef]).encode()).hexdigest()[:40]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:60] or "lib"
    root = cache_dir()
    path = root / f"{safe}-{key}.so"
    if not path.exists():
        _compile(cmd, flags, incs, all_sources, root, path)
    ffi = _ffi(full_cdef)
    try:
        lib = ffi.dlopen(str(path))
    except OSError:
        # a damaged cache file (the rename is atomic, but a disk may fill): build it again
        _compile(cmd, flags, incs, all_sources, root, path)
        try:
            lib = ffi.dlopen(str(path))
        except OSError as exc:
            raise NativeBuildError(f"cannot load {path}: {exc}") from None
    return NativeLibrary(ffi, lib, path)


@functools.lru_cache(maxsize=8)
def _ffi(cdef: str) -> Any:
    """A cffi FFI that has parsed `cdef`. Kept for the next library with the same declarations
    (parsing them with pycparser costs more than loading the library): the FFI is not changed
    after ``cdef``, and each library it loads has its own handle. Bounded by its LRU;
    ``_ffi.cache_clear()`` resets it."""
    import cffi  # imported here: the Python engine runs without cffi

    ffi = cffi.FFI()
    try:
        ffi.cdef(cdef)
    except (cffi.CDefError, cffi.FFIError) as exc:
        raise NativeBuildError(f"bad cffi declarations: {exc}") from None
    return ffi


def _compile(cmd: tuple[str, ...], flags: list[str], incs: list[str], sources: list[str],
             root: Path, path: Path) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=path.stem[:60] + ".", dir=root))
    except OSError as exc:
        raise NativeBuildError(f"cannot create the build directory in {root}: {exc}") from None
    try:
        files = []
        for i, text in enumerate(sources):
            f = tmp / f"src{i}.c"
            f.write_text(text)
            files.append(str(f))
        out = tmp / "lib.so"
        argv = [*cmd, *flags, *(f"-I{d}" for d in incs), *files, "-o", str(out)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True)
        except OSError as exc:
            raise NativeBuildError(f"cannot run the C compiler {cmd[0]}: {exc}") from None
        if done.returncode != 0:
            raise NativeBuildError(f"the C compiler failed on {path.name} (exit "
                                   f"{done.returncode}):\n{_first_lines(done.stderr)}")
        os.replace(out, path)
    except OSError as exc:
        raise NativeBuildError(f"cannot build {path}: {exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
