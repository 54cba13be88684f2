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

from google.protobuf.message import DecodeError

from p4rt.device_config import P4DeviceConfig, wrap_device_config

__all__ = ["DeviceConfigError", "P4DeviceConfig", "unwrap_device_config", "wrap_device_config"]

_JSON_START = b"{"


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
