"""Virtual time: the ns clock, line rates in bits/s, link delays, the wire heap, stepping.

Conventions under test (softswitch/fabric.py, runtime/queues.py): a packet departs when its
port is free (or when it arrives, if later); on a line-rate port it occupies the port for
bytes * 8 / rate and arrives at departure + bytes * 8 / rate + delay (store and forward: the
last bit); wire times are rounded to the nearest ns, departures stay exact in float µs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_device import FWD_P4, fields, pkt

from softswitch.clock import VirtualClock
from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.fabric import Delivery, Fabric, Host
from softswitch.ir.checked import CheckedProgram
from softswitch.runtime.device import Device

# Everything to port 2. Egress writes enq_qdepth into the header; a first-pass packet that
# finds more than one packet ahead of it is trimmed as p4src/switch/trim.p4 does: recirculated
# (marked in a @field_list field and in the header), then sent on to port 2 truncated to its
# 8-byte header.
TRIM_P4 = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> trimmed; bit<8> tag; bit<16> pad; bit<32> enq_qdepth; }
struct headers_t { h_t h; }
struct meta_t { @field_list(0) bit<8> trim_pass; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (meta.trim_pass == 1) { truncate(8); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.enq_qdepth = (bit<32>) sm.enq_qdepth;
        if (meta.trim_pass == 0 && sm.enq_qdepth > 1) {
            meta.trim_pass = 1;
            hdr.h.trimmed = 1;
            recirculate_preserving_field_list(0);
        }
    }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

GBPS = 1_000_000_000


@pytest.fixture(scope="module")
def fwd(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    path = Path(tmp_path_factory.mktemp("p4")) / "fwd.p4"
    path.write_text(FWD_P4)
    return compile_file(path)


@pytest.fixture(scope="module")
def trim(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    path = Path(tmp_path_factory.mktemp("p4")) / "trim.p4"
    path.write_text(TRIM_P4)
    return compile_file(path)


def sized(n: int, dst: int = 2, tag: int = 0) -> bytes:
    """A FWD_P4 packet of exactly `n` bytes (18 bytes of header)."""
    return pkt(dst, tag=tag, payload=bytes(n - 18))


def route(fabric: Fabric, switch: str, dst: int, port: int) -> None:
    fabric.switch(switch).engine.table("fwd").add_entry([ExactMatch(dst)], "set_port", [port])


def pair(fwd: CheckedProgram, delay_ns: int, clock: VirtualClock) -> Fabric:
    """h1 — A:1  A:2 —(delay_ns)— B:1  B:2 — h2; dst 2 towards h2, dst 1 back."""
    fabric = Fabric(clock=clock)
    for name in "AB":
        fabric.add_switch(name, fwd)
        route(fabric, name, 2, 2)
        route(fabric, name, 1, 1)
    fabric.link("A", 2, "B", 1, delay_ns=delay_ns)
    fabric.add_host("h1", "A", 1)
    fabric.add_host("h2", "B", 2)
    return fabric


def step(fabric: Fabric, clock: VirtualClock, hosts: list[Host],
         until_ns: int | None = None) -> dict[str, list[tuple[int, bytes]]]:
    """The stepped loop (up to `until_ns`, if given): per host, (arrival ns, packet) in order."""
    got: dict[str, list[tuple[int, bytes]]] = {h.name: [] for h in hosts}

    def collect() -> None:
        for h in hosts:
            got[h.name].extend((clock.now_ns, d) for d in h.take())

    fabric.run_until_idle()
    collect()
    while (t := fabric.next_event_ns()) is not None and (until_ns is None or t <= until_ns):
        clock.advance_to(t)
        fabric.run_until_idle()
        collect()
    if until_ns is not None:
        clock.advance_to(max(until_ns, clock.now_ns))
    return got


# -- the clock ----------------------------------------------------------------------------------

def test_virtual_clock_is_exact_integer_ns() -> None:
    clock = VirtualClock()
    assert (clock.now_ns, clock(), clock.us()) == (0, 0, 0.0)
    clock.advance_to(1_999)
    assert (clock(), clock.us()) == (1, 1.999)  # whole µs for P4, float µs for the queues
    for _ in range(1000):  # no float drift: 1000 steps of 0.3 µs land on 300 µs exactly
        clock.advance_to(clock.now_ns + 300)
    assert clock.now_ns == 301_999 and clock() == 301
    clock.advance_to(clock.now_ns)  # standing still is fine
    with pytest.raises(ValueError, match="back"):
        clock.advance_to(301_998)
    with pytest.raises(TypeError):
        clock.advance_to(1.5e6)  # type: ignore[arg-type]
    assert VirtualClock(7).now_ns == 7


def test_device_fine_clock_drives_queues_p4_stays_whole_us(fwd: CheckedProgram) -> None:
    clock = VirtualClock(2_500)
    dev = Device(1, fine_clock=clock.us)
    assert dev.now_us() == 2 and dev.queues.clock() == 2.5


# -- rate and delay -----------------------------------------------------------------------------

def test_line_rate_and_delay_shape_arrival_times_exactly(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = pair(fwd, 2_000, clock)
    fabric.switch("A").device.set_line_rate(2, 10 * GBPS)  # 1000 B: 800 ns on the wire
    fabric.switch("B").device.set_line_rate(2, 10 * GBPS)
    cap = fabric.capture()
    h1, h2 = fabric.host("h1"), fabric.host("h2")
    for i in range(3):
        h1.send(sized(1000, tag=i))
    got = step(fabric, clock, [h2])["h2"]
    # A departs at 0, 800, 1600 (port busy 800 ns each); B gets each 800 + 2000 ns later and
    # forwards at once; h2 has it 800 ns after that (B's own serialization)
    assert [(d.time_ns, d.data[3]) for d in cap.deliveries if d.sender == "A"] == [
        (0, 0), (800, 1), (1600, 2)]
    assert [d.time_ns for d in cap.deliveries if d.sender == "B"] == [2800, 3600, 4400]
    assert [(t, d[3]) for t, d in got] == [(3600, 0), (4400, 1), (5200, 2)]
    assert fabric.in_flight == 0 and fabric.next_event_ns() is None


def test_zero_delay_without_line_rate_stays_immediate(fwd: CheckedProgram) -> None:
    clock = VirtualClock(5_000)
    fabric = pair(fwd, 0, clock)
    fabric.host("h1").send(sized(1000))
    fabric.run_until_idle()  # no stepping needed: nothing on a wire takes time
    assert len(fabric.host("h2").received) == 1 and fabric.in_flight == 0
    assert fabric.next_event_ns() is None


def test_a_burst_queues_and_p4_sees_the_depth(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = pair(fwd, 0, clock)
    fabric.switch("A").device.set_line_rate(2, 1 * GBPS)  # 1000 B: 8 µs
    cap = fabric.capture()
    for i in range(5):
        fabric.host("h1").send(sized(1000, tag=i))
    got = step(fabric, clock, [fabric.host("h2")])["h2"]
    sent = [fields(d.data) for d in cap.deliveries if d.sender == "A"]
    # the first leaves at once; the others find 0, 1, 2, 3 packets ahead of them
    assert [f["enq_qdepth"] for f in sent] == [0, 0, 1, 2, 3]
    assert [f["deq_qdepth"] for f in sent] == [0, 3, 2, 1, 0]
    assert [f["timedelta"] for f in sent] == [0, 8, 16, 24, 32]  # whole µs, as BMv2
    assert [d.time_ns for d in cap.deliveries if d.sender == "A"] == [0, 8000, 16000, 24000,
                                                                       32000]
    assert [t for t, _ in got] == [8000, 16000, 24000, 32000, 40000]


def test_sub_ns_serialization_does_not_drift(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = pair(fwd, 0, clock)
    fabric.switch("A").device.set_line_rate(2, 3 * GBPS)  # 1000 B: 2666.67 ns
    cap = fabric.capture()
    for i in range(3):
        fabric.host("h1").send(sized(1000, tag=i))
    fabric.run_until_idle()
    assert fabric.next_event_ns() == 2667  # the port is free at 2666.67 ns: rounded up
    got = step(fabric, clock, [fabric.host("h2")])["h2"]
    # departures exact (0, 2666.67, 5333.33), shown to the nearest ns; the third packet's
    # last bit arrives at exactly 8000 ns
    assert [d.time_ns for d in cap.deliveries if d.sender == "A"] == [0, 2667, 5333]
    assert [t for t, _ in got] == [2667, 5333, 8000]


def test_a_recirculated_packet_costs_no_line_time(trim: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = Fabric(clock=clock)
    fabric.add_switch("A", trim)
    fabric.add_host("h1", "A", 1)
    h2 = fabric.add_host("h2", "A", 2)
    fabric.switch("A").device.set_line_rate(2, 8 * GBPS)  # one byte per ns
    for tag in range(4):
        fabric.host("h1").send(bytes([0, tag]) + bytes(998))
    got = step(fabric, clock, [h2])["h2"]
    # 0, 1, 2 leave whole (1000 ns each); 3 found 2 ahead of it: recirculated at 3000 ns,
    # which takes no line time, and its 8-byte header is charged 8 ns
    assert [(t, d[1], len(d), d[0]) for t, d in got] == [
        (1000, 0, 1000, 0), (2000, 1, 1000, 0), (3000, 2, 1000, 0), (3008, 3, 8, 1)]
    assert fabric.next_event_ns() is None


def test_equal_arrival_times_keep_transmit_order(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = Fabric(clock=clock)
    for name in "ABC":
        fabric.add_switch(name, fwd)
        route(fabric, name, 2, 2)
    fabric.link("A", 2, "C", 1, delay_ns=1_000)
    fabric.link("B", 2, "C", 3, delay_ns=3_000)
    fabric.add_host("h1", "A", 1)
    fabric.add_host("h3", "B", 1)
    h2 = fabric.add_host("h2", "C", 2)
    fabric.host("h3").send(sized(100, tag=3))   # B sends at 0: at C at 3000 ns
    step(fabric, clock, [h2], until_ns=2_000)
    fabric.host("h1").send(sized(100, tag=1))   # A sends at 2000: at C at 3000 ns too
    fabric.host("h1").send(sized(100, tag=2))
    got = step(fabric, clock, [h2])["h2"]
    # same arrival time: the order they were transmitted in (B's first), not device order
    assert [(t, d[3], fields(d)["inport"]) for t, d in got] == [
        (3000, 3, 3), (3000, 1, 1), (3000, 2, 1)]


def test_packets_in_flight_on_a_cut_link_are_lost(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = pair(fwd, 5_000, clock)
    fabric.switch("A").device.set_line_rate(2, 8 * GBPS)  # 1000 B: 1000 ns
    h2 = fabric.host("h2")
    for i in range(3):
        fabric.host("h1").send(sized(1000, tag=i))
    step(fabric, clock, [h2], until_ns=1_500)
    assert fabric.in_flight == 2  # sent at 0 and 1000, due at B at 6000 and 7000
    fabric.set_link_up("A", 2, False)
    assert fabric.in_flight == 0 and fabric.link_down_drops == 2
    step(fabric, clock, [h2], until_ns=2_500)
    assert fabric.link_down_drops == 3  # the third left at 2000 onto the cut cable
    fabric.set_link_up("B", 1, True)    # mended before the first would have arrived: still lost
    fabric.host("h1").send(sized(1000, tag=9))
    got = step(fabric, clock, [h2])["h2"]
    # the port still sent the third (into the cut cable) until 3000 ns, then this one
    assert [(t, d[3]) for t, d in got] == [(3000 + 1000 + 5000, 9)]
    assert fabric.link_down_drops == 3


def test_a_cut_keeps_packets_that_arrived_by_then(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = pair(fwd, 1_000, clock)
    fabric.host("h1").send(sized(100))
    fabric.run_until_idle()
    clock.advance_to(1_000)                # it reached B now, not yet taken in
    fabric.set_link_up("A", 2, False)
    fabric.run_until_idle()
    assert len(fabric.host("h2").received) == 1 and fabric.link_down_drops == 0


def test_a_lossy_cable_loses_the_seeded_share_and_repeats(fwd: CheckedProgram) -> None:
    import random

    def run(seed: int) -> list[int]:
        clock = VirtualClock()
        fabric = pair(fwd, 1_000, clock)
        fabric.set_link_loss("B", 1, 0.25, random.Random(seed))   # named by either end
        for i in range(200):
            fabric.host("h1").send(sized(100, tag=i % 256))
        got = step(fabric, clock, [fabric.host("h2")])["h2"]
        assert len(got) + fabric.loss_drops == 200
        return [d[3] for _, d in got]

    first = run(7)
    assert 200 * 0.15 < 200 - len(first) < 200 * 0.35   # about a quarter lost
    assert run(7) == first and run(8) != first          # the seed decides which
    clock = VirtualClock()
    fabric = pair(fwd, 1_000, clock)
    fabric.set_link_loss("A", 2, 0.5, random.Random(1))
    fabric.set_link_loss("A", 2, 0.0, random.Random(1))   # ended
    fabric.host("h1").send(sized(100))
    assert len(step(fabric, clock, [fabric.host("h2")])["h2"]) == 1
    with pytest.raises(ValueError, match="probability"):
        fabric.set_link_loss("A", 2, 1.5, random.Random(1))


def test_packets_in_flight_to_a_powered_off_switch_are_dropped(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = pair(fwd, 1_000, clock)
    fabric.host("h1").send(sized(100))
    fabric.run_until_idle()
    fabric.power_off("B")
    got = step(fabric, clock, [fabric.host("h2")])
    assert got["h2"] == [] and fabric.switch("B").device.dropped_no_pipeline == 1


def test_next_event_ns(fwd: CheckedProgram) -> None:
    clock = VirtualClock(10_000)
    fabric = pair(fwd, 2_000, clock)
    assert fabric.next_event_ns() is None  # nothing anywhere
    fabric.switch("A").device.set_line_rate(2, 10 * GBPS)
    fabric.host("h1").send(sized(1000))
    fabric.host("h1").send(sized(1000))
    assert fabric.next_event_ns() == 10_000  # input waiting: now
    fabric.run_until_idle()
    assert fabric.in_flight == 1
    assert fabric.next_event_ns() == 10_800  # A's port is free (before the arrival at 12800)
    clock.advance_to(10_800)
    fabric.run_until_idle()
    assert fabric.next_event_ns() == 12_800  # both on the wire; the first arrives
    clock.advance_to(13_000)  # jumped past it: due now
    assert fabric.next_event_ns() == 13_000
    fabric.run_until_idle()
    assert fabric.next_event_ns() == 13_600
    clock.advance_to(13_600)
    fabric.run_until_idle()
    assert len(fabric.host("h2").received) == 2 and fabric.next_event_ns() is None


def test_a_stepped_loop_delivers_everything_in_order(fwd: CheckedProgram) -> None:
    clock = VirtualClock()
    fabric = Fabric(clock=clock)
    for name in "ABC":
        fabric.add_switch(name, fwd)
        route(fabric, name, 2, 2)
        route(fabric, name, 1, 1)
        fabric.switch(name).device.set_line_rate(2, 100 * GBPS)  # 1000 B: 80 ns
    fabric.link("A", 2, "B", 1, delay_ns=500)
    fabric.link("B", 2, "C", 1, delay_ns=700)
    fabric.add_host("h1", "A", 1)
    h2 = fabric.add_host("h2", "C", 2)
    for i in range(40):
        fabric.host("h1").send(sized(1000, tag=i))
    times = []
    fabric.run_until_idle()
    while (t := fabric.next_event_ns()) is not None:
        times.append(t)
        clock.advance_to(t)
        fabric.run_until_idle()
    assert times == sorted(set(times))  # time only moves forward, and each step moves something
    assert [d[3] for d in h2.received] == list(range(40))
    assert [fields(d)["ttl"] for d in h2.received] == [5] * 40
    # the first: three serializations and two delays; then one every 80 ns
    assert clock.now_ns == 3 * 80 + 500 + 700 + 39 * 80


# -- configuration --------------------------------------------------------------------------

def test_delays_need_virtual_time_and_stepping(fwd: CheckedProgram) -> None:
    plain = Fabric(clock=lambda: 0)
    plain.add_switch("A", fwd)
    plain.add_switch("B", fwd)
    with pytest.raises(ValueError, match="VirtualClock"):
        plain.link("A", 2, "B", 1, delay_ns=10)
    with pytest.raises(RuntimeError, match="VirtualClock"):
        plain.next_event_ns()
    fabric = pair(fwd, 10, VirtualClock())
    with pytest.raises(ValueError, match="negative"):
        fabric.link("A", 3, "B", 3, delay_ns=-1)
    with pytest.raises(NotImplementedError):
        fabric.start()
    assert not fabric.running
    with pytest.raises(ValueError):
        fabric.switch("A").device.set_line_rate(2, 0)


def test_delivery_keeps_its_old_constructor() -> None:
    d = Delivery("h1", None, "A", 1, b"x")
    assert d.time_ns == 0 and Delivery("A", 2, "B", 1, b"y", 7).time_ns == 7
