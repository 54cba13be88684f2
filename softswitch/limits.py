"""Resource bounds: how much work and memory a program (or a hostile file posing as one) may
ask of softswitch before it is refused.

BMv2 and p4c have no such bounds: there, a 40-line file of doubling ``#define``s or a
``h_t[100000000]`` header stack takes the machine. Each bound here is far above what real
programs use (the largest in p4src/ and the test corpus, measured, in the comments) and above
what real targets hold (Tofino's registers and tables, BMv2's usual sizes), so a refusal means a
mistake or an attack. Every one is refused with a `LimitError` naming the limit, the value, where
it is, and the command-line flag that raises it (`softswitch compile|stf|run --max-...`); the
API takes a `Limits` (``compile_file(..., limits=)``, ``Device(..., limits=)``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields, replace
from typing import ClassVar

from softswitch.errors import P4Error, SourceLocation


class LimitError(P4Error):
    """Input over one of softswitch's resource bounds (`Limits`)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """softswitch's resource bounds; the defaults are the documented ones (README.md)."""

    # Bytes read from P4 source files, every #include (and every read of one) counted: the
    # largest program here, the TNA NIC, reads 180 KB. Checked before a file is read.
    source_bytes: int = 8 << 20
    # Characters that macro expansion produces, in all (what a rescanned expansion produces
    # counts again, so doubling macros hit it early): the TNA NIC's expansions total 31 K.
    macro_expansion: int = 1 << 20
    # Elements of one header stack: the switch's SRH list has 4; BMv2 has no bound, Tofino's
    # parser extracts a few dozen headers per packet. Every packet holds every element.
    header_stack: int = 4096
    # Values one instance of a struct, header, union or stack type holds (its fields, nested
    # ones and stack elements flattened, validity bits counted): the NIC's headers hold 102;
    # every packet holds its headers and metadata.
    type_fields: int = 65_536
    # Entries or cells of one table, action profile, value set or register, counter or meter
    # array: Tofino 1's SRAM (12 stages of about 80 blocks of 1 K x 128 bits) holds under 4 M
    # 32-bit words in all; BMv2 programs rarely size anything over 1 M (the switch: 8,192).
    size: int = 1 << 24
    # Cells of every register, counter and meter array of a program together (softswitch
    # allocates them when it loads the program: 8 to 16 bytes a cell).
    state_cells: int = 1 << 26

    # what each bounds (help text) and the unit of its values in messages
    FLAGS: ClassVar[dict[str, tuple[str, str]]] = {
        "source_bytes": ("bytes of P4 source read, all #includes counted", "bytes"),
        "macro_expansion": ("characters macro expansion produces, in all", "characters"),
        "header_stack": ("elements of one header stack", "elements"),
        "type_fields": ("values one struct, header or stack instance holds, flattened",
                        "values"),
        "size": ("entries or cells of one table, action profile, value set or "
                 "register/counter/meter array", ""),
        "state_cells": ("cells of all register, counter and meter arrays together", "cells"),
    }

    @staticmethod
    def flag(name: str) -> str:
        """The command-line flag of limit `name` (``--max-header-stack``)."""
        return "--max-" + name.replace("_", "-")

    def refuse(self, name: str, what: str, value: int,
               location: SourceLocation | None = None) -> LimitError:
        """The error for `what` (e.g. "header stack h_t[100000000]") being `value`, over limit
        `name`."""
        unit = self.FLAGS[name][1]
        return LimitError(f"{what}: {value:,}{' ' + unit if unit else ''}, over softswitch's "
                          f"limit of {getattr(self, name):,} ({self.flag(name)} N raises it)",
                          location)

    def check(self, name: str, what: str, value: int,
              location: SourceLocation | None = None) -> None:
        """Raise `refuse(...)` when `value` is over limit `name`."""
        if value > getattr(self, name):
            raise self.refuse(name, what, value, location)


DEFAULT_LIMITS = Limits()


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return int(text)


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """One ``--max-NAME N`` option per limit (dest ``max_NAME``)."""
    group = parser.add_argument_group(
        "resource limits", "bounds on what a program may ask of softswitch (README.md)")
    for f in fields(Limits):
        group.add_argument(Limits.flag(f.name), dest=f"max_{f.name}", type=_positive,
                           metavar="N", help=f"{Limits.FLAGS[f.name][0]} (default {f.default:,})")


def limits_from_options(args: argparse.Namespace) -> Limits:
    """The Limits the ``--max-...`` options of `args` ask for (defaults for the rest)."""
    given = {f.name: value for f in fields(Limits)
             if (value := getattr(args, f"max_{f.name}", None)) is not None}
    return replace(DEFAULT_LIMITS, **given)
