"""Device: pipeline swap, packet I/O, cpu port, digests, queues seen by P4, the thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.errors import ControlPlaneError
from softswitch.ir.checked import CheckedProgram
from softswitch.ir.serialize import IrFormatError, dumps_ir
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device, ForwardingPipeline

# A forwarding program: `fwd` maps dst → port; ttl 0 drops, else ttl - 1; `prio` becomes
# standard_metadata.priority; tag 1 sends a digest; egress writes the ingress port and the
# queueing metadata into the packet, so tests can read what P4 saw.
FWD_P4 = """
#include <core.p4>
#include <v1model.p4>
header h_t {
    bit<8> dst; bit<8> ttl; bit<8> prio; bit<8> tag; bit<16> inport;
    bit<32> enq_qdepth; bit<32> deq_qdepth; bit<32> timedelta;
}
struct headers_t { h_t h; }
struct meta_t { }
struct learn_t { bit<8> dst; bit<9> port; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table fwd {
        key = { hdr.h.dst : exact; } actions = { set_port; drop; } default_action = drop();
    }
    apply {
        if (hdr.h.ttl == 0) { mark_to_drop(sm); return; }
        hdr.h.ttl = hdr.h.ttl - 1;
        sm.priority = (bit<3>) hdr.h.prio;
        fwd.apply();
        if (hdr.h.tag == 1) { digest<learn_t>(1, {hdr.h.dst, sm.ingress_port}); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.inport = (bit<16>) sm.ingress_port;
        hdr.h.enq_qdepth = (bit<32>) sm.enq_qdepth;
        hdr.h.deq_qdepth = (bit<32>) sm.deq_qdepth;
        hdr.h.timedelta = sm.deq_timedelta;
    }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

CPU = 64


def pkt(dst: int, ttl: int = 8, prio: int = 0, tag: int = 0, payload: bytes = b"") -> bytes:
    return bytes([dst, ttl, prio, tag]) + bytes(14) + payload


def fields(data: bytes) -> dict[str, int]:
    i = int.from_bytes
    return {"dst": data[0], "ttl": data[1], "prio": data[2], "tag": data[3],
            "inport": i(data[4:6], "big"), "enq_qdepth": i(data[6:10], "big"),
            "deq_qdepth": i(data[10:14], "big"), "timedelta": i(data[14:18], "big")}


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    path = Path(tmp_path_factory.mktemp("p4")) / "fwd.p4"
    path.write_text(FWD_P4)
    return compile_file(path)


def pipeline(program: CheckedProgram, cookie: int = 0) -> ForwardingPipeline:
    return Device.build_pipeline(build_p4info(program), dumps_ir(program).encode(), cookie)


def make_device(program: CheckedProgram, routes: dict[int, int] | None = None,
                **options: object) -> tuple[Device, list[tuple[int, bytes]]]:
    dev = Device(1, cpu_port=CPU, **options)  # type: ignore[arg-type]
    out: list[tuple[int, bytes]] = []
    dev.set_output(lambda port, data: out.append((port, data)))
    dev.commit(pipeline(program))
    table = dev.pipeline.switch.table("fwd")  # type: ignore[union-attr]
    for dst, port in (routes or {}).items():
        table.add_entry([ExactMatch(dst)], "set_port", [port])
    return dev, out


def test_no_pipeline_drops_every_packet() -> None:
    dev = Device()
    out: list[tuple[int, bytes]] = []
    dev.set_output(lambda p, d: out.append((p, d)))
    dev.receive(1, pkt(5))
    dev.run_until_idle()
    assert out == [] and dev.dropped_no_pipeline == 1 and dev.pipeline is None


def test_forwards_and_keeps_port_order(program: CheckedProgram) -> None:
    dev, out = make_device(program, {5: 2, 6: 3})
    for i in range(3):
        dev.receive(1, pkt(5, payload=bytes([i])))
    dev.receive(4, pkt(6))
    dev.receive(1, pkt(7))  # no route: dropped by the default action
    dev.run_until_idle()
    assert [(p, d[-1]) for p, d in out[:3]] == [(2, 0), (2, 1), (2, 2)]
    assert out[3][0] == 3 and fields(out[3][1])["inport"] == 4
    assert len(out) == 4
    assert fields(out[0][1])["ttl"] == 7
    assert dev.rx_packets == 5 and dev.tx_packets == 4


def test_cpu_port_packets_go_to_packet_in_and_packet_out_enters_on_cpu_port(
        program: CheckedProgram) -> None:
    dev, out = make_device(program, {9: CPU, 5: 2})
    packet_ins: list[bytes] = []
    dev.add_packet_in_listener(packet_ins.append)
    dev.receive(1, pkt(9))
    dev.packet_out(pkt(5))
    dev.run_until_idle()
    assert len(packet_ins) == 1 and fields(packet_ins[0])["inport"] == 1
    assert len(out) == 1 and out[0][0] == 2 and fields(out[0][1])["inport"] == CPU


def test_packet_out_without_cpu_port_is_refused() -> None:
    with pytest.raises(ControlPlaneError) as err:
        Device().packet_out(b"x")
    assert err.value.code == "FAILED_PRECONDITION"
    with pytest.raises(ValueError):
        Device(cpu_port=0)


def test_digests_reach_listeners(program: CheckedProgram) -> None:
    dev, _out = make_device(program, {5: 2})
    got = []
    dev.add_digest_listener(got.append)
    dev.receive(3, pkt(5, tag=1))
    dev.receive(3, pkt(5))
    dev.run_until_idle()
    assert [(d.name, d.values) for d in got] == [("learn_t", (5, 3))]
    assert dev.pipeline.switch.digests == []  # type: ignore[union-attr]


def test_commit_swaps_in_an_empty_pipeline(program: CheckedProgram) -> None:
    dev, out = make_device(program, {5: 2})
    dev.commit(pipeline(program, cookie=7))
    assert dev.pipeline is not None and dev.pipeline.cookie == 7
    dev.receive(1, pkt(5))
    dev.run_until_idle()
    assert out == []  # the new table is empty
    assert dev.pipeline.switch.table("fwd").get_entries() == []


def test_build_pipeline_rejects_a_bad_config() -> None:
    with pytest.raises(IrFormatError):
        Device.build_pipeline(None, b"{not json")
    with pytest.raises(IrFormatError):
        Device.build_pipeline(None, b'{"format": "other"}')


def test_listener_exceptions_do_not_stop_the_thread(program: CheckedProgram) -> None:
    dev, _ = make_device(program, {5: 2})
    got: list[tuple[int, bytes]] = []

    def flaky(port: int, data: bytes) -> None:
        got.append((port, data))
        if len(got) == 1:
            raise RuntimeError("listener bug")
    dev.set_output(flaky)
    with dev:
        senders = [threading.Thread(target=dev.receive, args=(1, pkt(5))) for _ in range(4)]
        for t in senders:
            t.start()
        for t in senders:
            t.join()
        dev.run_until_idle(timeout=5)
    assert len(got) == 4 and dev.errors == 1


def test_trace_and_dump_packet_data(program: CheckedProgram) -> None:
    lines: list[str] = []
    dev, out = make_device(program, {5: 2}, trace=lines.append, dump_packet_data=4)
    assert dev.pipeline is not None and dev.pipeline.switch.trace is not None
    dev.receive(1, pkt(5))
    dev.run_until_idle()
    assert f"Received packet of length 18 on port 1: {pkt(5)[:4].hex()}" in lines
    assert f"Sending packet of length 18 on port 2: {out[0][1][:4].hex()}" in lines
    assert any("Processing packet received on port 1" in s for s in lines)


def test_queue_builds_under_slow_drain_and_p4_sees_enq_qdepth(program: CheckedProgram) -> None:
    clock = Clock()
    dev, out = make_device(program, {5: 2}, clock=clock)
    dev.set_queue_rate(2, 1000)  # 1 ms per packet
    for i in range(5):
        dev.receive(1, pkt(5, payload=bytes([i])))
    dev.run_until_idle()
    assert len(out) == 1  # the rest wait for the port
    for step in range(1, 5):
        clock.now = step * 1000
        dev.run_until_idle()
    seen = [fields(d) for _, d in out]
    assert [d[-1] for _, d in out] == [0, 1, 2, 3, 4]
    assert [f["enq_qdepth"] for f in seen] == [0, 0, 1, 2, 3]
    assert [f["deq_qdepth"] for f in seen] == [0, 3, 2, 1, 0]
    assert [f["timedelta"] for f in seen] == [0, 1000, 2000, 3000, 4000]


def test_tail_drop_on_a_full_queue(program: CheckedProgram) -> None:
    clock = Clock()
    dev, out = make_device(program, {5: 2}, clock=clock)
    dev.set_queue_rate(2, 1)
    dev.set_queue_depth(2, 3)
    for _ in range(10):
        dev.receive(1, pkt(5))
    dev.run_until_idle()
    clock.now = 10_000_000
    dev.run_until_idle()
    assert len(out) == 4  # one left at once, three waited, six were dropped
    assert dev.queues.dropped == 6


def test_priority_queues_serve_higher_priority_first(program: CheckedProgram) -> None:
    clock = Clock()
    dev, out = make_device(program, {5: 2}, clock=clock, priority_queues=8)
    dev.set_queue_rate(2, 1000)
    for i, prio in enumerate([0, 0, 5, 2, 7]):
        dev.receive(1, pkt(5, prio=prio, payload=bytes([i])))
    dev.run_until_idle()
    for step in range(1, 5):
        clock.now = step * 1000
        dev.run_until_idle()
    # packet 0 leaves at once; then strict priority: 7, 5, 2, 0
    assert [d[-1] for _, d in out] == [0, 4, 2, 3, 1]


def test_priority_beyond_queue_count_is_dropped(program: CheckedProgram) -> None:
    dev, out = make_device(program, {5: 2})  # one queue per port, as simple_switch by default
    dev.receive(1, pkt(5, prio=1))
    dev.receive(1, pkt(5, prio=0))
    dev.run_until_idle()
    assert len(out) == 1 and fields(out[0][1])["prio"] == 0


def test_threaded_device_waits_for_a_real_drain_rate(program: CheckedProgram) -> None:
    dev, out = make_device(program, {5: 2})
    dev.set_queue_rate(2, 200)  # 5 ms per packet
    with dev:
        for i in range(4):
            dev.receive(1, pkt(5, payload=bytes([i])))
        dev.run_until_idle(timeout=5)
    assert [d[-1] for _, d in out] == [0, 1, 2, 3]
    assert fields(out[-1][1])["timedelta"] >= 10_000


def test_engine_hooks_run_one_pass_at_a_time(program: CheckedProgram) -> None:
    from softswitch.engine.pipeline import QueueInfo
    from softswitch.engine.switch import Switch

    sw = Switch(program)
    sw.table("fwd").add_entry([ExactMatch(5)], "set_port", [2])
    job = sw.new_packet(3, pkt(5, prio=6, payload=b"xy"))
    assert job.is_ingress and job.port == 3 and job.length == 20 and job.priority == 0
    out, jobs = sw.run(job)
    assert out == [] and len(jobs) == 1
    (egress,) = jobs
    assert not egress.is_ingress and egress.port == 2 and egress.priority == 6
    assert egress.length == 20
    out, more = sw.run(egress, QueueInfo(enq_timestamp=123, enq_qdepth=4, deq_timedelta=56,
                                         deq_qdepth=7))
    assert more == [] and len(out) == 1 and out[0].port == 2
    f = fields(out[0].data)
    assert (f["enq_qdepth"], f["deq_qdepth"], f["timedelta"], f["inport"]) == (4, 7, 56, 3)
    # without queues, process_packet gives the same packet (no queueing delay)
    (same,) = sw.process_packet(3, pkt(5, prio=6, payload=b"xy"))
    assert same.port == 2 and fields(same.data)["enq_qdepth"] == 0
    assert same.data[:6] == out[0].data[:6] and same.data[-2:] == b"xy"


REPLICATION_P4 = FWD_P4.replace(
    "        fwd.apply();\n",
    "        fwd.apply();\n"
    "        if (hdr.h.tag == 1) { sm.mcast_grp = 1; }\n"
    "        if (hdr.h.tag == 2 && sm.instance_type == 0) { clone(CloneType.I2E, 5); }\n",
).replace(
    "        hdr.h.inport = (bit<16>) sm.ingress_port;\n",
    "        hdr.h.inport = (bit<16>) sm.ingress_port;\n"
    "        if (hdr.h.tag == 3 && hdr.h.ttl == 7) { recirculate_preserving_field_list(0); }\n"
    "        if (hdr.h.tag == 4 && sm.instance_type == 0) { clone(CloneType.E2E, 5); }\n",
).replace("if (hdr.h.tag == 1) { digest", "if (hdr.h.tag == 9) { digest")


def test_device_matches_process_packet_for_replicas_clones_recirculation(
        tmp_path: Path) -> None:
    path = tmp_path / "rep.p4"
    path.write_text(REPLICATION_P4)
    prog = compile_file(path)
    dev, out = make_device(prog, {5: 2})
    sw = dev.pipeline.switch  # type: ignore[union-attr]
    sw.pre.insert_group(1, [(3, 1), (4, 2), (2, 3)])
    sw.pre.insert_clone_session(5, [(6, 0)])
    reference = Device.build_pipeline(None, dumps_ir(prog).encode()).switch
    reference.table("fwd").add_entry([ExactMatch(5)], "set_port", [2])
    reference.pre.insert_group(1, [(3, 1), (4, 2), (2, 3)])
    reference.pre.insert_clone_session(5, [(6, 0)])
    for tag in (1, 2, 3, 4):
        out.clear()
        dev.receive(1, pkt(5, tag=tag))
        dev.run_until_idle()
        expected = reference.process_packet(1, pkt(5, tag=tag))
        strip = [(p, d[:6]) for p, d in out]  # queueing fields differ (time, depth)
        assert strip == [(p, d[:6]) for p, d in expected], tag
        assert len(out) == {1: 3, 2: 2, 3: 1, 4: 2}[tag]
    assert sw.pipeline.internal_errors == 0


def test_synchronous_run_waits_for_a_real_drain_rate(program: CheckedProgram) -> None:
    dev, out = make_device(program, {5: 2})
    dev.set_queue_rate(None, 500)  # every port: 2 ms per packet
    start = time.monotonic()
    for i in range(3):
        dev.receive(1, pkt(5, payload=bytes([i])))
    dev.run_until_idle(timeout=5)
    assert [d[-1] for _, d in out] == [0, 1, 2]
    # The third left two drain periods after the first: 4 ms at least, however slow the
    # machine (a lower bound; how long it queued depends on when its ingress ran).
    assert time.monotonic() - start >= 0.004
    assert fields(out[2][1])["timedelta"] > 0
    with pytest.raises(TimeoutError):
        dev.set_queue_rate(2, 0.5)
        dev.receive(1, pkt(5))
        dev.receive(1, pkt(5))
        dev.run_until_idle(timeout=0.05)


# -- bounded input buffers ----------------------------------------------------------------------


def test_a_full_input_buffer_drops_and_counts_when_nobody_can_wait(program: CheckedProgram) -> None:
    dev, out = make_device(program, {5: 2}, input_capacity=4)
    queued = [dev.receive(1, pkt(5, payload=bytes([i])), wait=1.0) for i in range(6)]
    assert queued == [True] * 4 + [False] * 2  # stepped device: no thread to wait for
    assert dev.dropped_input_full == 2
    dev.run_until_idle()
    assert [d[-1] for _, d in out] == [0, 1, 2, 3]


def test_a_port_thread_waits_for_room_instead_of_dropping(program: CheckedProgram) -> None:
    dev, out = make_device(program, {5: 2}, input_capacity=4)
    dev.start()
    try:
        results: list[bool] = []
        with dev.lock:  # the dataplane cannot take a packet while the test holds the lock
            sender = threading.Thread(target=lambda: results.extend(
                dev.receive(1, pkt(5, payload=bytes([i])), wait=30.0) for i in range(10)))
            sender.start()
            while dev._room_waiters == 0 and sender.is_alive():
                pass
            assert sender.is_alive()  # blocked on the full buffer: back pressure
        sender.join(30)
        dev.run_until_idle()
    finally:
        dev.stop()
    assert results == [True] * 10 and dev.dropped_input_full == 0
    assert [d[-1] for _, d in out] == list(range(10))


def test_waiting_for_room_gives_up_after_its_wait(program: CheckedProgram) -> None:
    dev, _ = make_device(program, {5: 2}, input_capacity=1)
    dev.start()
    try:
        with dev.lock:  # nothing leaves the input buffer while the test holds the lock
            assert dev.receive(1, pkt(5), wait=0.01)
            assert not dev.receive(1, pkt(5), wait=0.01)
        assert dev.dropped_input_full == 1
    finally:
        dev.stop()
