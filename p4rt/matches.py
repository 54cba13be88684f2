"""Match values: Python forms → the five P4Runtime match kinds, canonicalised.

Forms per kind (`value` as in p4rt.values; every string form also works for the tuple parts):
  exact     value
  lpm       (value, prefix_len) | "10.0.0.0/8" | value (full length)
  ternary   (value, mask) | "0x0a00&&&0xff00" | value (all bits cared for)
  range     (low, high) | "10..20" | value (low = high)
  optional  value | None (wildcard)
A don't-care match (prefix 0, mask 0, the full range, optional None) becomes None: P4Runtime
requires such fields to be left out of the entry. Value bits outside the prefix or mask are cleared,
as P4Runtime servers reject them.
"""

from __future__ import annotations

from typing import NamedTuple

from finsy.proto import p4i, p4r

from p4rt.errors import EncodeError
from p4rt.values import (
    check_width,
    decode,
    full_mask,
    int_to_bytes,
    prefix_mask,
    to_int,
)


class ExactMatch(NamedTuple):
    value: int


class LpmMatch(NamedTuple):
    value: int
    prefix_len: int


class TernaryMatch(NamedTuple):
    value: int
    mask: int


class RangeMatch(NamedTuple):
    low: int
    high: int


class OptionalMatch(NamedTuple):
    value: int


Match = ExactMatch | LpmMatch | TernaryMatch | RangeMatch | OptionalMatch

_KIND = p4i.MatchField.MatchType
_BY_KIND: dict[int, type] = {
    _KIND.EXACT: ExactMatch, _KIND.LPM: LpmMatch, _KIND.TERNARY: TernaryMatch,
    _KIND.RANGE: RangeMatch, _KIND.OPTIONAL: OptionalMatch,
}


def kind_name(field: p4i.MatchField) -> str:
    if field.WhichOneof("match") == "other_match_type":
        return field.other_match_type
    return _KIND.Name(field.match_type).lower()


def _split(value: object, separator: str) -> object:
    if isinstance(value, str) and separator in value:
        first, second = value.split(separator, 1)
        return (first.strip(), second.strip())
    return value


def _pair(value: object, what: str, form: str) -> tuple[object, object] | None:
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise EncodeError(f"{what}: expected {form}, got {value!r}")
        return (value[0], value[1])
    return None


def to_match(field: p4i.MatchField, value: object, what: str) -> Match | None:
    """The canonical match of one field, or None for a don't-care (to be left out)."""
    width = field.bitwidth
    kind = field.match_type if field.WhichOneof("match") == "match_type" else None
    if kind not in _BY_KIND:
        raise EncodeError(f"{what}: match kind '{kind_name(field)}' is not supported")
    if isinstance(value, tuple) and type(value) in _BY_KIND.values():
        if not isinstance(value, _BY_KIND[kind]):
            raise EncodeError(f"{what}: a {kind_name(field)} field cannot take {value!r}")
        value = tuple(value) if not isinstance(value, ExactMatch | OptionalMatch) else value[0]

    def number(item: object, label: str = "") -> int:
        return check_width(to_int(item, what + label), width, what + label)  # type: ignore[arg-type]

    if kind == _KIND.EXACT:
        return ExactMatch(number(value))
    if kind == _KIND.OPTIONAL:
        return None if value is None else OptionalMatch(number(value))
    if kind == _KIND.LPM:
        pair = _pair(_split(value, "/"), what, "(value, prefix_len)")
        base, length = (value, width) if pair is None else pair
        prefix_len = to_int(length, what + " prefix length")  # type: ignore[arg-type]
        if prefix_len > width:
            raise EncodeError(f"{what}: prefix length {prefix_len} is longer than {width} bits")
        if prefix_len == 0:
            return None
        return LpmMatch(number(base) & prefix_mask(width, prefix_len), prefix_len)
    if kind == _KIND.TERNARY:
        pair = _pair(_split(value, "&&&"), what, "(value, mask)")
        base, mask_value = (value, full_mask(width)) if pair is None else pair
        mask = number(mask_value, " mask")
        if mask == 0:
            return None
        return TernaryMatch(number(base) & mask, mask)
    pair = _pair(_split(value, ".."), what, "(low, high)")
    low_value, high_value = (value, value) if pair is None else pair
    low, high = number(low_value, " low"), number(high_value, " high")
    if low > high:
        raise EncodeError(f"{what}: range low {low:#x} is above high {high:#x}")
    if low == 0 and high == full_mask(width):
        return None
    return RangeMatch(low, high)


def match_to_proto(field: p4i.MatchField, match: Match) -> p4r.FieldMatch:
    """The FieldMatch message; values become canonical bytestrings."""
    message = p4r.FieldMatch(field_id=field.id)
    if isinstance(match, ExactMatch):
        message.exact.value = int_to_bytes(match.value)
    elif isinstance(match, LpmMatch):
        message.lpm.value = int_to_bytes(match.value)
        message.lpm.prefix_len = match.prefix_len
    elif isinstance(match, TernaryMatch):
        message.ternary.value = int_to_bytes(match.value)
        message.ternary.mask = int_to_bytes(match.mask)
    elif isinstance(match, RangeMatch):
        message.range.low = int_to_bytes(match.low)
        message.range.high = int_to_bytes(match.high)
    else:
        message.optional.value = int_to_bytes(match.value)
    return message


def match_from_proto(message: p4r.FieldMatch) -> Match:
    kind = message.WhichOneof("field_match_type")
    if kind == "exact":
        return ExactMatch(decode(message.exact.value))
    if kind == "lpm":
        return LpmMatch(decode(message.lpm.value), message.lpm.prefix_len)
    if kind == "ternary":
        return TernaryMatch(decode(message.ternary.value), decode(message.ternary.mask))
    if kind == "range":
        return RangeMatch(decode(message.range.low), decode(message.range.high))
    if kind == "optional":
        return OptionalMatch(decode(message.optional.value))
    raise EncodeError(f"field {message.field_id}: match kind '{kind}' is not supported")


def format_match(match: Match, width: int) -> str:
    """Readable text of a match ("0xa000000/8"), for reprs and logs."""
    digits = max(1, (width + 3) // 4)

    def hexa(number: int) -> str:
        return f"0x{number:0{digits}x}"

    if isinstance(match, LpmMatch):
        return f"{hexa(match.value)}/{match.prefix_len}"
    if isinstance(match, TernaryMatch):
        return f"{hexa(match.value)}&&&{hexa(match.mask)}"
    if isinstance(match, RangeMatch):
        return f"{hexa(match.low)}..{hexa(match.high)}"
    return hexa(match.value)


__all__ = [
    "ExactMatch",
    "LpmMatch",
    "Match",
    "OptionalMatch",
    "RangeMatch",
    "TernaryMatch",
    "format_match",
    "kind_name",
    "match_from_proto",
    "match_to_proto",
    "to_match",
]
