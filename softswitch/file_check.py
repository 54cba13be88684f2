"""Why a path named on a command line or in an #include is not a file to read, in words.

Path.is_file() raises for some names instead of answering (ENAMETOOLONG: a name longer than
the system takes); a bad name must be a clear error, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path


def file_problem(path: str | os.PathLike[str]) -> str | None:
    """None when `path` is a regular file; else "no such file", "it is a directory", or the
    system's reason ("File name too long")."""
    p = Path(path)
    try:
        if p.is_file():
            return None
        return "it is a directory" if p.is_dir() else "no such file"
    except OSError as exc:
        return exc.strerror or str(exc)
