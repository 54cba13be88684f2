"""Writes whose failures are reported one line each: the device, its address, the entry, why.

A long-running controller must not stop on a refused update, and an operator reading its log
must see which device refused which entry; this is that one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from finsy.proto import p4r

from p4rt import SwitchConnection
from p4rt.errors import P4RuntimeClientError, P4RuntimeWriteError


def failure_line(device: str, address: str, what: str, why: object) -> str:
    return f"write failed on {device} ({address}): {what}: {why}"


def write_each(session: SwitchConnection, device: str, updates: Sequence[p4r.Update],
               descriptions: Sequence[str], report: Callable[[str], None]) -> list[bool]:
    """Write `updates` (CONTINUE_ON_ERROR); per update whether it was written. `report` gets a
    `failure_line` for every failed update, or one for the whole batch when the request was
    refused as a whole or the connection is gone."""
    ok = [True] * len(updates)
    if not updates:
        return ok
    whole = f"{len(updates)} update(s) from {descriptions[0]}"
    try:
        session.write_all(updates)
    except P4RuntimeWriteError as error:
        if not error.errors:
            report(failure_line(device, session.address, whole, f"{error.code}: {error.details}"))
            return [False] * len(updates)
        for failed in error.errors:
            ok[failed.index] = False
            report(failure_line(device, session.address, descriptions[failed.index],
                                f"{failed.code}: {failed.message}"))
    except (P4RuntimeClientError, OSError) as error:
        report(failure_line(device, session.address, whole, error))
        return [False] * len(updates)
    return ok
