"""Environment variables set for the length of one run, then put back.

softswitch's Switch and Fabric read $SOFTSWITCH_ENGINE and $SOFTSWITCH_FABRIC where they are
built (deep in a fabric, in P4Runtime servers, in a sweep's worker processes), so a command
choosing them sets the variables; a caller running that command in its own process (tests, a
notebook) must find its own values back afterwards."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping


@contextlib.contextmanager
def variables_set(values: Mapping[str, str]) -> Iterator[None]:
    """`values` in os.environ inside the block; what each name held before (or its absence)
    after it."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
