"""A small in-memory P4Runtime servicer for the client tests (no pipeline, no packets).

It keeps entities by key, arbitrates by highest election id, answers write failures the way
the spec asks (UNKNOWN + one p4.v1.Error per update in grpc-status-details-bin), echoes each
PacketOut back as a PacketIn, and sends digest lists on demand.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
from finsy.proto import p4r, p4r_grpc, rpc_code, rpc_status
from google.protobuf import any_pb2

_Stop = object()


class _Abort(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _key(entity: p4r.Entity) -> bytes:
    """What identifies an entity: the message without its non-key fields."""
    key = p4r.Entity()
    key.CopyFrom(entity)
    kind = key.WhichOneof("entity")
    if kind == "table_entry":
        for name in ("action", "counter_data", "meter_config", "idle_timeout_ns", "metadata"):
            key.table_entry.ClearField(name)
    elif kind == "action_profile_member":
        key.action_profile_member.ClearField("action")
    elif kind == "action_profile_group":
        key.action_profile_group.ClearField("members")
        key.action_profile_group.ClearField("max_size")
    elif kind == "packet_replication_engine_entry":
        pre = key.packet_replication_engine_entry
        if pre.WhichOneof("type") == "multicast_group_entry":
            pre.multicast_group_entry.ClearField("replicas")
        else:
            session = pre.clone_session_entry
            for name in ("replicas", "class_of_service", "packet_length_bytes"):
                session.ClearField(name)
    elif kind in ("counter_entry", "register_entry", "meter_entry", "digest_entry"):
        message = getattr(key, kind)
        for name in ("data", "config"):
            if name in message.DESCRIPTOR.fields_by_name:
                message.ClearField(name)
    return key.SerializeToString(deterministic=True)


def _matches(query: p4r.Entity, entity: p4r.Entity) -> bool:
    """Read filter: same kind, and the query's non-zero ids equal the entity's."""
    kind = query.WhichOneof("entity")
    if kind != entity.WhichOneof("entity"):
        return False
    if kind == "table_entry":
        return query.table_entry.table_id in (0, entity.table_entry.table_id)
    if kind == "packet_replication_engine_entry":
        want, have = query.packet_replication_engine_entry, entity.packet_replication_engine_entry
        if want.WhichOneof("type") != have.WhichOneof("type"):
            return False
        if want.WhichOneof("type") == "multicast_group_entry":
            group = want.multicast_group_entry.multicast_group_id
            return group in (0, have.multicast_group_entry.multicast_group_id)
        session = want.clone_session_entry.session_id
        return session in (0, have.clone_session_entry.session_id)
    return True


class _Session:
    def __init__(self, election: tuple[int, int]) -> None:
        self.election = election
        self.out: queue.Queue[object] = queue.Queue()


class FakeP4Runtime(p4r_grpc.P4RuntimeServicer):
    def __init__(self, device_id: int = 1) -> None:
        self.device_id = device_id
        self.lock = threading.Lock()
        self.config = p4r.ForwardingPipelineConfig()
        self.entities: dict[bytes, p4r.Entity] = {}
        self.sessions: list[_Session] = []
        self.write_requests: list[p4r.WriteRequest] = []
        self.packet_outs: list[p4r.PacketOut] = []
        self.acks: list[p4r.DigestListAck] = []

    # -- arbitration ----------------------------------------------------------------------
    def _primary(self) -> _Session | None:
        return max(self.sessions, key=lambda session: session.election, default=None)

    def _announce(self) -> None:
        primary = self._primary()
        for session in self.sessions:
            update = p4r.MasterArbitrationUpdate(device_id=self.device_id)
            if primary is not None:
                update.election_id.high, update.election_id.low = primary.election
            update.status.code = rpc_code.OK if session is primary else rpc_code.ALREADY_EXISTS
            session.out.put(p4r.StreamMessageResponse(arbitration=update))

    def _check_writer(self, device_id: int, election: p4r.Uint128) -> None:
        if device_id != self.device_id:
            raise _Abort(grpc.StatusCode.NOT_FOUND, f"no device {device_id}")
        primary = self._primary()
        if primary is None or primary.election != (election.high, election.low):
            raise _Abort(grpc.StatusCode.PERMISSION_DENIED, "not the primary client")

    # -- RPCs -----------------------------------------------------------------------------
    def Capabilities(self, request: p4r.CapabilitiesRequest,
                     context: grpc.ServicerContext) -> p4r.CapabilitiesResponse:
        return p4r.CapabilitiesResponse(p4runtime_api_version="1.5.0")

    def SetForwardingPipelineConfig(self, request: p4r.SetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext
                                    ) -> p4r.SetForwardingPipelineConfigResponse:
        with self.lock:
            try:
                self._check_writer(request.device_id, request.election_id)
            except _Abort as error:
                context.abort(error.code, error.message)
            if not request.config.p4_device_config:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "empty device config")
            self.config.CopyFrom(request.config)
            self.entities.clear()
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request: p4r.GetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext
                                    ) -> p4r.GetForwardingPipelineConfigResponse:
        config = p4r.ForwardingPipelineConfig()
        config.CopyFrom(self.config)
        kind = p4r.GetForwardingPipelineConfigRequest
        if request.response_type in (kind.COOKIE_ONLY, kind.DEVICE_CONFIG_AND_COOKIE):
            config.ClearField("p4info")
        if request.response_type in (kind.COOKIE_ONLY, kind.P4INFO_AND_COOKIE):
            config.ClearField("p4_device_config")
        return p4r.GetForwardingPipelineConfigResponse(config=config)

    def Write(self, request: p4r.WriteRequest,
              context: grpc.ServicerContext) -> p4r.WriteResponse:
        with self.lock:
            self.write_requests.append(request)
            try:
                self._check_writer(request.device_id, request.election_id)
            except _Abort as error:
                context.abort(error.code, error.message)
            if request.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
                context.abort(grpc.StatusCode.UNIMPLEMENTED, "only CONTINUE_ON_ERROR")
            results = [self._apply(update) for update in request.updates]
        if all(code == rpc_code.OK for code, _ in results):
            return p4r.WriteResponse()
        status = rpc_status.Status(code=rpc_code.UNKNOWN, message="write failed")
        for code, message in results:
            detail = any_pb2.Any()
            detail.Pack(p4r.Error(canonical_code=code, message=message, space="fake"))
            status.details.append(detail)
        context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
        context.set_code(grpc.StatusCode.UNKNOWN)
        context.set_details("write failed")
        return p4r.WriteResponse()

    def _apply(self, update: p4r.Update) -> tuple[int, str]:
        key = _key(update.entity)
        present = key in self.entities
        if update.type == p4r.Update.INSERT:
            if present:
                return rpc_code.ALREADY_EXISTS, "entry already exists"
            self.entities[key] = update.entity
        elif update.type == p4r.Update.MODIFY:
            if not present:
                return rpc_code.NOT_FOUND, "no such entry"
            self.entities[key] = update.entity
        elif update.type == p4r.Update.DELETE:
            if not present:
                return rpc_code.NOT_FOUND, "no such entry"
            del self.entities[key]
        else:
            return rpc_code.INVALID_ARGUMENT, "update type unspecified"
        return rpc_code.OK, ""

    def Read(self, request: p4r.ReadRequest,
             context: grpc.ServicerContext) -> Iterator[p4r.ReadResponse]:
        if request.device_id != self.device_id:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no device {request.device_id}")
        with self.lock:
            stored = list(self.entities.values())
        for query in request.entities:
            found = [entity for entity in stored if _matches(query, entity)]
            yield p4r.ReadResponse(entities=found)

    def StreamChannel(self, request_iterator: Iterator[p4r.StreamMessageRequest],
                      context: grpc.ServicerContext) -> Iterator[p4r.StreamMessageResponse]:
        session: _Session | None = None
        out: queue.Queue[object] = queue.Queue()
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("update") != "arbitration":
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "arbitrate first")
        if first.arbitration.device_id != self.device_id:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no device {first.arbitration.device_id}")
        session = _Session((first.arbitration.election_id.high, first.arbitration.election_id.low))
        out = session.out
        with self.lock:
            self.sessions.append(session)
            self._announce()

        def read() -> None:
            try:
                for request in request_iterator:
                    self._stream_request(request, session)
            except grpc.RpcError:
                pass
            out.put(_Stop)

        threading.Thread(target=read, daemon=True).start()
        try:
            while True:
                item = out.get()
                if item is _Stop:
                    return
                yield item
        finally:
            with self.lock:
                self.sessions.remove(session)
                self._announce()

    def _stream_request(self, request: p4r.StreamMessageRequest, session: _Session) -> None:
        kind = request.WhichOneof("update")
        if kind == "packet":
            self.packet_outs.append(request.packet)
            echo = p4r.PacketIn(payload=request.packet.payload)
            for item in request.packet.metadata:
                if item.metadata_id == 1:
                    echo.metadata.add(metadata_id=1, value=item.value)
            session.out.put(p4r.StreamMessageResponse(packet=echo))
        elif kind == "digest_ack":
            self.acks.append(request.digest_ack)

    # -- test controls --------------------------------------------------------------------
    def send_to_primary(self, message: p4r.StreamMessageResponse) -> None:
        with self.lock:
            primary = self._primary()
        assert primary is not None
        primary.out.put(message)

    def end_streams(self) -> None:
        with self.lock:
            sessions = list(self.sessions)
        for session in sessions:
            session.out.put(_Stop)


class FakeServer:
    """The fake servicer on 127.0.0.1:<ephemeral port>."""

    def __init__(self, device_id: int = 1) -> None:
        self.service = FakeP4Runtime(device_id)
        self._server = grpc.server(ThreadPoolExecutor(max_workers=16))
        p4r_grpc.add_P4RuntimeServicer_to_server(self.service, self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{self.port}"

    def __enter__(self) -> FakeServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.service.end_streams()
        self._server.stop(0).wait()
