"""bench/nic_rate.py's MRC NIC benchmarks, short runs: the packets they replay are what the NIC
program really sends and delivers, every run is checked by what came out where, and run.py saves
those counts with the rate."""

from __future__ import annotations

import ipaddress
import json
import sys
from pathlib import Path

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from bench import nic_rate, run  # noqa: E402
from controller.plan import usid  # noqa: E402
from controller.topology.model import Switch as FabricSwitch  # noqa: E402
from controller.topology.model import Tier  # noqa: E402
from mrc_transport.wire import BTH, RETH, compact_ev, sack_fields  # noqa: E402
from softswitch.compiler import compile_file  # noqa: E402
from softswitch.ir.checked import CheckedProgram  # noqa: E402

A, B = nic_rate.A, nic_rate.B
PACKETS = 2 * nic_rate.EV_COUNT   # two turns of the EV rotation
SHORT = 0.0                       # no time: every benchmark runs exactly one pass (_timed)


def fabric_usid(tier: Tier, plane: int, index: int) -> int:
    return usid.switch_usid(FabricSwitch("s", tier, plane, index))


def rotation(psn: int) -> tuple[int, int]:
    """(plane, slot) of the n-th packet A sends: the cursor starts at slot 0, one slot a packet,
    and EV e is in plane e mod planes."""
    slot = psn % nic_rate.EV_COUNT
    return slot % nic_rate.PLANES, slot


@pytest.fixture(scope="module")
def program() -> CheckedProgram:
    return compile_file(nic_rate.PROGRAM)


@pytest.fixture(scope="module")
def batch(program: CheckedProgram) -> nic_rate.Batch:
    return nic_rate.Batch.build(program, PACKETS)


def test_tx_packets_rotate_over_every_ev_and_plane_encapsulated(batch: nic_rate.Batch) -> None:
    assert len(batch.wire) == PACKETS
    for psn, ((port, frame), write) in enumerate(zip(batch.wire, batch.writes)):
        plane, slot = rotation(psn)
        assert port == nic_rate.plane_port(plane)
        outer = Ether(frame)[IPv6]
        assert outer.nh == 41 and outer.fl == compact_ev(plane, slot)
        t1 = slot // nic_rate.PLANES   # one T1 per active EV of a plane
        assert usid.carrier_usids(int(ipaddress.IPv6Address(outer.dst))) == [
            fabric_usid(Tier.T0, plane, A.row), fabric_usid(Tier.T1, plane, t1),
            fabric_usid(Tier.T0, plane, B.row), usid.ua_usid(B.t0_port), usid.NIC_DECAP_USID, 0]
        inner = outer.payload
        assert isinstance(inner, IPv6) and (inner.src, inner.dst) == (A.address, B.address)
        assert inner[BTH].psn == psn and inner[UDP].sport == compact_ev(plane, slot)
        assert len(frame) == len(write) + 40   # the outer IPv6 header, no SRH


def test_tx_benchmark_sends_every_packet_and_spreads_them_evenly(batch: nic_rate.Batch) -> None:
    r = nic_rate.bench_nic_tx(SHORT, batch)
    assert r.name == "nic_tx" and r.packets == PACKETS
    assert r.outputs == {"encapsulated": PACKETS, "other_outputs": 0,
                         "min_per_plane": PACKETS // nic_rate.PLANES,
                         "max_per_plane": PACKETS // nic_rate.PLANES,
                         "counted_sent": PACKETS, "fallback": 0}


def test_rx_delivers_each_segment_decapsulated_and_sacks_it(batch: nic_rate.Batch) -> None:
    assert len(batch.delivered) == len(batch.sacks) == PACKETS
    for psn, (delivered, (sack_port, sack), (port, _)) in enumerate(
            zip(batch.delivered, batch.sacks, batch.wire)):
        host = Ether(delivered)
        assert (host[IPv6].src, host[IPv6].dst, host[IPv6].nh) == (A.address, B.address, 17)
        assert host[BTH].psn == psn
        assert bytes(host[RETH].payload) == bytes([psn & 0xFF]) * nic_rate.PAYLOAD_BYTES
        fields = sack_fields(sack)
        assert fields is not None and sack_port == port   # back on the plane it came in on
        assert (fields["dest_qp"], fields["cack_psn"], fields["sack_bitmap"]) == (A.qp, psn, 0)
        assert fields["entropy"] == compact_ev(*rotation(psn))


def test_rx_benchmark_delivers_and_sacks_every_packet(batch: nic_rate.Batch) -> None:
    r = nic_rate.bench_nic_rx(SHORT, batch)
    assert r.name == "nic_rx" and r.packets == PACKETS
    assert r.outputs == {"delivered": PACKETS, "sacked": PACKETS, "other_outputs": 0,
                         "counted_received": PACKETS, "duplicates": 0, "out_of_window": 0,
                         "counted_sacks_sent": PACKETS}


def test_without_the_window_reset_a_second_pass_would_be_duplicates(
        program: CheckedProgram) -> None:
    own = nic_rate.Batch.build(program, 8)
    assert len(nic_rate.receive(own.b, own.wire)[0]) == 8
    delivered, sacks = nic_rate.receive(own.b, own.wire)
    assert delivered == [] and len(sacks) == 8   # SACKed, not delivered again
    assert nic_rate.nic_count(own.b, nic_rate.RX_DUPLICATE) == 8
    nic_rate.reset_receiver(own.b)
    assert len(nic_rate.receive(own.b, own.wire)[0]) == 8


def test_feedback_benchmark_hands_every_sack_to_the_host(batch: nic_rate.Batch) -> None:
    [out] = batch.a.process_packet(*batch.sacks[0])
    assert out.port == nic_rate.HOST_PORT
    assert Ether(out.data)[IPv6].src == B.address and sack_fields(out.data) is not None
    r = nic_rate.bench_nic_feedback(SHORT, batch)
    assert r.name == "nic_feedback" and r.packets == PACKETS
    assert r.outputs == {"delivered": PACKETS, "other_outputs": 0,
                         "counted_sacks_received": PACKETS, "ev_events": 0}


def test_run_saves_each_rate_with_its_configuration_and_counts(
        batch: nic_rate.Batch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def short_run(seconds: float) -> list[nic_rate.NicRateResult]:
        return [nic_rate.bench_nic_tx(seconds, batch), nic_rate.bench_nic_rx(seconds, batch)]

    monkeypatch.setattr(run, "RESULTS", tmp_path)
    monkeypatch.setattr(nic_rate, "run_all", short_run)
    rows = run.nic_rate_rows(SHORT)
    assert [(name, count, unit) for name, count, _, _, unit in rows] == [
        ("nic_rate.nic_tx", PACKETS, "packets/s"), ("nic_rate.nic_rx", PACKETS, "packets/s")]
    saved = json.loads((tmp_path / "nic_rate_nic_rx.json").read_text())
    assert saved["benchmark"] == "nic_rate.nic_rx" and saved["packets"] == PACKETS
    assert saved["packets_per_second"] == round(rows[1][3])
    assert (saved["delivered"], saved["sacked"], saved["duplicates"]) == (PACKETS, PACKETS, 0)
    assert (saved["evs"], saved["planes"], saved["payload_bytes"]) == (128, 8, 1024)
    assert {"encapsulated", "min_per_plane"} <= json.loads(
        (tmp_path / "nic_rate_nic_tx.json").read_text()).keys()
