"""One StreamChannel: arbitration, PacketOut, DigestListAck in; notifications out.

A reader thread consumes the client's messages while the gRPC handler thread yields what
`send` queued (arbitration advisories, PacketIn, DigestList, StreamError), so a slow client
never blocks the data plane: its queue just grows, up to a bound past which PacketIn and
DigestList messages are dropped, as the spec allows. Arbitration errors end the stream with
their status; other bad messages are answered with a StreamError and the stream goes on.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

import grpc
from finsy.proto import p4r

from softswitch.runtime.server.arbitration import Arbitrator
from softswitch.runtime.server.status import ERROR_SPACE, RpcError, bounded, code_number

MAX_QUEUED = 10_000        # notifications buffered per stream before dropping
# How often a waiting handler checks that the call is still alive. gRPC's callback says when
# it ends (`run`), so this is only a safety net: rare, as each check wakes the thread (a
# fabric keeps hundreds of streams open).
_POLL_S = 5.0


class Handlers(Protocol):
    """What a stream asks of the server for non-arbitration messages."""

    def packet_out(self, packet: p4r.PacketOut) -> None: ...      # raises RpcError
    def digest_ack(self, ack: p4r.DigestListAck) -> None: ...     # raises RpcError


class _End:
    def __init__(self, error: RpcError | None = None) -> None:
        self.error = error


class StreamSession:
    """The server side of one StreamChannel call."""

    def __init__(self, arbitrator: Arbitrator, handlers: Handlers,
                 on_close: Callable[[StreamSession], None] = lambda s: None) -> None:
        self._arbitrator = arbitrator
        self._handlers = handlers
        self._on_close = on_close
        self._outbox: queue.Queue[p4r.StreamMessageResponse | _End] = queue.Queue()
        self._closed = threading.Event()
        self._client_done = threading.Event()       # the client ended its request stream
        self._arbitration_lock = threading.Lock()   # no arbitration after the stream left
        self.arbitrated = False

    def send(self, message: p4r.StreamMessageResponse) -> None:
        """Queue a message for the client (never blocks; dropped once the stream closed)."""
        if self._closed.is_set():
            return
        if self._outbox.qsize() >= MAX_QUEUED and message.WhichOneof("update") in (
                "packet", "digest", "error"):
            return
        self._outbox.put(message)

    def close(self, error: RpcError | None = None) -> None:
        """End the stream (server shutdown, or an arbitration error)."""
        self._outbox.put(_End(error))

    def is_gone(self) -> bool:
        return self._client_done.is_set() or self._closed.is_set()

    # -- the call ---------------------------------------------------------------------------

    def run(self, requests: Iterator[p4r.StreamMessageRequest],
            context: grpc.ServicerContext) -> Iterator[p4r.StreamMessageResponse]:
        """The StreamChannel handler body: a generator of responses."""
        def ended() -> None:
            self._client_done.set()
            self._outbox.put(_End())

        if not context.add_callback(ended):   # the call ended already
            ended()
        reader = threading.Thread(target=self._read, args=(requests,),
                                  name="p4rt-stream-reader", daemon=True)
        reader.start()
        try:
            while True:
                try:
                    item = self._outbox.get(timeout=_POLL_S)
                except queue.Empty:
                    if not context.is_active():
                        return
                    continue
                if isinstance(item, _End):
                    if item.error is not None:
                        context.set_code(item.error.code)
                        context.set_details(bounded(item.error.message))
                    return
                yield item
        finally:
            with self._arbitration_lock:
                self._closed.set()
                self._arbitrator.leave(self)
            self._on_close(self)

    def _read(self, requests: Iterator[p4r.StreamMessageRequest]) -> None:
        try:
            for request in requests:
                if self._closed.is_set():
                    return
                try:
                    self._handle(request)
                except RpcError as error:
                    self.close(error)
                    return
        except RpcError as error:   # a message that does not parse (server.py's decoder)
            self.close(error)
            return
        except Exception:   # the call was cancelled or broke: the handler ends it
            pass
        self._client_done.set()   # the client half-closed (or the call broke)
        self._outbox.put(_End())

    def _handle(self, request: p4r.StreamMessageRequest) -> None:
        kind = request.WhichOneof("update")
        if kind == "arbitration":
            with self._arbitration_lock:
                if self._closed.is_set():
                    return
                self._arbitrator.arbitrate(self, request.arbitration)
                self.arbitrated = True
        elif kind == "packet":
            self._guarded(request, "packet_out", lambda: self._handlers.packet_out(request.packet))
        elif kind == "digest_ack":
            self._guarded(request, "digest_list_ack",
                          lambda: self._handlers.digest_ack(request.digest_ack))
        elif kind == "other":
            self._error(request, "other", RpcError(grpc.StatusCode.UNIMPLEMENTED,
                                                   "Stream 'other' messages are not supported"))
        # An empty message carries nothing to answer.

    def _guarded(self, request: p4r.StreamMessageRequest, detail: str,
                 action: Callable[[], None]) -> None:
        if not self._arbitrator.is_primary(self):
            what = "the primary" if self.arbitrated else "arbitrated (MasterArbitrationUpdate)"
            self._error(request, detail, RpcError(grpc.StatusCode.PERMISSION_DENIED,
                                                  f"Only {what} clients may send this message"))
            return
        try:
            action()
        except RpcError as error:
            self._error(request, detail, error)
        except Exception as exc:   # our bug: report it, keep the stream
            self._error(request, detail, RpcError(grpc.StatusCode.INTERNAL,
                                                  f"internal error: {type(exc).__name__}: {exc}"))

    def _error(self, request: p4r.StreamMessageRequest, detail: str, error: RpcError) -> None:
        stream_error = p4r.StreamError(canonical_code=code_number(error.code),
                                       message=error.message, space=ERROR_SPACE)
        if detail == "packet_out":
            stream_error.packet_out.packet_out.CopyFrom(request.packet)
        elif detail == "digest_list_ack":
            stream_error.digest_list_ack.digest_list_ack.CopyFrom(request.digest_ack)
        else:
            stream_error.other.other.CopyFrom(request.other)
        self.send(p4r.StreamMessageResponse(error=stream_error))
