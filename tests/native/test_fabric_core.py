"""The native fabric core (softswitch/native/fabric_core.py, runtime/ss_fabric.c) against the
Python fabric: the same small fabric — two switches on the C engine, four priority queues,
line and packet rates, tail drops, propagation delays, a lossy cable (a seeded Python draw),
digests (a pass the C walk hands back to Python), packets to unrouted ports and TTL drops —
run by both cores gives the same deliveries at the same times, the same host packets,
digests, device and fabric counters, wire tallies, and the same virtual instants."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest
from unit.test_device import FWD_P4, pkt

from softswitch.clock import VirtualClock
from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.fabric import Fabric
from softswitch.ir.checked import CheckedProgram
from softswitch.native.build import compiler_available
from softswitch.wire_tally import WireCount, dscp


def compiled(factory: pytest.TempPathFactory, source: str) -> CheckedProgram:
    """`source` compiled (the test skipped without a C compiler: the core cannot build)."""
    if compiler_available() is None:
        pytest.skip("no C compiler ($CC or cc): the native core cannot build")
    path = Path(factory.mktemp("p4")) / "program.p4"
    path.write_text(source)
    return compile_file(path)


@pytest.fixture(scope="module")
def fwd(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    return compiled(tmp_path_factory, FWD_P4)


def build(fwd: CheckedProgram, native: bool, loss_seed: int) -> tuple[Fabric, VirtualClock]:
    """h1 - A =(2: 1 µs, 3: lossy 300 ns)= B - h2; A's ports at 10 Gb/s with 5-packet
    queues towards B, B's host port paced (2 Mpps) at 25 Gb/s."""
    clock = VirtualClock()
    fabric = Fabric(clock=clock, native=native)
    for name in ("A", "B"):
        fabric.add_switch(name, fwd, priority_queues=4)
    a, b = fabric.switch("A").engine, fabric.switch("B").engine
    for dst, port in ((2, 2), (3, 3)):
        a.table("fwd").add_entry([ExactMatch(dst)], "set_port", [port])
        b.table("fwd").add_entry([ExactMatch(dst)], "set_port", [2])
    fabric.link("A", 2, "B", 1, delay_ns=1_000)
    fabric.link("A", 3, "B", 3, delay_ns=300)
    fabric.add_host("h1", "A", 1)
    fabric.add_host("h2", "B", 2)
    fabric.switch("A").device.set_line_rate(None, 10e9)
    fabric.switch("A").device.set_queue_depth(2, 5)
    fabric.switch("B").device.set_queue_rate(2, 2e6)
    fabric.switch("B").device.set_line_rate(2, 25e9)
    fabric.set_link_loss("A", 3, 0.3, random.Random(loss_seed))
    return fabric, clock


TALLY_BIN_NS, TALLY_DSCPS = 2_000, {12, 40}


def tallied(deliveries: list[Any]) -> dict[tuple[Any, ...], list[int]]:
    """What a tally of TALLY_BIN_NS and TALLY_DSCPS counts of these deliveries, by its rules:
    per wire direction and bin, packets, bytes and marked packets (unlinked ports: none)."""
    counts: dict[tuple[Any, ...], list[int]] = {}
    for d in deliveries:
        if d.receiver is not None:
            c = counts.setdefault((d.sender, d.sender_port, d.receiver, d.receiver_port,
                                   d.time_ns // TALLY_BIN_NS), [0, 0, 0])
            c[0] += 1
            c[1] += len(d.data)
            c[2] += dscp(d.data) in TALLY_DSCPS
    return counts


def summed(records: list[WireCount]) -> dict[tuple[Any, ...], list[int]]:
    counts: dict[tuple[Any, ...], list[int]] = {}
    for r in records:
        c = counts.setdefault(r[:5], [0, 0, 0])
        for k, v in enumerate(r[5:]):
            c[k] += v
    return counts


def random_packet(rng: random.Random) -> bytes:
    """One of `run`'s packets: to a routed or unrouted port, some with TTL 0, any priority,
    tag and length, DSCP 0, 12, 40 or 44 as a tally reads it."""
    data = bytearray(pkt(rng.choice([2, 2, 3, 5]), ttl=rng.choice([0, 4, 4, 4]),
                         prio=rng.randrange(5), tag=rng.randrange(3),
                         payload=bytes(rng.randrange(0, 1400))))
    data[14] = rng.choice([0, 3, 10, 11])
    return bytes(data)


def run(fwd: CheckedProgram, native: bool, seed: int) -> dict[str, Any]:
    fabric, clock = build(fwd, native, seed)
    capture = fabric.capture()
    tally = fabric.tally(TALLY_BIN_NS, TALLY_DSCPS)
    takes: list[WireCount] = []
    digests: list[tuple[str, int, Any]] = []
    for name in ("A", "B"):
        fabric.switch(name).device.add_digest_listener(
            lambda d, name=name: digests.append((name, clock.now_ns, d)))
    rng = random.Random(seed)
    instants = []
    for k in range(200):
        fabric.host("h1").send(random_packet(rng))
        if k % 7 == 0:   # bursts, and time moving between them
            fabric.run_until_idle()
            while (t := fabric.next_event_ns()) is not None and t < clock.now_ns + 3_000:
                clock.advance_to(t)
                instants.append(t)
                fabric.run_until_idle()
        if k % 50 == 0:
            takes.extend(tally.take())
    while (t := fabric.next_event_ns()) is not None:
        clock.advance_to(t)
        instants.append(t)
        fabric.run_until_idle()
    takes.extend(tally.take())
    devices = {n: (d.rx_packets, d.tx_packets, d.queues.dropped, d.dropped_input_full)
               for n in ("A", "B") for d in [fabric.switch(n).device]}
    return {"native": fabric._native is not None,
            "deliveries": [(d.sender, d.sender_port, d.receiver, d.receiver_port, d.time_ns,
                            d.data) for d in capture.deliveries],
            "h2": fabric.host("h2").received, "digests": digests, "devices": devices,
            "fabric": (fabric.loss_drops, fabric.unlinked_drops, fabric.wire_hops,
                       fabric.host_handoffs, fabric.in_flight),
            "instants": instants, "tally": takes,
            "tally_seen": summed(takes) == tallied(capture.deliveries)}


@pytest.mark.parametrize("seed", [1, 2])
def test_native_core_moves_packets_as_the_python_fabric(fwd: CheckedProgram, seed: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "c")
    python = run(fwd, False, seed)
    native = run(fwd, True, seed)
    assert native.pop("native") and not python.pop("native")
    # the run exercises what it claims: drops of every kind, digests, losses
    a, b = python["devices"]["A"], python["devices"]["B"]
    assert a[2] > 0 and python["fabric"][0] > 0 and python["fabric"][1] == 0
    assert python["digests"] and python["h2"] and b[0] < a[0]
    # the tally counts what the observers saw; marked packets on the host's wire only (the
    # switches rewrite the bytes a tally reads as the DSCP)
    assert python["tally_seen"]
    marked = {r.sender for r in python["tally"] if r.marked}
    assert marked == {"h1"} and any(r.packets > r.marked for r in python["tally"])
    for key in python:
        assert native[key] == python[key], key


def test_cut_cable_and_blackholes_in_flight(fwd: CheckedProgram,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A cut takes the packets in flight on the cable (counted), a blackholed switch eats
    what reaches it: the same counts and deliveries on both cores."""
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "c")

    def cut(native: bool) -> tuple[Any, ...]:
        fabric, clock = build(fwd, native, 5)
        for k in range(20):
            fabric.host("h1").send(pkt(2, tag=0, payload=bytes(900 + k)))
        fabric.run_until_idle()
        t = fabric.next_event_ns()
        assert t is not None
        clock.advance_to(t + 1_500)   # some on the cable, some still queued
        fabric.run_until_idle()
        fabric.set_link_up("A", 2, False)
        fabric.set_blackhole("B", True)
        while (t := fabric.next_event_ns()) is not None:
            clock.advance_to(t)
            fabric.run_until_idle()
        return (fabric.link_down_drops, fabric.blackhole_drops, fabric.host("h2").received,
                fabric.switch("A").device.tx_packets, clock.now_ns, fabric._native is not None)

    python, native = cut(False), cut(True)
    assert native[-1] and not python[-1]
    assert python[0] > 0
    assert native[:-1] == python[:-1]


def test_falls_back_with_a_reason_on_the_python_engine(fwd: CheckedProgram,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "python")
    fabric, clock = build(fwd, True, 1)
    fabric.host("h1").send(pkt(2))
    while (t := fabric.next_event_ns()) is not None:
        clock.advance_to(t)
        fabric.run_until_idle()
    assert fabric._native is None
    assert fabric.native_reason is not None and "Python engine" in fabric.native_reason
    assert len(fabric.host("h2").received) == 1


def test_a_run_holds_the_lock_every_device_shares(fwd: CheckedProgram,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The devices of a fabric the native core may run share one lock, the core's: while a
    P4Runtime write holds any device's lock, a run cannot start (it takes that one lock per
    instant, not one per device); the blank device a power cut puts in shares it too."""
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "c")
    fabric, clock = build(fwd, True, 1)
    fabric.host("h1").send(pkt(2))
    fabric.run_until_idle()
    core = fabric._native
    assert core is not None and core._locks is None
    held, release = threading.Event(), threading.Event()

    def write() -> None:
        with fabric.switch("B").device.lock:
            held.set()
            release.wait()

    writer = threading.Thread(target=write)
    writer.start()
    held.wait()
    try:
        assert not core.lock.acquire(blocking=False)   # a run would wait for the write
    finally:
        release.set()
        writer.join()
    fabric.power_off("B")
    assert fabric.switch("B").device.lock is core.lock and core._locks is None
    while (t := fabric.next_event_ns()) is not None:
        clock.advance_to(t)
        fabric.run_until_idle()
    assert fabric.host("h2").received == []


def run_in_spans(fwd: CheckedProgram, native: bool, seed: int, period_ns: int,
                 observed: bool = True) -> dict[str, Any]:
    """`run`'s traffic stepped as emulation/run.py steps it: between two of the loop's own
    deadlines (every `period_ns` here, as a host timer would be) the fabric's instants run
    in one Fabric.run_span (on the Python core: instant by instant); the loop's visits
    counted. `observed`: every delivery captured (each one is Python's work: a span stops)."""
    fabric, clock = build(fwd, native, seed)
    capture = fabric.capture() if observed else None
    digests: list[tuple[str, int, Any]] = []
    for name in ("A", "B"):
        fabric.switch(name).device.add_digest_listener(
            lambda d, name=name: digests.append((name, clock.now_ns, d)))
    rng = random.Random(seed)
    visits = 0

    def step_until(limit_ns: int | None) -> None:
        nonlocal visits
        while (t := fabric.next_event_ns()) is not None and (limit_ns is None or t < limit_ns):
            visits += 1
            bound = (clock.now_ns // period_ns + 1) * period_ns
            if limit_ns is not None:
                bound = min(bound, limit_ns)
            if t < bound and fabric.run_span(t, bound):
                continue
            clock.advance_to(t)
            fabric.run_until_idle()

    for k in range(200):
        fabric.host("h1").send(random_packet(rng))
        if k % 7 == 0:
            fabric.run_until_idle()
            step_until(clock.now_ns + 3_000)
    step_until(None)
    return {"deliveries": [(d.sender, d.sender_port, d.receiver, d.receiver_port, d.time_ns,
                            d.data) for d in (capture.deliveries if capture else [])],
            "h2": fabric.host("h2").received, "digests": digests,
            "fabric": (fabric.loss_drops, fabric.unlinked_drops, fabric.wire_hops,
                       fabric.host_handoffs, fabric.in_flight), "visits": visits}


@pytest.mark.parametrize("seed", [1, 2])
def test_spans_of_instants_in_c_move_packets_as_instant_by_instant_steps(
        fwd: CheckedProgram, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fabric.run_span (the emulation loop's steps while only the fabric moves, in C) gives
    the same deliveries at the same times, digests seen at the same clock, losses and drops
    as the Python core stepped instant by instant, and visits the loop less often."""
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "c")
    observed = run_in_spans(fwd, False, seed, period_ns=20_000)
    spanned = run_in_spans(fwd, True, seed, period_ns=20_000)
    assert observed["digests"] and observed["fabric"][0] > 0 and observed["h2"]
    for key in ("deliveries", "h2", "digests", "fabric"):
        assert spanned[key] == observed[key], key
    # unobserved, the loop comes back only for digests and host packets
    python = run_in_spans(fwd, False, seed, period_ns=20_000, observed=False)
    spanned = run_in_spans(fwd, True, seed, period_ns=20_000, observed=False)
    for key in ("h2", "digests", "fabric"):
        assert spanned[key] == python[key], key
    assert spanned["visits"] <= python["visits"] / 2, (spanned["visits"], python["visits"])
    # a bound at every instant leaves nothing to batch: still the same packets
    assert run_in_spans(fwd, True, seed, period_ns=1)["deliveries"] == observed["deliveries"]


def test_a_span_is_refused_on_the_python_core_and_backwards(
        fwd: CheckedProgram, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "c")
    fabric, clock = build(fwd, False, 1)
    assert fabric.run_span(0, 10_000) is False
    fabric, clock = build(fwd, True, 1)
    fabric.run_until_idle()
    clock.advance_to(5_000)
    with pytest.raises(ValueError, match="cannot go back"):
        fabric.run_span(4_000, 10_000)
