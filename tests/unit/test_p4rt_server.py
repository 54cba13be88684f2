"""The P4Runtime server over real gRPC (127.0.0.1, any port) with raw finsy stubs."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator

import grpc
import pytest
from finsy.proto import p4r
from finsy.proto.google.rpc import code_pb2
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from p4rt_harness import (
    CPU_PORT,
    DEVICE_ID,
    StreamClient,
    fwd_entry,
    ids,
    insert,
    pipeline_request,
    program_config,
    write_request,
)

from softswitch.runtime.device import Device
from softswitch.runtime.server.device_config import wrap_device_config
from softswitch.runtime.server.server import P4RUNTIME_API_VERSION, P4RuntimeServer
from softswitch.runtime.server.status import decode_details

Action = p4r.SetForwardingPipelineConfigRequest
RT = p4r.GetForwardingPipelineConfigRequest
ETH = bytes.fromhex("0000000000aa" "0000000000bb" "0800") + b"payload"


class Outputs:
    def __init__(self) -> None:
        self.packets: list[tuple[int, bytes]] = []

    def __call__(self, port: int, data: bytes) -> None:
        self.packets.append((port, data))

    def wait(self, n: int = 1, timeout: float = 3.0) -> list[tuple[int, bytes]]:
        deadline = time.monotonic() + timeout
        while len(self.packets) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.packets


@pytest.fixture
def device() -> Iterator[Device]:
    dev = Device(DEVICE_ID, cpu_port=CPU_PORT)
    dev.outputs = Outputs()  # type: ignore[attr-defined]
    dev.set_output(dev.outputs)  # type: ignore[attr-defined]
    dev.start()
    yield dev
    dev.stop()


@pytest.fixture
def server(device: Device) -> Iterator[P4RuntimeServer]:
    srv = P4RuntimeServer(device, "127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop(0)


@pytest.fixture
def stub(server: P4RuntimeServer) -> Iterator[p4runtime_pb2_grpc.P4RuntimeStub]:
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield p4runtime_pb2_grpc.P4RuntimeStub(channel)
    channel.close()


@pytest.fixture
def streams(stub: p4runtime_pb2_grpc.P4RuntimeStub) -> Iterator[list[StreamClient]]:
    opened: list[StreamClient] = []
    yield opened
    for s in opened:
        s.close()


def open_primary(stub: p4runtime_pb2_grpc.P4RuntimeStub, streams: list[StreamClient],
                 election_id: tuple[int, int] = (0, 1)) -> StreamClient:
    client = StreamClient(stub)
    streams.append(client)
    client.arbitrate(election_id)
    assert client.get("arbitration").arbitration.status.code == code_pb2.OK
    return client


def rpc_error(call, *args) -> grpc.RpcError:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as info:
        result = call(*args)
        if hasattr(result, "__iter__") and not isinstance(result, (bytes, str)):
            list(result)
    return info.value


# -- Capabilities and pipeline config ---------------------------------------------------------

def test_capabilities(stub: p4runtime_pb2_grpc.P4RuntimeStub) -> None:
    reply = stub.Capabilities(p4r.CapabilitiesRequest())
    assert reply.p4runtime_api_version == P4RUNTIME_API_VERSION


def test_get_config_before_any_is_failed_precondition(stub) -> None:  # type: ignore[no-untyped-def]
    err = rpc_error(stub.GetForwardingPipelineConfig,
                    p4r.GetForwardingPipelineConfigRequest(device_id=DEVICE_ID))
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "No forwarding pipeline config" in err.details()


def test_set_and_get_every_response_type(stub, device: Device) -> None:  # type: ignore[no-untyped-def]
    p4info, ir = program_config()
    stub.SetForwardingPipelineConfig(pipeline_request(cookie=0xC0FFEE))
    assert device.pipeline is not None and device.pipeline.cookie == 0xC0FFEE

    def get(kind: int) -> p4r.ForwardingPipelineConfig:
        return stub.GetForwardingPipelineConfig(
            p4r.GetForwardingPipelineConfigRequest(device_id=DEVICE_ID, response_type=kind)).config

    everything = get(RT.ALL)
    assert everything.p4info == p4info and everything.p4_device_config == ir
    assert everything.cookie.cookie == 0xC0FFEE
    cookie_only = get(RT.COOKIE_ONLY)
    assert cookie_only.cookie.cookie == 0xC0FFEE
    assert not cookie_only.HasField("p4info") and not cookie_only.p4_device_config
    with_p4info = get(RT.P4INFO_AND_COOKIE)
    assert with_p4info.p4info == p4info and not with_p4info.p4_device_config
    with_device = get(RT.DEVICE_CONFIG_AND_COOKIE)
    assert with_device.p4_device_config == ir and not with_device.HasField("p4info")
    assert with_device.cookie.cookie == 0xC0FFEE


def test_verify_changes_nothing_and_bad_config_is_invalid(stub, device: Device) -> None:  # type: ignore[no-untyped-def]
    stub.SetForwardingPipelineConfig(pipeline_request(Action.VERIFY))
    assert device.pipeline is None
    stub.SetForwardingPipelineConfig(pipeline_request(cookie=1))
    committed = device.pipeline
    err = rpc_error(stub.SetForwardingPipelineConfig,
                    pipeline_request(device_config=b'{"not": "an IR"}', cookie=2))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Invalid forwarding pipeline config" in err.details()
    assert device.pipeline is committed          # state unchanged on error
    missing = p4r.SetForwardingPipelineConfigRequest(device_id=DEVICE_ID,
                                                     action=Action.VERIFY_AND_COMMIT)
    assert rpc_error(stub.SetForwardingPipelineConfig,
                     missing).code() == grpc.StatusCode.INVALID_ARGUMENT
    unspecified = pipeline_request(Action.UNSPECIFIED)
    assert rpc_error(stub.SetForwardingPipelineConfig,
                     unspecified).code() == grpc.StatusCode.INVALID_ARGUMENT


def test_device_config_wrapped_as_pi_takes_it(stub, device: Device) -> None:  # type: ignore[no-untyped-def]
    """p4runtime_lib sends the JSON inside a p4.tmp.P4DeviceConfig; raw bytes work too."""
    _, ir = program_config()
    # p4config.proto by hand: reassign (1, varint) = true, device_data (3, bytes) = the JSON
    length = len(ir)
    varint = bytearray()
    while True:
        varint.append((length & 0x7F) | (0x80 if length > 0x7F else 0))
        length >>= 7
        if not length:
            break
    wrapped = b"\x08\x01\x1a" + bytes(varint) + ir
    assert wrap_device_config(ir) == wrapped
    stub.SetForwardingPipelineConfig(pipeline_request(device_config=wrapped, cookie=3))
    assert device.pipeline is not None and device.pipeline.device_config == ir
    assert device.pipeline.cookie == 3


def test_device_config_that_is_neither_json_nor_wrapper(stub, device: Device) -> None:  # type: ignore[no-untyped-def]
    stub.SetForwardingPipelineConfig(pipeline_request(cookie=1))
    committed = device.pipeline
    err = rpc_error(stub.SetForwardingPipelineConfig,
                    pipeline_request(device_config=b"\xfa\x01\x02garbage", cookie=2))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "p4.tmp.P4DeviceConfig" in err.details()
    assert device.pipeline is committed


def test_empty_wrapper_keeps_the_running_program(stub, device: Device) -> None:  # type: ignore[no-untyped-def]
    """PI's legacy form: a wrapper without device_data pairs the P4Info with the program the
    switch already runs; with none running it is refused."""
    empty = wrap_device_config(b"")
    err = rpc_error(stub.SetForwardingPipelineConfig, pipeline_request(device_config=empty))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "without device_data" in err.details()
    assert device.pipeline is None
    stub.SetForwardingPipelineConfig(pipeline_request(cookie=1))
    stub.SetForwardingPipelineConfig(pipeline_request(device_config=empty, cookie=9))
    _, ir = program_config()
    assert device.pipeline is not None and device.pipeline.device_config == ir
    assert device.pipeline.cookie == 9


def test_wrong_device_id_is_not_found(stub) -> None:  # type: ignore[no-untyped-def]
    err = rpc_error(stub.SetForwardingPipelineConfig, pipeline_request(device_id=7))
    assert err.code() == grpc.StatusCode.NOT_FOUND
    err = rpc_error(stub.GetForwardingPipelineConfig,
                    p4r.GetForwardingPipelineConfigRequest(device_id=7))
    assert err.code() == grpc.StatusCode.NOT_FOUND
    err = rpc_error(stub.Read, p4r.ReadRequest(device_id=7))
    assert err.code() == grpc.StatusCode.NOT_FOUND


def test_save_then_commit(stub, device: Device) -> None:  # type: ignore[no-untyped-def]
    commit = p4r.SetForwardingPipelineConfigRequest(device_id=DEVICE_ID, action=Action.COMMIT)
    assert rpc_error(stub.SetForwardingPipelineConfig, commit).code() == grpc.StatusCode.NOT_FOUND
    stub.SetForwardingPipelineConfig(pipeline_request(Action.VERIFY_AND_SAVE, cookie=5))
    assert device.pipeline is None
    got = stub.GetForwardingPipelineConfig(
        p4r.GetForwardingPipelineConfigRequest(device_id=DEVICE_ID, response_type=RT.COOKIE_ONLY))
    assert got.config.cookie.cookie == 5        # the saved config is the one now stored
    with_config = pipeline_request(Action.COMMIT)
    assert rpc_error(stub.SetForwardingPipelineConfig,
                     with_config).code() == grpc.StatusCode.INVALID_ARGUMENT
    stub.SetForwardingPipelineConfig(commit)
    assert device.pipeline is not None and device.pipeline.cookie == 5


# -- arbitration ------------------------------------------------------------------------------

def test_arbitration_primary_backup_and_takeover(stub, streams, device: Device) -> None:  # type: ignore[no-untyped-def]
    a = open_primary(stub, streams, (0, 1))
    b = StreamClient(stub)
    streams.append(b)
    b.arbitrate((0, 2))
    # The new primary is announced to both; A learns it is now a backup.
    got_b = b.get("arbitration").arbitration
    assert got_b.status.code == code_pb2.OK and got_b.election_id.low == 2
    got_a = a.get("arbitration").arbitration
    assert got_a.status.code == code_pb2.ALREADY_EXISTS and got_a.election_id.low == 2

    # Only the primary may set the pipeline and write.
    err = rpc_error(stub.SetForwardingPipelineConfig, pipeline_request(election_id=(0, 1)))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 2)))
    err = rpc_error(stub.Write, write_request(election_id=(0, 1)))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    err = rpc_error(stub.Write, write_request(election_id=None))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    stub.Write(write_request(election_id=(0, 2)))

    # A takes over with a higher id; B is told it is a backup.
    a.arbitrate((0, 3))
    assert a.get("arbitration").arbitration.status.code == code_pb2.OK
    assert b.get("arbitration").arbitration.status.code == code_pb2.ALREADY_EXISTS
    assert rpc_error(stub.Write, write_request(election_id=(0, 2))).code() == \
        grpc.StatusCode.PERMISSION_DENIED
    stub.Write(write_request(election_id=(0, 3)))

    # The primary leaves: B is told there is no primary (spec: highest id is remembered).
    a.close()
    got = b.get("arbitration").arbitration
    assert got.status.code == code_pb2.NOT_FOUND and got.election_id.low == 3
    assert rpc_error(stub.Write, write_request(election_id=(0, 2))).code() == \
        grpc.StatusCode.PERMISSION_DENIED


def test_arbitration_errors_end_the_stream(stub, streams) -> None:  # type: ignore[no-untyped-def]
    open_primary(stub, streams, (0, 7))
    dup = StreamClient(stub)
    streams.append(dup)
    dup.arbitrate((0, 7))
    assert dup.done.wait(3)
    assert dup.error is not None and dup.error.code() == grpc.StatusCode.INVALID_ARGUMENT

    other = StreamClient(stub)
    streams.append(other)
    other.arbitrate((0, 8), device_id=99)
    assert other.done.wait(3)
    assert other.error is not None and other.error.code() == grpc.StatusCode.NOT_FOUND

    switch_device = StreamClient(stub)
    streams.append(switch_device)
    switch_device.arbitrate((0, 1))
    switch_device.get("arbitration")
    switch_device.arbitrate((0, 1), device_id=99)
    assert switch_device.done.wait(3)
    assert switch_device.error.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_unset_election_id_is_backup_and_roles_are_separate(stub, streams) -> None:  # type: ignore[no-untyped-def]
    watcher = StreamClient(stub)
    streams.append(watcher)
    watcher.arbitrate(None)
    got = watcher.get("arbitration").arbitration
    assert got.status.code == code_pb2.NOT_FOUND and not got.HasField("election_id")
    # The same election id in another role is fine; the role's primary writes with its role.
    open_primary(stub, streams, (0, 1))
    role_client = StreamClient(stub)
    streams.append(role_client)
    role_client.arbitrate((0, 1), role="acl")
    got = role_client.get("arbitration").arbitration
    assert got.status.code == code_pb2.OK and got.role.name == "acl"
    err = rpc_error(stub.Write, write_request(election_id=(0, 1), role="nope"))
    assert err.code() == grpc.StatusCode.NOT_FOUND


# -- Write / Read -----------------------------------------------------------------------------

def test_write_read_and_per_update_errors(stub, streams) -> None:  # type: ignore[no-untyped-def]
    open_primary(stub, streams)
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
    entry = fwd_entry(b"\x00\x00\x00\x00\x00\xaa", "I.set_port", port=b"\x02")
    stub.Write(write_request(insert(entry)))

    read = list(stub.Read(p4r.ReadRequest(device_id=DEVICE_ID,
                                          entities=[p4r.Entity(table_entry=p4r.TableEntry())])))
    entities = [e for r in read for e in r.entities]
    assert len(entities) == 1
    got = entities[0].table_entry
    assert got.table_id == ids()["I.fwd"]
    assert got.match[0].exact.value == b"\xaa"        # canonical bytestring
    assert got.action.action.params[0].value == b"\x02"

    # A batch: duplicate insert, a good one, an unknown table.
    good = fwd_entry(b"\x00\x00\x00\x00\x00\xbb", "I.set_port", port=b"\x03")
    bad_table = p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02FFFFFF))
    with pytest.raises(grpc.RpcError) as info:
        stub.Write(write_request(insert(entry), insert(good), insert(bad_table)))
    err = info.value
    assert err.code() == grpc.StatusCode.UNKNOWN
    details = decode_details(err.trailing_metadata())
    assert [d.canonical_code for d in details] == [
        code_pb2.ALREADY_EXISTS, code_pb2.OK, code_pb2.INVALID_ARGUMENT]
    assert details[0].message and details[2].message

    read = list(stub.Read(p4r.ReadRequest(device_id=DEVICE_ID,
                                          entities=[p4r.Entity(table_entry=p4r.TableEntry())])))
    assert sum(len(r.entities) for r in read) == 2


def test_write_atomicity_and_bad_reads(stub, streams) -> None:  # type: ignore[no-untyped-def]
    open_primary(stub, streams)
    err = rpc_error(stub.Write, write_request())
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION     # no pipeline yet
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
    request = write_request(insert(fwd_entry(b"\x01", "I.drop")))
    request.atomicity = p4r.WriteRequest.ROLLBACK_ON_ERROR
    assert rpc_error(stub.Write, request).code() == grpc.StatusCode.UNIMPLEMENTED
    empty = p4r.ReadRequest(device_id=DEVICE_ID, entities=[p4r.Entity()])
    assert rpc_error(stub.Read, empty).code() == grpc.StatusCode.INVALID_ARGUMENT
    unknown = p4r.ReadRequest(device_id=DEVICE_ID, entities=[
        p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02FFFFFF))])
    assert rpc_error(stub.Read, unknown).code() == grpc.StatusCode.INVALID_ARGUMENT


def test_writes_without_streams_need_no_election_id(stub) -> None:  # type: ignore[no-untyped-def]
    # PI's convenience: with no client connected, a request without election id is accepted.
    stub.SetForwardingPipelineConfig(pipeline_request())
    stub.Write(write_request(insert(fwd_entry(b"\x01", "I.drop")), election_id=None))
    err = rpc_error(stub.Write, write_request(election_id=(0, 1)))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED


# -- packet I/O -------------------------------------------------------------------------------

def packet_out(payload: bytes, **values: bytes) -> p4r.StreamMessageRequest:
    order = {"egress_port": 1, "tag": 2, "pad": 3}
    meta = [p4r.PacketMetadata(metadata_id=order[k], value=v) for k, v in values.items()]
    return p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=payload, metadata=meta))


def test_packet_out_enters_ingress_on_the_cpu_port(stub, streams, device: Device) -> None:  # type: ignore[no-untyped-def]
    primary = open_primary(stub, streams)
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
    primary.send(packet_out(ETH, egress_port=b"\x01\x05", tag=b"\x05"))
    port, data = device.outputs.wait(1)[0]  # type: ignore[attr-defined]
    # 261 = 0x105 needs the 9th bit; the tag reaches the data plane in the ether type.
    assert port == 0x105
    assert data == ETH[:12] + b"\x08\x05" + ETH[14:]

    # Unknown id, a value too wide for its field: StreamError, the stream goes on.
    primary.send(packet_out(ETH, egress_port=b"\x02\x00"))
    error = primary.get("error").error
    assert error.canonical_code == code_pb2.INVALID_ARGUMENT
    assert error.packet_out.packet_out.payload == ETH
    bad_id = p4r.StreamMessageRequest(packet=p4r.PacketOut(
        payload=ETH, metadata=[p4r.PacketMetadata(metadata_id=9, value=b"\x01")]))
    primary.send(bad_id)
    assert primary.get("error").error.canonical_code == code_pb2.INVALID_ARGUMENT

    backup = StreamClient(stub)
    streams.append(backup)
    backup.arbitrate((0, 0))
    backup.get("arbitration")
    backup.send(packet_out(ETH, egress_port=b"\x01"))
    assert backup.get("error").error.canonical_code == code_pb2.PERMISSION_DENIED
    time.sleep(0.1)
    assert len(device.outputs.packets) == 1  # type: ignore[attr-defined]


def test_a_packet_out_sent_back_to_the_cpu_port_or_to_511_as_bmv2(stub, streams, device: Device) -> None:  # type: ignore[no-untyped-def]
    """What simple_switch_grpc does when the program sends a PacketOut on to the CPU port: a
    PacketIn whose metadata are the frame's first bytes (PI's packet_in_cb reads the
    packet_in header off the front, valid or not); to the drop port (511): dropped at the end
    of ingress. Neither reaches a port."""
    primary = open_primary(stub, streams)
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
    frame = bytes.fromhex("812345" "0000aa") + ETH[6:]
    primary.send(packet_out(frame, egress_port=CPU_PORT.to_bytes(2, "big")))
    packet = primary.get("packet").packet
    # packet_in: ingress_port (9 bits), reason (12), pad (3) of 0x812345
    assert {m.metadata_id: m.value for m in packet.metadata} == {1: b"\x01\x02", 2: b"\x04\x68",
                                                                3: b"\x05"}
    assert packet.payload == frame[3:]
    primary.send(packet_out(frame, egress_port=(511).to_bytes(2, "big")))
    assert primary.nothing("packet")
    assert device.outputs.packets == []  # type: ignore[attr-defined]


def test_packet_in_goes_to_the_primary_with_metadata(stub, streams, device: Device) -> None:  # type: ignore[no-untyped-def]
    backup = StreamClient(stub)
    streams.append(backup)
    backup.arbitrate((0, 1))
    backup.get("arbitration")
    primary = open_primary(stub, streams, (0, 2))
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 2)))
    stub.Write(write_request(insert(fwd_entry(ETH[:6], "I.punt", reason=b"\x0a\xbc")),
                             election_id=(0, 2)))
    device.receive(3, ETH)
    packet = primary.get("packet").packet
    assert packet.payload == ETH
    assert {m.metadata_id: m.value for m in packet.metadata} == {1: b"\x03", 2: b"\x0a\xbc",
                                                                3: b"\x00"}
    assert backup.nothing("packet")


# -- digests ----------------------------------------------------------------------------------

def digest_config(kind: int, **config: int) -> p4r.Update:
    entry = p4r.DigestEntry(digest_id=ids()["learn_t"], config=p4r.DigestEntry.Config(**config))
    return p4r.Update(type=kind, entity=p4r.Entity(digest_entry=entry))


def learn_frame(src: int) -> bytes:
    return bytes(6) + src.to_bytes(6, "big") + b"\x88\xb5"


def test_digest_lists_size_dedup_and_ack(stub, streams, device: Device) -> None:  # type: ignore[no-untyped-def]
    primary = open_primary(stub, streams)
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
    second = 10**9
    stub.Write(write_request(digest_config(p4r.Update.INSERT, max_list_size=2,
                                           max_timeout_ns=60 * second,
                                           ack_timeout_ns=60 * second)))
    for src, port in ((0xA1, 1), (0xA1, 1), (0xA2, 2)):   # a duplicate within the list
        device.receive(port, learn_frame(src))
    first = primary.get("digest", timeout=3).digest
    assert first.digest_id == ids()["learn_t"] and first.list_id == 1
    assert [[m.bitstring for m in d.struct.members] for d in first.data] == [
        [b"\xa1", b"\x01"], [b"\xa2", b"\x02"]]
    # Sent but unacked messages are not learned again.
    device.receive(1, learn_frame(0xA1))
    device.receive(3, learn_frame(0xA3))
    device.receive(4, learn_frame(0xA4))
    second_list = primary.get("digest").digest
    assert second_list.list_id == 2
    assert [d.struct.members[0].bitstring for d in second_list.data] == [b"\xa3", b"\xa4"]
    # After the ack, the first list's messages may be learned again.
    primary.send(p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(
        digest_id=first.digest_id, list_id=1)))
    time.sleep(0.1)
    device.receive(1, learn_frame(0xA1))
    device.receive(2, learn_frame(0xA2))
    third = primary.get("digest").digest
    assert third.list_id == 3 and len(third.data) == 2
    bad_ack = p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(digest_id=5, list_id=1))
    primary.send(bad_ack)
    assert primary.get("error").error.canonical_code == code_pb2.INVALID_ARGUMENT


def test_digest_timeout_and_learning_off(stub, streams, device: Device) -> None:  # type: ignore[no-untyped-def]
    primary = open_primary(stub, streams)
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
    device.receive(1, learn_frame(0xB0))     # learning not configured: nothing is sent
    assert primary.nothing("digest")
    stub.Write(write_request(digest_config(p4r.Update.INSERT, max_list_size=100,
                                           max_timeout_ns=50_000_000, ack_timeout_ns=0)))
    start = time.monotonic()
    device.receive(1, learn_frame(0xB1))
    got = primary.get("digest", timeout=3).digest
    elapsed = time.monotonic() - start
    assert len(got.data) == 1 and 0.04 <= elapsed < 1.0
    stub.Write(write_request(digest_config(p4r.Update.DELETE)))
    device.receive(1, learn_frame(0xB2))
    assert primary.nothing("digest", wait=0.3)


def test_reconcile_keeps_the_forwarding_state(stub, streams, device: Device) -> None:  # type: ignore[no-untyped-def]
    open_primary(stub, streams)
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1), cookie=1))
    stub.Write(write_request(insert(fwd_entry(ETH[:6], "I.set_port", port=b"\x07")),
                             digest_config(p4r.Update.INSERT, max_list_size=1)))
    old = device.pipeline
    stub.SetForwardingPipelineConfig(pipeline_request(Action.RECONCILE_AND_COMMIT,
                                                      election_id=(0, 1), cookie=2))
    assert device.pipeline is not old and device.pipeline.cookie == 2
    read = list(stub.Read(p4r.ReadRequest(device_id=DEVICE_ID, entities=[
        p4r.Entity(table_entry=p4r.TableEntry()),
        p4r.Entity(digest_entry=p4r.DigestEntry(digest_id=ids()["learn_t"]))])))
    entities = [e for r in read for e in r.entities]
    assert [e.WhichOneof("entity") for e in entities] == ["table_entry", "digest_entry"]
    assert len(read) == 1   # one answer for the request's entities, encoded and built alike
    device.receive(1, ETH)
    assert device.outputs.wait(1)[0][0] == 7  # type: ignore[attr-defined]
    # A plain commit starts from an empty state.
    stub.SetForwardingPipelineConfig(pipeline_request(election_id=(0, 1)))
    read = list(stub.Read(p4r.ReadRequest(device_id=DEVICE_ID, entities=[
        p4r.Entity(table_entry=p4r.TableEntry())])))
    assert sum(len(r.entities) for r in read) == 0


def test_other_stream_messages_and_shutdown(server: P4RuntimeServer, stub, streams) -> None:  # type: ignore[no-untyped-def]
    primary = open_primary(stub, streams)
    other = p4r.StreamMessageRequest()
    other.other.type_url = "type.googleapis.com/x.Y"
    primary.send(other)
    error = primary.get("error").error
    assert error.canonical_code == code_pb2.UNIMPLEMENTED and error.HasField("other")
    primary.send(p4r.StreamMessageRequest())            # empty: ignored
    server.stop(0)
    assert primary.done.wait(3)                          # the stream ends with the server


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a certificate")
def test_tls_credentials(device: Device, tmp_path) -> None:  # type: ignore[no-untyped-def]
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    credentials = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
    with P4RuntimeServer(device, "127.0.0.1:0", credentials) as srv:
        channel = grpc.secure_channel(
            f"127.0.0.1:{srv.port}", grpc.ssl_channel_credentials(cert.read_bytes()),
            options=[("grpc.ssl_target_name_override", "localhost")])
        reply = p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(p4r.CapabilitiesRequest())
        assert reply.p4runtime_api_version == P4RUNTIME_API_VERSION
        channel.close()


def test_a_taken_port_is_refused(server: P4RuntimeServer, device: Device) -> None:
    with pytest.raises(OSError, match="cannot listen"):
        P4RuntimeServer(device, f"127.0.0.1:{server.port}")
