"""The P4Runtime servers' threads: a Fabric's servers share one worker pool and one digest
sweeper (a bounded number of threads however many devices), long calls cannot starve the pool,
and every server's digests still time out."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import grpc
import pytest
from finsy.proto import p4r
from finsy.proto.google.rpc import code_pb2
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from p4rt_harness import CPU_PORT, DEVICE_ID, StreamClient, ids, pipeline_request, write_request

from softswitch.fabric import RPC_WORKERS, Fabric
from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer
from softswitch.runtime.server.worker_pool import WorkerPool

DEVICES = RPC_WORKERS + 4


def threads_named(prefix: str) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(prefix)]


def stub_of(address: str, channels: list[grpc.Channel]) -> p4runtime_pb2_grpc.P4RuntimeStub:
    channel = grpc.insecure_channel(address)
    channels.append(channel)
    return p4runtime_pb2_grpc.P4RuntimeStub(channel)


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    fab = Fabric()
    yield fab
    fab.close()


@pytest.fixture
def channels() -> Iterator[list[grpc.Channel]]:
    opened: list[grpc.Channel] = []
    yield opened
    for channel in opened:
        channel.close()


@pytest.fixture
def streams() -> Iterator[list[StreamClient]]:
    opened: list[StreamClient] = []
    yield opened
    for stream in opened:
        stream.close()


def open_primary(stub: p4runtime_pb2_grpc.P4RuntimeStub,
                 streams: list[StreamClient]) -> StreamClient:
    client = StreamClient(stub)
    streams.append(client)
    client.arbitrate((0, 1))
    assert client.get("arbitration").arbitration.status.code == code_pb2.OK
    return client


def wait_for(condition, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    """Whether `condition()` holds within `timeout` (threads end asynchronously)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_fabrics_servers_run_one_sweeper_and_a_bounded_pool(fabric: Fabric,
                                                              channels) -> None:  # type: ignore[no-untyped-def]
    sweepers, workers = len(threads_named("p4rt-digests")), len(threads_named("p4rt_"))
    nodes = [fabric.add_switch(f"s{i}", grpc_address="127.0.0.1:0", device_id=DEVICE_ID,
                               cpu_port=CPU_PORT) for i in range(DEVICES)]
    for node in nodes:   # every server answers a call (each call takes a pool thread)
        stub = stub_of(node.grpc_address, channels)
        assert stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version
    assert len(threads_named("p4rt-digests")) - sweepers == 1
    assert len(threads_named("p4rt_")) - workers <= RPC_WORKERS
    assert len({id(node.server.sweeper) for node in nodes}) == 1
    assert len({id(node.server.pool) for node in nodes}) == 1
    fabric.close()
    assert wait_for(lambda: len(threads_named("p4rt-digests")) == sweepers)
    assert wait_for(lambda: len(threads_named("p4rt_")) == workers)


def test_digests_time_out_on_every_server_of_a_fabric(fabric: Fabric, channels,
                                                      streams) -> None:  # type: ignore[no-untyped-def]
    nodes = [fabric.add_switch(f"s{i}", grpc_address="127.0.0.1:0", device_id=DEVICE_ID,
                               cpu_port=CPU_PORT) for i in range(3)]
    fabric.start()
    primaries = []
    timeouts_ms = (50, 120, 80)
    for node, timeout_ms in zip(nodes, timeouts_ms):
        stub = stub_of(node.grpc_address, channels)
        primaries.append(open_primary(stub, streams))
        stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
        entry = p4r.DigestEntry(digest_id=ids()["learn_t"], config=p4r.DigestEntry.Config(
            max_list_size=100, max_timeout_ns=timeout_ms * 1_000_000, ack_timeout_ns=0))
        stub.Write(write_request(p4r.Update(type=p4r.Update.INSERT,
                                            entity=p4r.Entity(digest_entry=entry))))
    start = time.monotonic()
    for i, node in enumerate(nodes):
        node.device.receive(1, bytes(6) + (0xB0 + i).to_bytes(6, "big") + b"\x88\xb5")
    for i, (primary, timeout_ms) in enumerate(zip(primaries, timeouts_ms)):
        digest = primary.get("digest", timeout=3).digest
        elapsed = time.monotonic() - start
        # each list waited for its own server's max_timeout, not for another's
        assert timeout_ms / 1000 - 0.01 <= elapsed < timeout_ms / 1000 + 0.9
        assert [d.struct.members[0].bitstring for d in digest.data] == [bytes([0xB0 + i])]


def test_open_streams_do_not_starve_unary_calls(channels, streams) -> None:  # type: ignore[no-untyped-def]
    """Two servers share a pool of one worker; three streams and a Read open on each still
    leave that worker for their Writes (a plain pool of one would hang on the first
    stream)."""
    pool = WorkerPool(1)
    devices = [Device(DEVICE_ID, cpu_port=CPU_PORT) for _ in range(2)]
    servers = [P4RuntimeServer(device, "127.0.0.1:0", pool=pool) for device in devices]
    try:
        for server in servers:
            server.start()
            stub = stub_of(f"127.0.0.1:{server.port}", channels)
            open_primary(stub, streams)
            for _ in range(2):
                streams.append(StreamClient(stub))
            stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)),
                                             timeout=5)
            stub.Write(write_request(), timeout=5)
            assert stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)
        assert pool.threads >= 1 + 2 * 3
        for stream in streams:
            stream.close()
        assert wait_for(lambda: pool.threads == 1)   # the streams' threads went with them
    finally:
        for server in servers:
            server.stop(0)
        pool.shutdown()
    assert pool.threads == 0


def test_a_standalone_server_stops_its_own_sweeper_and_pool() -> None:
    sweepers = len(threads_named("p4rt-digests"))
    server = P4RuntimeServer(Device(DEVICE_ID, cpu_port=CPU_PORT), "127.0.0.1:0")
    server.start()
    assert len(threads_named("p4rt-digests")) == sweepers + 1
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        assert stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)
    server.stop(0)
    assert len(threads_named("p4rt-digests")) == sweepers
    assert wait_for(lambda: server.pool.threads == 0)
