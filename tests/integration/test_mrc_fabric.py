"""A 1 MiB MRC write across the tiny topology (topologies/tiny.yaml): the fabric switch program
on all eight switches and the MRC NIC program on every NIC, each programmed over P4Runtime (the
switches by `controller.devices.push`, the NICs from `controller.plan.nic_plan`), a host
transport behind nic0 and nic2 (on different T0s, so every path crosses a T1), every port
draining at 1M packets/s in virtual time (controller.nic_fabric). The scenarios of issue 9:
(a) a clean fabric, (b) a congested T0 port, (c) a T0-T1 link cut mid-transfer, (d) 1% random
loss. Deterministic: seeded data and loss, virtual time."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.nic_fabric import NicFabric
from controller.plan.nic_plan import EvProfile
from controller.topology.yaml_io import load

ROOT = Path(__file__).resolve().parents[2]
TOPOLOGY = ROOT / "topologies" / "tiny.yaml"
SWITCH_P4 = ROOT / "p4src" / "switch" / "srv6_switch.p4"
NIC_P4 = ROOT / "p4src" / "nic" / "mrc_nic.p4"
SENDER, RECEIVER = "nic0", "nic2"       # nic0 on p*-t0-0, nic2 on p*-t0-1
MIB = 1 << 20
VA = 0x1000
# 16 active EVs over 2 planes x 2 T1s (4 per path), 2 backups per plane.
PROFILE = EvProfile(ev_count=16, backups=2, ev_min_active=4, probe_successes=3)
BTH_AT = 14 + 40 + 40 + 8               # outer Ethernet, outer and inner IPv6, UDP
NIC_RX_TRIMMED, NIC_RX_INJECTED_DROP = 7, 15   # nic_counter indexes (p4src/README.md)
NIC_EV_SKIPPED, NIC_EV_ASSUMED_BAD, NIC_EV_RECOVERED = 21, 22, 23


@pytest.fixture
def fab() -> Iterator[NicFabric]:
    with NicFabric(load(TOPOLOGY), SWITCH_P4, NIC_P4, [(SENDER, RECEIVER)],
                   profile=PROFILE) as fabric:
        yield fabric


def write(fab: NicFabric, size: int = MIB) -> tuple[bytes, int]:
    data = random.Random(size).randbytes(size)
    return data, fab.host(SENDER).sender.write(data, VA)


def assert_delivered(fab: NicFabric, data: bytes, msn: int) -> None:
    """Every byte placed at the receiver, the write completed at the sender, on the one
    connection it started on, with nothing left over."""
    receiver = fab.host(RECEIVER).receiver
    assert bytes(receiver.memory[VA:VA + len(data)]) == data
    assert fab.host(SENDER).sender.completed() == [msn]
    assert receiver.completions() == [(msn, VA, len(data), None)]
    assert fab.host(RECEIVER).unexpected == 0
    assert fab.queue_drops() == {}


def counters(fab: NicFabric) -> dict[str, int]:
    return fab.host(SENDER).sender.counters


def not_good(fab: NicFabric) -> dict[int, str]:
    return {ev: state for ev, state in fab.ev_states(SENDER).items() if state != "GOOD"}


def data_on_uplinks(fab: NicFabric, capture: list[tuple[str, int, bytes]]) -> Counter[str]:
    """Data packets nic0's T0s sent up, by the T1 they went to."""
    out: Counter[str] = Counter()
    for sender, port, frame in capture:
        if (sender in ("p0-t0-0", "p1-t0-0") and port in (2, 3)
                and frame[BTH_AT] in range(0xC6, 0xCC)):   # the write opcodes
            out[fab.fabric.switch(sender).links[port][0]] += 1
    return out


def test_a_clean_fabric_sprays_over_every_plane_and_t1(fab: NicFabric) -> None:
    seen: list[tuple[str, int, bytes]] = []
    fab.fabric.add_observer(lambda d: seen.append((d.sender, d.sender_port or 0, d.data)))
    data, msn = write(fab)
    fab.run(limit_us=50_000)
    assert_delivered(fab, data, msn)
    assert counters(fab)["sent"] == 1024 and counters(fab)["retransmitted"] == 0
    assert not_good(fab) == {}
    # 16 EVs on 4 (plane, T1) paths, a different EV per packet: a quarter on each T1.
    assert data_on_uplinks(fab, seen) == {t1: 256 for t1 in
                                         ("p0-t1-0", "p0-t1-1", "p1-t1-0", "p1-t1-1")}
    assert fab.events(SENDER) == []
    # Two planes at 1M packets/s each: 1024 packets take at least 512 µs.
    assert 512 <= fab.now < 2_000


def test_b_a_congested_last_hop_trims_and_the_nack_brings_the_retransmission(
        fab: NicFabric) -> None:
    fab.fabric.switch("p0-t0-1").device.set_queue_rate(0, 200_000)   # towards nic2, plane 0
    data, msn = write(fab)
    fab.run(limit_us=100_000)
    assert_delivered(fab, data, msn)
    c = counters(fab)
    assert fab.counter(RECEIVER, NIC_RX_TRIMMED) > 0
    assert c["nack_lasthop"] > 0 and c["retransmitted"] >= c["nack_lasthop"]
    assert c["timeout"] == 0          # congestion is told by trims, not by silence
    assert not_good(fab) == {}        # and a last-hop trim never penalises a path
    assert fab.events(SENDER) == []


def test_b_a_congested_uplink_marks_ecn_and_the_sender_steers_off_it(
        fab: NicFabric) -> None:
    seen: list[tuple[str, int, bytes]] = []
    fab.fabric.add_observer(lambda d: seen.append((d.sender, d.sender_port or 0, d.data)))
    fab.fabric.switch("p0-t0-0").device.set_queue_rate(2, 200_000)   # up to p0-t1-0
    data, msn = write(fab)
    fab.run(limit_us=100_000)
    assert_delivered(fab, data, msn)
    assert counters(fab)["retransmitted"] == 0
    marked, _ = fab.fabric.switch("p0-t0-0").engine.counter("ecn_counter").read(2)
    assert marked > 0 and fab.counter(SENDER, NIC_EV_SKIPPED) > 0
    # CE -> SACK M=SKIP_ONCE -> that EV sits out a turn: its turn goes to the next slot of its
    # plane (the plane's other T1, the paper's Fig. 14); plane 1 keeps exactly its share.
    up = data_on_uplinks(fab, seen)
    assert up["p0-t1-0"] < 256 - 16
    assert up["p0-t1-0"] + up["p0-t1-1"] == 512
    assert up["p1-t1-0"] == up["p1-t1-1"] == 256
    # Only EVs across the congested link were ever set aside, and only for a rotation (SKIP,
    # internal: no EV event); none was taken out of service.
    paths = fab.ev_t1(SENDER)
    assert all(state == "SKIP" and paths[ev] == (0, "p0-t1-0")
               for ev, state in not_good(fab).items())
    assert fab.events(SENDER) == []


def test_c_a_cut_t0_t1_link_takes_exactly_its_evs_out_and_the_write_completes(
        fab: NicFabric) -> None:
    data, msn = write(fab)
    sender = fab.host(SENDER).sender
    fab.run_for(250)
    assert 0 < counters(fab)["sent"] < 1024 and sender.completed() == []
    fab.fabric.set_link_up("p0-t0-0", 2, False)     # p0-t0-0 <-> p0-t1-0
    fab.run(limit_us=100_000)

    assert fab.fabric.link_down_drops > 0
    assert_delivered(fab, data, msn)
    assert fab.host(SENDER).sender is sender
    c = counters(fab)
    # Every loss without a trim notice (a timeout, a SACK hole, or a packet the NIC said left
    # on a GOOD EV of the bad path) reported to the NIC once: when it was found lost, or
    # before, when it was late (early_reports).
    losses = c["timeout"] + c["sack_hole"] + c["path_out_reported"] - c["unreported"]
    assert c["reports"] + c["early_reports"] > 0
    assert c["reports"] <= losses <= c["reports"] + c["early_reports"]
    paths = fab.ev_t1(SENDER)
    cut = {ev for ev, path in paths.items() if path == (0, "p0-t1-0")}
    active_cut = {ev for ev in cut if ev < PROFILE.ev_count}
    bad = set(not_good(fab))
    # Every active EV across the cut is out of service (a backup across it may not have been
    # tried); every EV of the other three paths is GOOD.
    assert active_cut <= bad <= cut
    assert set(not_good(fab).values()) == {"ASSUMED_BAD"}
    assert fab.counter(SENDER, NIC_EV_ASSUMED_BAD) == len(bad)
    events = fab.events(SENDER)
    assert {e.ev for e in events if e.state == "ASSUMED_BAD"} == bad
    assert all(e.conn == 0 and e.profile == PROFILE.profile_id for e in events)


def test_c_a_mended_link_brings_its_evs_back_by_probes(fab: NicFabric) -> None:
    data, msn = write(fab, 256 << 10)
    fab.run_for(100)
    fab.fabric.set_link_up("p0-t0-0", 2, False)
    fab.run(limit_us=100_000)
    assert_delivered(fab, data, msn)
    assert not_good(fab)
    fab.fabric.set_link_up("p0-t0-0", 2, True)
    fab.run(lambda: not not_good(fab), limit_us=20_000)
    events = fab.events(SENDER)
    assert {e.state for e in events} == {"ASSUMED_BAD", "GOOD"}
    assert fab.counter(SENDER, NIC_EV_RECOVERED) == sum(e.state == "GOOD" for e in events) > 0
    assert counters(fab)["probe_answers"] >= PROFILE.probe_successes


def test_d_one_percent_random_loss_on_every_plane(fab: NicFabric) -> None:
    for nic in (SENDER, RECEIVER):      # the paper's method: an inline drop on every NIC
        fab.inject_loss(nic, 0.01)
    data, msn = write(fab)
    fab.run(limit_us=200_000)
    assert_delivered(fab, data, msn)
    dropped = fab.counter(RECEIVER, NIC_RX_INJECTED_DROP) + fab.counter(
        SENDER, NIC_RX_INJECTED_DROP)
    assert dropped > 5                  # about 1% of ~2,000 data packets and SACKs
    assert counters(fab)["retransmitted"] > 0

