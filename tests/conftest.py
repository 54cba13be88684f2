"""Fixtures every test gets."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# `mrc-ctl emulate` and `sweep` set these for the process and the workers they start
# (emulation/command.py use_engine): a test running them in-process must not leave its engine
# to the tests after it.
_ENGINE_VARIABLES = ("SOFTSWITCH_ENGINE", "SOFTSWITCH_FABRIC")


@pytest.fixture(autouse=True)
def _engine_environment() -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in _ENGINE_VARIABLES}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
