"""bench/engine_rate.py: the packets each switch role replays are what the controller-programmed
fabric really carries (every write walked from NIC A to NIC B is delivered), each replay is
checked by what came out, and an engine that cannot be built is reported, not run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from bench import engine_rate, nic_rate  # noqa: E402
from softswitch.compiler import compile_file  # noqa: E402
from softswitch.ir.checked import CheckedProgram  # noqa: E402

WRITES = 8


@pytest.fixture(scope="module")
def programs() -> tuple[CheckedProgram, CheckedProgram]:
    return compile_file(engine_rate.SWITCH_PROGRAM), compile_file(nic_rate.PROGRAM)


@pytest.fixture(scope="module")
def walk(programs: tuple[CheckedProgram, CheckedProgram]) -> engine_rate.Walk:
    return engine_rate.walk_fabric(*programs, "python", writes=WRITES)


def test_every_write_crosses_t0_t1_t0_and_is_delivered(walk: engine_rate.Walk) -> None:
    assert walk.delivered == WRITES
    assert {role: len(h) for role, h in walk.hops.items()} == dict.fromkeys(
        engine_rate.SWITCH_ROLES, WRITES)
    # Each hop shifts the uSID carrier: the destination a switch sees differs hop by hop.
    dsts = [[Ether(walk.hops[r][i][2])[IPv6].dst for r in engine_rate.SWITCH_ROLES]
            for i in range(WRITES)]
    assert all(len(set(d)) == 3 for d in dsts)
    assert len({id(sw) for sw, _, _ in walk.hops["t1"]}) > 1   # the EVs spread over T1s


def test_role_replay_counts_what_was_forwarded(walk: engine_rate.Walk) -> None:
    r = engine_rate.bench_role("t1", walk.hops["t1"], "python", 0.0)
    assert (r.name, r.packets) == ("srv6_switch.t1", WRITES)
    assert r.outputs["forwarded"] == WRITES and r.outputs["dropped_or_other"] == 0
    assert r.cpu_seconds > 0


def test_an_engine_that_cannot_be_built_is_reported(
        programs: tuple[CheckedProgram, CheckedProgram]) -> None:
    assert engine_rate.engine_problem(programs[0], "python") == ""
    problem = engine_rate.engine_problem(programs[0], "no-such-engine")
    assert problem.startswith("unavailable: ")
