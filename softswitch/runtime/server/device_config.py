"""The `p4_device_config` bytes of a ForwardingPipelineConfig, raw or in PI's wrapper.

PI's BMv2 server reads the field as a `p4.tmp.P4DeviceConfig` (p4/tmp/p4config.proto:
`bool reassign = 1; Extras extras = 2; bytes device_data = 3`), and the most common client
code (p4lang/tutorials' `p4runtime_lib`, open-p4studio's scripts) sends the compiler's JSON
wrapped that way; other clients send the JSON bytes as they are. softswitch accepts both: a
config whose first non-blank byte is `{` is the JSON itself (no P4DeviceConfig serialises to
a `{`: that byte would be field 15 as a group start), anything else must be a well-formed
wrapper whose `device_data` holds it.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

_JSON_START = b"{"


def _wrapper_class() -> type:
    """p4.tmp.P4DeviceConfig, built from its three fields (its stubs ship with PI, not finsy)."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="softswitch/p4config.proto", package="p4.tmp", syntax="proto3")
    message = proto.message_type.add(name="P4DeviceConfig")
    label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    kind = descriptor_pb2.FieldDescriptorProto
    message.field.add(name="reassign", number=1, type=kind.TYPE_BOOL, label=label)
    message.field.add(name="extras", number=2, type=kind.TYPE_MESSAGE, label=label,
                      type_name=".p4.tmp.P4DeviceConfig.Extras")
    message.field.add(name="device_data", number=3, type=kind.TYPE_BYTES, label=label)
    extras = message.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=kind.TYPE_STRING, label=label)
    entry.field.add(name="value", number=2, type=kind.TYPE_STRING, label=label)
    extras.field.add(name="kv", number=1, type=kind.TYPE_MESSAGE,
                     label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("p4.tmp.P4DeviceConfig"))


P4DeviceConfig = _wrapper_class()


class DeviceConfigError(ValueError):
    """The bytes are neither the compiler's JSON nor a P4DeviceConfig holding it."""


def unwrap_device_config(data: bytes) -> bytes | None:
    """The compiler's JSON inside `data` (the bytes themselves when they are the JSON); None
    for a wrapper without `device_data`, PI's legacy form meaning "the program the switch
    was started with"."""
    if data.lstrip()[:1] == _JSON_START:
        return data
    wrapper = P4DeviceConfig()
    try:
        wrapper.ParseFromString(data)
    except DecodeError as exc:
        raise DeviceConfigError(
            "p4_device_config is neither the IR JSON nor a p4.tmp.P4DeviceConfig "
            f"holding it ({len(data)} bytes, first byte 0x{data[0]:02x}: {exc})") from exc
    return bytes(wrapper.device_data) or None


def wrap_device_config(data: bytes, *, reassign: bool = True) -> bytes:
    """`data` in a P4DeviceConfig, as p4runtime_lib's `buildDeviceConfig` sends it."""
    return P4DeviceConfig(reassign=reassign, device_data=data).SerializeToString()
