"""P4Data (register cells, digest lists) ⇄ Python values, guided by P4Info type specs.

Python side: bit<W>/int<W>/serializable enum → int, bool → bool, struct and header → dict by
member name (an invalid header → None), tuple/stack → list, enum/error → member name (str).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from finsy.proto import p4d, p4t

from p4rt.errors import EncodeError
from p4rt.schema import Schema, bitstring_width
from p4rt.values import check_width, decode, int_to_bytes, to_int


def decode_data(schema: Schema, spec: p4t.P4DataTypeSpec | None, data: p4d.P4Data) -> Any:
    """The Python value of `data`; without a spec, bitstrings become ints and structs lists."""
    kind = data.WhichOneof("data")
    if kind == "bitstring":
        return decode(data.bitstring)
    if kind == "enum_value":
        return decode(data.enum_value)
    if kind == "bool":
        return data.bool
    if kind in ("enum", "error"):
        return getattr(data, kind)
    if kind == "varbit":
        return decode(data.varbit.bitstring)
    if kind in ("struct", "tuple"):
        members = getattr(data, kind).members
        specs = _member_specs(schema, spec)
        if specs is None:
            return [decode_data(schema, None, member) for member in members]
        if kind == "tuple":
            return [decode_data(schema, item_spec, member)
                    for (_, item_spec), member in zip(specs, members, strict=False)]
        return {name: decode_data(schema, item_spec, member)
                for (name, item_spec), member in zip(specs, members, strict=False)}
    if kind == "header":
        return _decode_header(schema, spec, data.header)
    if kind == "header_stack":
        return [_decode_header(schema, None, entry) for entry in data.header_stack.entries]
    return data  # header unions and stacks of them: rare; left as the message


def _decode_header(schema: Schema, spec: p4t.P4DataTypeSpec | None,
                   header: p4d.P4Header) -> Any:
    if not header.is_valid:
        return None
    values = [decode(bits) for bits in header.bitstrings]
    if spec is None or spec.WhichOneof("type_spec") != "header":
        return values
    header_spec = schema.p4info.type_info.headers.get(spec.header.name)
    if header_spec is None:
        return values
    return {member.name: value for member, value in zip(header_spec.members, values, strict=False)}


def _member_specs(schema: Schema,
                  spec: p4t.P4DataTypeSpec | None) -> list[tuple[str, p4t.P4DataTypeSpec]] | None:
    if spec is None:
        return None
    kind = spec.WhichOneof("type_spec")
    if kind == "struct":
        struct = schema.p4info.type_info.structs.get(spec.struct.name)
        if struct is None:
            return None
        return [(member.name, member.type_spec) for member in struct.members]
    if kind == "tuple":
        return [(str(position), member) for position, member in enumerate(spec.tuple.members)]
    return None


def encode_data(schema: Schema, spec: p4t.P4DataTypeSpec, value: Any, what: str) -> p4d.P4Data:
    """A P4Data for `value` of type `spec` (bitstrings, bools, structs, tuples, headers)."""
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        width = bitstring_width(spec.bitstring)
        return p4d.P4Data(bitstring=int_to_bytes(check_width(to_int(value, what), width, what)))
    if kind in ("new_type", "serializable_enum"):
        width = schema.bitwidth(spec)
        number = int_to_bytes(check_width(to_int(value, what), width, what))
        if kind == "serializable_enum":
            return p4d.P4Data(enum_value=number)
        return p4d.P4Data(bitstring=number)
    if kind == "bool":
        return p4d.P4Data(bool=bool(value))
    if kind in ("struct", "tuple"):
        specs = _member_specs(schema, spec) or []
        items = _members(value, [name for name, _ in specs], what)
        message = p4d.P4StructLike(members=[
            encode_data(schema, item_spec, item, f"{what}.{name}")
            for (name, item_spec), item in zip(specs, items, strict=True)])
        return p4d.P4Data(struct=message) if kind == "struct" else p4d.P4Data(tuple=message)
    if kind == "header":
        header_spec = schema.p4info.type_info.headers.get(spec.header.name)
        if value is None or header_spec is None:
            return p4d.P4Data(header=p4d.P4Header(is_valid=False))
        names = [member.name for member in header_spec.members]
        items = _members(value, names, what)
        bits = [int_to_bytes(check_width(to_int(item, f"{what}.{member.name}"),
                                         bitstring_width(member.type_spec)))
                for member, item in zip(header_spec.members, items, strict=True)]
        return p4d.P4Data(header=p4d.P4Header(is_valid=True, bitstrings=bits))
    raise EncodeError(f"{what}: values of type {kind} cannot be written")


def _members(value: Any, names: Sequence[str], what: str) -> list[Any]:
    if isinstance(value, Mapping):
        unknown = set(value) - set(names)
        missing = [name for name in names if name not in value]
        if unknown or missing:
            raise EncodeError(f"{what}: expected members {', '.join(names)}; "
                              f"missing {missing or 'none'}, unknown {sorted(unknown) or 'none'}")
        return [value[name] for name in names]
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if len(value) != len(names):
            raise EncodeError(f"{what}: expected {len(names)} members, got {len(value)}")
        return list(value)
    raise EncodeError(f"{what}: expected a mapping or a sequence, got {value!r}")
