"""The base of the entity builders, and the value types several of them share."""

from __future__ import annotations

from typing import NamedTuple

from finsy.proto import p4r

INSERT = p4r.Update.INSERT
MODIFY = p4r.Update.MODIFY
DELETE = p4r.Update.DELETE


class CounterData(NamedTuple):
    byte_count: int = 0
    packet_count: int = 0

    def to_proto(self) -> p4r.CounterData:
        return p4r.CounterData(byte_count=self.byte_count, packet_count=self.packet_count)

    @classmethod
    def from_proto(cls, message: p4r.CounterData) -> CounterData:
        return cls(message.byte_count, message.packet_count)


class MeterConfig(NamedTuple):
    """Two-rate meter config; rates per second, bursts in the meter's unit (bytes or packets)."""

    cir: int
    cburst: int
    pir: int
    pburst: int
    eburst: int = 0

    def to_proto(self) -> p4r.MeterConfig:
        return p4r.MeterConfig(cir=self.cir, cburst=self.cburst, pir=self.pir,
                               pburst=self.pburst, eburst=self.eburst)

    @classmethod
    def from_proto(cls, message: p4r.MeterConfig) -> MeterConfig:
        return cls(message.cir, message.cburst, message.pir, message.pburst, message.eburst)


class Entity:
    """Base of the builders: equality is equality of the P4Runtime messages they produce."""

    def to_entity(self) -> p4r.Entity:
        raise NotImplementedError

    def check_write(self, kind: int) -> None:
        """Raise EncodeError if this entity cannot be sent in an update of `kind`."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entity):
            return NotImplemented
        return comparable(self.to_entity()) == comparable(other.to_entity())

    __hash__ = None  # type: ignore[assignment]  # mutable builders


def comparable(entity: p4r.Entity) -> p4r.Entity:
    """`entity` with the lists whose order carries no meaning sorted (replicas, group members),
    since servers may read them back in another order."""
    kind = entity.WhichOneof("entity")
    if kind not in ("packet_replication_engine_entry", "action_profile_group"):
        return entity
    copy = p4r.Entity()
    copy.CopyFrom(entity)
    if kind == "action_profile_group":
        items = copy.action_profile_group.members
    else:
        pre = copy.packet_replication_engine_entry
        items = getattr(pre, pre.WhichOneof("type") or "multicast_group_entry").replicas
    ordered = sorted(items, key=lambda item: item.SerializeToString(deterministic=True))
    copies = [type(item)() for item in ordered]
    for target, source in zip(copies, ordered, strict=True):
        target.CopyFrom(source)
    del items[:]
    items.extend(copies)
    return copy
