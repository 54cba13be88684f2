"""Role configs: what a P4Runtime role may write, read and receive (spec "Role Config").

The spec leaves the format of ``Role.config`` (a ``google.protobuf.Any``) to the target. We read
the one P4Runtime servers already use, Stratum's ``stratum.P4RoleConfig``, declared here with
its field numbers so that a config packed by a Stratum client unpacks as it would on Stratum:

- ``exclusive_p4_ids``: objects only this role may write; ``shared_p4_ids``: objects it may
  write alongside other roles. A role with a config writes nothing else (packet replication
  entries, which have no P4 id, included) and its Reads see only these objects.
- ``receives_packet_ins`` and ``packet_in_filter`` (a metadata id and the value it must have):
  which PacketIns the role's primary gets. Digests go to a role that lists the digest's id.
- ``can_push_pipeline``: whether the role may call SetForwardingPipelineConfig.

A role without a config has full access, as the spec says, except to objects another live role
holds exclusively. A config of any other type is refused (INVALID_ARGUMENT) when the client
arbitrates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
from finsy.proto import p4r

from p4rt.role_config import ROLE_CONFIG_TYPE, P4RoleConfig
from softswitch.runtime.server.status import RpcError


@dataclass(frozen=True)
class RoleScope:
    """What one role's config allows."""

    exclusive: frozenset[int]
    shared: frozenset[int]
    receives_packet_ins: bool
    packet_in_filter: tuple[int, bytes] | None  # (metadata id, value); None: every PacketIn
    can_push_pipeline: bool

    @property
    def ids(self) -> frozenset[int]:
        return self.exclusive | self.shared

    def covers(self, p4_id: int | None) -> bool:
        return p4_id is not None and p4_id in self.ids

    def wants_packet_in(self, packet: p4r.PacketIn) -> bool:
        if not self.receives_packet_ins:
            return False
        if self.packet_in_filter is None:
            return True
        wanted_id, value = self.packet_in_filter
        return any(m.metadata_id == wanted_id and _same_value(m.value, value)
                   for m in packet.metadata)


def _same_value(a: bytes, b: bytes) -> bool:
    """Equal as P4Runtime bytestrings (leading zero bytes do not count)."""
    return a.lstrip(b"\0") == b.lstrip(b"\0")


def parse_role_config(role: p4r.Role) -> RoleScope | None:
    """The scope a Role message gives (None: no config, full access); raises RpcError for a
    config softswitch cannot read."""
    if not role.HasField("config"):
        return None
    packed = role.config
    type_name = packed.type_url.rpartition("/")[2]
    if type_name != ROLE_CONFIG_TYPE:
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                       f"Role '{role.name}': config of type '{type_name}' is not supported "
                       f"(softswitch reads {ROLE_CONFIG_TYPE})")
    config = P4RoleConfig()
    try:
        config.ParseFromString(packed.value)
    except Exception as exc:   # DecodeError
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                       f"Role '{role.name}': config does not parse as {ROLE_CONFIG_TYPE}: "
                       f"{exc}") from exc
    packet_filter = None
    if config.HasField("packet_in_filter"):
        packet_filter = (config.packet_in_filter.metadata_id, config.packet_in_filter.value)
    return RoleScope(frozenset(config.exclusive_p4_ids), frozenset(config.shared_p4_ids),
                     config.receives_packet_ins, packet_filter, config.can_push_pipeline)


# The P4 id each entity kind is addressed by (None: packet replication entries have none).
_ID_FIELDS = {
    "table_entry": ("table_id",),
    "action_profile_member": ("action_profile_id",),
    "action_profile_group": ("action_profile_id",),
    "counter_entry": ("counter_id",),
    "direct_counter_entry": ("table_entry", "table_id"),
    "meter_entry": ("meter_id",),
    "direct_meter_entry": ("table_entry", "table_id"),
    "register_entry": ("register_id",),
    "digest_entry": ("digest_id",),
    "value_set_entry": ("value_set_id",),
    "extern_entry": ("extern_id",),
}


def entity_p4_id(entity: p4r.Entity) -> int | None:
    """The P4Info id of the object an entity addresses (0 in a wildcard read)."""
    which = entity.WhichOneof("entity")
    path = _ID_FIELDS.get(which or "")
    if path is None:
        return None
    value: Any = getattr(entity, which)  # type: ignore[arg-type]
    for name in path:
        value = getattr(value, name)
    return int(value)


@dataclass(frozen=True)
class WritePolicy:
    """What one role may write now: its scope (None: full access) and the ids other live
    roles hold exclusively."""

    role: str
    scope: RoleScope | None
    taken: frozenset[int]

    def denial(self, entity: p4r.Entity) -> str | None:
        """Why the role may not write `entity`, or None when it may."""
        p4_id = entity_p4_id(entity)
        if self.scope is not None and not self.scope.covers(p4_id):
            what = entity.WhichOneof("entity") or "entity"
            named = f"{what} of id {p4_id}" if p4_id is not None else what
            return f"Role '{self.role}' may not write {named}: not in its role config"
        if p4_id is not None and p4_id in self.taken:
            return f"Role '{self.role}' may not write id {p4_id}: another role holds it exclusively"
        return None
