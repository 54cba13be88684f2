"""The transport's per-packet modules compiled to C with mypyc: the same .py files, one
implementation, run as native code when built (issue 26: the host transport was most of what an
emulated packet cost in Python once the P4 programs and the fabric ran in C).

mypyc compiles typed Python into a CPython extension per module: classes become C structs, typed
attributes and locals native values, calls between compiled functions C calls. What it compiles
behaves as the Python does (it checks declared types at run time where the Python would not: a
value that contradicts its annotation raises TypeError, so the annotations have to be true).
`tests/native/test_transport_compiled.py` holds the two to the same reports.

- `build()` compiles `MODULES` (a copy of the package's sources, in a temporary folder) into the
  softswitch native cache (`$SOFTSWITCH_CACHE`, else ~/.cache/softswitch/native), in a folder
  named by the hash of their sources, the package's modules they import and the Python version:
  a changed file never loads a stale build. `make install` runs it (`python -m mrc_transport build`).
- `activate(package_path)` (called by `mrc_transport/__init__.py` before any module is imported)
  puts the build's folder first on the package's path when a build for these sources is there:
  `import mrc_transport.sender` then loads the extension instead of sender.py. Nothing is built
  on import (a build takes half a minute to a minute).

$MRC_TRANSPORT_NATIVE=python keeps the compiled modules out (and the C word sum, word_sum.py):
the Python transport, the reference semantics, as on a machine without a C compiler or mypy.
$MRC_TRANSPORT_NATIVE=compiled requires them: importing the package fails, naming why, when no
build for these sources is there. Unset (or anything else): compiled when built, else Python.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
from pathlib import Path

#: "python" keeps every native piece of the transport out (word_sum.py reads it too)
ENV = "MRC_TRANSPORT_NATIVE"
PACKAGE = "mrc_transport"
SOURCE_DIR = Path(__file__).resolve().parent
#: compiled, in dependency order; the rest (scapy layers, ports, threads, benchmarks) stay Python
MODULES = ("config", "flight", "rto", "nscc", "transmitter", "fastwire", "receiver", "sender",
           "host", "nic_host")
#: the mypyc group: its shared library is `<GROUP>__mypyc` at the top of the build folder
GROUP = "mrc_transport_compiled"
#: bump when the build procedure changes in a way the key does not see
BUILD_VERSION = "2"
_ERROR_LINES = 30

_active: Path | None = None
_reason = "not activated"


def cache_root() -> Path:
    """softswitch's native cache (build.py's cache_dir), without importing softswitch."""
    env = os.environ.get("SOFTSWITCH_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "softswitch" / "native"


def key_modules() -> list[str]:
    """MODULES and the package's modules they import, transitively (mypyc reads their types
    and constants): what a build is made from."""
    found: list[str] = []
    todo = list(MODULES)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.append(name)
        text = (SOURCE_DIR / f"{name}.py").read_text()
        todo += re.findall(rf"^\s*(?:from|import) {PACKAGE}\.(\w+)", text, re.MULTILINE)
    return sorted(found)


def source_key() -> str:
    """The hash of what a build is made from (`key_modules`' sources), the Python version and
    BUILD_VERSION."""
    digest = hashlib.sha256(f"{BUILD_VERSION}|{sys.version}|{sys.platform}".encode())
    for name in key_modules():
        digest.update(name.encode() + b"\0" + (SOURCE_DIR / f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def build_dir(key: str | None = None) -> Path:
    return cache_root() / f"{PACKAGE}-{key or source_key()}"


def _complete(folder: Path) -> bool:
    return all(any((folder / PACKAGE).glob(f"{m}.*.so")) for m in MODULES) and any(
        folder.glob(f"{GROUP}__mypyc.*.so"))


def enabled() -> bool:
    return os.environ.get(ENV, "").lower() != "python"


def activate(package_path: list[str]) -> bool:
    """Load the compiled modules in place of the Python ones from here on, when enabled and
    built for these sources; False (the Python modules) otherwise. `status()` says which."""
    global _active, _reason
    if _active is not None:
        return True
    if not enabled():
        _reason = f"${ENV}=python"
        return False
    required = os.environ.get(ENV, "").lower() == "compiled"
    folder = build_dir()
    if not _complete(folder):
        _reason = f"not built for these sources (python -m {PACKAGE} build)"
        if required:
            raise ImportError(f"${ENV}=compiled, but the compiled transport is {_reason}: "
                              f"no build in {folder}")
        return False
    added = str(folder) not in sys.path
    if added:
        sys.path.append(str(folder))   # the group's shared library, a top-level module
    try:
        # Loaded here, not at the first module's import: a library that does not load
        # (overwritten, copied from another machine) then means the Python modules, not a
        # failed import. (The build renames a finished folder into place: no half-written
        # library is ever there to load.)
        importlib.import_module(f"{GROUP}__mypyc")
    except (ImportError, OSError) as exc:
        if added:
            sys.path.remove(str(folder))
        _reason = (f"the build in {folder} does not load ({exc}); build it again: "
                   f"python -m {PACKAGE} build --force")
        if required:
            raise ImportError(f"${ENV}=compiled, but {_reason}") from exc
        return False
    package_path.insert(0, str(folder / PACKAGE))
    _active = folder
    _reason = str(folder)
    return True


def active() -> bool:
    """Whether the transport's modules are the compiled ones in this process."""
    return _active is not None


def status() -> str:
    """One line: which transport this process runs, and why."""
    return ("compiled: " if _active is not None else "python: ") + _reason


class BuildError(RuntimeError):
    """mypyc or the C compiler failed: the message has the first lines of their output,
    `summary` the line that says why (the first error, else the last line)."""

    def __init__(self, message: str, summary: str = "") -> None:
        super().__init__(message)
        self.summary = summary or message.splitlines()[0]


def _why(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line or "Error:" in line]   # not -Werror
    return (errors or lines or ["no output"])[0 if errors else -1]


def _first_lines(text: str) -> str:
    lines = text.strip().splitlines()
    more = len(lines) - _ERROR_LINES
    return "\n".join(lines[:_ERROR_LINES]) + (f"\n... ({more} more lines)" if more > 0 else "")


_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify

modules, group = sys.argv[1].split(","), sys.argv[2]
paths = [f"mrc_transport/{m}.py" for m in modules]
setup(name=group, packages=[], script_args=["build_ext", "--build-lib", sys.argv[3],
                                            "--build-temp", "tmp", "--parallel", "2"],
      ext_modules=mypycify(["--config-file", "mypy.ini", *paths], group_name=group,
                           multi_file=True))
"""
# scapy's types are not followed: the per-packet code does not touch scapy (its packets go
# through fastwire), and reading scapy doubles the build's time.
_MYPY_INI = """
[mypy]
ignore_missing_imports = True
follow_imports = silent

[mypy-scapy.*]
follow_imports = skip
"""


def build(force: bool = False) -> Path:
    """Compile MODULES into the cache unless there already; the build's folder. Raises
    BuildError (mypyc missing, a type error, no C compiler)."""
    import shutil  # here: importing the package (activate) should not pay for these
    import subprocess
    import tempfile

    key = source_key()
    folder = build_dir(key)
    if _complete(folder) and not force:
        return folder
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{PACKAGE}-build-", dir=root) as tmp:
        work = Path(tmp)
        shutil.copytree(SOURCE_DIR, work / PACKAGE,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        (work / "setup_compiled.py").write_text(_SETUP)
        (work / "mypy.ini").write_text(_MYPY_INI)
        out = work / "out"
        try:
            done = subprocess.run(
                [sys.executable, "setup_compiled.py", ",".join(MODULES), GROUP, str(out)],
                cwd=work, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BuildError(f"mypyc build of {PACKAGE} did not run: {exc}") from exc
        if done.returncode != 0 or not _complete(out):
            output = done.stdout + "\n" + done.stderr
            raise BuildError(f"mypyc build of {PACKAGE} failed (exit {done.returncode}):\n"
                             + _first_lines(output),
                             f"mypyc build of {PACKAGE} failed: {_why(output)}")
        if force and folder.exists():
            shutil.rmtree(folder)
        try:
            out.rename(folder)   # atomic: a process building the same sources at once loses
        except OSError:
            if not _complete(folder):
                raise
    return folder
