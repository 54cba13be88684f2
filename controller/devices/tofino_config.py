"""Tofino `p4_device_config` bytes from bf-p4c's output folder, and back.

bf-p4c writes `OUT/<prog>.conf` (JSON: `p4_devices[0].p4_programs[0]` names the program, its
`bfrt-config` file and one `p4_pipelines[]` entry per profile with its `context`, `config`
(tofino.bin) and `pipe_scope`), `OUT/bfrt.json` and `OUT/<pipe>/{context.json,tofino.bin}`.
Two packings of those files reach a Tofino switch over P4Runtime:

- ``stratum``: `stratum.hal.barefoot.BfPipelineConfig` (stratum/hal/lib/barefoot/bf.proto), what
  stratum_bfrt takes; filled from the .conf as Stratum's `bf_pipeline_builder` does.
- ``pi``: PI's legacy packing, u32le(len name) ‖ name ‖ u32le(len tofino.bin) ‖ tofino.bin ‖
  u32le(len context.json) ‖ context.json in a `p4.tmp.P4DeviceConfig`. It carries one pipeline
  and no bfrt.json; unpacking it recreates the pipeline as `pipe` on pipes 0-3.

Paths in a .conf are absolute or relative; relative ones are tried against the .conf's folder
first (how the compiler's output folder is usually moved around) and then the working
directory (how Stratum's builder reads them).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from p4rt.device_config import FIELD, OPTIONAL, REPEATED, P4DeviceConfig, message_class
from p4rt.protowire import VarintTooLong, decode_varint

FORMATS = ("stratum", "pi")
PI_PIPE_NAME = "pipe"  # what PI's one pipeline is called once unpacked
PI_PIPE_SCOPE = (0, 1, 2, 3)


class TofinoConfigError(ValueError):
    """A compiler output or a device config that cannot be packed or unpacked."""


@dataclass(frozen=True)
class TofinoPipeline:
    """One `p4_pipelines[]` entry: a profile of the program loaded on `pipe_scope`."""

    name: str
    context: bytes  # context.json
    binary: bytes  # tofino.bin
    pipe_scope: tuple[int, ...] = PI_PIPE_SCOPE


@dataclass(frozen=True)
class TofinoProgram:
    """The compiler's output for one program: what both packings are made from."""

    name: str
    bfrt: bytes  # bfrt.json; b"" when unpacked from the PI packing, which does not carry it
    pipelines: tuple[TofinoPipeline, ...]


def _bf_pipeline_config_class() -> Any:
    """stratum.hal.barefoot.BfPipelineConfig, declared with bf.proto's field numbers."""
    file = descriptor_pb2.FileDescriptorProto(
        name="controller/bf.proto", package="stratum.hal.barefoot", syntax="proto3")
    config = file.message_type.add(name="BfPipelineConfig")
    profile = config.nested_type.add(name="Profile")
    profile.field.add(name="profile_name", number=1, type=FIELD.TYPE_STRING, label=OPTIONAL)
    profile.field.add(name="context", number=2, type=FIELD.TYPE_BYTES, label=OPTIONAL)
    profile.field.add(name="binary", number=3, type=FIELD.TYPE_BYTES, label=OPTIONAL)
    profile.field.add(name="pipe_scope", number=4, type=FIELD.TYPE_UINT32, label=REPEATED)
    config.field.add(name="p4_name", number=1, type=FIELD.TYPE_STRING, label=OPTIONAL)
    config.field.add(name="bfruntime_info", number=2, type=FIELD.TYPE_BYTES, label=OPTIONAL)
    config.field.add(name="profiles", number=3, type=FIELD.TYPE_MESSAGE, label=REPEATED,
                     type_name=".stratum.hal.barefoot.BfPipelineConfig.Profile")
    return message_class(file, "stratum.hal.barefoot.BfPipelineConfig")


BfPipelineConfig = _bf_pipeline_config_class()


# --- reading the compiler's output --------------------------------------------------------------


def find_conf(out: str | Path) -> Path:
    """The .conf of a bf-p4c output folder (or `out` itself when it is the .conf)."""
    path = Path(out)
    if path.is_file():
        return path
    if not path.is_dir():
        raise TofinoConfigError(f"{path}: no such bf-p4c output folder or .conf file")
    confs = sorted(path.glob("*.conf"))
    if not confs:
        raise TofinoConfigError(f"{path}: no .conf file (bf-p4c writes OUT/<program>.conf)")
    if len(confs) > 1:
        raise TofinoConfigError(f"{path}: several .conf files ({', '.join(c.name for c in confs)})"
                                "; name the one to pack")
    return confs[0]


def read_output(out: str | Path) -> TofinoProgram:
    """The program in a bf-p4c output folder (or .conf file), with its files' contents."""
    conf = find_conf(out)
    try:
        data = json.loads(conf.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TofinoConfigError(f"{conf}: not a readable JSON .conf ({exc})") from None
    program = _program_entry(conf, data)
    name = _string(conf, program, "program-name", "p4_programs[0]")
    bfrt = _read_ref(conf, _string(conf, program, "bfrt-config", "p4_programs[0]"),
                     "bfrt-config")
    entries = program.get("p4_pipelines")
    if not isinstance(entries, list) or not entries:
        raise TofinoConfigError(f"{conf}: p4_programs[0].p4_pipelines is missing or empty")
    return TofinoProgram(name, bfrt, tuple(_pipeline(conf, e, i) for i, e in enumerate(entries)))


def _program_entry(conf: Path, data: Any) -> dict[str, Any]:
    devices = data.get("p4_devices") if isinstance(data, dict) else None
    if not isinstance(devices, list) or not devices or not isinstance(devices[0], dict):
        raise TofinoConfigError(f"{conf}: no p4_devices[0]")
    programs = devices[0].get("p4_programs")
    if not isinstance(programs, list) or not programs or not isinstance(programs[0], dict):
        raise TofinoConfigError(f"{conf}: p4_devices[0] has no p4_programs")
    if len(programs) > 1:  # as Stratum's builder: BfPipelineConfig holds one program
        raise TofinoConfigError(f"{conf}: {len(programs)} p4_programs; a device config holds one")
    return programs[0]


def _pipeline(conf: Path, entry: Any, i: int) -> TofinoPipeline:
    where = f"p4_pipelines[{i}]"
    if not isinstance(entry, dict):
        raise TofinoConfigError(f"{conf}: {where} is not an object")
    name = _string(conf, entry, "p4_pipeline_name", where)
    scope = entry.get("pipe_scope", list(PI_PIPE_SCOPE))
    if not isinstance(scope, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p < 1 << 32 for p in scope):
        raise TofinoConfigError(f"{conf}: {where}.pipe_scope must be a list of pipe numbers")
    context = _read_ref(conf, _string(conf, entry, "context", where), f"{where}.context")
    binary = _read_ref(conf, _string(conf, entry, "config", where), f"{where}.config")
    return TofinoPipeline(name, context, binary, tuple(scope))


def _string(conf: Path, entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise TofinoConfigError(f"{conf}: {where} has no '{key}'")
    return value


def _read_ref(conf: Path, ref: str, field: str) -> bytes:
    """The contents of a file the .conf names: absolute, or relative to its folder or cwd."""
    path = Path(ref)
    tried = [path] if path.is_absolute() else [conf.parent / path, Path.cwd() / path]
    for candidate in tried:
        if candidate.is_file():
            try:
                return candidate.read_bytes()
            except OSError as exc:
                raise TofinoConfigError(f"{conf}: {field} {candidate}: {exc.strerror}") from None
    raise TofinoConfigError(f"{conf}: {field} names {ref}, which is not a file (looked for "
                            + " and ".join(str(t) for t in dict.fromkeys(tried)) + ")")


# --- packing ------------------------------------------------------------------------------------


def pack_stratum(program: TofinoProgram) -> bytes:
    """The serialized BfPipelineConfig, field for field as Stratum's bf_pipeline_builder."""
    message = BfPipelineConfig(p4_name=program.name, bfruntime_info=program.bfrt)
    for pipe in program.pipelines:
        message.profiles.add(profile_name=pipe.name, context=pipe.context, binary=pipe.binary,
                             pipe_scope=list(pipe.pipe_scope))
    return bytes(message.SerializeToString())


def pack_pi(program: TofinoProgram) -> bytes:
    """PI's legacy packing of the program's only pipeline, in a p4.tmp.P4DeviceConfig."""
    if len(program.pipelines) != 1:
        raise TofinoConfigError(f"program {program.name}: the PI format holds one pipeline, the "
                                f".conf has {len(program.pipelines)} (use --format stratum)")
    pipe = program.pipelines[0]
    name = program.name.encode()
    data = b"".join(struct.pack("<I", len(part)) + part
                    for part in (name, pipe.binary, pipe.context))
    return bytes(P4DeviceConfig(reassign=True, device_data=data).SerializeToString())


def pack(out: str | Path, fmt: str = "stratum") -> bytes:
    """The `p4_device_config` bytes of a bf-p4c output folder in format `fmt`."""
    program = read_output(out)
    if fmt == "stratum":
        return pack_stratum(program)
    if fmt == "pi":
        return pack_pi(program)
    raise TofinoConfigError(f"unknown device config format {fmt!r} (expected stratum or pi)")


# --- unpacking ----------------------------------------------------------------------------------


def unpack(data: bytes, fmt: str | None = None, source: str = "device config") -> TofinoProgram:
    """The program in `data`, packed as `fmt` (None: recognised from the bytes)."""
    fmt = fmt or detect_format(data, source)
    if fmt == "stratum":
        return _unpack_stratum(data, source)
    if fmt == "pi":
        return _unpack_pi(data, source)
    raise TofinoConfigError(f"unknown device config format {fmt!r} (expected stratum or pi)")


def detect_format(data: bytes, source: str = "device config") -> str:
    """'stratum' or 'pi': BfPipelineConfig's field 1 is a string, P4DeviceConfig's a bool; a
    wrapper without `reassign` is PI when its field 3 is exactly the three-part packing."""
    fields = _top_fields(data, source)
    kinds = {number: wire for number, wire, _ in fields}
    if kinds.get(1) == 0:
        return "pi"
    if kinds.get(1) == 2:
        return "stratum"
    threes = [payload for number, wire, payload in fields if number == 3 and wire == 2]
    if len(threes) == 1 and _split_pi(threes[0]) is not None:
        return "pi"
    if threes and set(kinds) <= {2, 3}:
        return "stratum"
    raise TofinoConfigError(f"{source}: unknown format for p4_device_config (neither a "
                            "BfPipelineConfig nor a PI P4DeviceConfig)")


def _top_fields(data: bytes, source: str) -> list[tuple[int, int, bytes]]:
    """(field number, wire type, payload) of each top-level field; error if not protobuf."""
    out: list[tuple[int, int, bytes]] = []
    i = 0
    try:
        while i < len(data):
            key, i = decode_varint(data, i)
            number, wire = key >> 3, key & 7
            if wire == 0:
                start = i
                _, i = decode_varint(data, i)
            elif wire == 2:
                size, start = decode_varint(data, i)
                i = start + size
                if i > len(data):
                    raise IndexError
            else:
                raise ValueError(f"wire type {wire}")
            if number == 0:
                raise ValueError("field number 0")
            out.append((number, wire, data[start:i]))
    except (IndexError, VarintTooLong, ValueError) as exc:
        raise TofinoConfigError(f"{source}: unknown format for p4_device_config (not a protobuf "
                                f"message: {exc or 'truncated'} at byte {i})") from None
    if not out:
        raise TofinoConfigError(f"{source}: the device config is empty")
    return out


def _unpack_stratum(data: bytes, source: str) -> TofinoProgram:
    message = BfPipelineConfig()
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        raise TofinoConfigError(f"{source}: not a BfPipelineConfig ({exc})") from None
    if not message.p4_name:
        raise TofinoConfigError(f"{source}: BfPipelineConfig has no p4_name")
    pipes = []
    for i, p in enumerate(message.profiles):
        if not p.profile_name:
            raise TofinoConfigError(f"{source}: BfPipelineConfig profiles[{i}] has no "
                                    "profile_name")
        pipes.append(TofinoPipeline(p.profile_name, bytes(p.context), bytes(p.binary),
                                    tuple(p.pipe_scope)))
    if not pipes:
        raise TofinoConfigError(f"{source}: BfPipelineConfig has no profiles")
    return TofinoProgram(message.p4_name, bytes(message.bfruntime_info), tuple(pipes))


def _unpack_pi(data: bytes, source: str) -> TofinoProgram:
    wrapper = P4DeviceConfig()
    try:
        wrapper.ParseFromString(data)
    except DecodeError as exc:
        raise TofinoConfigError(f"{source}: not a p4.tmp.P4DeviceConfig ({exc})") from None
    parts = _split_pi(bytes(wrapper.device_data))
    if parts is None:
        raise TofinoConfigError(f"{source}: device_data is not PI's Tofino packing (u32le length "
                                "+ bytes, three times: name, tofino.bin, context.json): "
                                "truncated or bad lengths")
    name, binary, context = parts
    try:
        text = name.decode()
    except UnicodeDecodeError:
        raise TofinoConfigError(f"{source}: the program name is not UTF-8") from None
    if not text:
        raise TofinoConfigError(f"{source}: the program name is empty")
    return TofinoProgram(text, b"", (TofinoPipeline(PI_PIPE_NAME, context, binary),))


def _split_pi(data: bytes) -> tuple[bytes, bytes, bytes] | None:
    """(name, tofino.bin, context.json), or None unless the three parts fill `data` exactly."""
    parts: list[bytes] = []
    i = 0
    for _ in range(3):
        if i + 4 > len(data):
            return None
        (size,) = struct.unpack_from("<I", data, i)
        i += 4
        if i + size > len(data):
            return None
        parts.append(data[i:i + size])
        i += size
    return (parts[0], parts[1], parts[2]) if i == len(data) else None


# --- writing the compiler's files back ----------------------------------------------------------


def write_output(program: TofinoProgram, directory: str | Path) -> Path:
    """Recreate bf-p4c's files in `directory` (paths in the .conf relative to it); the .conf."""
    out = Path(directory)
    _check_file_name(program.name, "program name")
    pipelines = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        entry: dict[str, Any] = {"program-name": program.name}
        if program.bfrt:
            (out / "bfrt.json").write_bytes(program.bfrt)
            entry["bfrt-config"] = "bfrt.json"
        for pipe in program.pipelines:
            _check_file_name(pipe.name, "pipeline name")
            (out / pipe.name).mkdir(exist_ok=True)
            (out / pipe.name / "context.json").write_bytes(pipe.context)
            (out / pipe.name / "tofino.bin").write_bytes(pipe.binary)
            pipelines.append({"p4_pipeline_name": pipe.name,
                              "context": f"{pipe.name}/context.json",
                              "config": f"{pipe.name}/tofino.bin",
                              "pipe_scope": list(pipe.pipe_scope), "path": "."})
        entry["p4_pipelines"] = pipelines
        conf = {"chip_list": [{"chip_family": "tofino", "instance": 0}], "instance": 0,
                "p4_devices": [{"device-id": 0, "p4_programs": [entry]}]}
        path = out / f"{program.name}.conf"
        path.write_text(json.dumps(conf, indent=4) + "\n", encoding="utf-8")
    except OSError as exc:
        raise TofinoConfigError(f"{exc.filename or out}: cannot write ({exc.strerror})") from None
    return path


def _check_file_name(name: str, what: str) -> None:
    """Names become file and folder names: no separators, nothing that climbs out."""
    if Path(name).name != name or name in ("", ".", ".."):
        raise TofinoConfigError(f"{what} {name!r} cannot be a file name")
