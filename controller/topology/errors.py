"""Errors of the YAML files we read, located like a compiler error."""

from __future__ import annotations


class YamlFileError(Exception):
    """A problem in a file: ``file:line:col: error: field: message`` (location parts
    optional)."""

    def __init__(self, message: str, file: str | None = None, line: int = 0, column: int = 0,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.field = field

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file
            if self.line:
                where += f":{self.line}"
                if self.column:
                    where += f":{self.column}"
            where += ": "
        what = f"{self.field}: " if self.field else ""
        return f"{where}error: {what}{self.message}"


class TopologyError(YamlFileError):
    """The one error a bad topology raises."""
