"""One asyncio P4Runtime session per switch, on `grpc.aio` and the `p4rt` library's builders.

The `p4rt` package keeps its request builders, entity builders and error decoding free of I/O
(p4rt/__init__.py); this module adds only an asyncio transport: a stream channel with
arbitration, Get/SetForwardingPipelineConfig with a cookie, batched writes and reads. Many
sessions run in one event loop, so a controller talks to thousands of switches from one thread.

A session is the primary for its (device, role) or a backup. A backup may read but never
writes: `require_primary` refuses before any request is sent, naming the primary's election id.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from finsy.proto import p4i, p4r, p4r_grpc, rpc_code

from controller.topology.model import Endpoint
from p4rt.client import (
    CHANNEL_OPTIONS,
    CONTINUE_ON_ERROR,
    DEFAULT_BATCH_SIZE,
    VERIFY_AND_COMMIT,
    ResponseType,
    arbitration_request,
    chunks,
    encoded_chunks,
    encoded_write_request,
    pipeline_request,
    read_response_entities,
    write_request,
)
from p4rt.entities import describe_update
from p4rt.errors import (
    P4RuntimeConnectionError,
    P4RuntimeRpcError,
    UpdateError,
    unreachable_error,
    write_error,
)
from p4rt.schema import Schema


class NotPrimaryError(P4RuntimeConnectionError):
    """This controller is a backup for the switch, so it must not write."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "PERMISSION_DENIED")


@dataclass(frozen=True)
class Program:
    """A compiled switch program: what SetForwardingPipelineConfig carries.

    `cookie` is derived from the content (P4Info and device config), so "the switch already runs
    this pipeline" is one GetForwardingPipelineConfig(COOKIE_ONLY) away.
    """

    p4info: p4i.P4Info
    device_config: bytes
    source: str = ""

    @property
    def cookie(self) -> int:
        digest = hashlib.sha256(self.p4info.SerializeToString(deterministic=True))
        digest.update(self.device_config)
        # 63 bits and never zero: 0 means "no cookie" to P4Runtime servers.
        return (int.from_bytes(digest.digest()[:8], "big") >> 1) or 1

    @property
    def schema(self) -> Schema:
        return Schema(self.p4info)

    @classmethod
    def from_files(cls, p4info: Path | str, device_config: Path | str) -> Program:
        """A P4Info file (text, JSON or binary) and a device config (IR JSON, or BMv2 JSON)."""
        schema = Schema.load(p4info)
        if not schema.p4info.tables:   # an empty file, or bytes that parse as no P4Info
            raise P4RuntimeConnectionError(f"{p4info}: not a program's P4Info (no tables)",
                                           "INVALID_ARGUMENT")
        try:
            config = Path(device_config).read_bytes()
        except OSError as error:
            raise P4RuntimeConnectionError(f"{device_config}: cannot read the device config: "
                                           f"{error.strerror}", "INVALID_ARGUMENT") from None
        return cls(schema.p4info, config, f"{p4info} + {device_config}")

    @classmethod
    def compile(cls, path: Path | str) -> Program:
        """Compile a P4 program (or load an IR JSON) as `softswitch compile` does; raises
        softswitch's P4Error on a bad program."""
        from softswitch.compiler import load_program
        from softswitch.ir.serialize import dumps_ir
        from softswitch.p4info import build_p4info

        checked = load_program(path)
        return cls(build_p4info(checked), dumps_ir(checked).encode(), str(path))


def channel_credentials(endpoint: Endpoint) -> grpc.ChannelCredentials | None:
    """TLS credentials from the endpoint's files; None (plaintext) when it names none."""
    if not (endpoint.tls_ca or endpoint.tls_cert or endpoint.tls_key):
        return None
    if bool(endpoint.tls_cert) != bool(endpoint.tls_key):
        raise P4RuntimeConnectionError(
            f"{endpoint.grpc_address}: TLS needs both a certificate and a key (mutual TLS), "
            "or neither", "INVALID_ARGUMENT")

    def read(path: str | None, what: str) -> bytes | None:
        if path is None:
            return None
        try:
            return Path(path).read_bytes()
        except OSError as error:
            raise P4RuntimeConnectionError(f"cannot read the TLS {what} {path}: {error.strerror}",
                                           "INVALID_ARGUMENT") from None

    return grpc.ssl_channel_credentials(root_certificates=read(endpoint.tls_ca, "CA"),
                                        private_key=read(endpoint.tls_key, "key"),
                                        certificate_chain=read(endpoint.tls_cert, "certificate"))


def _security(endpoint: Endpoint) -> str:
    if endpoint.tls_cert:
        return "mutual TLS"
    return "TLS" if endpoint.tls_ca else "plaintext"


def _election(value: p4r.Uint128) -> tuple[int, int]:
    return (value.high, value.low)


class Session:
    """An asyncio P4Runtime session with one switch (`endpoint`), named `name` in messages."""

    def __init__(self, name: str, endpoint: Endpoint, *, rpc_timeout: float = 30.0,
                 connect_timeout: float = 10.0, batch_size: int = DEFAULT_BATCH_SIZE,
                 max_in_flight: int = 4) -> None:
        self.name = name
        self.endpoint = endpoint
        self.rpc_timeout = rpc_timeout
        self.connect_timeout = connect_timeout
        self.batch_size = batch_size
        self.max_in_flight = max_in_flight
        self.is_primary = False
        self.primary_election_id: tuple[int, int] | None = None
        self.schema: Schema | None = None
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None
        self._stream: Any = None
        self._reader: asyncio.Task[None] | None = None
        # The endpoint's role config, packed against the program (p4rt.role_config); None: none
        self.role_config: Any = None

    @property
    def address(self) -> str:
        return self.endpoint.grpc_address

    @property
    def device_id(self) -> int:
        return self.endpoint.device_id

    def _where(self) -> str:
        return f"{self.name} ({self.address}, device {self.device_id})"

    # -- lifecycle ------------------------------------------------------------------------------
    async def connect(self) -> bool:
        """Open the channel and the stream, arbitrate; True when this session is the primary."""
        if self._channel is not None:  # connecting again: drop the old channel first
            await self.close()
        credentials = channel_credentials(self.endpoint)
        if credentials is None:
            self._channel = grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS)
        else:
            self._channel = grpc.aio.secure_channel(self.address, credentials,
                                                    options=CHANNEL_OPTIONS)
        self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        try:
            await asyncio.wait_for(self._channel.channel_ready(), self.connect_timeout)
        except TimeoutError:
            failure = await self._why_not_ready()
            await self.close()
            raise unreachable_error(self._where(), self.connect_timeout,
                                    _security(self.endpoint), failure) from None
        self._stream = self._stub.StreamChannel()
        endpoint = self.endpoint
        try:
            await self._stream.write(arbitration_request(endpoint.device_id,
                                                         endpoint.election_id, endpoint.role,
                                                         self.role_config))
            reply = await asyncio.wait_for(self._first_arbitration(), self.connect_timeout)
        except TimeoutError:
            await self.close()
            raise P4RuntimeConnectionError(f"{self._where()}: no arbitration reply within "
                                           f"{self.connect_timeout:g} s",
                                           "DEADLINE_EXCEEDED") from None
        except grpc.RpcError as error:
            await self.close()
            failure = P4RuntimeRpcError.from_grpc("StreamChannel", error)
            raise P4RuntimeConnectionError(
                f"{self._where()}: arbitration failed: {failure.code}: {failure.details}",
                failure.code) from None
        self._on_arbitration(reply)
        self._reader = asyncio.create_task(self._read_stream(), name=f"p4rt-{self.name}")
        return self.is_primary

    async def _why_not_ready(self) -> grpc.RpcError | None:
        """The channel's last connection error, from one fail-fast RPC (None if it answered)."""
        try:
            await self._stub.Capabilities(p4r.CapabilitiesRequest(), timeout=1.0,
                                          wait_for_ready=False)
        except grpc.RpcError as error:
            return error
        return None

    async def _first_arbitration(self) -> p4r.MasterArbitrationUpdate:
        while True:
            message = await self._stream.read()
            if message is grpc.aio.EOF:
                raise P4RuntimeConnectionError(f"{self._where()}: the server closed the stream "
                                               "before answering arbitration")
            if message.WhichOneof("update") == "arbitration":
                return message.arbitration

    def _on_arbitration(self, update: p4r.MasterArbitrationUpdate) -> None:
        self.is_primary = update.status.code == rpc_code.OK
        # Servers send the primary's election id to everybody (absent when there is none).
        self.primary_election_id = (_election(update.election_id)
                                    if update.HasField("election_id") else None)

    async def _read_stream(self) -> None:
        """Follow later arbitration updates (another controller taking over); ignore the rest."""
        try:
            while True:
                message = await self._stream.read()
                if message is grpc.aio.EOF:
                    break
                if message.WhichOneof("update") == "arbitration":
                    self._on_arbitration(message.arbitration)
        except (grpc.RpcError, asyncio.CancelledError):
            pass
        finally:
            self.is_primary = False

    async def close(self) -> None:
        """End the stream and the channel; safe to call twice."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._stream is not None:
            self._stream.cancel()
        if self._channel is not None:
            await self._channel.close()
        self._reader = self._stream = self._channel = self._stub = None
        self.is_primary = False

    async def __aenter__(self) -> Session:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def require_primary(self) -> None:
        """Refuse to go on as a backup, saying who the primary is."""
        if self.is_primary:
            return
        mine = self.endpoint.election_id
        if self.primary_election_id is not None:
            raise NotPrimaryError(
                f"{self._where()}: this controller is a backup: its election id "
                f"{mine[0]},{mine[1]} is below the switch's primary election id "
                f"{self.primary_election_id[0]},{self.primary_election_id[1]}, and a backup "
                "must not write")
        raise NotPrimaryError(f"{self._where()}: this controller is not the primary "
                              f"(election id {mine[0]},{mine[1]})")

    async def _rpc(self, method: str, call: Any, request: Any) -> Any:
        if self._stub is None:
            raise P4RuntimeConnectionError(f"{self._where()}: not connected",
                                           "FAILED_PRECONDITION")
        try:
            return await call(request, timeout=self.rpc_timeout)
        except grpc.RpcError as error:
            raise P4RuntimeRpcError.from_grpc(method, error) from None

    # -- pipeline -------------------------------------------------------------------------------
    async def pipeline_cookie(self) -> int | None:
        """The cookie of the switch's pipeline; None when it runs none (or sent no cookie)."""
        request = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id, response_type=ResponseType.COOKIE_ONLY)
        try:
            reply = await self._rpc("GetForwardingPipelineConfig",
                                    self._stub.GetForwardingPipelineConfig, request)
        except P4RuntimeRpcError as error:
            if error.code == "FAILED_PRECONDITION":  # no pipeline yet (PI and softswitch)
                return None
            raise
        if not reply.config.HasField("cookie") or reply.config.cookie.cookie == 0:
            return None
        return int(reply.config.cookie.cookie)

    async def set_pipeline(self, program: Program) -> None:
        self.require_primary()
        endpoint = self.endpoint
        request = pipeline_request(endpoint.device_id, endpoint.election_id, endpoint.role,
                                   program.p4info, program.device_config, program.cookie,
                                   VERIFY_AND_COMMIT)
        await self._rpc("SetForwardingPipelineConfig", self._stub.SetForwardingPipelineConfig,
                        request)
        self.schema = program.schema

    async def ensure_pipeline(self, program: Program) -> bool:
        """Push `program` unless the switch already runs it (same cookie); True if pushed.

        Pushing a pipeline clears the switch's tables, so skipping it is what lets a second push
        change nothing."""
        self.require_primary()
        if await self.pipeline_cookie() == program.cookie:
            self.schema = program.schema
            return False
        await self.set_pipeline(program)
        return True

    # -- read and write -------------------------------------------------------------------------
    async def read(self, entities: Sequence[p4r.Entity]) -> list[p4r.Entity]:
        """Every entity the server returns for these (wildcard) entities, in one ReadRequest."""
        if self._stub is None:
            raise P4RuntimeConnectionError(f"{self._where()}: not connected",
                                           "FAILED_PRECONDITION")
        request = p4r.ReadRequest(device_id=self.device_id, role=self.endpoint.role,
                                  entities=list(entities))
        found: list[p4r.Entity] = []
        try:
            async for reply in self._stub.Read(request, timeout=self.rpc_timeout):
                found.extend(reply.entities)
        except grpc.RpcError as error:
            raise P4RuntimeRpcError.from_grpc("Read", error) from None
        return found

    async def read_encoded(self, entities: Sequence[p4r.Entity]) -> list[bytes]:
        """`read`, each entity as its wire bytes (PlanCodec.decode_entity reads them): no
        message object per entity."""
        if self._channel is None:
            raise P4RuntimeConnectionError(f"{self._where()}: not connected",
                                           "FAILED_PRECONDITION")
        request = p4r.ReadRequest(device_id=self.device_id, role=self.endpoint.role,
                                  entities=list(entities))
        # no response_deserializer: each ReadResponse arrives as its bytes
        call = self._channel.unary_stream("/p4.v1.P4Runtime/Read",
                                          request_serializer=p4r.ReadRequest.SerializeToString)
        found: list[bytes] = []
        try:
            async for reply in call(request, timeout=self.rpc_timeout):
                found.extend(read_response_entities(reply))
        except grpc.RpcError as error:
            raise P4RuntimeRpcError.from_grpc("Read", error) from None
        return found

    async def write(self, updates: Sequence[p4r.Update]) -> list[UpdateError]:
        """Send `updates` in batches (CONTINUE_ON_ERROR), a few in flight at once; the failed
        updates, indexed within `updates`. A request refused as a whole raises
        P4RuntimeWriteError (the next batches would be refused too)."""
        self.require_primary()
        limit = asyncio.Semaphore(self.max_in_flight)

        async def send(offset: int, batch: list[p4r.Update]) -> list[UpdateError]:
            async with limit:
                return await self._write_batch(offset, batch)

        results = await asyncio.gather(*(send(offset, batch)
                                          for offset, batch in chunks(updates, self.batch_size)))
        return [error for failed in results for error in failed]

    async def write_encoded(self, updates: Iterable[bytes]) -> list[UpdateError]:
        """`write` for updates already serialized (PlanCodec.encode), taken lazily: each
        request is joined from its updates' bytes and sent as soon as it is full, so the
        updates of the next one are encoded while the switch applies this one."""
        self.require_primary()
        if self._channel is None:
            raise P4RuntimeConnectionError(f"{self._where()}: not connected",
                                           "FAILED_PRECONDITION")
        # no request_serializer: the request is sent as the bytes it is
        call = self._channel.unary_unary("/p4.v1.P4Runtime/Write",
                                         response_deserializer=p4r.WriteResponse.FromString)
        endpoint = self.endpoint
        limit = asyncio.Semaphore(self.max_in_flight)

        async def send(offset: int, batch: list[bytes]) -> list[UpdateError]:
            try:
                request = encoded_write_request(endpoint.device_id, endpoint.election_id,
                                                endpoint.role, batch, CONTINUE_ON_ERROR)
                await call(request, timeout=self.rpc_timeout)
            except grpc.RpcError as error:
                failure = write_error(error, [describe_update(self.schema, p4r.Update.FromString(u))
                                              for u in batch], offset)
                if not failure.errors:
                    raise failure from None
                return failure.errors
            finally:
                limit.release()
            return []

        sent: list[asyncio.Task[list[UpdateError]]] = []
        try:
            for offset, batch in encoded_chunks(updates, self.batch_size):
                await limit.acquire()
                sent.append(asyncio.create_task(send(offset, batch)))
                await asyncio.sleep(0)   # let it send before the next batch is encoded
            results = await asyncio.gather(*sent, return_exceptions=True)
        except BaseException:   # cancelled, or an encoding error: no task left running
            for task in sent:
                task.cancel()
            raise
        for result in results:   # a request refused as a whole: as `write`, raise it
            if isinstance(result, BaseException):
                raise result
        return [error for failed in results for error in failed]  # type: ignore[union-attr]

    async def _write_batch(self, offset: int, batch: list[p4r.Update]) -> list[UpdateError]:
        endpoint = self.endpoint
        request = write_request(endpoint.device_id, endpoint.election_id, endpoint.role, batch,
                                CONTINUE_ON_ERROR)
        try:
            await self._stub.Write(request, timeout=self.rpc_timeout)
        except grpc.RpcError as error:
            failure = write_error(error, [describe_update(self.schema, u) for u in batch], offset)
            if not failure.errors:
                raise failure from None
            return failure.errors
        return []

