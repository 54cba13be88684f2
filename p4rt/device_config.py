"""Device-config messages that ship without usable Python stubs, built at run time.

`message_class` turns a FileDescriptorProto into a message class in a pool of its own (so it
never clashes with the real module if one is imported in the same process). `P4DeviceConfig`
is PI's wrapper for `p4_device_config` (p4/tmp/p4config.proto: `bool reassign = 1;
Extras extras = 2; bytes device_data = 3`), used by PI's BMv2 and Tofino servers alike;
softswitch's server and the controller's Tofino packer both import it from here.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

FIELD = descriptor_pb2.FieldDescriptorProto
OPTIONAL = FIELD.LABEL_OPTIONAL
REPEATED = FIELD.LABEL_REPEATED


def message_class(file: descriptor_pb2.FileDescriptorProto, full_name: str) -> Any:
    """The class of message `full_name` (package-qualified) declared in `file`."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


def _p4_device_config_class() -> Any:
    """p4.tmp.P4DeviceConfig, built from its three fields (its stubs ship with PI, not finsy)."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="p4rt/p4config.proto", package="p4.tmp", syntax="proto3")
    message = proto.message_type.add(name="P4DeviceConfig")
    message.field.add(name="reassign", number=1, type=FIELD.TYPE_BOOL, label=OPTIONAL)
    message.field.add(name="extras", number=2, type=FIELD.TYPE_MESSAGE, label=OPTIONAL,
                      type_name=".p4.tmp.P4DeviceConfig.Extras")
    message.field.add(name="device_data", number=3, type=FIELD.TYPE_BYTES, label=OPTIONAL)
    extras = message.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=FIELD.TYPE_STRING, label=OPTIONAL)
    entry.field.add(name="value", number=2, type=FIELD.TYPE_STRING, label=OPTIONAL)
    extras.field.add(name="kv", number=1, type=FIELD.TYPE_MESSAGE, label=REPEATED,
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry")
    return message_class(proto, "p4.tmp.P4DeviceConfig")


P4DeviceConfig = _p4_device_config_class()


def wrap_device_config(data: bytes, *, reassign: bool = True) -> bytes:
    """`data` in a P4DeviceConfig, as p4runtime_lib's `buildDeviceConfig` sends it."""
    return P4DeviceConfig(reassign=reassign, device_data=data).SerializeToString()
