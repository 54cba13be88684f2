"""The P4Runtime gRPC server of a Device: what simple_switch_grpc's PI server answers.

Behaviour follows the P4Runtime spec and PI (``proto/server/pi_server.cpp``,
``proto/frontend/src/device_mgr.cpp``) where they agree; where they differ we follow the spec
and say so:

- a request for another ``device_id`` is NOT_FOUND (PI: FAILED_PRECONDITION or UNKNOWN);
- arbitration keeps the highest election id ever seen (arbitration.py);
- Read stops at the first bad entity and answers with its code, as PI does (the spec's
  UNKNOWN-with-details form is only used for Write);
- Write batches: CONTINUE_ON_ERROR only (others UNIMPLEMENTED, as PI); any failed update
  makes the call UNKNOWN with one ``p4.v1.Error`` per update in the details (status.py);
- request bytes that do not parse are INVALID_ARGUMENT (grpcio's default: INTERNAL and a
  logged trace), a stream message that does not parse ends the stream with it.

Locking, so that the control plane never stops forwarding for long: Write batches and pipeline
changes are serialised by the service's control lock (one batch sees one pipeline and no other
batch interleaves), but take ``device.lock`` only for slices of about ``SLICE_SECONDS`` and hand
it to the dataplane in between (``Device.yield_to_dataplane``). Read collects its answer in
chunks the same way and streams each chunk as it is built, without holding any lock while it
sends. Read's entities are deduplicated and its answer is capped at ``max_read_entities``
(RESOURCE_EXHAUSTED beyond), so one request cannot make the server build an unbounded answer.
A Read larger than one chunk is not a snapshot: a Write between two chunks may or may not be
seen; a pipeline change between two chunks ends the Read with ABORTED. An error found while
streaming (a bad entity after good ones) ends the call with that error after the chunks
already sent.

Speed: Write keeps the request's bytes, and plain table entry updates (the bulk of a
controller's push) are applied straight from them; a reconciling Read of all table entries is
answered with bytes encoded per entry (wire.py). Everything else, and anything unusual, goes
through the parsed messages, with the same results and errors.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import grpc
from finsy.proto import p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc

from p4rt.protowire import collections_deferred
from softswitch.runtime.program_cache import ProgramCache
from softswitch.runtime.server import status
from softswitch.runtime.server.arbitration import Arbitrator, election_id_of
from softswitch.runtime.server.digest_sweeper import DigestSweeper
from softswitch.runtime.server.pipeline_config import NO_PIPELINE, MakeStore, PipelineManager
from softswitch.runtime.server.roles import entity_p4_id
from softswitch.runtime.server.status import RpcError
from softswitch.runtime.server.stream import StreamSession
from softswitch.runtime.server.wire import encode_read_response, update_spans
from softswitch.runtime.server.worker_pool import WorkerPool

P4RUNTIME_API_VERSION = "1.4.0"
SERVICE_NAME = "p4.v1.P4Runtime"
MAX_MESSAGE_BYTES = 256 * 1024 * 1024        # PI's limit
MAX_STREAMS = 32                             # each open stream holds two threads
MAX_LONG_CALLS = 64                          # streaming calls of a server that detach
MAX_WORKERS = 64                             # a server's own pool: threads for unary calls
READ_CHUNK = 1000                            # entities per ReadResponse (at most)
SLICE_SECONDS = 0.002                        # device.lock held this long, then handed over
MAX_READ_ENTITIES = 1_000_000                # entities one Read may return


def _entity_store(pipeline: Any) -> Any:
    from softswitch.runtime.server.entities import EntityStore
    return EntityStore(pipeline)


def _check_update_type(kind: int) -> None:
    # Proto3 enums are open: any int32 arrives. Refused here, as PI's switch on the type does,
    # so no entity handler ever sees a value outside the enum.
    if kind not in (p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE):
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                       f"Invalid update type {kind}: expected INSERT, MODIFY or DELETE")


def _read_response(chunk: list[Any]) -> p4r.ReadResponse | bytes:
    """A ReadResponse of `chunk`: Entity messages, or encoded Entity bytes (table entries
    from a store that keeps them encoded), or both (the messages then encoded too)."""
    if not any(isinstance(item, bytes) for item in chunk):
        return p4r.ReadResponse(entities=chunk)
    return encode_read_response([item if isinstance(item, bytes) else item.SerializeToString()
                                 for item in chunk])


def _distinct(entities: Iterable[p4r.Entity]) -> list[p4r.Entity]:
    """The entities of a ReadRequest, each once (the same entity twice reads the same objects
    twice: a request of 20,000 copies of a wildcard would otherwise answer 20,000 times)."""
    seen: set[bytes] = set()
    distinct = []
    for entity in entities:
        if entity.WhichOneof("entity") is None:
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                           "Entity in ReadRequest has no entity set")
        key = entity.SerializeToString(deterministic=True)
        if key not in seen:
            seen.add(key)
            distinct.append(entity)
    return distinct


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    """The ``p4.v1.P4Runtime`` service for one device."""

    def __init__(self, device: Any, make_store: MakeStore | None = None, *,
                 max_read_entities: int = MAX_READ_ENTITIES,
                 programs: ProgramCache | None = None) -> None:
        """`programs`: where pushed configs' checked programs are kept (program_cache.py;
        None: the process's shared cache)."""
        self.device = device
        self.max_read_entities = max_read_entities
        self._control = threading.RLock()   # Write batches and pipeline changes, one at a time
        self.arbitrator = Arbitrator(device.device_id)
        self.pipelines = PipelineManager(device, make_store or _entity_store,
                                         self._send_digest_list, programs)
        self._sessions: set[StreamSession] = set()
        self._sessions_lock = threading.Lock()
        self.digests_pending: Callable[[], None] = lambda: None   # the sweeper's wake-up

    def attach(self) -> None:
        """Start receiving the device's packet-ins and digests."""
        self.device.add_packet_in_listener(self._on_packet_in)
        self.device.add_digest_listener(self._on_digest)

    def detach(self) -> None:
        self.device.remove_packet_in_listener(self._on_packet_in)
        self.device.remove_digest_listener(self._on_digest)

    # -- unary RPCs -------------------------------------------------------------------------

    def Capabilities(self, request: p4r.CapabilitiesRequest,
                     context: grpc.ServicerContext) -> p4r.CapabilitiesResponse:
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RUNTIME_API_VERSION)

    def SetForwardingPipelineConfig(self, request: p4r.SetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext,
                                    ) -> p4r.SetForwardingPipelineConfigResponse:
        def run() -> None:
            self._check_writer(request)
            with self._control:
                self.pipelines.set(request)
        self._unary(context, run)
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request: p4r.GetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext,
                                    ) -> p4r.GetForwardingPipelineConfigResponse:
        response = p4r.GetForwardingPipelineConfigResponse()

        def run() -> None:
            self._check_device(request.device_id)
            response.CopyFrom(self.pipelines.get(request))
        self._unary(context, run)
        return response

    def Write(self, request: p4r.WriteRequest, context: grpc.ServicerContext,
              data: bytes | None = None) -> p4r.WriteResponse:
        """`data`: the request's bytes, when the transport has them (the fast path reads
        plain table entry updates straight from them)."""
        self._unary(context, lambda: self._write(request, data))
        return p4r.WriteResponse()

    def _write(self, request: p4r.WriteRequest, data: bytes | None = None) -> None:
        self._check_writer(request)
        if request.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
            raise RpcError(grpc.StatusCode.UNIMPLEMENTED,
                           "Only CONTINUE_ON_ERROR atomicity is supported")
        updates = request.updates
        results: list[tuple[grpc.StatusCode, str] | None] = []
        with self._control:
            bound = self.pipelines.target()
            if bound is None:
                raise RpcError(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
            write = bound.store.write
            policy = self.arbitrator.write_policy(request.role)
            check = policy.denial if policy.scope is not None or policy.taken else None
            clock = time.perf_counter
            done, total = 0, len(updates)
            # Plain table entry updates are applied from the request's bytes (wire.py), each
            # with `write`'s result; a role with a scope checks every entity, so it does not.
            encoded = getattr(bound.store, "write_encoded", None) if check is None else None
            spans = update_spans(data) if data is not None and encoded is not None else None
            if spans is not None and len(spans) != total:
                spans = None
            with collections_deferred():
                while done < total:
                    with self.device.lock:
                        until = clock() + SLICE_SECONDS
                        while done < total:
                            k = done
                            done += 1
                            try:
                                if spans is None or not encoded(data, *spans[k]):
                                    update = updates[k]
                                    _check_update_type(update.type)
                                    if check is not None and (why := check(update.entity)):
                                        raise RpcError(grpc.StatusCode.PERMISSION_DENIED, why)
                                    write(update)
                                results.append(None)
                            except Exception as exc:
                                results.append(status.error_of(exc))
                            if clock() > until:
                                break
                    self.device.yield_to_dataplane()
        failure = status.batch_status(results)
        if failure is not None:
            raise failure

    def Read(self, request: p4r.ReadRequest,
             context: grpc.ServicerContext) -> Iterator[p4r.ReadResponse]:
        try:
            yield from self._read(request)
        except RpcError as error:
            status.apply(context, error)

    def _read(self, request: p4r.ReadRequest) -> Iterator[p4r.ReadResponse]:
        self._check_device(request.device_id)
        bound = self.pipelines.target()
        if bound is None:
            raise RpcError(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
        wanted = _distinct(request.entities)
        scope = self.arbitrator.scope(request.role)  # a role with a config sees its objects
        clock = time.perf_counter
        encoded_read = getattr(bound.store, "read_encoded", None)
        # One answer for all the request's entities, in chunks of READ_CHUNK: a Read of 300
        # counter cells is one ReadResponse, not 300 (each a gRPC message and a thread hop).
        chunk: list[Any] = []
        sent = 0
        for entity in wanted:
            entities: Iterator[Any] | None = None
            # table entries come as (table id, Entity bytes) when the store can: the answer
            # is then joined from bytes, not built message by message (wire.py)
            encoded = False
            more = True
            while more:
                with self.device.lock:
                    if self.pipelines.target() is not bound:
                        raise RpcError(grpc.StatusCode.ABORTED,
                                       "The forwarding pipeline changed during the Read")
                    until = clock() + SLICE_SECONDS
                    try:
                        if entities is None:
                            found = encoded_read(entity) if encoded_read is not None else None
                            encoded = found is not None
                            entities = found if found is not None else bound.store.read(entity)
                        more = False
                        for item in entities:
                            if encoded:
                                p4_id, item = item
                            else:
                                p4_id = entity_p4_id(item)
                            if scope is not None and not scope.covers(p4_id):
                                continue
                            chunk.append(item)
                            if len(chunk) >= READ_CHUNK or clock() > until:
                                more = True
                                break
                    except RpcError:
                        raise
                    except Exception as exc:
                        raise RpcError(*status.error_of(exc)) from exc
                if more:   # a full chunk, or the slice over: sent without the lock
                    sent = self._check_read_size(sent, chunk)
                    yield _read_response(chunk)
                    chunk = []
                    self.device.yield_to_dataplane()
        if chunk:
            self._check_read_size(sent, chunk)
            yield _read_response(chunk)

    def _check_read_size(self, sent: int, chunk: list[Any]) -> int:
        sent += len(chunk)
        if sent > self.max_read_entities:
            raise RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                           f"The Read matches more than {self.max_read_entities} "
                           "entities (the server's limit for one Read); read "
                           "fewer at a time, e.g. one table per request")
        return sent

    def _unary(self, context: grpc.ServicerContext, run: Any) -> None:
        try:
            run()
        except RpcError as error:
            status.apply(context, error)
        except Exception as exc:   # our bug: answer INTERNAL rather than crash the call
            status.apply(context, RpcError(grpc.StatusCode.INTERNAL,
                                           f"internal error: {type(exc).__name__}: {exc}"))

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device.device_id:
            raise RpcError(grpc.StatusCode.NOT_FOUND, f"Unknown device id {device_id}")

    def _check_writer(self, request: p4r.WriteRequest
                      | p4r.SetForwardingPipelineConfigRequest) -> None:
        self._check_device(request.device_id)
        self.arbitrator.check_writer(request.role, election_id_of(request))
        if isinstance(request, p4r.SetForwardingPipelineConfigRequest):
            scope = self.arbitrator.scope(request.role)
            if scope is not None and not scope.can_push_pipeline:
                raise RpcError(grpc.StatusCode.PERMISSION_DENIED,
                               f"Role '{request.role}' may not push a pipeline "
                               "(its role config says can_push_pipeline: false)")

    # -- StreamChannel ----------------------------------------------------------------------

    def StreamChannel(self, request_iterator: Iterator[p4r.StreamMessageRequest],
                      context: grpc.ServicerContext) -> Iterator[p4r.StreamMessageResponse]:
        session = StreamSession(self.arbitrator, self, on_close=self._forget)
        with self._sessions_lock:
            if len(self._sessions) >= MAX_STREAMS:
                status.apply(context, RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                               "Too many open streams"))
                return
            self._sessions.add(session)
        yield from session.run(request_iterator, context)

    def _forget(self, session: StreamSession) -> None:
        with self._sessions_lock:
            self._sessions.discard(session)

    def close_streams(self) -> None:
        with self._sessions_lock:
            sessions = list(self._sessions)
        for session in sessions:
            session.close()

    def packet_out(self, packet: p4r.PacketOut) -> None:
        """A primary's PacketOut: header + payload into ingress on the CPU port."""
        if self.device.cpu_port is None:
            raise RpcError(grpc.StatusCode.FAILED_PRECONDITION,
                           "Packet-out needs a CPU port (--cpu-port)")
        bound = self.pipelines.active()
        if bound is None:
            raise RpcError(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
        self.device.packet_out(bound.packet_io.encode_packet_out(packet))

    def digest_ack(self, ack: p4r.DigestListAck) -> None:
        bound = self.pipelines.active()
        if bound is None:
            raise RpcError(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
        if ack.digest_id not in {d.preamble.id for d in bound.p4info.digests}:
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                           f"Unknown digest id {ack.digest_id} in DigestListAck")
        bound.digests.ack(ack.digest_id, ack.list_id)

    # -- notifications from the device ------------------------------------------------------

    def _on_packet_in(self, data: bytes) -> None:
        bound = self.pipelines.active()
        packet = (bound.packet_io.decode_packet_in(data) if bound is not None
                  else p4r.PacketIn(payload=data))
        if packet is None:   # shorter than the packet_in header: dropped, as PI does
            return
        message = p4r.StreamMessageResponse(packet=packet)
        for client, scope in self.arbitrator.primaries():
            if scope is None or scope.wants_packet_in(packet):
                client.send(message)

    def _on_digest(self, digest: Any) -> None:
        bound = self.pipelines.active()
        if bound is None:
            return
        try:
            digest_id, data = bound.store.digest_to_p4data(digest)
        except Exception:   # a digest the P4Info does not describe: nobody can receive it
            return
        bound.digests.learn(digest_id, tuple(digest.values), data)
        self.digests_pending()

    def _send_digest_list(self, message: p4r.DigestList) -> None:
        response = p4r.StreamMessageResponse(digest=message)
        for client, scope in self.arbitrator.primaries():
            if scope is None or scope.covers(message.digest_id):
                client.send(response)

    def tick_digests(self) -> float:
        """Enforce digest timeouts; returns the seconds until the next one is due (1 when
        none is)."""
        delay = self.sweep_digests()
        return 1.0 if delay is None else delay

    def sweep_digests(self) -> float | None:
        """Enforce digest timeouts; returns the seconds until the next one is due, at most 1
        and at least 0.0005 (None: nothing pending, until a digest is learned)."""
        bound = self.pipelines.peek()
        if bound is None:
            return None
        bound.digests.tick()
        deadline = bound.digests.next_deadline()
        if deadline is None:
            return None
        return min(1.0, max(0.0005, (deadline - time.monotonic_ns()) / 1e9))


# -- request decoding ---------------------------------------------------------------------------
# grpcio answers a request whose bytes do not parse with INTERNAL and logs a trace. That is the
# client's error, so the service is registered with decoders that hand such a request to the
# handler as `_Undecodable`, which answers INVALID_ARGUMENT (a stream ends with it).

class _Undecodable:
    """A request whose bytes are not a message of the method's request type."""

    def __init__(self, type_name: str, exc: Exception) -> None:
        self.error = RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                              f"Cannot parse the request as {type_name}: {exc}")


class _WithBytes(NamedTuple):
    """A parsed request and the bytes it came in (Write keeps them: server.py `_write`)."""

    message: Any
    data: bytes


def _decoder(cls: Any, keep_bytes: bool = False) -> Callable[[bytes], Any]:
    def decode(data: bytes) -> Any:
        try:
            message = cls.FromString(data)
        except Exception as exc:   # DecodeError, or a nesting limit
            return _Undecodable(cls.DESCRIPTOR.full_name, exc)
        return _WithBytes(message, data) if keep_bytes else message
    return decode


def _encoder(cls: Any) -> Callable[[Any], bytes]:
    """The response serializer: a message, or bytes already serialized (Read's answers)."""
    serialize = cls.SerializeToString

    def encode(response: Any) -> bytes:
        return response if type(response) is bytes else serialize(response)
    return encode


def _unary(fn: Callable[..., Any], empty: Callable[[], Any]) -> Callable[[Any, Any], Any]:
    def handle(request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, _Undecodable):
            status.apply(context, request.error)
            return empty()
        if isinstance(request, _WithBytes):
            return fn(request.message, context, request.data)
        return fn(request, context)
    return handle


def _decoded(requests: Iterator[Any]) -> Iterator[Any]:
    for request in requests:
        if isinstance(request, _Undecodable):
            raise request.error
        yield request


class _LongCalls:
    """Detaches a server's streaming calls (Read, StreamChannel) from the worker pool: a
    stream lives as long as its client keeps it, and a Read waits for its client to take each
    chunk. At most MAX_LONG_CALLS of one server at a time; beyond, one runs as a unary call
    does, on one of the pool's `workers`."""

    def __init__(self, pool: WorkerPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._running = 0

    def wrap(self, handler: Callable[[Any, Any], Iterator[Any]],
             ) -> Callable[[Any, Any], Iterator[Any]]:
        """`handler` (of a streaming call) with its responses run as a long call."""
        return lambda request, context: self.run(handler(request, context))

    def run(self, responses: Iterator[Any]) -> Iterator[Any]:
        """`responses` (a handler's generator), iterated on a detached thread."""
        with self._lock:
            detached = self._running < MAX_LONG_CALLS
            self._running += detached
        try:
            if detached:
                self._pool.detach()
            yield from responses
        finally:
            with self._lock:
                self._running -= detached


def _method_handlers(service: P4RuntimeService,
                     long_calls: _LongCalls) -> dict[str, grpc.RpcMethodHandler]:
    """The handlers of every ``p4.v1.P4Runtime`` method, with tolerant decoders; streaming
    responses run as `long_calls`."""
    handlers = {}
    for method in p4r.DESCRIPTOR.services_by_name["P4Runtime"].methods:
        request_cls = getattr(p4r, method.input_type.name)
        response_cls = getattr(p4r, method.output_type.name)
        fn = getattr(service, method.name)
        codecs = {"request_deserializer": _decoder(request_cls, method.name == "Write"),
                  "response_serializer": _encoder(response_cls)}
        if method.client_streaming:
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(long_calls.wrap(
                lambda requests, context, fn=fn: fn(_decoded(requests), context)), **codecs)
        elif method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                long_calls.wrap(_unary(fn, lambda: iter(()))), **codecs)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _unary(fn, response_cls), **codecs)
    return handlers


class P4RuntimeServer:
    """A gRPC server with the P4Runtime service of `device` (insecure unless `credentials`).

    Servers of one owner (a Fabric's) share its `pool` (worker_pool.py: unary calls run on
    its `workers` threads, streaming calls on threads of their own) and its `sweeper`
    (digest_sweeper.py: one thread enforces every server's digest timeouts). A server given
    neither makes its own, of `max_workers`, and stops them with itself."""

    def __init__(self, device: Any, address: str = "0.0.0.0:9559",
                 credentials: grpc.ServerCredentials | None = None, *,
                 make_store: MakeStore | None = None, max_workers: int = MAX_WORKERS,
                 max_read_entities: int = MAX_READ_ENTITIES,
                 programs: ProgramCache | None = None, pool: WorkerPool | None = None,
                 sweeper: DigestSweeper | None = None) -> None:
        self.service = P4RuntimeService(device, make_store, max_read_entities=max_read_entities,
                                        programs=programs)
        self.address = address
        self._own_pool = pool is None
        self.pool = WorkerPool(max_workers) if pool is None else pool
        self._own_sweeper = sweeper is None
        self.sweeper = DigestSweeper() if sweeper is None else sweeper
        self._server = grpc.server(
            self.pool,   # type: ignore[arg-type]  # grpc only calls submit
            options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                     # A second switch on a taken port must fail, not share the port.
                     ("grpc.so_reuseport", 0)])
        handlers = _method_handlers(self.service, _LongCalls(self.pool))
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
        self._server.add_registered_method_handlers(SERVICE_NAME, handlers)
        try:
            if credentials is None:
                port = self._server.add_insecure_port(address)
            else:
                port = self._server.add_secure_port(address, credentials)
        except RuntimeError as exc:
            self._release()
            raise OSError(f"P4Runtime server cannot listen on {address}: {exc}") from exc
        if port == 0:
            self._release()
            raise OSError(f"P4Runtime server cannot listen on {address}")
        self.port: int = port

    def start(self) -> None:
        self.service.attach()
        self._server.start()
        self.service.digests_pending = self.sweeper.add(self.service)

    def stop(self, grace: float | None = None) -> None:
        """Close every stream, stop serving (in-flight calls get `grace` seconds)."""
        self.service.close_streams()
        self._server.stop(grace).wait()
        self.service.detach()
        self.sweeper.remove(self.service)
        self.service.digests_pending = lambda: None
        self._release()

    def _release(self) -> None:
        """Stop the pool and sweeper this server made (a shared one is its owner's)."""
        if self._own_sweeper:
            self.sweeper.close()
        if self._own_pool:
            self.pool.shutdown(wait=False)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server stops (True) or `timeout` passes (False)."""
        return self._server.wait_for_termination(timeout)

    def __enter__(self) -> P4RuntimeServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(0)
