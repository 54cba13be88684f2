"""softswitch.native.build: the content-keyed cache, compile errors, a missing compiler."""

from __future__ import annotations

from pathlib import Path

import pytest
from native_lib import needs_cc

from softswitch.errors import NativeBuildError
from softswitch.native import build

SRC = "#include \"ss_rt.h\"\nint answer(void) { return %d; }\n"
CDEF = "int answer(void);"


@needs_cc
def test_cached_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOFTSWITCH_CACHE", str(tmp_path))
    a = build.load_library("prog", [SRC % 41], CDEF)
    assert a.lib.answer() == 41 and a.path.parent == tmp_path
    stamp = a.path.stat().st_mtime_ns
    again = build.load_library("prog", [SRC % 41], CDEF)
    assert again.path == a.path and a.path.stat().st_mtime_ns == stamp  # not rebuilt
    b = build.load_library("prog", [SRC % 42], CDEF)
    assert b.path != a.path and b.lib.answer() == 42
    # the runtime is in every library; nothing but the .so files is left in the cache
    assert b.lib.ss_csum16(b"\x00\x01", 2) == 0xFFFE
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".so", ".so"]


@needs_cc
def test_compile_error_names_the_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOFTSWITCH_CACHE", str(tmp_path))
    with pytest.raises(NativeBuildError, match=r"the C compiler failed(.|\n)*undeclared_thing"):
        build.load_library("bad", ["int f(void) { return undeclared_thing; }\n"], "int f(void);")
    assert not list(tmp_path.glob("*.so"))


def test_missing_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    build._compiler.cache_clear()
    try:
        assert build.compiler_available() is None
        with pytest.raises(NativeBuildError, match="no working C compiler"):
            build.load_library("prog", [SRC % 1], CDEF)
    finally:
        build._compiler.cache_clear()
