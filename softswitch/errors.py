"""Errors every stage raises: located compile errors and clear runtime errors."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A position in an original source file (after undoing #include and macro expansion)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


UNKNOWN_LOCATION = SourceLocation("<unknown>", 0, 0)


class P4Error(Exception):
    """A problem in a P4 program, reported as ``file:line:col: error: message``."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return f"error: {self.message}"
        return f"{self.location}: error: {self.message}"


class P4SyntaxError(P4Error):
    """The text is not P4_16 (or the preprocessor could not handle it)."""


class P4TypeError(P4Error):
    """Names, types, widths or arguments do not fit."""


class UnsupportedError(P4Error):
    """Valid P4_16 that softswitch does not implement."""

    def __init__(self, what: str, location: SourceLocation | None = None) -> None:
        super().__init__(f"not supported by softswitch: {what}", location)


class ControlPlaneError(Exception):
    """A bad control-plane request (unknown table, wrong key width, duplicate entry...).

    `code` is the gRPC status name the P4Runtime server answers with: INVALID_ARGUMENT,
    NOT_FOUND, ALREADY_EXISTS, OUT_OF_RANGE, RESOURCE_EXHAUSTED, UNIMPLEMENTED, ...
    """

    def __init__(self, message: str, code: str = "INVALID_ARGUMENT") -> None:
        super().__init__(message)
        self.code = code


class StfError(Exception):
    """A malformed STF script line, reported with its file and line."""
