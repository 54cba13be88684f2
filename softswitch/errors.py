"""Errors every stage raises: located compile errors and clear runtime errors."""

from __future__ import annotations

from collections.abc import Sequence
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


class P4Errors(P4Error):
    """Several independent problems found in one run (the type checker reports them all).

    `str()` is one ``file:line:col: error: message`` line per error, sorted by location (files in
    the order their first error was found); `.message` and `.location` are the first error's, so
    a caller that looks at one error sees the first. `truncated` says the checker stopped at its
    error limit.
    """

    def __init__(self, errors: Sequence[P4Error], truncated: bool = False) -> None:
        assert errors, "P4Errors needs at least one error"
        self.errors = sort_errors(errors)
        self.truncated = truncated
        first = self.errors[0]
        super().__init__(first.message, first.location)

    def __str__(self) -> str:
        lines = [str(e) for e in self.errors]
        if self.truncated:
            lines.append(f"error: stopped after {len(self.errors)} errors")
        return "\n".join(lines)

    @staticmethod
    def of(errors: Sequence[P4Error], truncated: bool = False) -> P4Error:
        """The one error itself when there is just one (keeping its class), else a P4Errors."""
        if len(errors) == 1 and not truncated:
            return errors[0]
        return P4Errors(errors, truncated)


def sort_errors(errors: Sequence[P4Error]) -> list[P4Error]:
    """`errors` by location: files in order of first appearance, then line and column; errors
    without a location last (the sort is stable, so equal places keep the order found)."""
    files: dict[str, int] = {}
    for e in errors:
        if e.location is not None:
            files.setdefault(e.location.file, len(files))

    def key(e: P4Error) -> tuple[int, int, int]:
        loc = e.location
        if loc is None:
            return (len(files), 0, 0)
        return (files[loc.file], loc.line, loc.column)

    return sorted(errors, key=key)


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


class NativeBuildError(Exception):
    """A program could not be compiled to native code: no C compiler, or the compiler failed
    (the message carries its first error lines)."""


class NativeUnsupported(UnsupportedError):
    """A construct the C engine (softswitch/native) does not compile yet: ``Switch(engine="c")``
    raises it, ``engine="auto"`` falls back to the Python engine. `what` names the construct."""

    def __init__(self, what: str, location: SourceLocation | None = None) -> None:
        super().__init__(f"{what} (C engine)", location)
        self.what = what
