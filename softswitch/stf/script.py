"""Read p4c STF scripts into typed commands; compare output packets with ``expect`` patterns.

The grammar and meaning follow p4c (``tools/stf/stf_parser.py`` and ``backends/bmv2/bmv2stf.py``)::

    add TABLE [PRIORITY] FIELD:VALUE ... ACTION(ARG:VALUE, ...) [= HANDLE]
    setdefault TABLE ACTION(ARG:VALUE, ...)
    packet PORT HEX ...               # spaces between hex groups are ignored
    expect PORT [HEX-OR-* ... [$]]    # `*` = any nibble; `$` = exactly this long
    remove all | wait
    check_counter COUNTER(INDEX-OR-HANDLE) [packets|bytes OP NUMBER]
    mirroring_add SESSION PORT [LENGTH [COS]] | mirroring_add_mc SESSION GROUP |
    mirroring_delete SESSION |
    mirroring_get SESSION | mc_mgrp_create GROUP | mc_node_create RID PORT... |
    mc_node_update HANDLE PORT... | mc_node_associate GROUP HANDLE | counter_read NAME INDEX |
    counter_write NAME INDEX PACKETS BYTES | register_read NAME INDEX |
    register_write NAME INDEX VALUE | register_reset NAME | meter_get_rates NAME INDEX |
    meter_set_rates NAME INDEX RATE:BURST ... | meter_array_set_rates NAME RATE:BURST ...

``#`` starts a comment. Numbers are decimal, ``0x`` hex, ``0b`` binary or ``0o`` octal; hex, binary
and octal digits of a key value may be ``*`` (don't care). Key values also take ``V/LEN`` (lpm),
``V&&&MASK`` (ternary) and ``LO..HI`` (range). ``NAME$N`` in a key name means ``NAME[N]``.

Semantics worth knowing (all from bmv2stf.py):

* A larger ``add`` priority wins — bmv2stf hands BMv2 (whose CLI prefers the smaller number)
  ``10000 - PRIORITY`` — so it has the same direction as P4Runtime.
* ``expect`` lines are collected per port for the whole script and compared, in order, with what
  that port emitted; a port with a different number of packets fails. ``expect PORT`` with no data
  turns checking off for that port (any number of packets, any content).
* A pattern matches when every non-``*`` nibble equals the packet's; a longer packet matches unless
  the pattern ends with ``$``; a shorter one never does.
* A plain hex/binary/octal number for a ternary field gets a mask of exactly the digits written
  (``0x0a**`` → value ``0x0a00``, mask ``0xff00``; ``0x0101`` on a 32-bit field leaves the upper
  16 bits don't-care); for an lpm field the prefix length is the number of bits written with
  non-``*`` digits. Decimal numbers mean "all bits" (bmv2stf rejects them for ternary fields).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from softswitch.engine.tables import (
    ExactMatch,
    LpmMatch,
    Match,
    OptionalMatch,
    RangeMatch,
    TernaryMatch,
)
from softswitch.errors import StfError

# --- locations and values ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StfLocation:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class NumberKey:
    """A plain number as a key value; ``care`` has the bits of non-``*`` digits (None: decimal)."""

    text: str
    value: int
    care: int | None
    has_wildcard: bool


@dataclass(frozen=True, slots=True)
class PrefixKey:
    """``VALUE/PREFIX_LEN``."""

    value: int
    prefix_len: int


@dataclass(frozen=True, slots=True)
class MaskedKey:
    """``VALUE&&&MASK``."""

    value: int
    mask: int


@dataclass(frozen=True, slots=True)
class RangeKey:
    """``LOW..HIGH`` (both ends included)."""

    low: int
    high: int


KeyValue = NumberKey | PrefixKey | MaskedKey | RangeKey


@dataclass(frozen=True, slots=True)
class KeyField:
    name: str
    value: KeyValue


@dataclass(frozen=True, slots=True)
class ActionCall:
    name: str
    args: tuple[tuple[str, int], ...] = ()

    def arg_dict(self) -> dict[str, int]:
        return dict(self.args)


@dataclass(frozen=True, slots=True)
class CounterCheck:
    kind: str  # "packets" or "bytes"
    op: str  # == != < <= > >=
    value: int

    def holds(self, actual: int) -> bool:
        return _COMPARE[self.op](actual, self.value)


_COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@dataclass(frozen=True, slots=True)
class ExpectPattern:
    """An expected packet as nibbles (``0-9A-F`` or ``*``); ``exact``: no extra bytes allowed."""

    nibbles: str
    exact: bool = False

    def __str__(self) -> str:
        groups = [self.nibbles[i : i + 2] for i in range(0, len(self.nibbles), 2)]
        return " ".join(groups) + (" $" if self.exact else "")


# --- commands ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    where: StfLocation


@dataclass(frozen=True, slots=True)
class AddEntry(Command):
    """``add``; ``priority`` uses the STF direction (larger wins), None when not written."""

    table: str
    priority: int | None
    keys: tuple[KeyField, ...]
    action: ActionCall
    handle: str | None = None


@dataclass(frozen=True, slots=True)
class SetDefault(Command):
    table: str
    action: ActionCall


@dataclass(frozen=True, slots=True)
class RemoveAll(Command):
    """``remove all``: p4c's grammar has it; bmv2stf ignores it."""


@dataclass(frozen=True, slots=True)
class Packet(Command):
    port: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Expect(Command):
    """``pattern`` None: ``expect PORT`` without data (the port is not checked)."""

    port: int
    pattern: ExpectPattern | None


@dataclass(frozen=True, slots=True)
class Wait(Command):
    """Let queued packets drain; a no-op for a synchronous switch."""


@dataclass(frozen=True, slots=True)
class CheckCounter(Command):
    """``index`` is an entry handle name (from ``add ... = NAME``) or a number."""

    counter: str
    index: int | str
    check: CounterCheck | None


@dataclass(frozen=True, slots=True)
class MirroringAdd(Command):
    """``mirroring_add SESSION PORT [LENGTH [COS]]``; LENGTH and COS are a softswitch extension
    (bmv2stf has neither): the session's truncation length in bytes (0: none) and class of
    service, as a P4Runtime CloneSessionEntry's packet_length_bytes and class_of_service."""

    session: int
    port: int
    length: int = 0
    cos: int = 0


@dataclass(frozen=True, slots=True)
class MirroringAddMc(Command):
    session: int
    group: int


@dataclass(frozen=True, slots=True)
class MirroringDelete(Command):
    session: int


@dataclass(frozen=True, slots=True)
class MirroringGet(Command):
    session: int


@dataclass(frozen=True, slots=True)
class McMgrpCreate(Command):
    group: int


@dataclass(frozen=True, slots=True)
class McNodeCreate(Command):
    """Creates a node; BMv2 numbers node handles 0, 1, 2... in creation order."""

    rid: int
    ports: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class McNodeUpdate(Command):
    handle: int
    ports: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class McNodeAssociate(Command):
    group: int
    handle: int


@dataclass(frozen=True, slots=True)
class CounterRead(Command):
    counter: str
    index: int


@dataclass(frozen=True, slots=True)
class CounterWrite(Command):
    counter: str
    index: int
    packets: int
    bytes: int


@dataclass(frozen=True, slots=True)
class RegisterRead(Command):
    register: str
    index: int


@dataclass(frozen=True, slots=True)
class RegisterWrite(Command):
    register: str
    index: int
    value: int


@dataclass(frozen=True, slots=True)
class RegisterReset(Command):
    register: str


@dataclass(frozen=True, slots=True)
class MeterRate:
    per_unit: float  # BMv2: packets or bytes per microsecond
    burst: int


@dataclass(frozen=True, slots=True)
class MeterGetRates(Command):
    meter: str
    index: int


@dataclass(frozen=True, slots=True)
class MeterSetRates(Command):
    meter: str
    index: int
    rates: tuple[MeterRate, ...]


@dataclass(frozen=True, slots=True)
class MeterArraySetRates(Command):
    meter: str
    rates: tuple[MeterRate, ...]


# --- tokens --------------------------------------------------------------------------------------

_NAME_PART = r"[A-Za-z_$][A-Za-z0-9_$]*(?:\[[0-9]+\])?"
_TOKEN_RE = re.compile(
    rf"""\s*(?:
      (?P<float>[0-9]+\.[0-9]+(?![0-9.]))
    | (?P<number>0[xX][0-9a-fA-F*]+|0[bB][01*]+|0[oO][0-7*]+|[0-9]+)
    | (?P<name>{_NAME_PART}(?:\.{_NAME_PART})*)
    | (?P<punct>&&&|\.\.|==|!=|<=|>=|[():,/=<>])
    )""",
    re.VERBOSE,
)
_STACK_INDEX_RE = re.compile(r"\$([0-9]+)")
_BITS_PER_DIGIT = {"x": 4, "b": 1, "o": 3}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # float, number, name, punct
    text: str


class _Tokens:
    """A cursor over one line's tokens with error reporting at that line."""

    def __init__(self, text: str, where: StfLocation) -> None:
        self.where = where
        self.items: list[_Token] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if m is None or m.end() == pos:
                bad = text[pos:].strip()
                raise self.error(f"unexpected text {bad[:20]!r}")
            kind = m.lastgroup
            assert kind is not None
            self.items.append(_Token(kind, m.group(kind)))
            pos = m.end()
        self.pos = 0

    def error(self, message: str) -> StfError:
        return StfError(f"{self.where}: {message}")

    def peek(self, offset: int = 0) -> _Token | None:
        i = self.pos + offset
        return self.items[i] if i < len(self.items) else None

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "punct" and tok.text == text

    def take(self, kind: str, what: str) -> str:
        tok = self.peek()
        if tok is None or tok.kind != kind:
            found = "end of line" if tok is None else repr(tok.text)
            raise self.error(f"expected {what}, found {found}")
        self.pos += 1
        return tok.text

    def expect(self, punct: str) -> None:
        tok = self.peek()
        if tok is None or tok.kind != "punct" or tok.text != punct:
            found = "end of line" if tok is None else repr(tok.text)
            raise self.error(f"expected '{punct}', found {found}")
        self.pos += 1

    def done(self) -> bool:
        return self.pos >= len(self.items)

    def end(self) -> None:
        tok = self.peek()
        if tok is not None:
            raise self.error(f"unexpected {tok.text!r} at end of command")

    def name(self, what: str) -> str:
        return _STACK_INDEX_RE.sub(r"[\1]", self.take("name", what))

    def integer(self, what: str) -> int:
        text = self.take("number", what)
        value, _care, wildcard = _parse_number(text)
        if wildcard:
            raise self.error(f"'*' is not allowed in {what} {text}")
        return value

    def decimal(self, what: str) -> int:
        text = self.take("number", what)
        if not text.isdigit():
            raise self.error(f"expected a decimal {what}, found {text!r}")
        return int(text)


def _parse_number(text: str) -> tuple[int, int | None, bool]:
    """Value (``*`` as 0), care mask (None for decimal), whether any digit is ``*``."""
    if text.isdigit():
        return int(text), None, False
    base_char = text[1].lower()
    bits = _BITS_PER_DIGIT[base_char]
    value = care = 0
    for digit in text[2:]:
        value <<= bits
        care <<= bits
        if digit != "*":
            value |= int(digit, 16)
            care |= (1 << bits) - 1
    return value, care, "*" in text


# --- the command parser --------------------------------------------------------------------------


def read_stf(path: Path | str) -> list[Command]:
    """Parse the STF file at ``path``; errors name the file and line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StfError(f"{path}: cannot read STF file: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a binary file, or another encoding
        line = data.count(b"\n", 0, exc.start) + 1
        raise StfError(f"{path}:{line}: not an STF script: byte 0x{data[exc.start]:02x} is not "
                       "UTF-8 text") from None
    return parse_stf(text, str(path))


def parse_stf(text: str, file: str = "<stf>") -> list[Command]:
    """Parse STF ``text``; raise `StfError` ("FILE:LINE: ...") for the first bad line."""
    commands: list[Command] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = StfLocation(file, number)
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        parser = _PARSERS.get(word.lower())
        if parser is None:
            raise StfError(f"{where}: unknown STF command {word[:40]!r}")
        commands.append(parser(rest, where))
    return commands


def _parse_add(rest: str, where: StfLocation) -> AddEntry:
    toks = _Tokens(rest, where)
    table = toks.name("a table name after 'add'")
    priority = None
    tok = toks.peek()
    if tok is not None and tok.kind == "number":
        priority = toks.decimal("priority")
    keys: list[KeyField] = []
    while True:
        name = toks.name("a key field 'NAME:VALUE' or an action 'NAME(...)'")
        if toks.at("("):
            action = _parse_action_call(name, toks)
            break
        if not toks.at(":"):
            raise toks.error(f"expected ':' after key field {name!r} or '(' after an action name")
        toks.expect(":")
        keys.append(KeyField(name, _parse_key_value(toks, name)))
        if toks.done():
            raise toks.error(f"'add {table}' has no action; write ACTION(ARG:VALUE, ...)")
    handle = None
    if toks.at("="):
        toks.expect("=")
        handle = toks.name("an entry handle name after '='")
    toks.end()
    return AddEntry(where, table, priority, tuple(keys), action, handle)


def _parse_key_value(toks: _Tokens, field: str) -> KeyValue:
    text = toks.take("number", f"a value for key field {field!r}")
    value, care, wildcard = _parse_number(text)
    for punct in ("/", "&&&", ".."):
        if toks.at(punct):
            if wildcard:
                raise toks.error(f"'*' is not allowed with '{punct}' in key field {field!r}")
            toks.expect(punct)
            other = toks.integer(f"the number after '{punct}' in key field {field!r}")
            if punct == "/":
                return PrefixKey(value, other)
            if punct == "&&&":
                return MaskedKey(value, other)
            if other < value:
                raise toks.error(f"empty range {value}..{other} in key field {field!r}")
            return RangeKey(value, other)
    return NumberKey(text, value, care, wildcard)


def _parse_action_call(name: str, toks: _Tokens) -> ActionCall:
    toks.expect("(")
    args: list[tuple[str, int]] = []
    seen: set[str] = set()
    while not toks.at(")"):
        if toks.done():
            raise toks.error(f"expected ')' to close the arguments of action {name!r}")
        if args:
            toks.expect(",")
        arg = toks.take("name", f"an argument 'NAME:VALUE' of action {name!r}")
        if arg in seen:
            raise toks.error(f"argument {arg!r} of action {name!r} given twice")
        seen.add(arg)
        toks.expect(":")
        args.append((arg, toks.integer(f"the value of argument {arg!r}")))
    toks.expect(")")
    return ActionCall(name, tuple(args))


def _parse_setdefault(rest: str, where: StfLocation) -> SetDefault:
    toks = _Tokens(rest, where)
    table = toks.name("a table name after 'setdefault'")
    action = _parse_action_call(toks.name("an action 'NAME(...)'"), toks)
    toks.end()
    return SetDefault(where, table, action)


def _parse_port(text: str, where: StfLocation) -> int:
    if not text.isdigit():
        raise StfError(f"{where}: expected a decimal port number, found {text!r}")
    port = int(text)
    if port >= 512:
        raise StfError(f"{where}: port {port} does not fit the 9-bit v1model port")
    return port


def _parse_packet(rest: str, where: StfLocation) -> Packet:
    port_text, _, data = rest.partition(" ")
    if not port_text:
        raise StfError(f"{where}: 'packet' needs a port and hex data")
    port = _parse_port(port_text, where)
    hexdata = "".join(data.split())
    if not hexdata:
        raise StfError(f"{where}: 'packet {port}' has no data")
    bad = re.search(r"[^0-9a-fA-F]", hexdata)
    if bad:
        raise StfError(f"{where}: invalid character {bad.group()!r} in packet data")
    if len(hexdata) % 2:
        raise StfError(f"{where}: packet data has an odd number of hex digits ({len(hexdata)})")
    return Packet(where, port, bytes.fromhex(hexdata))


def _parse_expect(rest: str, where: StfLocation) -> Expect:
    port_text, _, data = rest.partition(" ")
    if not port_text:
        raise StfError(f"{where}: 'expect' needs a port")
    port = _parse_port(port_text, where)
    nibbles = "".join(data.split()).upper()
    if not nibbles:
        return Expect(where, port, None)
    exact = nibbles.endswith("$")
    if exact:
        nibbles = nibbles[:-1]
    bad = re.search(r"[^0-9A-F*]", nibbles)
    if bad:
        what = "'$' may only end" if bad.group() == "$" else f"invalid character {bad.group()!r} in"
        raise StfError(f"{where}: {what} expected packet data")
    if not nibbles:
        raise StfError(f"{where}: '$' without packet data")
    return Expect(where, port, ExpectPattern(nibbles, exact))


def _parse_no_args(cls: type[Command], word: str):
    def parse(rest: str, where: StfLocation) -> Command:
        if rest:
            raise StfError(f"{where}: '{word}' takes no arguments")
        return cls(where)

    return parse


def _parse_remove(rest: str, where: StfLocation) -> RemoveAll:
    if rest.lower() != "all":
        raise StfError(f"{where}: only 'remove all' is supported")
    return RemoveAll(where)


def _parse_check_counter(rest: str, where: StfLocation) -> CheckCounter:
    toks = _Tokens(rest, where)
    counter = toks.name("a counter name")
    toks.expect("(")
    tok = toks.peek()
    index: int | str
    if tok is not None and tok.kind == "name":
        index = toks.name("an entry handle")
    else:
        index = toks.integer("a counter index")
    toks.expect(")")
    check = None
    if not toks.done():
        kind = toks.take("name", "'packets' or 'bytes'").lower()
        if kind not in ("packets", "bytes"):
            raise toks.error(f"expected 'packets' or 'bytes', found {kind!r}")
        tok = toks.peek()
        if tok is None or tok.text not in _COMPARE:
            raise toks.error("expected a comparison (== != < <= > >=)")
        toks.pos += 1
        check = CounterCheck(kind, tok.text, toks.integer("a count"))
    toks.end()
    return CheckCounter(where, counter, index, check)


def _numbers_command(cls: type[Command], word: str, names: Sequence[str], *,
                     rest_list: bool = False, optional: int = 0):
    """A command of fixed numbers (``names``), then up to `optional` more numbers, or a list of
    one or more (`rest_list`)."""

    def parse(rest: str, where: StfLocation) -> Command:
        toks = _Tokens(rest, where)
        values: list[object] = [toks.integer(f"{n} for '{word}'") for n in names]
        for _ in range(optional):
            if toks.done():
                break
            values.append(toks.integer(f"a number for '{word}'"))
        if rest_list:
            items = [toks.integer(f"a port for '{word}'")]
            while not toks.done():
                items.append(toks.integer(f"a port for '{word}'"))
            values.append(tuple(items))
        toks.end()
        return cls(where, *values)

    return parse


def _named_command(cls: type[Command], word: str, names: Sequence[str], *, rates: bool = False):
    """A command ``WORD NAME number...`` (``names`` are the numbers), optionally with meter rates."""

    def parse(rest: str, where: StfLocation) -> Command:
        toks = _Tokens(rest, where)
        values: list[object] = [toks.name(f"an object name for '{word}'")]
        values += [toks.integer(f"{n} for '{word}'") for n in names]
        if rates:
            values.append(_parse_rates(toks, word))
        toks.end()
        return cls(where, *values)

    return parse


def _parse_rates(toks: _Tokens, word: str) -> tuple[MeterRate, ...]:
    rates: list[MeterRate] = []
    while not toks.done() or not rates:
        tok = toks.peek()
        if tok is None or tok.kind not in ("float", "number"):
            raise toks.error(f"expected RATE:BURST for '{word}'")
        toks.pos += 1
        toks.expect(":")
        rates.append(MeterRate(float(tok.text), toks.integer("a burst size")))
    return tuple(rates)


_PARSERS = {
    "add": _parse_add,
    "setdefault": _parse_setdefault,
    "packet": _parse_packet,
    "expect": _parse_expect,
    "remove": _parse_remove,
    "wait": _parse_no_args(Wait, "wait"),
    "check_counter": _parse_check_counter,
    "mirroring_add": _numbers_command(
        MirroringAdd, "mirroring_add", ["a session id", "a port"], optional=2
    ),
    "mirroring_add_mc": _numbers_command(
        MirroringAddMc, "mirroring_add_mc", ["a session id", "a multicast group"]
    ),
    "mirroring_delete": _numbers_command(MirroringDelete, "mirroring_delete", ["a session id"]),
    "mirroring_get": _numbers_command(MirroringGet, "mirroring_get", ["a session id"]),
    "mc_mgrp_create": _numbers_command(McMgrpCreate, "mc_mgrp_create", ["a group id"]),
    "mc_node_create": _numbers_command(McNodeCreate, "mc_node_create", ["a rid"], rest_list=True),
    "mc_node_update": _numbers_command(
        McNodeUpdate, "mc_node_update", ["a node handle"], rest_list=True
    ),
    "mc_node_associate": _numbers_command(
        McNodeAssociate, "mc_node_associate", ["a group id", "a node handle"]
    ),
    "counter_read": _named_command(CounterRead, "counter_read", ["an index"]),
    "counter_write": _named_command(
        CounterWrite, "counter_write", ["an index", "a packet count", "a byte count"]
    ),
    "register_read": _named_command(RegisterRead, "register_read", ["an index"]),
    "register_write": _named_command(RegisterWrite, "register_write", ["an index", "a value"]),
    "register_reset": _named_command(RegisterReset, "register_reset", []),
    "meter_get_rates": _named_command(MeterGetRates, "meter_get_rates", ["an index"]),
    "meter_set_rates": _named_command(MeterSetRates, "meter_set_rates", ["an index"], rates=True),
    "meter_array_set_rates": _named_command(
        MeterArraySetRates, "meter_array_set_rates", [], rates=True
    ),
}


# --- key values for a table's match kinds --------------------------------------------------------




def resolve_key(
    key: KeyField, match_kind: str, width: int, where: StfLocation | None = None
) -> Match:
    """Turn what the script wrote for ``key`` into a match of ``match_kind`` on ``width`` bits."""
    prefix = f"{where}: " if where is not None else ""
    full = (1 << width) - 1
    v = key.value

    def fail(problem: str) -> StfError:
        return StfError(f"{prefix}key field {key.name!r} ({match_kind}, {width} bits): {problem}")

    def fits(*numbers: int) -> None:
        for n in numbers:
            if n > full:
                raise fail(f"value {n:#x} does not fit in {width} bits")

    def prefix_of(mask: int) -> int | None:
        plen = bin(mask).count("1")
        return plen if mask == _prefix_mask(plen, width) else None

    if isinstance(v, NumberKey):
        fits(v.value)
        care = full if v.care is None else v.care & full
        if match_kind == "exact":
            if v.has_wildcard:
                raise fail(f"'*' digits in {v.text} need a ternary field")
            return ExactMatch(v.value)
        if match_kind == "ternary":
            return TernaryMatch(v.value, care)
        if match_kind == "lpm":
            plen = width if v.care is None else min(bin(v.care).count("1"), width)
            return LpmMatch(v.value & _prefix_mask(plen, width), plen)
        if match_kind == "range":
            if v.has_wildcard:
                raise fail(f"'*' digits in {v.text} need a ternary field")
            return RangeMatch(v.value, v.value)
        if match_kind == "optional":
            if v.has_wildcard and care == 0:
                return OptionalMatch(None)
            if v.has_wildcard:
                raise fail(f"an optional field is all or nothing; {v.text} is partly '*'")
            return OptionalMatch(v.value)
    elif isinstance(v, PrefixKey):
        fits(v.value)
        if v.prefix_len > width:
            raise fail(f"prefix length {v.prefix_len} is longer than the field")
        mask = _prefix_mask(v.prefix_len, width)
        if v.value & ~mask & full:
            raise fail(f"{v.value:#x}/{v.prefix_len} has bits set beyond the prefix")
        if match_kind == "lpm":
            return LpmMatch(v.value, v.prefix_len)
        if match_kind == "ternary":
            return TernaryMatch(v.value, mask)
        if match_kind in ("exact", "optional") and v.prefix_len == width:
            return ExactMatch(v.value) if match_kind == "exact" else OptionalMatch(v.value)
        if match_kind == "optional" and v.prefix_len == 0:
            return OptionalMatch(None)
    elif isinstance(v, MaskedKey):
        fits(v.value, v.mask)
        if v.value & ~v.mask:
            raise fail(f"{v.value:#x}&&&{v.mask:#x} has value bits outside the mask")
        if match_kind == "ternary":
            return TernaryMatch(v.value, v.mask)
        if match_kind == "lpm" and (plen := prefix_of(v.mask)) is not None:
            return LpmMatch(v.value, plen)
        if match_kind in ("exact", "optional") and v.mask == full:
            return ExactMatch(v.value) if match_kind == "exact" else OptionalMatch(v.value)
        if match_kind == "optional" and v.mask == 0:
            return OptionalMatch(None)
    elif isinstance(v, RangeKey):
        fits(v.low, v.high)
        if match_kind == "range":
            return RangeMatch(v.low, v.high)
        if v.low == v.high and match_kind in ("exact", "optional"):
            return ExactMatch(v.low) if match_kind == "exact" else OptionalMatch(v.low)
    if match_kind not in ("exact", "lpm", "ternary", "range", "optional"):
        raise fail(f"match kind {match_kind!r} cannot be set from an STF script")
    raise fail(f"this form of value cannot be used for a {match_kind} field")


def _prefix_mask(prefix_len: int, width: int) -> int:
    return ((1 << prefix_len) - 1) << (width - prefix_len)


# --- comparing output packets --------------------------------------------------------------------


def match_expected(expected: ExpectPattern, got: bytes) -> bool:
    """bmv2stf's rule: all non-``*`` nibbles equal; longer packets fail only with ``$``."""
    return _first_difference(expected, got) is None


def _first_difference(expected: ExpectPattern, got: bytes) -> tuple[int, str] | None:
    """(nibble index, reason) of the first mismatch, or None when ``got`` matches."""
    have = got.hex().upper()
    want = expected.nibbles
    for i, (w, h) in enumerate(zip(want, have)):
        if w != "*" and w != h:
            return i, f"differs at byte {i // 2} ({'high' if i % 2 == 0 else 'low'} nibble)"
    if len(have) < len(want):
        return len(have), f"too short: {len(got)} bytes, expected {_length(expected)}"
    if expected.exact and len(have) > len(want):
        return len(want), f"too long: {len(got)} bytes, expected exactly {_length(expected)}"
    return None


def _length(expected: ExpectPattern) -> str:
    n = len(expected.nibbles)
    text = f"{n // 2} bytes" if n % 2 == 0 else f"{n / 2:g} bytes"
    return text if expected.exact else f"at least {text}"


def format_hex(data: bytes | str, per_line: int = 16) -> list[str]:
    """Hex (or an expect pattern's nibbles) as rows ``OFFSET  xx xx ...`` of ``per_line`` bytes."""
    nibbles = data.hex() if isinstance(data, bytes) else data.lower()
    rows = []
    step = per_line * 2
    for start in range(0, max(len(nibbles), 1), step):
        chunk = nibbles[start : start + step]
        pairs = [chunk[i : i + 2] for i in range(0, len(chunk), 2)]
        rows.append(f"{start // 2:04x}  " + _join_pairs(pairs, per_line))
    return rows


def _join_pairs(pairs: Sequence[str], per_line: int) -> str:
    # An extra space after every 8 bytes, as hexdump does, keeps long rows countable.
    out = []
    for i, pair in enumerate(pairs):
        if i and i % 8 == 0:
            out.append("")
        out.append(pair)
    return " ".join(out)


def _column(nibble_in_row: int) -> int:
    """Text column of a nibble within a row produced by `format_hex` (after the offset)."""
    byte, half = divmod(nibble_in_row, 2)
    return 6 + byte * 3 + byte // 8 + half


def format_packet_diff(expected: ExpectPattern, got: bytes, per_line: int = 16) -> str:
    """Expected vs got, row by row, with ``^`` under the first differing nibble."""
    diff = _first_difference(expected, got)
    want_rows = format_hex(expected.nibbles, per_line)
    have_rows = format_hex(got, per_line)
    suffix = " (exact length)" if expected.exact else ""
    lines = [f"  expected{suffix}: {_length(expected)}; got: {len(got)} bytes"]
    if diff is not None:
        lines[0] += f" -- {diff[1]}"
    mark_row = mark_col = -1
    if diff is not None:
        mark_row, in_row = divmod(diff[0], per_line * 2)
        mark_col = _column(in_row)
    for row in range(max(len(want_rows), len(have_rows))):
        want = want_rows[row] if row < len(want_rows) else ""
        have = have_rows[row] if row < len(have_rows) else ""
        lines.append(f"    exp {want}".rstrip())
        lines.append(f"    got {have}".rstrip())
        if row == mark_row:
            lines.append(" " * (8 + mark_col) + "^")
    return "\n".join(lines)


def check_port(port: int, expected: Sequence[ExpectPattern], got: Sequence[bytes]) -> str | None:
    """Compare one port's output with its ``expect`` patterns; a readable report, or None if OK.

    Like bmv2stf, the packet count must match exactly; the report lists every packet that is
    missing, unexpected or different.
    """
    problems: list[str] = []
    for i in range(max(len(expected), len(got))):
        label = f"packet #{i + 1} on port {port}"
        if i >= len(got):
            problems.append(f"{label}: missing (expected {expected[i]})")
        elif i >= len(expected):
            problems.append(f"{label}: unexpected ({len(got[i])} bytes)")
            problems.extend("    " + row for row in format_hex(got[i]))
        elif not match_expected(expected[i], got[i]):
            problems.append(f"{label}: differs")
            problems.append(format_packet_diff(expected[i], got[i]))
    if not problems:
        return None
    head = f"port {port}: expected {len(expected)} packet(s), got {len(got)}"
    return "\n".join([head, *problems])
