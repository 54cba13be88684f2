"""Any byte string goes through every corpus program without an exception and without the
engine failing internally: short, truncated and garbage packets are parser errors, as in BMv2."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch
from softswitch.stf.runner import StfRunner
from softswitch.stf.script import Expect, Packet, read_stf

TESTS = Path(__file__).resolve().parent.parent


SCRIPTS = sorted((TESTS / "stf").glob("*.stf"))


def _program_of(script: Path) -> Path:
    return TESTS / "p4" / f"{re.sub(r'-[0-9]+$', '', script.stem)}.p4"


@cache
def _switch(script: Path) -> Switch:
    """The script's program with the table entries, groups and sessions the script installs."""
    switch = Switch(compile_file(_program_of(script)))
    runner = StfRunner(switch)
    for command in read_stf(script):
        if not isinstance(command, Packet | Expect):
            runner.execute(command)
    return switch


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_truncations_of_real_packets(script: Path) -> None:
    switch = _switch(script)
    for data in [c.data for c in read_stf(script) if isinstance(c, Packet)]:
        for cut in range(len(data) + 1):
            for out in switch.process_packet(1, data[:cut]):
                assert 0 <= out.port < 512
    assert switch.pipeline.internal_errors == 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.sampled_from(SCRIPTS), data=st.binary(max_size=200),
       port=st.integers(min_value=0, max_value=511))
def test_garbage_packets(script: Path, data: bytes, port: int) -> None:
    switch = _switch(script)
    switch.process_packet(port, data)
    assert switch.pipeline.internal_errors == 0
