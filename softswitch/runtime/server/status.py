"""gRPC statuses as P4Runtime reports them (spec "Error Reporting Messages", PI's server).

A failed RPC carries a code and message, and, for Write batches, a serialized
``google.rpc.Status`` in the ``grpc-status-details-bin`` trailer whose details are one
``p4.v1.Error`` per update (OK ones included, so indexes line up), as PI sends it.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from finsy.proto import p4r
from finsy.proto.google.rpc import code_pb2, status_pb2

from softswitch.errors import ControlPlaneError

DETAILS_KEY = "grpc-status-details-bin"
# PI's error space for simple_switch_grpc; clients print it, none depends on it.
ERROR_SPACE = "ALL-sswitch-p4org"

_BY_NAME: dict[str, grpc.StatusCode] = {code.name: code for code in grpc.StatusCode}
# The longest message an error carries: messages go back in the trailers (grpc-message, the
# details' p4.v1.Error), where gRPC clients by default drop what passes 8 KiB, at random up to
# 16 KiB; a message quoting a client's 6 KB value would cost the client every update's answer.
MAX_MESSAGE_CHARS = 1024


class RpcError(Exception):
    """An RPC-wide failure: the handler ends the call with this code and message."""

    def __init__(self, code: grpc.StatusCode, message: str,
                 details: status_pb2.Status | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


def grpc_code(name: str) -> grpc.StatusCode:
    """A gRPC status name (``ControlPlaneError.code``) → the code; unknown names → UNKNOWN."""
    return _BY_NAME.get(name, grpc.StatusCode.UNKNOWN)


def code_number(code: grpc.StatusCode) -> int:
    """The ``google.rpc.Code`` number of a gRPC status code."""
    return int(code.value[0])


def error_of(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The (code, message) a per-update failure is reported with."""
    code = getattr(exc, "code", None)
    if isinstance(code, grpc.StatusCode):
        return code, _message(exc)
    if isinstance(exc, ControlPlaneError):
        return grpc_code(exc.code), str(exc)
    # Anything else is our bug, not the client's: say so, but never crash the server.
    return grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}: {exc}"


def _message(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    return message if isinstance(message, str) else str(exc)


def bounded(message: str) -> str:
    """`message`, cut to MAX_MESSAGE_CHARS with a note of how long it was."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    note = f"... ({len(message):,} characters, cut)"
    return message[:MAX_MESSAGE_CHARS - len(note)] + note


def batch_status(results: Sequence[tuple[grpc.StatusCode, str] | None]) -> RpcError | None:
    """One result per update (None = OK) → None if all succeeded, else UNKNOWN with details."""
    if all(r is None for r in results):
        return None
    status = status_pb2.Status(code=code_pb2.UNKNOWN, message="Write failure.")
    for result in results:
        error = p4r.Error(canonical_code=code_pb2.OK)
        if result is not None:
            error = p4r.Error(canonical_code=code_number(result[0]),
                              message=bounded(result[1]), space=ERROR_SPACE)
        status.details.add().Pack(error)
    return RpcError(grpc.StatusCode.UNKNOWN, status.message, status)


def apply(context: grpc.ServicerContext, error: RpcError) -> None:
    """Set `error` as the status of the call (the handler then returns normally)."""
    context.set_code(error.code)
    context.set_details(bounded(error.message))
    if error.details is not None:
        context.set_trailing_metadata(((DETAILS_KEY, error.details.SerializeToString()),))


def decode_details(trailing_metadata: Sequence[tuple[str, str | bytes]] | None,
                   ) -> list[p4r.Error]:
    """The ``p4.v1.Error`` list of a failed call's trailers (empty when there is none)."""
    for key, value in trailing_metadata or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            errors = []
            for detail in status.details:
                error = p4r.Error()
                detail.Unpack(error)
                errors.append(error)
            return errors
    return []
