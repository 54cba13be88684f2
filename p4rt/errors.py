"""Errors raised by the P4Runtime client: bad names and values, failed RPCs, failed writes.

All derive from `softswitch.errors.ControlPlaneError`, so callers that already handle bad
control-plane requests (CLI, PTF harness) catch these too; `code` is a gRPC status name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from finsy.proto import p4r, rpc_code, rpc_status
from google.protobuf.message import DecodeError

from softswitch.errors import ControlPlaneError

_DETAILS_KEY = "grpc-status-details-bin"


class P4RuntimeClientError(ControlPlaneError):
    """Base class of every error the `p4rt` package raises."""


class SchemaError(P4RuntimeClientError):
    """A name or id that the P4Info does not define, or that matches several objects."""

    def __init__(self, message: str, code: str = "NOT_FOUND") -> None:
        super().__init__(message, code)


class EncodeError(P4RuntimeClientError):
    """A Python value that cannot become the P4Runtime value asked for (wrong form, too wide)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "INVALID_ARGUMENT")


class P4RuntimeConnectionError(P4RuntimeClientError):
    """The stream channel could not be opened or arbitration failed."""

    def __init__(self, message: str, code: str = "UNAVAILABLE") -> None:
        super().__init__(message, code)


_LAST_ERROR = re.compile(r"last error: (?:[A-Z_]+: )?(?:(?:ipv4|ipv6|unix):\S+?: )?(.*?)(?:: OK)?$")
# "Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL routines:
# OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: ..." says the same thing three times.
_TLS_NOISE = re.compile(r"^tls handshake failed(?: \([A-Z_]+\))?: |ssl_error_ssl: "
                        r"|error:[0-9a-f]+:ssl routines:\w+:", re.IGNORECASE)
_TLS_WORDS = ("handshake", "ssl", "tls", "certificate", "peer name", "verification")


def unreachable_error(where: str, timeout: float, security: str,
                      error: grpc.RpcError | None) -> P4RuntimeConnectionError:
    """Why the channel to `where` did not become ready; `error` is what a fail-fast RPC got.

    `security` is what the client offered: "plaintext", "TLS" (no client certificate), "mutual
    TLS", or "secure" (TLS, certificate unknown). gRPC itself says only "failed to connect to all
    addresses"; this names a refused TLS handshake as such.
    """
    code, details = _call_status(error) if error is not None else ("", "")
    found = _LAST_ERROR.search(details)
    if found:
        reason = found.group(1)
    else:  # e.g. a name that does not resolve; a deadline says nothing more than the timeout
        reason = details if code == "UNAVAILABLE" else ""
    lowered = reason.lower()
    if any(word in lowered for word in _TLS_WORDS):
        hint = " (does the server serve TLS?)" if "WRONG_VERSION_NUMBER" in reason else ""
        return P4RuntimeConnectionError(
            f"{where}: TLS handshake failed: {_TLS_NOISE.sub('', reason) or reason}{hint}")
    if "socket closed" in lowered or "connection reset" in lowered:
        # The server hung up on the handshake: with TLS 1.3 a refused client certificate shows
        # up this way on the client, as does a plaintext client talking to a TLS server.
        if security == "plaintext":
            message = "the server closed the connection: does it require TLS? (this client is plaintext)"
        elif security == "TLS":
            message = ("TLS handshake failed: the server closed the connection: does it require a "
                       "client certificate? (this client sent none)")
        elif security == "mutual TLS":
            message = ("TLS handshake failed: the server refused this client's certificate "
                       "(is it signed by a CA the server trusts?)")
        else:
            message = ("TLS handshake failed: the server closed the connection (it refused this "
                       "client's certificate, or requires one)")
        return P4RuntimeConnectionError(f"{where}: {message}")
    if "connection refused" in lowered:
        reason = "connection refused"
    suffix = f" ({reason})" if reason else ""
    return P4RuntimeConnectionError(
        f"{where}: no P4Runtime server answers within {timeout:g} s{suffix}")


def code_name(code: int) -> str:
    """The name of a google.rpc.Code number ("ALREADY_EXISTS"); unknown numbers as "CODE_<n>"."""
    try:
        return rpc_code.Code.Name(code)
    except ValueError:
        return f"CODE_{code}"


class P4RuntimeRpcError(P4RuntimeClientError):
    """A unary or streaming RPC that the server answered with a non-OK status."""

    def __init__(self, method: str, code: str, details: str) -> None:
        super().__init__(f"{method} failed: {code}: {details}" if details else f"{method} failed: {code}",
                         code)
        self.method = method
        self.details = details

    @classmethod
    def from_grpc(cls, method: str, error: grpc.RpcError) -> P4RuntimeRpcError:
        code, details = _call_status(error)
        return cls(method, code, details)


@dataclass(frozen=True, slots=True)
class UpdateError:
    """The server's verdict on one failed update of a write batch."""

    index: int          # position in the list the caller passed (across chunks)
    description: str    # "INSERT table ingress.route"
    code: str           # gRPC status name
    message: str
    space: str = ""     # target-specific error space and code, when the server sends them
    target_code: int = 0

    def __str__(self) -> str:
        text = f"update {self.index} ({self.description}): {self.code}"
        return f"{text}: {self.message}" if self.message else text


class P4RuntimeWriteError(P4RuntimeRpcError):
    """A Write RPC failed; `errors` lists each failed update (empty when the server sent none)."""

    def __init__(self, code: str, details: str, errors: Sequence[UpdateError] = ()) -> None:
        self.errors = list(errors)
        if self.errors:
            lines = "\n  ".join(str(error) for error in self.errors)
            details = f"{len(self.errors)} update(s) failed:\n  {lines}"
        super().__init__("Write", code, details)


def _call_status(error: grpc.RpcError) -> tuple[str, str]:
    """(status name, details text) of a failed gRPC call, tolerant of unusual RpcErrors."""
    code_fn = getattr(error, "code", None)
    details_fn = getattr(error, "details", None)
    code = code_fn() if callable(code_fn) else None
    details = details_fn() if callable(details_fn) else None
    name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    return name, details or ""


def status_details(error: grpc.RpcError) -> list[p4r.Error]:
    """The p4.v1.Error list a server packs into `grpc-status-details-bin` (empty if none)."""
    trailing_fn = getattr(error, "trailing_metadata", None)
    metadata = trailing_fn() if callable(trailing_fn) else None
    for key, value in metadata or ():
        if key != _DETAILS_KEY:
            continue
        status = rpc_status.Status()
        try:
            status.ParseFromString(value)
        except DecodeError:  # a garbled trailer must not hide the real error
            return []
        errors = []
        for detail in status.details:
            item = p4r.Error()
            if detail.Unpack(item):
                errors.append(item)
        return errors
    return []


def write_error(error: grpc.RpcError, descriptions: Sequence[str],
                offset: int = 0) -> P4RuntimeWriteError:
    """Decode a failed Write: per-update errors are matched to `descriptions` by position.

    `offset` is the index of this batch's first update in the caller's list (chunked writes).
    """
    code, details = _call_status(error)
    failed: list[UpdateError] = []
    for position, item in enumerate(status_details(error)):
        if item.canonical_code == rpc_code.OK:
            continue
        description = descriptions[position] if position < len(descriptions) else "?"
        failed.append(UpdateError(offset + position, description, code_name(item.canonical_code),
                                  item.message, item.space, item.code))
    if not failed:
        return P4RuntimeWriteError(code, details)
    return P4RuntimeWriteError(code, details, failed)
