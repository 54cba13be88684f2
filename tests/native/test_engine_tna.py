"""TNA programs on both engines: the TNA STF corpus (same packets per port, counters,
registers and digests), the fabric switch's TNA program with the packets the v1model
differential test uses, and the MRC NIC's TNA program through its unit tests' scenarios with
every Switch a TwinSwitch (each call compared between the engines as it happens)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# the NIC's unit tests import each other by module name (tests/unit on the path)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "unit"))
import test_engine_stf as engine_stf
import test_mrc_nic_hostile as hostile
import test_mrc_nic_tna as tna_tests
from test_engine_programs import fabric_switch, switch_packets
from twin import TwinSwitch, assert_same_state
from unit import test_srv6_switch_program as sw_tests

from softswitch.compiler import compile_file
from softswitch.engine.externs import Digest
from softswitch.ir.checked import CheckedProgram
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

TESTS = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((TESTS / "stf").glob("tna_*.stf"))

# what the C engine does not compile yet, by corpus program
FALLBACK: dict[str, str] = {}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_tna_stf_on_both_engines(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As test_engine_stf's v1model corpus: same outputs per port and state, or the
    construct C lacks named."""
    monkeypatch.setattr(engine_stf, "FALLBACK", FALLBACK)
    engine_stf.test_stf_on_both_engines(script)


def test_tna_fabric_switch_behaves_alike() -> None:
    sw = fabric_switch(compile_file(sw_tests.PROGRAMS["tna"]))
    sw.set_queue_count(8)
    outputs = 0
    for port, data in switch_packets():
        outputs += len(sw.process_packet(port, data))
    assert outputs > 10  # forwarding, not only drops
    assert_same_state(sw)


@pytest.fixture(scope="module")
def programs() -> dict[str, CheckedProgram]:
    return {"v1model": compile_file(tna_tests.PROGRAM),
            "tna": compile_file(tna_tests.TNA_PROGRAM)}


SCENARIOS: list[Callable[[dict[str, CheckedProgram]], None]] = [
    tna_tests.test_spraying_acknowledging_and_the_feedback_loop,
    tna_tests.test_the_receive_window_reordering_duplicates_wrap_and_nacks,
    tna_tests.test_skip_assumed_bad_refill_probes_and_reports,
    tna_tests.test_port_state_at_both_ends,
    hostile.test_ghost_feedback_is_refused_and_the_real_feedback_still_counts,
    hostile.test_corrupt_feedback_and_probes_are_dropped_and_counted,
    hostile.test_a_trimmed_packet_with_no_checksum_is_still_nacked,
    hostile.test_an_ipv6_header_whose_version_is_not_6_is_malformed,
]


class TwinNic(TwinSwitch):
    """A TwinSwitch whose digests (compared) read as one list, as the scenarios read them."""

    @property
    def digests(self) -> list[Digest]:
        py, c = self.python.digests, self.native.digests
        assert py == c, "digests differ between the engines"
        return py


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_tna_nic_pairs_behave_alike(scenario: Callable[[dict[str, CheckedProgram]], None],
                                    programs: dict[str, CheckedProgram],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The unit test's scenario on both architectures, each NIC a TwinSwitch."""
    made: list[TwinNic] = []

    def twin(program: CheckedProgram) -> TwinNic:
        sw = TwinNic(program)
        for engine in (sw.python, sw.native):  # timestamps must not depend on the wall clock
            engine.set_clock(lambda: 1_000_000)
        made.append(sw)
        return sw

    monkeypatch.setattr(tna_tests, "Switch", twin)
    scenario(programs)
    assert any(sw.native.arch == "tna" for sw in made)
    for sw in made:
        assert_same_state(sw)
