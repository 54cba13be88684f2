"""Writing P4Info files in the formats p4c's ``--p4runtime-files`` chooses by suffix."""

from __future__ import annotations

from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import json_format, text_format

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
        return (json_format.MessageToJson(p4info, indent=2) + "\n").encode()
    raise ValueError(fmt)


def write_p4info(p4info: p4info_pb2.P4Info, path: Path | str) -> None:
    """Write `p4info` to `path` in the format its suffix names."""
    data = p4info_bytes(p4info, p4info_format(path))
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise P4Error(f"cannot write P4Info file {path}: {exc.strerror}") from exc


def read_p4info(path: Path | str) -> p4info_pb2.P4Info:
    """Read a P4Info file written in any of the formats above."""
    fmt = p4info_format(path)
    data = Path(path).read_bytes()
    p4info = p4info_pb2.P4Info()
    if fmt == "text":
        text_format.Parse(data.decode(), p4info)
    elif fmt == "binary":
        p4info.ParseFromString(data)
    else:
        json_format.Parse(data.decode(), p4info)
    return p4info
