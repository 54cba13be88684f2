"""The error every P4Runtime entity operation raises: a gRPC status code and a message."""

from __future__ import annotations

import grpc

from softswitch.errors import ControlPlaneError


class P4RuntimeWriteError(Exception):
    """A rejected write or read: `code` (``grpc.StatusCode``) and `message` for ``p4.v1.Error``."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"

    @classmethod
    def from_engine(cls, exc: ControlPlaneError, context: str = "") -> P4RuntimeWriteError:
        """Translate an engine `ControlPlaneError` (its `code` is a gRPC status name)."""
        code = getattr(grpc.StatusCode, exc.code, grpc.StatusCode.INVALID_ARGUMENT)
        message = f"{context}: {exc}" if context else str(exc)
        return cls(code, message)


def invalid(message: str) -> P4RuntimeWriteError:
    return P4RuntimeWriteError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> P4RuntimeWriteError:
    return P4RuntimeWriteError(grpc.StatusCode.NOT_FOUND, message)


def already_exists(message: str) -> P4RuntimeWriteError:
    return P4RuntimeWriteError(grpc.StatusCode.ALREADY_EXISTS, message)


def unimplemented(message: str) -> P4RuntimeWriteError:
    return P4RuntimeWriteError(grpc.StatusCode.UNIMPLEMENTED, message)


def permission_denied(message: str) -> P4RuntimeWriteError:
    return P4RuntimeWriteError(grpc.StatusCode.PERMISSION_DENIED, message)


def out_of_range(message: str) -> P4RuntimeWriteError:
    return P4RuntimeWriteError(grpc.StatusCode.OUT_OF_RANGE, message)


def update_type_name(kind: int) -> str:
    """INSERT/MODIFY/DELETE/UNSPECIFIED, or the raw number of a type outside the enum."""
    from finsy.proto import p4r

    try:
        return p4r.Update.Type.Name(kind)
    except ValueError:
        return f"update type {kind}"
