"""Entity builders: P4Runtime entities from names and Python values, and back.

    entry = TableEntry(schema, "route_v6").match(dst_addr=("2001:db8::", 32)) \\
                .action("set_next_hop", dmac="aa:bb:cc:dd:ee:ff")
    conn.insert([entry])

Builders are plain objects (no connection, no I/O), so a synchronous and an asyncio client share
them. `to_entity()` gives the p4.v1.Entity; `decode_entity(schema, entity)` turns what a Read
returns into the same builder classes, so read-back entries compare equal to written ones.
"""

from __future__ import annotations

from finsy.proto import p4r
from google.protobuf.message import Message

from p4rt.actions import ActionCall, make_action_call
from p4rt.entity import DELETE, INSERT, MODIFY, CounterData, Entity, MeterConfig, comparable
from p4rt.errors import EncodeError, SchemaError
from p4rt.resources import (
    CloneSessionEntry,
    CounterEntry,
    DigestEntry,
    DirectCounterEntry,
    DirectMeterEntry,
    MeterEntry,
    MulticastGroupEntry,
    RegisterEntry,
    Replica,
)
from p4rt.schema import Schema
from p4rt.tables import ActionProfileGroup, ActionProfileMember, GroupMember, TableEntry

__all__ = [
    "DELETE",
    "INSERT",
    "MODIFY",
    "ActionCall",
    "ActionProfileGroup",
    "ActionProfileMember",
    "CloneSessionEntry",
    "CounterData",
    "CounterEntry",
    "DigestEntry",
    "DirectCounterEntry",
    "DirectMeterEntry",
    "Entity",
    "EntityLike",
    "GroupMember",
    "MeterConfig",
    "MeterEntry",
    "MulticastGroupEntry",
    "RegisterEntry",
    "Replica",
    "TableEntry",
    "as_entity",
    "comparable",
    "decode_entity",
    "delete",
    "describe_entity",
    "describe_update",
    "insert",
    "make_action_call",
    "make_update",
    "modify",
]


# -- entities and updates -------------------------------------------------------------------------

EntityLike = Entity | p4r.Entity | Message

_ENTITY_FIELDS = {descriptor.message_type.full_name: descriptor.name
                  for descriptor in p4r.Entity.DESCRIPTOR.fields}
_PRE_FIELDS = {descriptor.message_type.full_name: descriptor.name
               for descriptor in p4r.PacketReplicationEngineEntry.DESCRIPTOR.fields}


def as_entity(item: EntityLike) -> p4r.Entity:
    """A p4.v1.Entity from a builder, an Entity, or a bare entity message (p4r.TableEntry...)."""
    if isinstance(item, Entity):
        return item.to_entity()
    if isinstance(item, p4r.Entity):
        return item
    if isinstance(item, Message):
        full_name = item.DESCRIPTOR.full_name
        if full_name in _ENTITY_FIELDS:
            entity = p4r.Entity()
            getattr(entity, _ENTITY_FIELDS[full_name]).CopyFrom(item)
            return entity
        if full_name in _PRE_FIELDS:
            entity = p4r.Entity()
            getattr(entity.packet_replication_engine_entry, _PRE_FIELDS[full_name]).CopyFrom(item)
            return entity
    raise EncodeError(f"not a P4Runtime entity: {item!r}")


_UPDATE_NAMES = {"insert": INSERT, "modify": MODIFY, "delete": DELETE}


def make_update(kind: int | str, item: EntityLike) -> p4r.Update:
    """An Update of `kind` (INSERT/MODIFY/DELETE or its name) after the builder's checks."""
    if isinstance(kind, str):
        try:
            kind = _UPDATE_NAMES[kind.lower()]
        except KeyError:
            raise EncodeError(f"unknown update type {kind!r}") from None
    if isinstance(item, Entity):
        item.check_write(kind)
    return p4r.Update(type=kind, entity=as_entity(item))  # type: ignore[arg-type]


def insert(item: EntityLike) -> p4r.Update:
    return make_update(INSERT, item)


def modify(item: EntityLike) -> p4r.Update:
    return make_update(MODIFY, item)


def delete(item: EntityLike) -> p4r.Update:
    return make_update(DELETE, item)


def decode_entity(schema: Schema, entity: p4r.Entity) -> Entity | p4r.Entity:
    """The builder object for a read-back entity (the message itself for unsupported kinds)."""
    kind = entity.WhichOneof("entity")
    try:
        if kind == "table_entry":
            return TableEntry.from_proto(schema, entity.table_entry)
        if kind == "action_profile_member":
            return ActionProfileMember.from_proto(schema, entity.action_profile_member)
        if kind == "action_profile_group":
            return ActionProfileGroup.from_proto(schema, entity.action_profile_group)
        if kind == "counter_entry":
            return CounterEntry.from_proto(schema, entity.counter_entry)
        if kind == "direct_counter_entry":
            return DirectCounterEntry.from_proto(schema, entity.direct_counter_entry)
        if kind == "meter_entry":
            return MeterEntry.from_proto(schema, entity.meter_entry)
        if kind == "direct_meter_entry":
            return DirectMeterEntry.from_proto(schema, entity.direct_meter_entry)
        if kind == "register_entry":
            return RegisterEntry.from_proto(schema, entity.register_entry)
        if kind == "digest_entry":
            return DigestEntry.from_proto(schema, entity.digest_entry)
        if kind == "packet_replication_engine_entry":
            pre = entity.packet_replication_engine_entry
            if pre.WhichOneof("type") == "multicast_group_entry":
                return MulticastGroupEntry.from_proto(pre.multicast_group_entry)
            if pre.WhichOneof("type") == "clone_session_entry":
                return CloneSessionEntry.from_proto(pre.clone_session_entry)
    except SchemaError:
        return entity  # ids this P4Info does not know: hand back the raw message
    return entity


def describe_entity(schema: Schema | None, entity: p4r.Entity) -> str:
    """Short text naming an entity ("table ingress.route", "multicast group 5")."""
    kind = entity.WhichOneof("entity")
    if kind is None:
        return "empty entity"
    message = getattr(entity, kind)

    def name(object_id: int) -> str:
        return schema.name(object_id) if schema is not None else str(object_id)

    if kind == "packet_replication_engine_entry":
        pre_kind = message.WhichOneof("type")
        if pre_kind == "multicast_group_entry":
            return f"multicast group {message.multicast_group_entry.multicast_group_id}"
        if pre_kind == "clone_session_entry":
            return f"clone session {message.clone_session_entry.session_id}"
        return "packet replication engine entry"
    if kind in ("direct_counter_entry", "direct_meter_entry"):
        label = kind.removesuffix("_entry").replace("_", " ")
        return f"{label} of table {name(message.table_entry.table_id)}"
    described = {
        "table_entry": ("table", "table_id", None),
        "action_profile_member": ("action profile", "action_profile_id", "member_id"),
        "action_profile_group": ("action profile", "action_profile_id", "group_id"),
        "counter_entry": ("counter", "counter_id", None),
        "meter_entry": ("meter", "meter_id", None),
        "register_entry": ("register", "register_id", None),
        "digest_entry": ("digest", "digest_id", None),
        "value_set_entry": ("value set", "value_set_id", None),
    }
    if kind not in described:
        return kind.replace("_", " ")
    label, id_field, sub_id = described[kind]
    object_id = getattr(message, id_field)
    text = f"{label} {name(object_id) if object_id else '*'}"
    if kind == "table_entry" and message.is_default_action:
        text += " (default action)"
    if sub_id is not None:
        text += f" {sub_id.removesuffix('_id')} {getattr(message, sub_id)}"
    if kind in ("counter_entry", "meter_entry", "register_entry") and message.HasField("index"):
        text += f"[{message.index.index}]"
    return text


def describe_update(schema: Schema | None, update: p4r.Update) -> str:
    """"INSERT table ingress.route" — the label of a failed update in a write error."""
    return f"{p4r.Update.Type.Name(update.type)} {describe_entity(schema, update.entity)}"
