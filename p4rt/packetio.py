"""Stream messages by name: packet-out metadata encoding, packet-in and digest decoding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from finsy.proto import p4r

from p4rt.errors import EncodeError, SchemaError
from p4rt.p4data import decode_data
from p4rt.schema import Schema
from p4rt.values import check_width, decode, int_to_bytes, to_int


class PacketIn(NamedTuple):
    payload: bytes
    metadata: dict[str, int]   # by metadata name ("ingress_port"); unknown ids as "id:<n>"


class DigestList(NamedTuple):
    digest: str                # digest name (str(id) when the P4Info does not know it)
    digest_id: int
    list_id: int
    data: list[Any]            # one decoded value per digest message (dicts for structs)
    timestamp: int


def packet_out_message(schema: Schema | None, payload: bytes,
                       metadata: Mapping[str, object]) -> p4r.PacketOut:
    """A PacketOut with `metadata` encoded by name from the `packet_out` controller header.

    Every field must be given, except `@padding` ones, which are sent as 0.
    """
    message = p4r.PacketOut(payload=bytes(payload))
    if schema is None or not schema.has_controller_header("packet_out"):
        if metadata:
            raise SchemaError("the P4Info has no packet_out controller header for metadata "
                              f"{', '.join(metadata)}", "INVALID_ARGUMENT")
        return message
    fields = schema.packet_metadata("packet_out")
    values: dict[int, int] = {}
    for key, value in metadata.items():
        field = fields.get(key)
        what = f"packet_out metadata {field.name}"
        values[field.id] = check_width(to_int(value, what), field.bitwidth, what)  # type: ignore[arg-type]
    for field in fields:
        if field.id in values:
            continue
        if any(text.startswith("@padding") for text in field.annotations):
            values[field.id] = 0
            continue
        wanted = ", ".join(item.name for item in fields)
        raise EncodeError(f"packet_out metadata {field.name} is missing (fields: {wanted})")
    for field_id in sorted(values):
        message.metadata.add(metadata_id=field_id, value=int_to_bytes(values[field_id]))
    return message


def decode_packet_in(schema: Schema | None, message: p4r.PacketIn) -> PacketIn:
    names: dict[int, str] = {}
    if schema is not None and schema.has_controller_header("packet_in"):
        names = {field.id: field.name for field in schema.packet_metadata("packet_in")}
    metadata = {names.get(item.metadata_id, f"id:{item.metadata_id}"): decode(item.value)
                for item in message.metadata}
    return PacketIn(message.payload, metadata)


def decode_digest_list(schema: Schema | None, message: p4r.DigestList) -> DigestList:
    name, spec = str(message.digest_id), None
    if schema is not None:
        try:
            info = schema.digest(message.digest_id)
        except SchemaError:
            info = None
        if info is not None:
            name, spec = info.preamble.name, info.type_spec
    data = [decode_data(schema, spec, item) if schema is not None else item
            for item in message.data]
    return DigestList(name, message.digest_id, message.list_id, data, message.timestamp)
