"""Role configs (P4Runtime spec "Role Config") in the one format P4Runtime servers use:
Stratum's `stratum.P4RoleConfig`, declared here with its field numbers so that a config packed
here unpacks on Stratum (and on softswitch, whose server reads it from this module).

    packed = pack_role_config(schema, RoleConfig(exclusive=("ev_path",), receives_packet_ins=True))
    SwitchConnection(address, role="paths", role_config=packed)

Objects are named as in the P4Info (any unique suffix, as everywhere in p4rt): tables, counters,
meters, registers, digests, action profiles, value sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2

from p4rt.device_config import message_class
from p4rt.errors import SchemaError
from p4rt.schema import Schema

ROLE_CONFIG_TYPE = "stratum.P4RoleConfig"


def _role_config_class() -> Any:
    """The message class of ``stratum.P4RoleConfig`` (in a pool of its own, so that it never
    clashes with a real Stratum module imported in the same process)."""
    f = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="p4rt/p4_role_config.proto",
                                              package="stratum", syntax="proto3")
    config = file.message_type.add(name="P4RoleConfig")
    packet_filter = config.nested_type.add(name="PacketFilter")
    packet_filter.field.add(name="metadata_id", number=1, type=f.TYPE_UINT32,
                            label=f.LABEL_OPTIONAL)
    packet_filter.field.add(name="value", number=2, type=f.TYPE_BYTES, label=f.LABEL_OPTIONAL)
    config.field.add(name="exclusive_p4_ids", number=1, type=f.TYPE_UINT32,
                     label=f.LABEL_REPEATED)
    config.field.add(name="shared_p4_ids", number=2, type=f.TYPE_UINT32, label=f.LABEL_REPEATED)
    config.field.add(name="packet_in_filter", number=3, type=f.TYPE_MESSAGE,
                     label=f.LABEL_OPTIONAL, type_name=".stratum.P4RoleConfig.PacketFilter")
    config.field.add(name="receives_packet_ins", number=4, type=f.TYPE_BOOL,
                     label=f.LABEL_OPTIONAL)
    config.field.add(name="can_push_pipeline", number=5, type=f.TYPE_BOOL,
                     label=f.LABEL_OPTIONAL)
    return message_class(file, ROLE_CONFIG_TYPE)


P4RoleConfig = _role_config_class()


_KINDS = ("table", "counter", "direct_counter", "meter", "direct_meter", "register", "digest",
          "action_profile", "value_set")


@dataclass(frozen=True)
class RoleConfig:
    """What a role may touch: objects only it writes, objects it writes with other roles,
    whether its primary gets PacketIns, whether it may push the pipeline."""

    exclusive: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    receives_packet_ins: bool = False
    can_push_pipeline: bool = False


def object_id(schema: Schema, name: str) -> int:
    """The P4 id of the object called `name`, whatever its kind."""
    for kind in _KINDS:
        try:
            return int(getattr(schema, kind)(name).preamble.id)
        except (SchemaError, KeyError):
            continue
    raise SchemaError(f"no table, counter, meter, register, digest, action profile or value set "
                      f"named {name!r} in the P4Info")


def pack_role_config(schema: Schema, config: RoleConfig) -> any_pb2.Any:
    message = P4RoleConfig(exclusive_p4_ids=[object_id(schema, n) for n in config.exclusive],
                           shared_p4_ids=[object_id(schema, n) for n in config.shared],
                           receives_packet_ins=config.receives_packet_ins,
                           can_push_pipeline=config.can_push_pipeline)
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed

