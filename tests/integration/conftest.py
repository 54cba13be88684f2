"""Fixtures the integration tests share."""

from __future__ import annotations

import pytest

from controller.devices.session import Program
from emulation.command import SWITCH_PROGRAM


@pytest.fixture(scope="module")
def switch_program() -> Program:
    """The fabric switch program, compiled once per test module."""
    return Program.compile(SWITCH_PROGRAM)
