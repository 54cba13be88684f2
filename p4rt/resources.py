"""Packet replication (multicast groups, clone sessions) and extern entries: counters,
meters, registers and digest configuration."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from finsy.proto import p4r

from p4rt.entity import MODIFY, CounterData, Entity, MeterConfig
from p4rt.errors import EncodeError
from p4rt.p4data import decode_data, encode_data
from p4rt.schema import Key, Schema
from p4rt.tables import TableEntry
from p4rt.values import decode, int_to_bytes

# -- packet replication engine --------------------------------------------------------------------

class Replica(NamedTuple):
    port: int
    instance: int = 0


def _replicas(items: Iterable[int | tuple[int, int] | Replica]) -> list[Replica]:
    return [Replica(item) if isinstance(item, int) else Replica(*item) for item in items]


def _replica_proto(replica: Replica) -> p4r.Replica:
    return p4r.Replica(port=int_to_bytes(replica.port), instance=replica.instance)


def _replica_from_proto(message: p4r.Replica) -> Replica:
    if message.WhichOneof("port_kind") == "egress_port":
        return Replica(message.egress_port, message.instance)
    return Replica(decode(message.port), message.instance)


class MulticastGroupEntry(Entity):
    """A multicast group: replicas as ports or (port, instance) pairs."""

    def __init__(self, group_id: int = 0,
                 replicas: Iterable[int | tuple[int, int] | Replica] = ()) -> None:
        self.group_id = group_id
        self.replicas = _replicas(replicas)

    def add(self, port: int, instance: int = 0) -> MulticastGroupEntry:
        self.replicas.append(Replica(port, instance))
        return self

    def to_entity(self) -> p4r.Entity:
        message = p4r.MulticastGroupEntry(multicast_group_id=self.group_id,
                                          replicas=[_replica_proto(r) for r in self.replicas])
        return p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            multicast_group_entry=message))

    @classmethod
    def from_proto(cls, message: p4r.MulticastGroupEntry) -> MulticastGroupEntry:
        return cls(message.multicast_group_id, [_replica_from_proto(r) for r in message.replicas])

    def __repr__(self) -> str:
        return f"MulticastGroupEntry({self.group_id}, {self.replicas})"


class CloneSessionEntry(Entity):
    """A clone session: replicas, class of service, truncation length (0 = whole packet)."""

    def __init__(self, session_id: int = 0,
                 replicas: Iterable[int | tuple[int, int] | Replica] = (),
                 class_of_service: int = 0, packet_length_bytes: int = 0) -> None:
        self.session_id = session_id
        self.replicas = _replicas(replicas)
        self.class_of_service = class_of_service
        self.packet_length_bytes = packet_length_bytes

    def add(self, port: int, instance: int = 0) -> CloneSessionEntry:
        self.replicas.append(Replica(port, instance))
        return self

    def to_entity(self) -> p4r.Entity:
        message = p4r.CloneSessionEntry(session_id=self.session_id,
                                        replicas=[_replica_proto(r) for r in self.replicas],
                                        class_of_service=self.class_of_service,
                                        packet_length_bytes=self.packet_length_bytes)
        return p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            clone_session_entry=message))

    @classmethod
    def from_proto(cls, message: p4r.CloneSessionEntry) -> CloneSessionEntry:
        return cls(message.session_id, [_replica_from_proto(r) for r in message.replicas],
                   message.class_of_service, message.packet_length_bytes)

    def __repr__(self) -> str:
        return f"CloneSessionEntry({self.session_id}, {self.replicas})"


# -- counters, meters, registers, digests ---------------------------------------------------------

def _index(index: int | None) -> p4r.Index | None:
    return None if index is None else p4r.Index(index=index)


class CounterEntry(Entity):
    """An indexed counter cell; index None reads every cell."""

    def __init__(self, schema: Schema, counter: Key, index: int | None = None,
                 data: CounterData | None = None) -> None:
        self.schema = schema
        self.info = schema.counter(counter)
        self.index = index
        self.data = data

    def to_entity(self) -> p4r.Entity:
        message = p4r.CounterEntry(counter_id=self.info.preamble.id, index=_index(self.index))
        if self.data is not None:
            message.data.CopyFrom(self.data.to_proto())
        return p4r.Entity(counter_entry=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.CounterEntry) -> CounterEntry:
        return cls(schema, message.counter_id,
                   message.index.index if message.HasField("index") else None,
                   CounterData.from_proto(message.data) if message.HasField("data") else None)

    def __repr__(self) -> str:
        return f"CounterEntry({self.info.preamble.name}[{self.index}], {self.data})"


class DirectCounterEntry(Entity):
    """The direct counter of one table entry (a TableEntry with its match)."""

    def __init__(self, table_entry: TableEntry, data: CounterData | None = None) -> None:
        self.table_entry = table_entry
        self.data = data

    def to_entity(self) -> p4r.Entity:
        message = p4r.DirectCounterEntry(table_entry=self.table_entry.to_entity().table_entry)
        if self.data is not None:
            message.data.CopyFrom(self.data.to_proto())
        return p4r.Entity(direct_counter_entry=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.DirectCounterEntry) -> DirectCounterEntry:
        return cls(TableEntry.from_proto(schema, message.table_entry),
                   CounterData.from_proto(message.data) if message.HasField("data") else None)

    def __repr__(self) -> str:
        return f"DirectCounterEntry({self.table_entry!r}, {self.data})"


class MeterEntry(Entity):
    """An indexed meter cell; index None reads every cell."""

    def __init__(self, schema: Schema, meter: Key, index: int | None = None,
                 config: MeterConfig | None = None) -> None:
        self.schema = schema
        self.info = schema.meter(meter)
        self.index = index
        self.config = config

    def to_entity(self) -> p4r.Entity:
        message = p4r.MeterEntry(meter_id=self.info.preamble.id, index=_index(self.index))
        if self.config is not None:
            message.config.CopyFrom(self.config.to_proto())
        return p4r.Entity(meter_entry=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.MeterEntry) -> MeterEntry:
        return cls(schema, message.meter_id,
                   message.index.index if message.HasField("index") else None,
                   MeterConfig.from_proto(message.config) if message.HasField("config") else None)

    def __repr__(self) -> str:
        return f"MeterEntry({self.info.preamble.name}[{self.index}], {self.config})"


class DirectMeterEntry(Entity):
    def __init__(self, table_entry: TableEntry, config: MeterConfig | None = None) -> None:
        self.table_entry = table_entry
        self.config = config

    def to_entity(self) -> p4r.Entity:
        message = p4r.DirectMeterEntry(table_entry=self.table_entry.to_entity().table_entry)
        if self.config is not None:
            message.config.CopyFrom(self.config.to_proto())
        return p4r.Entity(direct_meter_entry=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.DirectMeterEntry) -> DirectMeterEntry:
        return cls(TableEntry.from_proto(schema, message.table_entry),
                   MeterConfig.from_proto(message.config) if message.HasField("config") else None)

    def __repr__(self) -> str:
        return f"DirectMeterEntry({self.table_entry!r}, {self.config})"


class RegisterEntry(Entity):
    """A register cell; `value` follows the register's type (int for bit<W>)."""

    def __init__(self, schema: Schema, register: Key, index: int | None = None,
                 value: Any = None) -> None:
        self.schema = schema
        self.info = schema.register(register)
        self.index = index
        self.value = value

    def check_write(self, kind: int) -> None:
        if kind != MODIFY:
            raise EncodeError(f"register {self.info.preamble.name}: registers are only modified")
        if self.value is None:
            raise EncodeError(f"register {self.info.preamble.name}: a value is required")

    def to_entity(self) -> p4r.Entity:
        message = p4r.RegisterEntry(register_id=self.info.preamble.id, index=_index(self.index))
        if self.value is not None:
            message.data.CopyFrom(encode_data(self.schema, self.info.type_spec, self.value,
                                              f"register {self.info.preamble.name}"))
        return p4r.Entity(register_entry=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.RegisterEntry) -> RegisterEntry:
        info = schema.register(message.register_id)
        value = (decode_data(schema, info.type_spec, message.data)
                 if message.HasField("data") else None)
        return cls(schema, message.register_id,
                   message.index.index if message.HasField("index") else None, value)

    def __repr__(self) -> str:
        return f"RegisterEntry({self.info.preamble.name}[{self.index}], {self.value!r})"


class DigestEntry(Entity):
    """Digest configuration: enables the digest's stream messages once inserted."""

    def __init__(self, schema: Schema, digest: Key, max_timeout_ns: int = 0,
                 max_list_size: int = 1, ack_timeout_ns: int = 1_000_000_000) -> None:
        self.schema = schema
        self.info = schema.digest(digest)
        self.max_timeout_ns = max_timeout_ns
        self.max_list_size = max_list_size
        self.ack_timeout_ns = ack_timeout_ns

    def to_entity(self) -> p4r.Entity:
        config = p4r.DigestEntry.Config(max_timeout_ns=self.max_timeout_ns,
                                        max_list_size=self.max_list_size,
                                        ack_timeout_ns=self.ack_timeout_ns)
        return p4r.Entity(digest_entry=p4r.DigestEntry(digest_id=self.info.preamble.id,
                                                       config=config))

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.DigestEntry) -> DigestEntry:
        config = message.config
        return cls(schema, message.digest_id, config.max_timeout_ns, config.max_list_size,
                   config.ack_timeout_ns)

    def __repr__(self) -> str:
        return (f"DigestEntry({self.info.preamble.name}, max_list_size={self.max_list_size}, "
                f"max_timeout_ns={self.max_timeout_ns}, ack_timeout_ns={self.ack_timeout_ns})")
