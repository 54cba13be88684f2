"""`mrc-ctl emulate` and `sweep` pick their engine and fabric core (emulation/command.py
engine_for_this_run): unset, the programs in C and the native core where a C compiler works,
else the Python engine and core with one warning line; the variables are put back after."""

from __future__ import annotations

import io
import os

import pytest

from emulation.command import engine_for_this_run
from softswitch.native import build


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("SOFTSWITCH_ENGINE", raising=False)
    monkeypatch.delenv("SOFTSWITCH_FABRIC", raising=False)
    return monkeypatch


def chosen(engine: str | None, fabric: str | None, err: io.StringIO) -> tuple[str, str]:
    with engine_for_this_run(engine, fabric, err) as pair:
        assert (os.environ["SOFTSWITCH_ENGINE"], os.environ["SOFTSWITCH_FABRIC"]) == pair
        return pair


def test_unset_with_a_compiler_means_c_and_the_native_core(unset: pytest.MonkeyPatch) -> None:
    unset.setattr(build, "compiler_available", lambda: "/usr/bin/cc")
    err = io.StringIO()
    assert chosen(None, None, err) == ("auto", "native")
    assert err.getvalue() == ""


def test_unset_without_a_compiler_means_python_with_one_warning(
        unset: pytest.MonkeyPatch) -> None:
    unset.setattr(build, "compiler_available", lambda: None)
    err = io.StringIO()
    assert chosen(None, None, err) == ("python", "python")
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and "no C compiler" in lines[0]


def test_the_variables_choose_when_no_option_does(unset: pytest.MonkeyPatch) -> None:
    unset.setenv("SOFTSWITCH_ENGINE", "python")
    assert chosen(None, None, io.StringIO()) == ("python", "python")
    unset.setenv("SOFTSWITCH_ENGINE", "c")
    unset.setenv("SOFTSWITCH_FABRIC", "python")
    assert chosen(None, None, io.StringIO()) == ("c", "python")


def test_options_win_over_the_variables(unset: pytest.MonkeyPatch) -> None:
    unset.setenv("SOFTSWITCH_ENGINE", "c")
    unset.setenv("SOFTSWITCH_FABRIC", "native")
    assert chosen("python", "python", io.StringIO()) == ("python", "python")
    # asked for explicitly, native on the Python engine falls back in the fabric (its warning)
    assert chosen("python", "native", io.StringIO()) == ("python", "native")


def test_the_variables_are_put_back_after_the_run(unset: pytest.MonkeyPatch) -> None:
    unset.setattr(build, "compiler_available", lambda: "/usr/bin/cc")
    unset.setenv("SOFTSWITCH_FABRIC", "python")
    chosen("c", "native", io.StringIO())
    assert "SOFTSWITCH_ENGINE" not in os.environ
    assert os.environ["SOFTSWITCH_FABRIC"] == "python"
