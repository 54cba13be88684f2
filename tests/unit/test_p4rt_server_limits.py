"""The P4Runtime server under hostile or careless clients: read amplification, large batches
next to live traffic, role names without end, role configs, and large per-update error lists."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4i, p4r
from finsy.proto.google.rpc import code_pb2
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from google.protobuf import any_pb2
from p4rt_harness import StreamClient

from softswitch.compiler import compile_file
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device
from softswitch.runtime.server.arbitration import Arbitrator
from softswitch.runtime.server.roles import P4RoleConfig, parse_role_config
from softswitch.runtime.server.server import READ_CHUNK, P4RuntimeServer
from softswitch.runtime.server.status import decode_details

PROGRAM = Path(__file__).parents[1] / "p4" / "runtime" / "big_tables.p4"
DEVICE_ID = 0
FRAME = bytes.fromhex("ffffffffffff" "000000000001" "88b5") + b"probe"


@cache
def config() -> tuple[p4i.P4Info, bytes]:
    checked = compile_file(PROGRAM)
    return build_p4info(checked), dumps_ir(checked).encode()


def object_id(name: str) -> int:
    p4info, _ = config()
    for group in (p4info.tables, p4info.actions):
        for obj in group:
            if obj.preamble.name == name:
                return obj.preamble.id
    raise KeyError(name)


def entry(table: str, key: int, tag: int = 1) -> p4r.Entity:
    te = p4r.TableEntry(table_id=object_id(table))
    te.match.add(field_id=1).exact.value = key.to_bytes(6, "big").lstrip(b"\0") or b"\0"
    te.action.action.action_id = object_id("I.tag")
    te.action.action.params.add(param_id=1, value=bytes([tag]))
    return p4r.Entity(table_entry=te)


def write(*updates: p4r.Update, election_id: tuple[int, int] | None = None,
          role: str = "") -> p4r.WriteRequest:
    request = p4r.WriteRequest(device_id=DEVICE_ID, updates=updates, role=role)
    if election_id is not None:
        request.election_id.high, request.election_id.low = election_id
    return request


def inserts(table: str, keys: range) -> list[p4r.Update]:
    return [p4r.Update(type=p4r.Update.INSERT, entity=entry(table, k)) for k in keys]


class Delivered:
    """The device's output: each packet with the number of I.hosts entries at that moment."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.packets: list[tuple[int, bytes, int]] = []
        self.event = threading.Event()

    def __call__(self, port: int, data: bytes) -> None:
        switch = self.device.switch
        count = len(switch.table("I.hosts").entries) if switch is not None else -1
        self.packets.append((port, data, count))
        self.event.set()


@pytest.fixture
def device() -> Iterator[Device]:
    dev = Device(DEVICE_ID)
    dev.delivered = Delivered(dev)  # type: ignore[attr-defined]
    dev.set_output(dev.delivered)  # type: ignore[attr-defined]
    dev.start()
    yield dev
    dev.stop()


def serve(device: Device, **options: int) -> P4RuntimeServer:
    server = P4RuntimeServer(device, "127.0.0.1:0", **options)
    server.start()
    stub = p4runtime_pb2_grpc.P4RuntimeStub(grpc.insecure_channel(f"127.0.0.1:{server.port}"))
    p4info, ir = config()
    request = p4r.SetForwardingPipelineConfigRequest(
        device_id=DEVICE_ID, action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    request.config.p4info.CopyFrom(p4info)
    request.config.p4_device_config = ir
    stub.SetForwardingPipelineConfig(request, timeout=30)
    server.stub = stub  # type: ignore[attr-defined]
    return server


@pytest.fixture
def server(device: Device) -> Iterator[P4RuntimeServer]:
    srv = serve(device)
    yield srv
    srv.stop(0)


def read_all(stub: p4runtime_pb2_grpc.P4RuntimeStub, *entities: p4r.Entity,
             role: str = "") -> list[p4r.ReadResponse]:
    request = p4r.ReadRequest(device_id=DEVICE_ID, entities=entities, role=role)
    return list(stub.Read(request, timeout=60))


def rpc_error(call, *args, **kwargs) -> grpc.RpcError:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as info:
        result = call(*args, **kwargs)
        if hasattr(result, "__iter__"):
            list(result)
    return info.value


WILDCARD = p4r.Entity(table_entry=p4r.TableEntry())


# -- Read ---------------------------------------------------------------------------------------


def test_twenty_thousand_copies_of_a_wildcard_are_answered_once(server) -> None:  # type: ignore[no-untyped-def]
    server.stub.Write(write(*inserts("I.hosts", range(1, 31))), timeout=30)
    responses = read_all(server.stub, *([WILDCARD] * 20_000))
    entities = [e for r in responses for e in r.entities]
    assert len(entities) == 30
    keys = {e.table_entry.match[0].exact.value for e in entities}
    assert len(keys) == 30


def test_a_read_beyond_the_limit_is_resource_exhausted(device: Device) -> None:
    server = serve(device, max_read_entities=100)
    try:
        server.stub.Write(write(*inserts("I.hosts", range(1, 61)),
                                *inserts("I.peers", range(1, 61))), timeout=30)
        error = rpc_error(server.stub.Read, p4r.ReadRequest(device_id=DEVICE_ID,
                                                            entities=[WILDCARD]), timeout=30)
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "more than 100 entities" in error.details()
        # one table at a time fits
        one = p4r.Entity(table_entry=p4r.TableEntry(table_id=object_id("I.peers")))
        assert sum(len(r.entities) for r in read_all(server.stub, one)) == 60
    finally:
        server.stop(0)


class CountingLock:
    """An RLock that counts how often each thread takes it (outermost acquisitions)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = threading.local()
        self.taken: dict[str, int] = {}

    def __enter__(self) -> CountingLock:
        self._lock.acquire()
        depth = getattr(self._depth, "n", 0)
        if depth == 0:
            name = threading.current_thread().name
            self.taken[name] = self.taken.get(name, 0) + 1
        self._depth.n = depth + 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth.n -= 1
        self._lock.release()


def test_a_large_read_streams_chunks_and_lets_the_dataplane_in_between(
        server, device: Device) -> None:  # type: ignore[no-untyped-def]
    n = 3 * READ_CHUNK + 17
    server.stub.Write(write(*inserts("I.hosts", range(1, n + 1))), timeout=60)
    lock = CountingLock()
    device.lock = lock  # type: ignore[assignment]
    responses = read_all(server.stub, WILDCARD)
    sizes = [len(r.entities) for r in responses]
    assert sum(sizes) == n and len(sizes) >= 4 and max(sizes) <= READ_CHUNK
    server_takes = sum(v for k, v in lock.taken.items() if k.startswith("p4rt"))
    assert server_takes >= len(sizes)  # the lock was let go between chunks


def test_packets_are_forwarded_while_a_large_write_runs(server, device: Device) -> None:  # type: ignore[no-untyped-def]
    n = 30_000
    batch = write(*inserts("I.hosts", range(1, n + 1)))
    hosts = device.switch.table("I.hosts")
    done = threading.Event()
    writer = threading.Thread(target=lambda: (server.stub.Write(batch, timeout=120),
                                              done.set()))
    writer.start()
    while not hosts.entries and writer.is_alive():
        pass  # the batch has begun once the first entry is in
    device.receive(1, FRAME)
    assert device.delivered.event.wait(60)
    writer.join(120)
    assert done.is_set()
    port, data, entries_then = device.delivered.packets[0]
    assert (port, data) == (2, FRAME)
    assert 0 < entries_then < n  # forwarded in the middle of the batch, not after it
    assert len(hosts.entries) == n


# -- roles --------------------------------------------------------------------------------------


def role_config(*, exclusive: tuple[int, ...] = (), shared: tuple[int, ...] = (),
                can_push_pipeline: bool = False, receives_packet_ins: bool = False,
                packet_in_filter: tuple[int, bytes] | None = None) -> any_pb2.Any:
    config = P4RoleConfig(exclusive_p4_ids=exclusive, shared_p4_ids=shared,
                          can_push_pipeline=can_push_pipeline,
                          receives_packet_ins=receives_packet_ins)
    if packet_in_filter is not None:
        config.packet_in_filter.metadata_id, config.packet_in_filter.value = packet_in_filter
    packed = any_pb2.Any()
    packed.Pack(config)
    return packed


def arbitrate(stub: p4runtime_pb2_grpc.P4RuntimeStub, election_id: tuple[int, int],
              role: str = "", config: any_pb2.Any | None = None) -> StreamClient:
    client = StreamClient(stub)
    update = p4r.MasterArbitrationUpdate(device_id=DEVICE_ID)
    update.election_id.high, update.election_id.low = election_id
    if role or config is not None:
        update.role.name = role
        if config is not None:
            update.role.config.CopyFrom(config)
    client.send(p4r.StreamMessageRequest(arbitration=update))
    return client


class FakeClient:
    def __init__(self) -> None:
        self.gone = False

    def send(self, message: p4r.StreamMessageResponse) -> None:
        pass

    def is_gone(self) -> bool:
        return self.gone


def test_roles_are_forgotten_with_their_last_stream_and_memory_stays_bounded() -> None:
    arbitrator = Arbitrator(0, max_remembered_roles=8)
    big = role_config(shared=tuple(range(1, 100_001)))  # a ~300 KB config
    for i in range(100):
        client = FakeClient()
        update = p4r.MasterArbitrationUpdate(device_id=0)
        update.election_id.low = 1
        update.role.name = f"role-{i}"
        update.role.config.CopyFrom(big)
        arbitrator.arbitrate(client, update)
        assert arbitrator.scope(f"role-{i}") is not None
        arbitrator.leave(client)
        assert arbitrator.scope(f"role-{i}") is None  # config gone with the stream
    live, remembered = arbitrator.role_count()
    assert (live, remembered) == (0, 8)


def test_a_returning_role_keeps_its_highest_election_id() -> None:
    arbitrator = Arbitrator(0)
    first, second = FakeClient(), FakeClient()
    update = p4r.MasterArbitrationUpdate(device_id=0)
    update.role.name = "acl"
    update.election_id.low = 5
    arbitrator.arbitrate(first, update)
    arbitrator.leave(first)
    update.election_id.low = 3
    arbitrator.arbitrate(second, update)
    assert [c for c, _ in arbitrator.primaries()] == []  # 3 < 5: a backup


def test_a_write_for_a_role_whose_streams_ended_is_refused(server) -> None:  # type: ignore[no-untyped-def]
    client = arbitrate(server.stub, (0, 1), role="acl")
    assert client.get("arbitration").arbitration.status.code == code_pb2.OK
    client.close()
    deadline = time.monotonic() + 10   # the server sees the stream end shortly after
    while server.service.arbitrator.role_count()[0] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.service.arbitrator.role_count()[0] == 0
    error = rpc_error(server.stub.Write, write(*inserts("I.hosts", range(1, 2)), role="acl"),
                      timeout=10)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert "Unknown role 'acl'" in error.details()


def test_a_role_config_scopes_writes_reads_and_pipeline_pushes(server) -> None:  # type: ignore[no-untyped-def]
    stub = server.stub
    hosts = object_id("I.hosts")
    owner = arbitrate(stub, (0, 1), role="hosts-owner", config=role_config(shared=(hosts,)))
    assert owner.get("arbitration").arbitration.status.code == code_pb2.OK
    default = arbitrate(stub, (0, 1))
    assert default.get("arbitration").arbitration.status.code == code_pb2.OK
    try:
        stub.Write(write(*inserts("I.hosts", range(1, 4)), election_id=(0, 1),
                         role="hosts-owner"), timeout=10)
        error = rpc_error(stub.Write, write(*inserts("I.peers", range(1, 2)),
                                            election_id=(0, 1), role="hosts-owner"), timeout=10)
        assert error.code() == grpc.StatusCode.UNKNOWN
        [detail] = decode_details(error.trailing_metadata())
        assert detail.canonical_code == code_pb2.PERMISSION_DENIED
        assert "Role 'hosts-owner' may not write table_entry of id" in detail.message
        pre = p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=1)))
        error = rpc_error(stub.Write, write(p4r.Update(type=p4r.Update.INSERT, entity=pre),
                                            election_id=(0, 1), role="hosts-owner"), timeout=10)
        [detail] = decode_details(error.trailing_metadata())
        assert detail.canonical_code == code_pb2.PERMISSION_DENIED
        # the default role has full access
        stub.Write(write(*inserts("I.peers", range(1, 3)), election_id=(0, 1)), timeout=10)
        everything = [e for r in read_all(stub, WILDCARD) for e in r.entities]
        scoped = [e for r in read_all(stub, WILDCARD, role="hosts-owner") for e in r.entities]
        assert len(everything) == 5
        assert len(scoped) == 3 and {e.table_entry.table_id for e in scoped} == {hosts}
        p4info, ir = config()
        push = p4r.SetForwardingPipelineConfigRequest(
            device_id=DEVICE_ID, role="hosts-owner",
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        push.election_id.low = 1
        push.config.p4info.CopyFrom(p4info)
        push.config.p4_device_config = ir
        error = rpc_error(stub.SetForwardingPipelineConfig, push, timeout=10)
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "can_push_pipeline" in error.details()
    finally:
        owner.close()
        default.close()


def test_an_exclusive_id_is_closed_to_every_other_role(server) -> None:  # type: ignore[no-untyped-def]
    stub = server.stub
    peers = object_id("I.peers")
    owner = arbitrate(stub, (0, 1), role="peers-owner", config=role_config(exclusive=(peers,)))
    default = arbitrate(stub, (0, 1))
    try:
        for client in (owner, default):
            assert client.get("arbitration").arbitration.status.code == code_pb2.OK
        error = rpc_error(stub.Write, write(*inserts("I.peers", range(1, 2)),
                                            election_id=(0, 1)), timeout=10)
        [detail] = decode_details(error.trailing_metadata())
        assert detail.canonical_code == code_pb2.PERMISSION_DENIED
        assert "another role holds it exclusively" in detail.message
        stub.Write(write(*inserts("I.peers", range(1, 2)), election_id=(0, 1),
                         role="peers-owner"), timeout=10)
        stub.Write(write(*inserts("I.hosts", range(1, 2)), election_id=(0, 1)), timeout=10)
    finally:
        owner.close()
        default.close()


def test_a_role_config_softswitch_cannot_read_ends_the_stream(server) -> None:  # type: ignore[no-untyped-def]
    foreign = any_pb2.Any(type_url="type.googleapis.com/acme.RoleConfig", value=b"\x08\x01")
    client = arbitrate(server.stub, (0, 1), role="x", config=foreign)
    assert client.done.wait(5)
    assert client.error is not None
    assert client.error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "acme.RoleConfig" in client.error.details()
    assert server.service.arbitrator.role_count()[0] == 0


def test_packet_in_filter_of_a_role_config() -> None:
    role = p4r.Role(name="punts")
    role.config.CopyFrom(role_config(receives_packet_ins=True, packet_in_filter=(2, b"\x07")))
    scope = parse_role_config(role)
    assert scope is not None
    wanted = p4r.PacketIn(payload=b"x", metadata=[p4r.PacketMetadata(metadata_id=2, value=b"\x07")])
    other = p4r.PacketIn(payload=b"x", metadata=[p4r.PacketMetadata(metadata_id=2, value=b"\x08")])
    assert scope.wants_packet_in(wanted) and not scope.wants_packet_in(other)
    silent = p4r.Role(name="quiet")
    silent.config.CopyFrom(role_config())
    quiet = parse_role_config(silent)
    assert quiet is not None and not quiet.wants_packet_in(wanted)
    assert parse_role_config(p4r.Role(name="full")) is None  # no config: full access


# -- per-update errors --------------------------------------------------------------------------


def test_a_thousand_failed_updates_need_a_client_with_a_larger_metadata_limit(server) -> None:  # type: ignore[no-untyped-def]
    # As PI: one p4.v1.Error per update in the trailers, which exceed gRPC's default client
    # limit; a client that raises grpc.max_metadata_size (our p4rt client does) gets them all.
    batch = write(*[p4r.Update(type=p4r.Update.MODIFY, entity=entry("I.hosts", k))
                    for k in range(1, 1001)])
    error = rpc_error(server.stub.Write, batch, timeout=30)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    options = [("grpc.max_metadata_size", 4 * 1024 * 1024)]
    with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=options) as channel:
        error = rpc_error(p4runtime_pb2_grpc.P4RuntimeStub(channel).Write, batch, timeout=30)
    assert error.code() == grpc.StatusCode.UNKNOWN
    details = decode_details(error.trailing_metadata())
    assert len(details) == 1000
    assert {d.canonical_code for d in details} == {code_pb2.NOT_FOUND}


def test_an_error_quoting_a_huge_value_is_cut_so_a_plain_client_gets_every_answer(
        server) -> None:  # type: ignore[no-untyped-def]
    # A match value of 6,000 bytes: its error would quote it (12 KB of text), past what a
    # client with gRPC's default metadata limit takes (it drops such trailers, at random from
    # 8 KiB: RESOURCE_EXHAUSTED, and the update beside it that was applied goes unreported).
    huge = entry("I.hosts", 1)
    huge.table_entry.match[0].exact.value = b"\x01" * 6000
    batch = write(p4r.Update(type=p4r.Update.INSERT, entity=huge),
                  p4r.Update(type=p4r.Update.INSERT, entity=entry("I.hosts", 2)))
    for attempt in range(8):   # the client's drop is random: every attempt must get through
        error = rpc_error(server.stub.Write, batch, timeout=30)
        assert error.code() == grpc.StatusCode.UNKNOWN, (attempt, error.details())
        first, second = decode_details(error.trailing_metadata())
        assert first.canonical_code == code_pb2.INVALID_ARGUMENT
        assert len(first.message) <= 1024 and first.message.endswith("characters, cut)")
        assert second.canonical_code == code_pb2.OK
        server.stub.Write(write(p4r.Update(type=p4r.Update.DELETE, entity=entry("I.hosts", 2))),
                          timeout=30)
    alone = rpc_error(server.stub.Write, write(p4r.Update(type=p4r.Update.INSERT, entity=huge)),
                      timeout=30)
    (only,) = decode_details(alone.trailing_metadata())
    assert alone.code() == grpc.StatusCode.UNKNOWN and len(only.message) <= 1024
