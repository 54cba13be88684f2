"""The repo's v1model programs on both engines: the fabric switch (srv6_switch.p4) and the MRC
NIC (mrc_nic.p4) configured as their unit tests configure them, driven with realistic and
malformed packets; every output, counter, register, direct counter and digest must be the same
on the C engine as on the Python engine (the reference). A hypothesis fuzz feeds both random
bytes and mutated valid packets."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nic_pair import PLANE_PORT, A, B
from twin import TwinSwitch, assert_same_state
from unit import test_mrc_nic_program as nic_tests
from unit import test_srv6_switch_program as sw_tests
from unit.test_srv6_switch_program import (
    ADJ_PORT,
    CPU_PORT,
    DOWN_PORT,
    DOWN_USID,
    EXT_PORT,
    HOST_PORT,
    MY_USID,
    NIC_ADDR,
    UP_PORT,
    UP_USID,
    a,
    frame,
    srh_frame,
    usids,
)

from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch, LpmMatch
from softswitch.ir.checked import CheckedProgram
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")


@pytest.fixture(scope="module")
def switch_program() -> CheckedProgram:
    return compile_file(sw_tests.PROGRAMS["v1model"])


@pytest.fixture(scope="module")
def nic_program() -> CheckedProgram:
    return compile_file(nic_tests.PROGRAM)


def fabric_switch(program: CheckedProgram) -> TwinSwitch:
    """A T0 with the unit tests' baseline configuration, plus encapsulation and a punt."""
    sw = TwinSwitch(program)
    roles = ((HOST_PORT, sw_tests.HOST), (UP_PORT, sw_tests.FABRIC),
             (DOWN_PORT, sw_tests.FABRIC), (ADJ_PORT, sw_tests.FABRIC),
             (EXT_PORT, sw_tests.EXTERNAL))
    for port, role in roles:
        sw.table("port_role").add_entry([ExactMatch(port)], "set_port_role", [role])
        sw.table("egress_port_role").add_entry([ExactMatch(port)], "set_egress_port_role",
                                               [role])
    sw.table("sid_block").add_entry([LpmMatch(a("fcbb:bbbb::"), 32)], "in_sid_block")
    sw.table("my_sid").add_entry([LpmMatch(a(usids(MY_USID)), 48)], "usid_un")
    route = sw.table("route_v6")
    for usid, port in ((UP_USID, UP_PORT), (DOWN_USID, DOWN_PORT)):
        route.add_entry([LpmMatch(a(usids(usid)), 48)], "forward",
                        [port, sw_tests.SWITCH_MAC, sw_tests.MAC_UP])
    route.add_entry([LpmMatch(a(NIC_ADDR), 128)], "forward",
                    [HOST_PORT, sw_tests.SWITCH_MAC, sw_tests.MAC_HOST])
    route.add_entry([LpmMatch(a("fcbb:bbbb::"), 32)], "drop")
    sw.table("hop_limit_policy").set_default_action("punt_hop_limit")
    return sw


def switch_packets() -> list[tuple[int, bytes]]:
    """Transit, uN shifts, SRH ends, decapsulation, expired hop limits, packet-outs, and
    each malformed form the unit tests check."""
    frames = [
        frame(usids(UP_USID, 5)), frame(usids(MY_USID, DOWN_USID, 7)),
        frame(usids(MY_USID), segments=[usids(DOWN_USID), usids(MY_USID)]),
        frame(usids(MY_USID), inner=NIC_ADDR), frame(usids(UP_USID), hlim=1),
        frame(usids(0x7777)), frame("2001:db8:9::1"), frame(NIC_ADDR, tc=0x20),
        frame(usids(MY_USID), segments=[usids(n) for n in range(1, 6)], segleft=4),
    ]
    packets = [(port, bytes(f)) for f in frames for port in (HOST_PORT, UP_PORT, EXT_PORT)]
    packets += [(UP_PORT, srh_frame(**kw)) for kw in
                ({}, {"type": 3}, {"len": 6}, {"lastentry": 2}, {"segleft": 3})]
    packets += [(UP_PORT, bytes(frame(usids(MY_USID), inner=NIC_ADDR))[:n])
                for n in (0, 10, 14, 44, 60, 74, 120)]
    packets += [(CPU_PORT, (DOWN_PORT << 7).to_bytes(2, "big") + bytes(frame(usids(UP_USID)))),
                (CPU_PORT, (CPU_PORT << 7).to_bytes(2, "big") + bytes(frame(usids(UP_USID))))]
    return packets


def test_fabric_switch_behaves_alike(switch_program: CheckedProgram) -> None:
    sw = fabric_switch(switch_program)
    outputs = 0
    for port, data in switch_packets():
        outputs += len(sw.process_packet(port, data))
    assert outputs > 10  # forwarding, not only drops
    assert_same_state(sw)


@pytest.fixture
def nics(nic_program: CheckedProgram, monkeypatch: pytest.MonkeyPatch
         ) -> tuple[nic_tests.Nic, nic_tests.Nic]:
    monkeypatch.setattr(nic_tests, "Switch", TwinSwitch)
    return nic_tests.Nic(nic_program, A, B), nic_tests.Nic(nic_program, B, A)


def test_nic_pair_behaves_alike(nics: tuple[nic_tests.Nic, nic_tests.Nic]) -> None:
    """Writes sprayed over the EVs, delivered (some trimmed, one lost and reported), the
    SACKs and NACKs returned, probes, random loss injection (the C engine draws the Python
    engine's random numbers)."""
    a_nic, b_nic = nics
    a_nic.inject_loss(0x4000_0000, plane=1)
    for psn in range(24):
        for sent in a_nic.write(psn, bytes([psn]) * (40 + psn)):
            if sent.port not in PLANE_PORT.values():
                continue
            data = nic_tests.trimmed(sent.data) if psn % 5 == 3 else sent.data
            if psn == 7:
                continue  # lost on the wire
            for back in b_nic.receive(sent.port, data):
                if back.port in PLANE_PORT.values():
                    a_nic.receive(back.port, back.data)
    a_nic.report_loss(7)
    a_nic.probe(2)
    a_nic.report_probe_timeout(3)
    assert a_nic.count("tx_data") > 0 and b_nic.count("rx_data") > 0
    assert_same_state(a_nic.sw)  # type: ignore[arg-type]
    assert_same_state(b_nic.sw)  # type: ignore[arg-type]


def _mutated(base: list[bytes]) -> st.SearchStrategy[bytes]:
    def mutate(args: tuple[int, int, list[tuple[int, int]], int]) -> bytes:
        which, cut, flips, extra = args
        data = bytearray(base[which % len(base)])
        for pos, value in flips:
            if data:
                data[pos % len(data)] = value
        return bytes(data[:cut] if cut < len(data) else data) + bytes(extra)

    return st.tuples(st.integers(0, 1000), st.integers(0, 400),
                     st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=6),
                     st.integers(0, 3)).map(mutate)


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.lists(st.tuples(st.sampled_from([HOST_PORT, UP_PORT, EXT_PORT, CPU_PORT]),
                               st.binary(max_size=200) | _mutated(
                                   [d for _, d in switch_packets()])),
                     min_size=1, max_size=8))
def test_fuzzed_packets_on_the_fabric_switch(switch_program: CheckedProgram,
                                            data: list[tuple[int, bytes]]) -> None:
    sw = fabric_switch(switch_program)
    for port, packet in data:
        sw.process_packet(port, packet)
    assert_same_state(sw)
