"""TNA programs on both engines: the TNA STF corpus (same packets per port, counters,
registers and digests), the fabric switch's TNA program with the packets the v1model
differential test uses, and the MRC NIC's TNA program through its unit tests' scenarios with
every Switch a TwinSwitch (each call compared between the engines as it happens)."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# the NIC's unit tests import each other by module name (tests/unit on the path)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "unit"))
import test_engine_stf as engine_stf
import test_mrc_nic_hostile as hostile
import test_mrc_nic_tna as tna_tests
import test_tna_engine as unit_tna
from test_engine_programs import fabric_switch, switch_packets
from twin import TwinSwitch, assert_same_state
from unit import test_srv6_switch_program as sw_tests

from softswitch.compiler import compile_file
from softswitch.engine.externs import Digest
from softswitch.engine.pipeline import QueueInfo
from softswitch.engine.tables import ExactMatch
from softswitch.engine.tna_pipeline import TnaJob
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


# -- the C walk (native/cgen_tna_walk.py) against the Python walk --------------------------------


def unit_twin(tmp_path: Path) -> TwinSwitch:
    """test_tna_engine's program (digests, copy to CPU, meters, bridged metadata) on both
    engines, with a CPU port and a fixed clock."""
    path = tmp_path / "tna_unit.p4"
    path.write_text(unit_tna.TNA_UNIT)
    sw = TwinSwitch(compile_file(path))
    for engine in (sw.python, sw.native):
        engine.set_clock(lambda: 7)
        fwd = engine.table("fwd")
        fwd.add_entry([ExactMatch(1)], "counted", [1])
        fwd.add_entry([ExactMatch(2)], "uncounted", [2])
        fwd.add_entry([ExactMatch(3)], "uncounted", [511])  # the drop port
    sw.set_cpu_port(64)
    sw.set_port_metadata(5, 0x1234 << 48)
    return sw


def unit_packets(count: int) -> list[tuple[int, bytes]]:
    """Unicast, drops, digests and copies to the CPU (handed to Python), short packets (a
    parser error: dropped), on ports with and without port metadata."""
    rng = random.Random(3)
    out = []
    for _ in range(count):
        op = rng.choice((0, 0, 0, 1, 2, 3))
        data = unit_tna.h(rng.choice((1, 2, 3, 4)), rng.randrange(8), op,
                          bytes(rng.randrange(40)))
        if rng.random() < 0.1:
            data = data[:rng.randrange(unit_tna.H_BYTES)]
        out.append((rng.choice((0, 5)), data))
    return out


def test_tna_batches_walk_as_packet_by_packet(tmp_path: Path) -> None:
    """process_batch in C (hand-backs to Python in the middle of a batch) gives each packet
    what the Python engine's process gives it, and the same counters and digests."""
    sw = unit_twin(tmp_path)
    packets = unit_packets(300)
    expected = [sw.python.process_packet(port, data) for port, data in packets]
    assert sw.native.process_batch(packets) == expected
    assert any(len(o) == 2 for o in expected) and any(not o for o in expected)
    assert sw.python.digests and sw.python.digests == sw.native.digests
    assert_same_state(sw)


def test_tna_pass_by_pass_with_queue_metadata(tmp_path: Path) -> None:
    """run(), as the Device's queues call it: each ingress pass gives the same egress jobs
    (port, packet, queue, class, kind, length), each egress pass with queue fields the same
    packets."""
    sw = unit_twin(tmp_path)
    rng = random.Random(5)
    for port, data in unit_packets(150):
        job = TnaJob(True, port, data)
        (py_out, py_jobs), (c_out, c_jobs) = sw.python.run(job), sw.native.run(job)
        assert py_out == c_out

        def fields(j: TnaJob) -> tuple[object, ...]:
            return (j.ingress, j.port, bytes(j.data), j.qid, j.kind, j.cos, j.pkt_length,
                    j.rid, j.port_md, j.resubmitted)

        assert [fields(j) for j in py_jobs] == [fields(j) for j in c_jobs]
        for j in py_jobs:
            j.enq_cells, j.deq_cells = rng.randrange(1 << 19), rng.randrange(1 << 19)
            queue = QueueInfo(rng.randrange(1000), 0, rng.randrange(300), 0)
            assert sw.python.run(j, queue) == sw.native.run(j, queue)
    assert_same_state(sw)
