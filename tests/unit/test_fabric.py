"""In-process fabrics: chains, loops, queues between switches, threads, gRPC-served switches."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_device import FWD_P4, Clock, fields, pkt

from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.fabric import Fabric
from softswitch.ir.checked import CheckedProgram


@pytest.fixture(scope="module")
def program_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = Path(tmp_path_factory.mktemp("p4")) / "fwd.p4"
    path.write_text(FWD_P4)
    return path


@pytest.fixture(scope="module")
def program(program_path: Path) -> CheckedProgram:
    return compile_file(program_path)


def route(fabric: Fabric, switch: str, dst: int, port: int) -> None:
    fabric.switch(switch).engine.table("fwd").add_entry([ExactMatch(dst)], "set_port", [port])


def chain(program: CheckedProgram, **options: object) -> Fabric:
    """h1 — A:1  A:2 — B:1  B:2 — C:1  C:2 — h2, dst 2 routed towards h2, dst 1 back."""
    fabric = Fabric(**options)  # type: ignore[arg-type]
    for name in "ABC":
        fabric.add_switch(name, program)
    fabric.link("A", 2, "B", 1)
    fabric.link("B", 2, "C", 1)
    fabric.add_host("h1", "A", 1)
    fabric.add_host("h2", "C", 2)
    for name in "ABC":
        route(fabric, name, 2, 2)
        route(fabric, name, 1, 1)
    return fabric


def test_three_switch_chain_end_to_end(program: CheckedProgram) -> None:
    fabric = chain(program)
    h1, h2 = fabric.host("h1"), fabric.host("h2")
    h1.send(pkt(2, ttl=10, payload=b"hello"))
    h2.send(pkt(1, ttl=10, payload=b"back"))
    fabric.run_until_idle()
    (to_h2,) = h2.received
    (to_h1,) = h1.received
    assert to_h2.endswith(b"hello") and fields(to_h2)["ttl"] == 7
    assert fields(to_h2)["inport"] == 1  # C got it on its port 1
    assert to_h1.endswith(b"back") and fields(to_h1)["ttl"] == 7
    assert h2.receive(timeout=0) == to_h2 and h2.receive(timeout=0) is None
    assert [s.device.device_id for s in fabric.switches] == [1, 2, 3]
    assert fabric.switch("B").links == {1: ("A", 2), 2: ("C", 1)}


def test_a_cut_link_drops_both_ways_until_mended(program: CheckedProgram) -> None:
    fabric = chain(program)
    h1, h2 = fabric.host("h1"), fabric.host("h2")
    fabric.set_link_up("B", 2, False)            # B:2 -- C:1
    assert not fabric.link_is_up("C", 1) and fabric.link_is_up("A", 2)
    h1.send(pkt(2, ttl=10))
    h2.send(pkt(1, ttl=10))
    fabric.run_until_idle()
    assert h1.received == h2.received == [] and fabric.link_down_drops == 2
    fabric.set_link_up("C", 1, True)             # either end names the cable
    h1.send(pkt(2, ttl=10, payload=b"again"))
    fabric.run_until_idle()
    assert [d[-5:] for d in h2.received] == [b"again"] and fabric.link_down_drops == 2
    with pytest.raises(ValueError, match="no link to a switch"):
        fabric.set_link_up("A", 1, False)        # a host port, not a cable between switches


def test_switches_share_one_compilation(program_path: Path) -> None:
    fabric = Fabric()
    a = fabric.add_switch("A", program_path)
    b = fabric.add_switch("B", str(program_path), device_id=9)
    pa, pb = a.device.pipeline, b.device.pipeline
    assert pa is not None and pb is not None and b.device.device_id == 9
    assert pa.program is pb.program and pa.device_config == pb.device_config
    assert pa.switch is not pb.switch  # but each has its own tables
    route(fabric, "A", 2, 2)
    assert pb.switch.table("fwd").get_entries() == []


def test_routing_loop_ends_when_ttl_runs_out(program: CheckedProgram) -> None:
    fabric = Fabric()
    fabric.add_switch("A", program)
    fabric.add_switch("B", program)
    fabric.link("A", 2, "B", 1)
    h = fabric.add_host("h", "A", 1)
    route(fabric, "A", 7, 2)  # A sends dst 7 to B, B sends it back: a loop
    route(fabric, "B", 7, 1)
    h.send(pkt(7, ttl=20))
    fabric.run_until_idle(timeout=5)
    a, b = fabric.switch("A").device, fabric.switch("B").device
    # 20 hops decrement ttl to 0; the 21st arrival is dropped
    assert a.rx_packets + b.rx_packets == 21
    assert a.tx_packets + b.tx_packets == 20
    assert h.received == []


def test_unlinked_ports_and_bad_wiring(program: CheckedProgram) -> None:
    fabric = Fabric()
    fabric.add_switch("A", program)
    h = fabric.add_host("h", "A", 1)
    route(fabric, "A", 3, 5)
    h.send(pkt(3))
    fabric.run_until_idle()
    assert fabric.unlinked_drops == 1
    with pytest.raises(ValueError):
        fabric.add_host("h2", "A", 1)
    with pytest.raises(ValueError):
        fabric.add_switch("A")
    with pytest.raises(KeyError):
        fabric.link("A", 2, "nope", 1)


def test_queue_builds_on_a_slow_link_and_p4_sees_it(program: CheckedProgram) -> None:
    clock = Clock()
    fabric = chain(program, clock=clock)
    fabric.switch("C").device.set_queue_rate(2, 1000)  # C → h2: one packet per ms
    h1, h2 = fabric.host("h1"), fabric.host("h2")
    for i in range(4):
        h1.send(pkt(2, payload=bytes([i])))
    fabric.run_until_idle()
    assert len(h2.received) == 1  # the others wait in C's queue
    assert len(fabric.switch("C").device.queues) == 3
    for step in range(1, 4):
        clock.now = step * 1000
        fabric.run_until_idle()
    seen = [fields(d) for d in h2.received]
    assert [d[-1] for d in h2.received] == [0, 1, 2, 3]
    assert [f["enq_qdepth"] for f in seen] == [0, 0, 1, 2]
    assert [f["deq_qdepth"] for f in seen] == [0, 2, 1, 0]
    assert [f["timedelta"] for f in seen] == [0, 1000, 2000, 3000]


def test_enq_qdepth_of_a_congested_last_hop(program: CheckedProgram) -> None:
    clock = Clock()
    fabric = Fabric(clock=clock)
    fabric.add_switch("A", program)
    fabric.add_host("h1", "A", 1)
    fabric.add_host("h3", "A", 3)
    h2 = fabric.add_host("h2", "A", 2)
    route(fabric, "A", 2, 2)
    fabric.switch("A").device.set_queue_rate(2, 1000)
    for i in range(3):  # two senders into one slow port
        fabric.host("h1").send(pkt(2, payload=bytes([i])))
        fabric.host("h3").send(pkt(2, payload=bytes([10 + i])))
    fabric.run_until_idle()
    for step in range(1, 6):
        clock.now = step * 1000
        fabric.run_until_idle()
    depths = [fields(d)["enq_qdepth"] for d in h2.received]
    assert len(depths) == 6
    assert depths == [0, 0, 1, 2, 3, 4]
    assert [fields(d)["timedelta"] for d in h2.received] == [0, 1000, 2000, 3000, 4000, 5000]


def test_priority_ordering_across_the_fabric(program: CheckedProgram) -> None:
    clock = Clock()
    fabric = Fabric(clock=clock)
    fabric.add_switch("A", program, priority_queues=8)
    fabric.add_switch("B", program, priority_queues=8)
    fabric.link("A", 2, "B", 1)
    h1 = fabric.add_host("h1", "A", 1)
    h2 = fabric.add_host("h2", "B", 2)
    route(fabric, "A", 2, 2)
    route(fabric, "B", 2, 2)
    fabric.switch("A").device.set_queue_rate(2, 1000)
    for i, prio in enumerate([1, 1, 1, 6, 3]):
        h1.send(pkt(2, prio=prio, payload=bytes([i])))
    fabric.run_until_idle()
    for step in range(1, 5):
        clock.now = step * 1000
        fabric.run_until_idle()
    assert [d[-1] for d in h2.received] == [0, 3, 4, 1, 2]


def test_threaded_fabric(program: CheckedProgram) -> None:
    fabric = chain(program)
    h1, h2 = fabric.host("h1"), fabric.host("h2")
    with fabric:
        assert fabric.running
        for i in range(20):
            h1.send(pkt(2, payload=bytes([i])))
        got = [h2.receive(timeout=5) for _ in range(20)]
        fabric.run_until_idle(timeout=5)
    assert not fabric.running
    assert [g[-1] if g else None for g in got] == list(range(20))


def test_switch_with_grpc_address_serves_p4runtime(program: CheckedProgram) -> None:
    pytest.importorskip("softswitch.runtime.server.server")  # written alongside this module
    import grpc
    from finsy.proto import p4r
    from finsy.proto.p4.v1 import p4runtime_pb2_grpc

    fabric = Fabric()
    node = fabric.add_switch("A", program, device_id=4, grpc_address="127.0.0.1:0")
    try:
        assert node.grpc_port and node.grpc_port > 0
        with grpc.insecure_channel(f"127.0.0.1:{node.grpc_port}") as channel:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
            reply = stub.GetForwardingPipelineConfig(
                p4r.GetForwardingPipelineConfigRequest(device_id=4), timeout=5)
            assert reply.config.p4info.tables[0].preamble.name.endswith("fwd")
    finally:
        fabric.close()
    assert node.server is None


def test_take_returns_unread_packets_and_forgets_them(program: CheckedProgram) -> None:
    fabric = chain(program)
    h1, h2 = fabric.host("h1"), fabric.host("h2")
    for n in range(3):
        h1.send(pkt(2, ttl=10, payload=b"p%d" % n))
    fabric.run_until_idle()
    assert h2.receive(timeout=0).endswith(b"p0")
    assert [f[-2:] for f in h2.take()] == [b"p1", b"p2"]
    assert h2.received == [] and h2.take() == [] and h2.receive(timeout=0) is None
    h1.send(pkt(2, ttl=10, payload=b"p3"))
    assert [f[-2:] for f in h2.take(timeout=1)] == [b"p3"]   # a stepped fabric is run first
