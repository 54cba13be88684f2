"""The v1model walk in C (native/cgen_walk.py) against the Python walk: the Device's pass-by-pass
path (`run` with queueing metadata, egress jobs holding C buffers) on the STF corpus, batches
with packets the C walk hands back to Python in the middle (the NIC's resubmits and SACK
clones), and observed register writes reported alike, in the same order."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import pytest
from nic_pair import PLANE_PORT, A, B
from test_engine_programs import fabric_switch, switch_packets
from test_engine_stf import FALLBACK, SCRIPTS, _program
from twin import TwinSwitch, assert_same_state, state
from unit import test_mrc_nic_program as nic_tests
from unit import test_srv6_switch_program as sw_tests

from softswitch.compiler import compile_file
from softswitch.engine.pipeline import OutputPacket, QueueInfo
from softswitch.engine.switch import Switch
from softswitch.native.build import compiler_available
from softswitch.stf.runner import StfRunner
from softswitch.stf.script import read_stf

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")


class Queued:
    """A Switch driven as runtime/device.py drives it: one `run` per pass, every egress job
    with queueing metadata (its position in the input as the queue depth)."""

    def __init__(self, switch: Switch) -> None:
        self.switch = switch
        self.egress_jobs: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.switch, name)

    def process_packet(self, port: int, data: bytes) -> list[OutputPacket]:
        out: list[OutputPacket] = []
        jobs = deque([self.switch.new_packet(port, data)])
        while jobs:
            job = jobs.popleft()
            queue = None if job.is_ingress else QueueInfo(7, len(jobs), 3, 1)
            if not job.is_ingress:
                self.egress_jobs.append(job)
            sent, more = self.switch.run(job, queue)
            out += sent
            jobs.extend(more)
        return out


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_run_pass_by_pass_on_both_engines(script: Path) -> None:
    if _program(script).stem in FALLBACK:
        pytest.skip("the C engine does not compile this program")
    checked = compile_file(_program(script))
    commands = read_stf(script)
    runs = {}
    for engine in ("python", "c"):
        switch = Queued(Switch(checked, engine=engine))
        runner = StfRunner(switch)  # type: ignore[arg-type]
        runner.run(commands)
        runs[engine] = (dict(runner.received), state(switch.switch))
        if engine == "c":  # the PHV of a queued packet is C memory, not Python objects
            ffi = switch.switch.pipeline.ffi
            assert all(isinstance(j.hdr, ffi.CData) and isinstance(j.sm, ffi.CData)
                       for j in switch.egress_jobs)
    assert runs["c"] == runs["python"]


def test_batch_of_the_fabric_switch() -> None:
    """Forwarded, dropped, punted, malformed packets in one batch: as one by one in Python."""
    sw = fabric_switch(compile_file(sw_tests.PROGRAMS["v1model"]))
    packets = switch_packets()
    outputs = sw.process_batch(packets * 3)
    assert len(outputs) == 3 * len(packets)
    assert sum(map(len, outputs)) > 30
    assert_same_state(sw)


@pytest.fixture
def nics(monkeypatch: pytest.MonkeyPatch) -> tuple[nic_tests.Nic, nic_tests.Nic]:
    monkeypatch.setattr(nic_tests, "Switch", TwinSwitch)
    program = compile_file(nic_tests.PROGRAM)
    return nic_tests.Nic(program, A, B), nic_tests.Nic(program, B, A)


def _writes(a_nic: nic_tests.Nic, count: int) -> list[tuple[int, bytes]]:
    sent = []
    for psn in range(count):
        sent += [(o.port, o.data) for o in a_nic.write(psn, bytes([psn]) * (64 + psn))
                 if o.port in PLANE_PORT.values()]
    return sent


def test_batch_with_handbacks_in_the_middle(nics: tuple[nic_tests.Nic, nic_tests.Nic]) -> None:
    """NIC B receives writes in one batch: each one's SACK is an ingress clone, which C hands
    to the Python walk mid-batch; the batch goes on after it."""
    a_nic, b_nic = nics
    received = _writes(a_nic, 12)
    received.insert(5, (PLANE_PORT[0], b"\x00" * 20))  # a runt between them
    outputs = b_nic.sw.process_batch(received)
    assert len(outputs) == len(received)
    assert sum(len(o) > 1 for o in outputs) >= 10  # delivered and SACKed
    assert_same_state(b_nic.sw)  # type: ignore[arg-type]


def test_observed_register_writes(nics: tuple[nic_tests.Nic, nic_tests.Nic]) -> None:
    """Every write of ev_state, the program's and the control plane's, reported on both
    engines with the same (index, value), in the same order."""
    a_nic, b_nic = nics
    logs: dict[str, list[tuple[int, int]]] = {"python": [], "c": []}
    sw: Any = a_nic.sw
    for engine, switch in (("python", sw.python), ("c", sw.native)):
        log = logs[engine]
        switch.register("ev_state").observe(lambda i, v, log=log: log.append((i, v)))
    a_nic.set_ev_state(3, 2)   # the control plane's write
    for port, data in _writes(a_nic, 10):
        for back in b_nic.receive(port, data):
            if back.port in PLANE_PORT.values():
                a_nic.receive(back.port, back.data)
    a_nic.report_loss(4)
    a_nic.report_probe_timeout(5)
    assert logs["c"] == logs["python"]
    assert (A.conn * 256 + 3, 2) in logs["c"] and len(logs["c"]) > 1
    sw.native.register("ev_state").observe(None)
    sw.python.register("ev_state").observe(None)
    before = len(logs["c"])
    a_nic.report_loss(6)
    assert len(logs["c"]) == before
