"""The runtime library with test wrappers, compiled once per session (cached on disk)."""

from __future__ import annotations

import pytest
from native_lib import WRAPPERS, WRAPPERS_CDEF

from softswitch.native.build import NativeLibrary, compiler_available, load_library


@pytest.fixture(scope="session")
def rt() -> NativeLibrary:
    if compiler_available() is None:
        pytest.skip("no C compiler ($CC or cc): the native runtime cannot build")
    return load_library("runtime_tests", [WRAPPERS], WRAPPERS_CDEF)
