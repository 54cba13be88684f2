"""Writing P4Info files in the formats p4c's ``--p4runtime-files`` chooses by suffix."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import any_pb2, json_format, text_format
from google.protobuf.message import DecodeError

from softswitch.errors import P4Error

# p4c's text output starts with these lines (they let editors and tools find the schema)
TEXT_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"


def p4info_format(path: Path | str) -> str:
    """"text", "binary" or "json", from the file suffix (.txt/.txtpb, .bin/.pb, .json)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".txt", ".txtpb", ".pbtxt"):
        return "text"
    if suffix in (".bin", ".pb"):
        return "binary"
    if suffix == ".json":
        return "json"
    raise P4Error(f"{path}: unknown P4Info file kind; known suffixes are .txt, .txtpb, .bin, .json")


def p4info_bytes(p4info: p4info_pb2.P4Info, fmt: str) -> bytes:
    if fmt == "text":
        return (TEXT_HEADER + text_format.MessageToString(p4info)).encode()
    if fmt == "binary":
        return p4info.SerializeToString(deterministic=True)
    if fmt == "json":
        return (json.dumps(_to_json(p4info), indent=2) + "\n").encode()
    raise ValueError(fmt)


def _extern_infos(p4info: p4info_pb2.P4Info) -> Iterator[any_pb2.Any]:
    for ext in p4info.externs:
        for inst in ext.instances:
            yield inst.info


def _to_json(p4info: p4info_pb2.P4Info) -> dict[str, Any]:
    """The JSON mapping of `p4info`. An extern's info whose message type protobuf cannot resolve
    (bf-p4c's barefoot.PortMetadata, whose value bf-p4c's force-std conversion replaces with
    text) is written as ``{"@type": URL, "value": BASE64}``."""
    try:
        return json_format.MessageToDict(p4info)
    except TypeError:
        pass
    plain = p4info_pb2.P4Info()
    plain.CopyFrom(p4info)
    infos = [(info.type_url, info.value) for info in _extern_infos(p4info)]
    for info in _extern_infos(plain):
        info.Clear()
    data = json_format.MessageToDict(plain)
    instances = [inst for ext in data.get("externs", []) for inst in ext.get("instances", [])]
    for inst, (url, value) in zip(instances, infos):
        inst["info"] = {"@type": url, "value": base64.b64encode(value).decode()}
    return data


def _from_json(text: str, p4info: p4info_pb2.P4Info) -> None:
    """Parse what `_to_json` writes (also any plain P4Info JSON)."""
    data = json.loads(text)
    infos = []
    for ext in data.get("externs", []):
        for inst in ext.get("instances", []):
            info = inst.pop("info", None)
            infos.append(info)
    json_format.ParseDict(data, p4info)
    for info, target in zip(infos, _extern_infos(p4info)):
        if isinstance(info, dict) and set(info) == {"@type", "value"}:
            target.type_url = info["@type"]
            target.value = base64.b64decode(info["value"])
        elif info is not None:
            json_format.ParseDict(info, target)


def write_p4info(p4info: p4info_pb2.P4Info, path: Path | str) -> None:
    """Write `p4info` to `path` in the format its suffix names."""
    data = p4info_bytes(p4info, p4info_format(path))
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise P4Error(f"cannot write P4Info file {path}: {exc.strerror}") from exc


def read_p4info(path: Path | str) -> p4info_pb2.P4Info:
    """Read a P4Info file written in any of the formats above; a file that is not one (binary
    garbage, another encoding, a wrong suffix) is a P4Error naming it."""
    fmt = p4info_format(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise P4Error(f"cannot read P4Info file {path}: {exc.strerror}") from None
    p4info = p4info_pb2.P4Info()
    try:
        if fmt == "text":
            text_format.Parse(data.decode(), p4info)
        elif fmt == "binary":
            p4info.ParseFromString(data)
        else:
            _from_json(data.decode(), p4info)
    except UnicodeDecodeError as exc:
        raise P4Error(f"{path}: not a {fmt} P4Info: byte 0x{data[exc.start]:02x} at offset "
                      f"{exc.start} is not UTF-8 text") from None
    except (text_format.ParseError, json_format.ParseError, json.JSONDecodeError,
            DecodeError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        raise P4Error(f"{path}: not a {fmt} P4Info: {str(exc)[:200]}") from None
    return p4info
