"""`mrc-ctl emulate` and `sweep` pick their engine and fabric core (emulation/command.py
use_engine): unset, the programs in C and the native core where a C compiler works, else the
Python engine and core with one warning line."""

from __future__ import annotations

import io
import os

import pytest

from emulation.command import use_engine
from softswitch.native import build


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("SOFTSWITCH_ENGINE", raising=False)
    monkeypatch.delenv("SOFTSWITCH_FABRIC", raising=False)
    return monkeypatch


def test_unset_with_a_compiler_means_c_and_the_native_core(unset: pytest.MonkeyPatch) -> None:
    unset.setattr(build, "compiler_available", lambda: "/usr/bin/cc")
    err = io.StringIO()
    assert use_engine(None, None, err) == ("auto", "native")
    assert os.environ["SOFTSWITCH_ENGINE"] == "auto"
    assert os.environ["SOFTSWITCH_FABRIC"] == "native"
    assert err.getvalue() == ""


def test_unset_without_a_compiler_means_python_with_one_warning(
        unset: pytest.MonkeyPatch) -> None:
    unset.setattr(build, "compiler_available", lambda: None)
    err = io.StringIO()
    assert use_engine(None, None, err) == ("python", "python")
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and "no C compiler" in lines[0]
    assert os.environ["SOFTSWITCH_ENGINE"] == "python"
    assert os.environ["SOFTSWITCH_FABRIC"] == "python"


def test_the_variables_choose_when_no_option_does(unset: pytest.MonkeyPatch) -> None:
    unset.setenv("SOFTSWITCH_ENGINE", "python")
    assert use_engine(None, None, io.StringIO()) == ("python", "python")
    unset.setenv("SOFTSWITCH_ENGINE", "c")
    unset.setenv("SOFTSWITCH_FABRIC", "python")
    assert use_engine(None, None, io.StringIO()) == ("c", "python")


def test_options_win_over_the_variables(unset: pytest.MonkeyPatch) -> None:
    unset.setenv("SOFTSWITCH_ENGINE", "c")
    unset.setenv("SOFTSWITCH_FABRIC", "native")
    assert use_engine("python", "python", io.StringIO()) == ("python", "python")
    # asked for explicitly, native on the Python engine falls back in the fabric (its warning)
    assert use_engine("python", "native", io.StringIO()) == ("python", "native")
