"""Reads that name counter cells one by one (a collector's: the emulator reads thousands at a
run's end) take the server's single-cell path; over real gRPC it must answer exactly what the
generic walk answers, in the same order, with the same errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc

from softswitch.compiler import compile_file
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device
from softswitch.runtime.server import server as server_module
from softswitch.runtime.server.server import P4RuntimeServer

PROGRAM = Path(__file__).parents[1] / "p4" / "runtime" / "p4rt_externs.p4"
DEVICE_ID = 5
CELLS = 8   # pkt_ctr's size


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[p4runtime_pb2_grpc.P4RuntimeStub, int]]:
    """A server running p4rt_externs.p4, pkt_ctr's cell i at (10 + i packets, 100 + i bytes);
    the stub and pkt_ctr's id."""
    checked = compile_file(PROGRAM)
    p4info = build_p4info(checked)
    device = Device(DEVICE_ID, cpu_port=64)
    device.start()
    srv = P4RuntimeServer(device, "127.0.0.1:0")
    srv.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{srv.port}")
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    request = p4r.SetForwardingPipelineConfigRequest(
        device_id=DEVICE_ID, action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    request.config.p4info.CopyFrom(p4info)
    request.config.p4_device_config = dumps_ir(checked).encode()
    stub.SetForwardingPipelineConfig(request)
    (counter,) = [c for c in p4info.counters if c.preamble.name.endswith("pkt_ctr")]
    write = p4r.WriteRequest(device_id=DEVICE_ID)
    for i in range(CELLS):
        entry = p4r.CounterEntry(counter_id=counter.preamble.id, index=p4r.Index(index=i))
        entry.data.packet_count, entry.data.byte_count = 10 + i, 100 + i
        write.updates.add(type=p4r.Update.MODIFY).entity.counter_entry.CopyFrom(entry)
    stub.Write(write)
    yield stub, counter.preamble.id
    channel.close()
    srv.stop(0)
    device.stop()


def cell(counter_id: int, index: int) -> p4r.Entity:
    return p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=counter_id,
                                                     index=p4r.Index(index=index)))


def read(stub: p4runtime_pb2_grpc.P4RuntimeStub, entities: list[p4r.Entity]
         ) -> list[p4r.Entity] | grpc.StatusCode:
    """The entities a Read answers, or its error's code."""
    try:
        return [e for reply in stub.Read(p4r.ReadRequest(device_id=DEVICE_ID,
                                                         entities=entities))
                for e in reply.entities]
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]


def generic(monkeypatch: pytest.MonkeyPatch, stub: p4runtime_pb2_grpc.P4RuntimeStub,
            entities: list[p4r.Entity]) -> list[p4r.Entity] | grpc.StatusCode:
    """`read` with the single-cell path turned off: every entity through the generic walk."""
    with monkeypatch.context() as patch:
        patch.setattr(server_module, "_one_counter_cell", lambda entity: None)
        return read(stub, entities)


def test_cells_read_one_by_one_are_the_generic_answer(
        stub: tuple[p4runtime_pb2_grpc.P4RuntimeStub, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    rpc, cid = stub
    wildcard = p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=cid))
    requests = [
        [cell(cid, 5), cell(cid, 2), cell(cid, 7)],
        [cell(cid, 5), wildcard, cell(cid, 5), cell(cid, 0)],   # mixed, a duplicate
        [cell(cid, i) for i in range(CELLS)] * 3,
    ]
    for entities in requests:
        got = read(rpc, entities)
        assert got == generic(monkeypatch, rpc, entities)
    got = read(rpc, requests[0])
    assert isinstance(got, list)
    assert [(e.counter_entry.index.index, e.counter_entry.data.packet_count,
             e.counter_entry.data.byte_count) for e in got] == [(5, 15, 105), (2, 12, 102),
                                                                 (7, 17, 107)]
    assert [e.counter_entry.index.index for e in read(rpc, requests[1])] == [  # type: ignore[union-attr]
        5, *range(CELLS), 0]


def test_bad_cells_fail_as_the_generic_walk_fails(
        stub: tuple[p4runtime_pb2_grpc.P4RuntimeStub, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    rpc, cid = stub
    for entities, code in (([cell(cid, 1), cell(cid, CELLS)], grpc.StatusCode.OUT_OF_RANGE),
                           ([cell(cid + 1000, 0)], None),
                           ([cell(cid, 1 << 40)], grpc.StatusCode.OUT_OF_RANGE)):
        got = read(rpc, entities)
        assert got == generic(monkeypatch, rpc, entities)
        assert isinstance(got, grpc.StatusCode)
        assert code is None or got == code
