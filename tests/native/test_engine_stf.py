"""The STF corpus on both engines: every v1model script whose program the C engine compiles
passes on it with the same packets out, port by port, as on the Python engine, and the same
counters, registers and digests; a program it cannot compile raises NativeUnsupported naming
the construct, and engine="auto" runs it on the Python engine."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from twin import state

from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch
from softswitch.errors import NativeUnsupported
from softswitch.native.build import compiler_available
from softswitch.stf.runner import StfRunner
from softswitch.stf.script import read_stf

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

TESTS = Path(__file__).resolve().parent.parent
SCRIPTS = [s for s in sorted((TESTS / "stf").glob("*.stf")) if not s.name.startswith("tna_")]

# what the C engine does not compile yet, by corpus program
FALLBACK: dict[str, str] = {}


def _program(script: Path) -> Path:
    base = re.sub(r"-\d+$", "", script.stem)
    return TESTS / "p4" / f"{base}.p4"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_stf_on_both_engines(script: Path) -> None:
    checked = compile_file(_program(script))
    commands = read_stf(script)
    base = _program(script).stem
    if base in FALLBACK:
        with pytest.raises(NativeUnsupported) as info:
            Switch(checked, engine="c")
        assert info.value.what == FALLBACK[base]
        return
    runs = {}
    for engine in ("python", "c"):
        switch = Switch(checked, engine=engine)
        assert switch.engine == engine
        runner = StfRunner(switch)
        result = runner.run(commands)
        assert result.passed, f"{engine}: " + "\n".join(result.problems)
        runs[engine] = (dict(runner.received), state(switch))
    assert runs["c"][0] == runs["python"][0]
    assert runs["c"][1] == runs["python"][1]


def test_auto_falls_back_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    checked = compile_file(Path(__file__).resolve().parent / "p4" / "clone3_field_list.p4")
    with caplog.at_level(logging.WARNING):
        switch = Switch(checked, engine="auto")
    assert switch.engine == "python"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "clone3 with a field list" in warned[0]


def test_auto_uses_c_when_it_can() -> None:
    switch = Switch(compile_file(TESTS / "p4" / "exact_table.p4"), engine="auto")
    assert switch.engine == "c"


def test_tracing_stays_on_python() -> None:
    checked = compile_file(TESTS / "p4" / "exact_table.p4")
    with pytest.raises(NativeUnsupported, match="tracing"):
        Switch(checked, engine="c", trace=lambda _line: None)
    assert Switch(checked, engine="auto", trace=lambda _line: None).engine == "python"
