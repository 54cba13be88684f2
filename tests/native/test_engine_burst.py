"""`Switch.process_burst` against `process_packet` frame by frame, on both engines: the fabric
switch (v1model and TNA), the MRC NIC receiving writes (SACK clones and the NIC's other
hand-backs to the Python walk in the middle of a burst), TNA digests and copies to the CPU;
the same outputs (port, bytes, order, which input made each), counters, registers, direct
counters and digests. Also bursts from pcap files and the output buffer growing mid-burst."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from nic_pair import PLANE_PORT
from scapy.utils import wrpcap
from test_engine_programs import fabric_switch, switch_packets
from test_engine_tna import unit_packets, unit_twin
from test_engine_walk import _writes
from test_engine_walk import nics as nics
from twin import TwinSwitch, state
from unit import test_mrc_nic_program as nic_tests
from unit import test_srv6_switch_program as sw_tests

from softswitch.compiler import compile_file
from softswitch.engine.burst import Burst, BurstError
from softswitch.engine.pipeline import OutputPacket
from softswitch.engine.switch import Switch
from softswitch.native import pipeline as native_pipeline
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

Packets = list[tuple[int, bytes]]
TNA_MIRROR = Path(__file__).parents[1] / "p4" / "tna_mirror.p4"


def by_packet(sw: Switch, packets: Packets) -> list[list[OutputPacket]]:
    return [sw.process_packet(port, data) for port, data in packets]


def burst_of(packets: Packets) -> Burst:
    return Burst.of([d for _, d in packets], [p for p, _ in packets])


def assert_burst_is_packet_by_packet(per_packet: TwinSwitch, burst: TwinSwitch,
                                     packets: Packets) -> list[list[OutputPacket]]:
    """`packets` one by one into `per_packet` (both engines), as one burst into `burst` (both
    engines, configured alike): every output and all state the same four times."""
    expected = by_packet(per_packet.python, packets)
    assert by_packet(per_packet.native, packets) == expected
    frames = burst_of(packets)
    for sw in (burst.python, burst.native):
        result = sw.process_burst(frames)
        assert result.per_input(len(frames)) == expected, sw.engine
        assert len(result) == sum(map(len, expected))
    reference = state(per_packet.python)
    for sw in (per_packet.native, burst.python, burst.native):
        assert state(sw) == reference, sw.engine
    assert reference["internal_errors"] == 0
    return expected


@pytest.mark.parametrize("arch", ["v1model", "tna"])
def test_fabric_switch_bursts_as_packet_by_packet(arch: str) -> None:
    program = compile_file(sw_tests.PROGRAMS[arch])
    twins = fabric_switch(program), fabric_switch(program)
    for twin in twins:
        twin.set_queue_count(8)
        for sw in (twin.python, twin.native):
            sw.set_clock(lambda: 1000)
    expected = assert_burst_is_packet_by_packet(*twins, switch_packets() * 3)
    assert sum(map(len, expected)) > 30 and any(not o for o in expected)


def test_nic_bursts_with_handbacks_in_the_middle(
        nics: tuple[nic_tests.Nic, nic_tests.Nic]) -> None:
    """NIC B receives A's writes (and a runt) in one burst: each write's SACK is an ingress
    clone, which C hands to the Python walk mid-burst; the burst goes on after it."""
    a_nic, b_nic = nics
    other_b = nic_tests.Nic(compile_file(nic_tests.PROGRAM), b_nic.me, b_nic.peer)
    received = _writes(a_nic, 12)
    received.insert(5, (PLANE_PORT[0], b"\x00" * 20))
    expected = assert_burst_is_packet_by_packet(b_nic.sw, other_b.sw,  # type: ignore[arg-type]
                                                received)
    assert sum(len(o) > 1 for o in expected) >= 10   # delivered and SACKed


def test_tna_bursts_with_digests_and_copies_to_cpu(tmp_path: Path) -> None:
    expected = assert_burst_is_packet_by_packet(unit_twin(tmp_path), unit_twin(tmp_path),
                                                unit_packets(300))
    assert any(len(o) == 2 for o in expected)


def test_tna_bursts_with_ingress_and_egress_mirrors() -> None:
    """tests/p4/tna_mirror.p4: ingress mirrors (C hands the packet back after the ingress
    deparser) and egress mirrors (after the egress deparser, which a TNA burst writes straight
    into its output: the packet goes back to the walk's own buffer for Python)."""
    program = compile_file(TNA_MIRROR)
    twins = TwinSwitch(program), TwinSwitch(program)
    for twin in twins:
        twin.pre.mirroring_add(3, 5)
        twin.set_queue_count(8)
        for sw in (twin.python, twin.native):
            sw.set_clock(lambda: 1000)
    packets = [(1, bytes(12) + b"\x88\xb5" + bytes([op, 3]) + bytes(i & 0xFF for i in range(size)))
               for size in (0, 9, 300) for op in (0, 1, 2, 4, 5, 0)]
    expected = assert_burst_is_packet_by_packet(*twins, packets * 4)
    egress_mirrored = [o for outs in expected for o in outs if o.data[:1] == b"\xe1"]
    assert egress_mirrored and all(o.port == 5 for o in egress_mirrored)


def test_the_output_buffer_grows_mid_burst(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs longer than their inputs fill the C walk's room: the buffer grows and the
    burst goes on, the outputs as packet by packet."""
    twin = fabric_switch(compile_file(sw_tests.PROGRAMS["v1model"]))
    growing = [(port, data) for port, data in switch_packets()
               if (out := twin.python.process_packet(port, data)) and len(out[0].data) > len(data)]
    assert growing
    packets = growing * (400 // len(growing) + 1)
    monkeypatch.setattr(native_pipeline, "BURST_GROWTH", 0)
    monkeypatch.setattr(native_pipeline, "BURST_ROOM", (1 << 16) + 64)
    grown = []
    sink_class = native_pipeline.BurstSink

    class Watched(sink_class):  # type: ignore[misc,valid-type]
        def reserve(self, data_bytes: int, records: int) -> None:
            before = len(self.data)
            super().reserve(data_bytes, records)
            if len(self.data) > before:
                grown.append(len(self.data))

    monkeypatch.setattr(native_pipeline, "BurstSink", Watched)
    result = twin.native.process_burst(burst_of(packets))
    assert grown
    assert result.per_input(len(packets)) == by_packet(twin.python, packets)


def test_a_pcap_file_is_a_burst(tmp_path: Path) -> None:
    """The records of a pcap file (either byte order) give what the same frames give."""
    twin = fabric_switch(compile_file(sw_tests.PROGRAMS["v1model"]))
    packets = [(sw_tests.UP_PORT, d) for p, d in switch_packets() if p == sw_tests.UP_PORT]
    frames = [d for _, d in packets]
    path = tmp_path / "frames.pcap"
    wrpcap(str(path), frames)
    data = path.read_bytes()
    swapped = _byteswapped_pcap(data)
    expected = by_packet(twin.python, packets)
    for source in (path, data, swapped):
        burst = Burst.from_pcap(source, sw_tests.UP_PORT)
        assert [burst.frame(i) for i in range(len(burst))] == frames
        assert twin.native.process_burst(burst).per_input(len(burst)) == expected


def _byteswapped_pcap(data: bytes) -> bytes:
    """`data` (a little-endian pcap) rewritten big-endian."""
    out = bytearray(data[:24])
    for start, size in ((0, 4), (4, 2), (6, 2), (8, 4), (12, 4), (16, 4), (20, 4)):
        out[start:start + size] = out[start:start + size][::-1]
    pos = 24
    while pos < len(data):
        caplen = int.from_bytes(data[pos + 8:pos + 12], "little")
        for k in range(4):
            out += data[pos + 4 * k:pos + 4 * k + 4][::-1]
        out += data[pos + 16:pos + 16 + caplen]
        pos += 16 + caplen
    return bytes(out)


@pytest.mark.parametrize(("data", "message"), [
    (b"\xd4\xc3\xb2\xa1" + bytes(10), "shorter than the 24-byte file header"),
    (b"\x0a\x0d\x0d\x0a" + bytes(20), "bad magic number 0x0a0d0d0a"),
    (b"\xd4\xc3\xb2\xa1" + bytes(20) + bytes(8), "record 0 at byte 24: truncated"),
    (b"\xd4\xc3\xb2\xa1" + bytes(20) + bytes(8) + (99).to_bytes(4, "little") + bytes(4)
     + bytes(10), "record 0 at byte 24: 99 captured bytes, only 10 left"),
])
def test_a_bad_pcap_is_refused_by_name(data: bytes, message: str) -> None:
    with pytest.raises(BurstError, match=message):
        Burst.from_pcap(data, 1)


@pytest.mark.parametrize(("kw", "message"), [
    ({"lengths": [4, 40]}, r"frame 1 \(bytes 4..44\) runs past the burst's 8 bytes"),
    ({"ports": [1, 600]}, "frame 1: port 600 is not a 9-bit port"),
    ({"ports": [1]}, "one offset, length and port per frame"),
])
def test_a_bad_burst_is_refused_by_name(kw: dict[str, Any], message: str) -> None:
    from array import array
    fields = {"offsets": [0, 4], "lengths": [4, 4], "ports": [1, 2], **kw}
    with pytest.raises(BurstError, match=message):
        Burst(bytes(8), array("I", fields["offsets"]), array("I", fields["lengths"]),
              array("H", fields["ports"]))


def test_process_burst_takes_a_burst() -> None:
    sw = Switch(compile_file(sw_tests.PROGRAMS["v1model"]), engine="c")
    with pytest.raises(TypeError, match=r"process_burst takes a Burst .* not list"):
        sw.process_burst([(1, b"x")])  # type: ignore[arg-type]
