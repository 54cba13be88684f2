"""SwitchConnection: a synchronous P4Runtime client for one switch (grpcio + finsy's stubs).

One object per switch, no global state; safe to use from several threads (gRPC channels are
thread-safe, the stream is served by one reader thread that sorts messages into queues).
Requests are built by the module-level `*_request` functions and decoded by p4rt.packetio and
p4rt.entities, so an asyncio variant (grpc.aio) needs only its own transport on top of them.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import grpc
from finsy.proto import p4i, p4r, p4r_grpc, rpc_code

from p4rt.entities import (
    DELETE,
    INSERT,
    MODIFY,
    Entity,
    EntityLike,
    as_entity,
    decode_entity,
    describe_update,
    make_update,
)
from p4rt.errors import (
    EncodeError,
    P4RuntimeConnectionError,
    P4RuntimeRpcError,
    P4RuntimeWriteError,
    UpdateError,
    code_name,
    unreachable_error,
    write_error,
)
from p4rt.packetio import (
    DigestList,
    PacketIn,
    decode_digest_list,
    decode_packet_in,
    packet_out_message,
)
from p4rt.protowire import SMALL, VarintTooLong, decode_varint, encode_varint
from p4rt.schema import Schema

LOG = logging.getLogger("p4rt")

ElectionId = tuple[int, int] | int
PipelineAction = p4r.SetForwardingPipelineConfigRequest.Action
ResponseType = p4r.GetForwardingPipelineConfigRequest.ResponseType
Atomicity = p4r.WriteRequest.Atomicity

VERIFY_AND_COMMIT = PipelineAction.VERIFY_AND_COMMIT
CONTINUE_ON_ERROR = Atomicity.CONTINUE_ON_ERROR

# Large entity lists are split so one WriteRequest stays well under gRPC's default 4 MiB limit.
DEFAULT_BATCH_SIZE = 1000
MAX_BATCH_BYTES = 2 * 1024 * 1024

T = TypeVar("T")
UpdateLike = p4r.Update | tuple[int | str, EntityLike]


def uint128(value: ElectionId) -> p4r.Uint128:
    """An election id from (high, low) or an int."""
    if isinstance(value, int):
        if value < 0 or value >> 128:
            raise EncodeError(f"election id {value} is not a 128-bit unsigned number")
        return p4r.Uint128(high=value >> 64, low=value & ((1 << 64) - 1))
    high, low = value
    return p4r.Uint128(high=high, low=low)


def _enum(enum: Any, value: int | str, what: str) -> int:
    if isinstance(value, str):
        try:
            return int(enum.Value(value.upper()))
        except ValueError:
            raise EncodeError(f"unknown {what} {value!r} (one of {', '.join(enum.keys())})") from None
    return value


def _p4info_of(p4info: p4i.P4Info | Schema | Path | str) -> p4i.P4Info:
    if isinstance(p4info, Schema):
        return p4info.p4info
    if isinstance(p4info, Path | str):
        return Schema.load(p4info).p4info
    return p4info


def _device_config_bytes(config: bytes | str | Path) -> bytes:
    if isinstance(config, Path):
        return config.read_bytes()
    if isinstance(config, str):
        return config.encode()
    return bytes(config)


# -- requests (shared by any transport) -----------------------------------------------------------

def arbitration_request(device_id: int, election_id: ElectionId, role: str,
                        role_config: Any = None) -> p4r.StreamMessageRequest:
    """`role_config`: a packed config (google.protobuf.Any: p4rt.role_config) or None."""
    update = p4r.MasterArbitrationUpdate(device_id=device_id, election_id=uint128(election_id))
    if role:
        update.role.name = role
    if role_config is not None:
        update.role.config.CopyFrom(role_config)
    return p4r.StreamMessageRequest(arbitration=update)


def write_request(device_id: int, election_id: ElectionId, role: str,
                  updates: Sequence[p4r.Update], atomicity: int) -> p4r.WriteRequest:
    return p4r.WriteRequest(device_id=device_id, election_id=uint128(election_id), role=role,
                            updates=updates, atomicity=atomicity)  # type: ignore[arg-type]


def pipeline_request(device_id: int, election_id: ElectionId, role: str, p4info: p4i.P4Info,
                     device_config: bytes, cookie: int,
                     action: int) -> p4r.SetForwardingPipelineConfigRequest:
    config = p4r.ForwardingPipelineConfig(p4info=p4info, p4_device_config=device_config)
    config.cookie.cookie = cookie
    return p4r.SetForwardingPipelineConfigRequest(
        device_id=device_id, election_id=uint128(election_id), role=role,
        action=action, config=config)  # type: ignore[arg-type]


def to_update(item: UpdateLike) -> p4r.Update:
    if isinstance(item, p4r.Update):
        return item
    kind, entity = item
    return make_update(kind, entity)


def chunks(updates: Iterable[T], batch_size: int, max_bytes: int = MAX_BATCH_BYTES,
           size_of: Callable[[T], int] = p4r.Update.ByteSize,  # type: ignore[assignment]
           ) -> Iterator[tuple[int, list[T]]]:
    """(offset, batch) pairs: at most `batch_size` updates and about `max_bytes` bytes each,
    taken lazily; `size_of` one update's encoded size (len, for updates already encoded)."""
    batch: list[T] = []
    size = 0
    offset = 0
    for position, update in enumerate(updates):
        update_size = size_of(update) + 8
        if batch and (len(batch) >= batch_size or size + update_size > max_bytes):
            yield offset, batch
            batch, size, offset = [], 0, position
        batch.append(update)
        size += update_size
    if batch:
        yield offset, batch


def encoded_write_request(device_id: int, election_id: ElectionId, role: str,
                          updates: Sequence[bytes], atomicity: int) -> bytes:
    """`write_request(...).SerializeToString()` for updates already serialized (each a
    ``p4.v1.Update``'s bytes): no message objects per update, so a large batch costs a join."""
    head = write_request(device_id, election_id, role, [], atomicity).SerializeToString()
    parts = [head]
    append = parts.append
    for update in updates:   # WriteRequest.updates = 4, length-delimited
        size = len(update)
        append(b"\x22" + (SMALL[size] if size < 128 else encode_varint(size)))
        append(update)
    return b"".join(parts)


def encoded_chunks(updates: Iterable[bytes], batch_size: int, max_bytes: int = MAX_BATCH_BYTES
                   ) -> Iterator[tuple[int, list[bytes]]]:
    """`chunks` for serialized updates."""
    return chunks(updates, batch_size, max_bytes, len)


def read_response_entities(data: bytes) -> list[bytes]:
    """The entities of a ReadResponse's bytes, each as its own bytes (entities = 1, its only
    field). Anything else — another field, bytes cut short — is left to the parser: its
    entities re-serialized, or its error."""
    out: list[bytes] = []
    i, n = 0, len(data)
    try:
        while i < n and data[i] == 0x0A:
            size, i = decode_varint(data, i + 1)   # the entity's length
            if i + size > n:
                break
            out.append(data[i:i + size])
            i += size
        else:
            if i == n:
                return out
    except (IndexError, VarintTooLong):   # cut short inside a length
        pass
    return [entity.SerializeToString() for entity in p4r.ReadResponse.FromString(data).entities]


# -- the connection -------------------------------------------------------------------------------

class _StreamClosed:
    """Queue marker: the stream ended (the reason is in SwitchConnection.stream_error)."""


_CLOSED = _StreamClosed()


# Big enough for a full plan's read-back and a program's P4Info + device config.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# A failed batch carries one p4.v1.Error per update in its trailers (about 100 bytes each):
# gRPC's default 16 KiB limit would turn 1,000 precise errors into one RESOURCE_EXHAUSTED.
MAX_METADATA_BYTES = 4 * 1024 * 1024
CHANNEL_OPTIONS = (("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_metadata_size", MAX_METADATA_BYTES))


class SwitchConnection:
    """A P4Runtime session with one device: stream channel, arbitration, RPCs, packet I/O."""

    def __init__(self, address: str, device_id: int = 0, election_id: ElectionId = (0, 1),
                 role: str = "", credentials: grpc.ChannelCredentials | None = None, *,
                 role_config: Any = None,
                 schema: Schema | None = None, rpc_timeout: float | None = 30.0,
                 batch_size: int = DEFAULT_BATCH_SIZE,
                 channel_options: Sequence[tuple[str, Any]] = ()) -> None:
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.role = role
        self.role_config = role_config   # packed (p4rt.role_config), sent when arbitrating
        self.schema = schema
        self.rpc_timeout = rpc_timeout
        self.batch_size = batch_size
        self.is_primary = False
        self.stream_error: P4RuntimeRpcError | None = None  # why the stream ended, if it did
        # The newest arbitration update (election_id: the highest the server has seen).
        self.last_arbitration: p4r.MasterArbitrationUpdate | None = None
        self._credentials = credentials
        self._channel_options = [*CHANNEL_OPTIONS, *channel_options]
        self._channel: grpc.Channel | None = None
        self._stub: p4r_grpc.P4RuntimeStub | None = None
        self._stream: Any = None
        self._reader: threading.Thread | None = None
        # Stream messages received so far (digest data entries, packet-ins), over every stream:
        # a caller in virtual time waits on them to know everything sent has arrived.
        self.digests_received = 0
        self.packet_ins_received = 0
        self._new_queues()

    def _new_queues(self) -> None:
        # Fresh per stream, so markers of a closed stream never leak into the next one.
        self._requests: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self._arbitration: queue.Queue[p4r.MasterArbitrationUpdate | _StreamClosed] = queue.Queue()
        self._packets: queue.Queue[p4r.PacketIn | _StreamClosed] = queue.Queue()
        self._digests: queue.Queue[p4r.DigestList | _StreamClosed] = queue.Queue()
        self._idle: queue.Queue[p4r.IdleTimeoutNotification | _StreamClosed] = queue.Queue()
        self._errors: queue.Queue[p4r.StreamError | _StreamClosed] = queue.Queue()

    # -- lifecycle ------------------------------------------------------------------------------
    def open_channel(self) -> p4r_grpc.P4RuntimeStub:
        """The gRPC stub, opening the channel if needed (unary RPCs work without a stream)."""
        if self._stub is None:
            if self._credentials is None:
                self._channel = grpc.insecure_channel(self.address, options=self._channel_options)
            else:
                self._channel = grpc.secure_channel(self.address, self._credentials,
                                                    options=self._channel_options)
            self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        return self._stub

    def connect(self, timeout: float = 10.0) -> bool:
        """Open the stream and arbitrate; True when this client is the primary."""
        if self._stream is not None:
            raise P4RuntimeConnectionError(f"{self.address}: already connected", "FAILED_PRECONDITION")
        stub = self.open_channel()
        assert self._channel is not None
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            try:  # one fail-fast RPC for the channel's last error (a refused TLS handshake...)
                stub.Capabilities(p4r.CapabilitiesRequest(), timeout=1.0, wait_for_ready=False)
                failure = None
            except grpc.RpcError as error:
                failure = error
            self.close()
            security = "plaintext" if self._credentials is None else "secure"
            raise unreachable_error(f"cannot reach a P4Runtime server at {self.address}", timeout,
                                    security, failure) from None
        self._new_queues()
        self.stream_error = None
        self._stream = stub.StreamChannel(_drain(self._requests))
        self._reader = threading.Thread(target=self._read_stream, daemon=True,
                                        name=f"p4rt-stream-{self.address}")
        self._reader.start()
        self._requests.put(arbitration_request(self.device_id, self.election_id, self.role,
                                                self.role_config))
        try:
            reply = self._arbitration.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise P4RuntimeConnectionError(
                f"{self.address}: no arbitration reply within {timeout:g} s",
                "DEADLINE_EXCEEDED") from None
        if isinstance(reply, _StreamClosed):
            error = self.stream_error
            self.close()
            code = error.code if error is not None else "UNAVAILABLE"
            reason = error.details if error is not None else "stream closed"
            raise P4RuntimeConnectionError(
                f"{self.address}: arbitration for device {self.device_id} failed: {code}: {reason}",
                code)
        return self.is_primary

    def close(self) -> None:
        """End the stream and the channel; safe to call twice."""
        if self._stream is not None:
            self._requests.put(None)
            self._stream.cancel()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=5.0)
        if self._channel is not None:
            self._channel.close()
        self._stream = self._reader = self._channel = self._stub = None
        self.is_primary = False

    @property
    def stream_open(self) -> bool:
        """Whether the stream channel is up (False before connect, after close, and once the
        server ended it: a restarted or unreachable device)."""
        reader = self._reader
        return self._stream is not None and reader is not None and reader.is_alive()

    def rearbitrate(self, election_id: ElectionId) -> None:
        """Arbitrate again on the open stream with another election id (taking over as
        primary once the old one is gone); the answer arrives as an arbitration update."""
        self.election_id = election_id
        self.send_stream(arbitration_request(self.device_id, election_id, self.role,
                                                self.role_config))

    def __enter__(self) -> SwitchConnection:
        if self._stream is None:
            self.connect()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def _read_stream(self) -> None:
        stream = self._stream
        try:
            for response in stream:
                self._dispatch(response)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:  # CANCELLED: our own close()
                self.stream_error = P4RuntimeRpcError.from_grpc("StreamChannel", error)
                LOG.warning("%s: %s", self.address, self.stream_error)
        finally:
            self.is_primary = False
            for waiting in (self._arbitration, self._packets, self._digests, self._idle,
                            self._errors):
                waiting.put(_CLOSED)  # type: ignore[arg-type]

    def _dispatch(self, response: p4r.StreamMessageResponse) -> None:
        kind = response.WhichOneof("update")
        if kind == "arbitration":
            self.is_primary = response.arbitration.status.code == rpc_code.OK
            self.last_arbitration = response.arbitration
            self._arbitration.put(response.arbitration)
        elif kind == "packet":
            self.packet_ins_received += 1
            self._packets.put(response.packet)
        elif kind == "digest":
            self.digests_received += len(response.digest.data)
            self._digests.put(response.digest)
        elif kind == "idle_timeout_notification":
            self._idle.put(response.idle_timeout_notification)
        elif kind == "error":
            LOG.warning("%s: stream error %s: %s", self.address,
                        code_name(response.error.canonical_code), response.error.message)
            self._errors.put(response.error)
        else:
            LOG.debug("%s: ignoring stream message %s", self.address, kind)

    def _rpc(self, method: str, call: Any, request: Any, **kwargs: Any) -> Any:
        try:
            return call(request, timeout=self.rpc_timeout, **kwargs)
        except grpc.RpcError as error:
            raise P4RuntimeRpcError.from_grpc(method, error) from None

    # -- pipeline -------------------------------------------------------------------------------
    def capabilities(self) -> str:
        """The server's P4Runtime API version."""
        stub = self.open_channel()
        reply = self._rpc("Capabilities", stub.Capabilities,
                          p4r.CapabilitiesRequest(device_id=self.device_id))
        return reply.p4runtime_api_version

    def set_pipeline(self, p4info: p4i.P4Info | Schema | Path | str,
                     device_config: bytes | str | Path, cookie: int = 0,
                     action: int | str = VERIFY_AND_COMMIT) -> None:
        """SetForwardingPipelineConfig; on a committing action the schema follows the P4Info.

        `p4info`: a message, a Schema, or a P4Info file path; `device_config`: bytes, text (the
        IR JSON itself) or a Path to read.
        """
        info = _p4info_of(p4info)
        action_value = _enum(PipelineAction, action, "pipeline action")
        request = pipeline_request(self.device_id, self.election_id, self.role, info,
                                   _device_config_bytes(device_config), cookie, action_value)
        self._rpc("SetForwardingPipelineConfig", self.open_channel().SetForwardingPipelineConfig,
                  request)
        if action_value != PipelineAction.VERIFY:
            self.schema = Schema(info)

    def get_pipeline(self, response_type: int | str = ResponseType.ALL
                     ) -> p4r.ForwardingPipelineConfig:
        """GetForwardingPipelineConfig; adopts the returned P4Info as schema if there is none."""
        request = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=_enum(ResponseType, response_type, "response type"))  # type: ignore[arg-type]
        reply = self._rpc("GetForwardingPipelineConfig",
                          self.open_channel().GetForwardingPipelineConfig, request)
        if self.schema is None and reply.config.HasField("p4info"):
            self.schema = Schema(reply.config.p4info)
        return reply.config

    # -- write ----------------------------------------------------------------------------------
    def write(self, updates: Iterable[UpdateLike], atomicity: int | str = CONTINUE_ON_ERROR) -> None:
        """Send the updates as one WriteRequest; P4RuntimeWriteError lists the failed ones."""
        batch = [to_update(item) for item in updates]
        if batch:
            self._write_batch(batch, _enum(Atomicity, atomicity, "atomicity"), 0)

    def _write_batch(self, batch: list[p4r.Update], atomicity: int, offset: int) -> None:
        request = write_request(self.device_id, self.election_id, self.role, batch, atomicity)
        try:
            self.open_channel().Write(request, timeout=self.rpc_timeout)
        except grpc.RpcError as error:
            descriptions = [describe_update(self.schema, update) for update in batch]
            raise write_error(error, descriptions, offset) from None

    def write_all(self, updates: Iterable[UpdateLike], *, batch_size: int | None = None,
                  atomicity: int | str = CONTINUE_ON_ERROR) -> None:
        """Send any number of updates in as many WriteRequests as needed.

        Every batch is sent even when an earlier one failed (CONTINUE_ON_ERROR across batches);
        the failures of all batches are raised together, indexed within `updates`.
        """
        all_updates = [to_update(item) for item in updates]
        atomicity_value = _enum(Atomicity, atomicity, "atomicity")
        failed: list[UpdateError] = []
        first: P4RuntimeWriteError | None = None
        for offset, batch in chunks(all_updates, batch_size or self.batch_size):
            try:
                self._write_batch(batch, atomicity_value, offset)
            except P4RuntimeWriteError as error:
                if not error.errors:
                    raise  # the whole request was refused: later batches would be too
                first = first or error
                failed.extend(error.errors)
        if first is not None:
            raise P4RuntimeWriteError(first.code, first.details, failed)

    def insert(self, entities: EntityLike | Iterable[EntityLike], **options: Any) -> None:
        self.write_all(((INSERT, item) for item in _listed(entities)), **options)

    def modify(self, entities: EntityLike | Iterable[EntityLike], **options: Any) -> None:
        self.write_all(((MODIFY, item) for item in _listed(entities)), **options)

    def delete(self, entities: EntityLike | Iterable[EntityLike], **options: Any) -> None:
        self.write_all(((DELETE, item) for item in _listed(entities)), **options)

    # -- read -----------------------------------------------------------------------------------
    def read_raw(self, entities: EntityLike | Iterable[EntityLike]) -> Iterator[p4r.Entity]:
        """The entities the server returns for these (wildcard) entities, as messages."""
        request = p4r.ReadRequest(device_id=self.device_id, role=self.role,
                                  entities=[as_entity(item) for item in _listed(entities)])
        stub = self.open_channel()
        try:
            for reply in stub.Read(request, timeout=self.rpc_timeout):
                yield from reply.entities
        except grpc.RpcError as error:
            raise P4RuntimeRpcError.from_grpc("Read", error) from None

    def read(self, entities: EntityLike | Iterable[EntityLike]) -> Iterator[Entity | p4r.Entity]:
        """Like read_raw, decoded into builder objects (TableEntry...) when there is a schema."""
        for entity in self.read_raw(entities):
            yield decode_entity(self.schema, entity) if self.schema is not None else entity

    def delete_all(self) -> int:
        """Delete every table entry (except const ones), action profile group and member,
        multicast group and clone session: a clean slate between tests. Returns the count.

        Kinds the server cannot read by wildcard (UNIMPLEMENTED) are skipped; default
        actions are left as they are.
        """
        wildcards = [
            p4r.TableEntry(), p4r.ActionProfileGroup(), p4r.ActionProfileMember(),
            p4r.PacketReplicationEngineEntry(multicast_group_entry=p4r.MulticastGroupEntry()),
            p4r.PacketReplicationEngineEntry(clone_session_entry=p4r.CloneSessionEntry()),
        ]
        deleted = 0
        for wildcard in wildcards:  # tables before the groups and members they point to
            try:
                found = list(self.read_raw(wildcard))
            except P4RuntimeRpcError as error:
                if error.code == "UNIMPLEMENTED":
                    continue
                raise
            doomed = [entity for entity in found
                      if not (entity.WhichOneof("entity") == "table_entry"
                              and (entity.table_entry.is_const
                                   or entity.table_entry.is_default_action))]
            self.write_all((DELETE, entity) for entity in doomed)
            deleted += len(doomed)
        return deleted

    # -- stream ---------------------------------------------------------------------------------
    def _require_stream(self) -> None:
        if self._stream is None:
            raise P4RuntimeConnectionError(f"{self.address}: not connected (call connect())",
                                           "FAILED_PRECONDITION")

    def send_stream(self, request: p4r.StreamMessageRequest) -> None:
        self._require_stream()
        self._requests.put(request)

    def packet_out(self, payload: bytes, **metadata: object) -> None:
        """Send a PacketOut; metadata by name from the P4Info's packet_out header."""
        message = packet_out_message(self.schema, payload, metadata)
        self.send_stream(p4r.StreamMessageRequest(packet=message))

    def get_packet_in(self, timeout: float | None = 1.0) -> PacketIn | None:
        """The next PacketIn (metadata by name), or None after `timeout` s or on stream end."""
        message = _take(self._packets, timeout)
        return None if message is None else decode_packet_in(self.schema, message)

    def get_digest(self, timeout: float | None = 1.0) -> DigestList | None:
        """The next DigestList, decoded by the digest's type, or None."""
        message = _take(self._digests, timeout)
        return None if message is None else decode_digest_list(self.schema, message)

    def ack_digest(self, digests: DigestList | Iterable[DigestList]) -> None:
        """Acknowledge digest lists, letting the server send the same data again later."""
        items = [digests] if isinstance(digests, DigestList) else list(digests)
        for item in items:
            ack = p4r.DigestListAck(digest_id=item.digest_id, list_id=item.list_id)
            self.send_stream(p4r.StreamMessageRequest(digest_ack=ack))

    def get_idle_timeout(self, timeout: float | None = 1.0) -> p4r.IdleTimeoutNotification | None:
        return _take(self._idle, timeout)

    def get_stream_error(self, timeout: float | None = 1.0) -> p4r.StreamError | None:
        """The next StreamError the server sent about a packet-out or digest ack."""
        return _take(self._errors, timeout)

    def get_arbitration(self, timeout: float | None = 1.0) -> p4r.MasterArbitrationUpdate | None:
        """The next arbitration update after connect() (another client took over...)."""
        return _take(self._arbitration, timeout)

    def __repr__(self) -> str:
        state = "primary" if self.is_primary else ("connected" if self._stream else "closed")
        return f"SwitchConnection({self.address}, device {self.device_id}, {state})"


def _drain(requests: queue.Queue[p4r.StreamMessageRequest | None]
           ) -> Iterator[p4r.StreamMessageRequest]:
    """The stream's request iterator: queued messages until the None that close() puts."""
    while True:
        request = requests.get()
        if request is None:
            return
        yield request


def _take(source: queue.Queue[T | _StreamClosed], timeout: float | None) -> T | None:
    try:
        item = source.get(timeout=timeout)
    except queue.Empty:
        return None
    if isinstance(item, _StreamClosed):
        source.put(item)  # stay closed for the next caller
        return None
    return item


def _listed(entities: EntityLike | Iterable[EntityLike]) -> list[EntityLike]:
    if isinstance(entities, Entity | p4r.Entity) or hasattr(entities, "DESCRIPTOR"):
        return [entities]  # type: ignore[list-item]
    return list(entities)  # type: ignore[arg-type]
