"""Parts of the P4Runtime server without gRPC: digest lists, packet-I/O codec, arbitration."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4i, p4r
from finsy.proto.google.rpc import code_pb2
from finsy.proto.p4.v1 import p4data_pb2

from softswitch.runtime.server.arbitration import Arbitrator
from softswitch.runtime.server.digest_lists import DigestLists
from softswitch.runtime.server.packet_io import PacketIO
from softswitch.runtime.server.status import DETAILS_KEY, RpcError, batch_status, decode_details

MS = 1_000_000


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def data(n: int) -> p4data_pb2.P4Data:
    return p4data_pb2.P4Data(bitstring=bytes([n]))


def lists(config: p4r.DigestEntry.Config | None) -> tuple[DigestLists, list[p4r.DigestList], Clock]:
    sent: list[p4r.DigestList] = []
    clock = Clock()
    return DigestLists(lambda _id: config, sent.append, clock), sent, clock


def test_digest_list_fills_then_times_out() -> None:
    config = p4r.DigestEntry.Config(max_list_size=3, max_timeout_ns=10 * MS, ack_timeout_ns=0)
    dl, sent, clock = lists(config)
    for n in (1, 2, 1, 3):
        dl.learn(7, n, data(n))
    assert [(m.list_id, [d.bitstring for d in m.data]) for m in sent] == [(1, [b"\x01", b"\x02",
                                                                             b"\x03"])]
    clock.now = 1 * MS
    dl.learn(7, 1, data(1))          # ack_timeout 0: no cache, learned again
    assert dl.next_deadline() == 11 * MS
    clock.now = 10 * MS
    dl.tick()
    assert len(sent) == 1
    clock.now = 11 * MS
    dl.tick()
    assert [m.list_id for m in sent] == [1, 2] and len(sent[1].data) == 1
    assert dl.next_deadline() is None


def test_digest_cache_until_ack_or_ack_timeout() -> None:
    config = p4r.DigestEntry.Config(max_list_size=1, max_timeout_ns=0, ack_timeout_ns=50 * MS)
    dl, sent, clock = lists(config)
    dl.learn(1, "a", data(1))
    dl.learn(1, "a", data(1))        # cached: not sent again
    dl.learn(1, "b", data(2))
    assert [m.list_id for m in sent] == [1, 2]
    dl.ack(1, 1)
    dl.learn(1, "a", data(1))
    assert [m.list_id for m in sent] == [1, 2, 3]
    clock.now = 49 * MS
    dl.tick()
    dl.learn(1, "b", data(2))
    assert len(sent) == 3            # list 2 still unacked
    clock.now = 50 * MS
    dl.tick()
    dl.learn(1, "b", data(2))
    assert len(sent) == 4


def test_digest_learning_off_drops_everything() -> None:
    dl, sent, _ = lists(None)
    dl.learn(1, "a", data(1))
    dl.tick()
    assert sent == [] and dl.next_deadline() is None


def header(name: str, *widths: int) -> p4i.ControllerPacketMetadata:
    msg = p4i.ControllerPacketMetadata()
    msg.preamble.name = name
    for i, w in enumerate(widths, 1):
        msg.metadata.add(id=i, name=f"f{i}", bitwidth=w)
    return msg


def test_packet_io_packs_fields_bitwise() -> None:
    info = p4i.P4Info(controller_packet_metadata=[header("packet_out", 9, 3, 1),
                                                  header("packet_in", 4, 9)])
    codec = PacketIO(info)
    out = p4r.PacketOut(payload=b"P", metadata=[
        p4r.PacketMetadata(metadata_id=2, value=b"\x05"),
        p4r.PacketMetadata(metadata_id=1, value=b"\x00\x01\xff"),    # padded form accepted
    ])
    # 0b111111111 101 0 + 3 zero bits of padding = 0xFFD0
    assert codec.encode_packet_out(out) == b"\xff\xd0P"
    for bad in ([p4r.PacketMetadata(metadata_id=3, value=b"\x02")],
                [p4r.PacketMetadata(metadata_id=4, value=b"\x01")],
                [p4r.PacketMetadata(metadata_id=3, value=b"")]):
        with pytest.raises(RpcError) as info_:
            codec.encode_packet_out(p4r.PacketOut(metadata=bad))
        assert info_.value.code == grpc.StatusCode.INVALID_ARGUMENT
    packet = codec.decode_packet_in(bytes([0xA1, 0x28]) + b"rest")   # 1010 000100101 000
    assert packet is not None and packet.payload == b"rest"
    assert [(m.metadata_id, m.value) for m in packet.metadata] == [(1, b"\x0a"), (2, b"\x25")]
    assert codec.decode_packet_in(b"\x01") is None
    plain = PacketIO(p4i.P4Info())
    assert plain.decode_packet_in(b"xy").payload == b"xy"
    with pytest.raises(RpcError):
        plain.encode_packet_out(p4r.PacketOut(metadata=[p4r.PacketMetadata(metadata_id=1)]))


class Client:
    def __init__(self) -> None:
        self.got: list[p4r.MasterArbitrationUpdate] = []

    def send(self, message: p4r.StreamMessageResponse) -> None:
        self.got.append(message.arbitration)


def update(eid: tuple[int, int] | None, device_id: int = 0, role: str | None = None,
           ) -> p4r.MasterArbitrationUpdate:
    msg = p4r.MasterArbitrationUpdate(device_id=device_id)
    if eid is not None:
        msg.election_id.high, msg.election_id.low = eid
    if role is not None:
        msg.role.name = role
    return msg


def may_write(arb: Arbitrator, role: str, election_id: tuple[int, int] | None) -> bool:
    try:
        arb.check_writer(role, election_id)
    except RpcError:
        return False
    return True


def primaries(arb: Arbitrator) -> list[Client]:
    return [client for client, _scope in arb.primaries()]


def test_arbitration_downgrade_limit_and_role_change() -> None:
    arb = Arbitrator(0, max_clients_per_role=2)
    a, b, c = Client(), Client(), Client()
    arb.arbitrate(a, update((0, 5)))
    arb.arbitrate(b, update((0, 3)))
    assert b.got[-1].status.code == code_pb2.ALREADY_EXISTS and primaries(arb) == [a]
    with pytest.raises(RpcError) as info:
        arb.arbitrate(c, update((0, 9)))
    assert info.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    arb.arbitrate(a, update((0, 1)))     # the primary downgrades itself: nobody is primary
    assert a.got[-1].status.code == code_pb2.NOT_FOUND
    assert b.got[-1].status.code == code_pb2.NOT_FOUND and primaries(arb) == []
    assert not may_write(arb, "", (0, 5)) and not may_write(arb, "", None)
    arb.arbitrate(b, update((0, 5)))     # equal to the highest seen: primary again
    assert b.got[-1].status.code == code_pb2.OK and may_write(arb, "", (0, 5))
    with pytest.raises(RpcError) as info:
        arb.arbitrate(b, update((0, 5), role="other"))
    assert info.value.code == grpc.StatusCode.FAILED_PRECONDITION
    arb.leave(b)
    arb.leave(a)
    assert arb.client_count() == 0 and may_write(arb, "", None)


def test_batch_status_details_round_trip() -> None:
    assert batch_status([None, None]) is None
    error = batch_status([None, (grpc.StatusCode.NOT_FOUND, "no such entry")])
    assert error is not None and error.code == grpc.StatusCode.UNKNOWN
    details = decode_details([(DETAILS_KEY, error.details.SerializeToString())])
    assert [(d.canonical_code, d.message) for d in details] == [
        (code_pb2.OK, ""), (code_pb2.NOT_FOUND, "no such entry")]
