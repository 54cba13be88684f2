"""The IR JSON: a checked program saved as its syntax tree, loaded back by re-checking it.

This file is the device config that `softswitch run` and SetForwardingPipelineConfig load (the
role BMv2's JSON plays for simple_switch). Only the syntax is stored — the checker's annotations
(types, resolved names, call bindings) are derived data and are rebuilt on load, which also
re-validates a file that was edited or corrupted by hand.

Format: ``{"format": "softswitch-ir", "version": 1, "source_file": ..., "arch": "tna" (left
out for v1model), "files": [...], "program": NODE}`` where NODE is ``{"_": "ClassName", "loc": [file_index, line, column],
field: value, ...}``; fields holding their default value are left out.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from pathlib import Path
from typing import Any

from softswitch.errors import UNKNOWN_LOCATION, P4Error, SourceLocation
from softswitch.frontend import ast
from softswitch.ir.checked import CheckedProgram
from softswitch.limits import DEFAULT_LIMITS, Limits

FORMAT = "softswitch-ir"
VERSION = 1

# Fields the type checker fills in, by the class declaring them; rebuilt on load, never stored.
_ANNOTATIONS: dict[type, frozenset[str]] = {
    ast.Expression: frozenset({"type", "value"}),
    ast.PathExpression: frozenset({"decl"}),
    ast.Member: frozenset({"kind"}),
    ast.Slice: frozenset({"high", "low"}),
    ast.MethodCall: frozenset({"call"}),
    ast.TypeRef: frozenset({"resolved"}),
    ast.TypedefDecl: frozenset({"resolved"}),
    ast.StructLikeDecl: frozenset({"resolved"}),
    ast.EnumDecl: frozenset({"resolved"}),
    ast.InstanceDecl: frozenset({"resolved", "type_decl", "ctor_params", "ctor_args", "implements"}),
    ast.SelectCase: frozenset({"state_decl"}),
    ast.ParserState: frozenset({"next_state"}),
    ast.ActionRef: frozenset({"decl", "bound_args"}),
    ast.TableEntryDecl: frozenset({"priority_value"}),
    ast.ForStatement: frozenset({"index", "index_values", "unrolled"}),
    ast.ForInStatement: frozenset({"unrolled"}),
}


def _annotation_fields(cls: type) -> frozenset[str]:
    names: set[str] = set()
    for base in cls.__mro__:
        names |= _ANNOTATIONS.get(base, frozenset())
    return frozenset(names)


_NODE_CLASSES: dict[str, type] = {
    name: cls
    for name, cls in vars(ast).items()
    if isinstance(cls, type) and issubclass(cls, ast.Node) and dataclasses.is_dataclass(cls)
}


class IrFormatError(P4Error):
    """An IR JSON file that is not one softswitch wrote."""


def _stored_fields(cls: type) -> list[dataclasses.Field[Any]]:
    annotations = _annotation_fields(cls)
    return [f for f in dataclasses.fields(cls) if f.name not in annotations]


_FIELDS_BY_CLASS = {name: _stored_fields(cls) for name, cls in _NODE_CLASSES.items()}


def _default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


class _Encoder:
    def __init__(self) -> None:
        self.files: list[str] = []
        self._file_index: dict[str, int] = {}

    def loc(self, loc: SourceLocation) -> list[int]:
        index = self._file_index.get(loc.file)
        if index is None:
            index = self._file_index[loc.file] = len(self.files)
            self.files.append(loc.file)
        return [index, loc.line, loc.column]

    def value(self, v: Any) -> Any:
        if isinstance(v, ast.Node):
            return self.node(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if v is None or isinstance(v, bool | int | str):
            return v
        raise TypeError(f"cannot store {type(v).__name__} in the IR")

    def node(self, node: ast.Node) -> dict[str, Any]:
        cls_name = type(node).__name__
        out: dict[str, Any] = {"_": cls_name}
        for f in _FIELDS_BY_CLASS[cls_name]:
            v = getattr(node, f.name)
            if f.name == "loc":
                if v != UNKNOWN_LOCATION:
                    out["loc"] = self.loc(v)
                continue
            if v == _default_of(f) and not isinstance(v, ast.Node):
                continue
            out[f.name] = self.value(v)
        return out


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    """The declared type of each stored field of a node class."""
    return typing.get_type_hints(cls, vars(ast))


def _conforms(value: Any, hint: Any) -> bool:
    """Whether a decoded value has the declared type: a file edited by hand (or corrupted)
    must be refused here, not crash the checker with a wrong-typed field."""
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return any(_conforms(value, h) for h in typing.get_args(hint))
    if origin is list:
        (element,) = typing.get_args(hint)
        return isinstance(value, list) and all(_conforms(v, element) for v in value)
    return isinstance(value, hint)


def _type_name(hint: Any) -> str:
    if typing.get_origin(hint) is None:
        return str(getattr(hint, "__name__", hint))
    return str(hint).replace("softswitch.frontend.ast.", "")


def _decode(data: Any, files: list[str]) -> Any:
    if isinstance(data, list):
        return [_decode(x, files) for x in data]
    if not isinstance(data, dict):
        return data
    cls_name = data.get("_")
    cls = _NODE_CLASSES.get(cls_name) if isinstance(cls_name, str) else None
    if cls is None:
        raise IrFormatError(f"IR JSON: unknown node kind {cls_name!r}")
    kwargs: dict[str, Any] = {}
    known = {f.name for f in _FIELDS_BY_CLASS[cls_name]}
    for key, value in data.items():
        if key == "_":
            continue
        if key not in known:
            raise IrFormatError(f"IR JSON: {cls_name} has no field {key!r}")
        if key == "loc":
            try:
                file_index, line, column = value
                kwargs["loc"] = SourceLocation(files[file_index], line, column)
            except (ValueError, TypeError, IndexError) as exc:
                raise IrFormatError(f"IR JSON: bad location {value!r} in {cls_name}") from exc
        else:
            decoded = _decode(value, files)
            hint = _field_types(cls)[key]
            if not _conforms(decoded, hint):
                raise IrFormatError(f"IR JSON: {cls_name}.{key} must be {_type_name(hint)}, "
                                    f"not {json.dumps(value)[:60]}")
            kwargs[key] = decoded
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise IrFormatError(f"IR JSON: bad {cls_name} node: {exc}") from exc


def ir_to_dict(checked: CheckedProgram) -> dict[str, Any]:
    encoder = _Encoder()
    program = encoder.node(checked.program)
    return {
        "format": FORMAT,
        "version": VERSION,
        "source_file": checked.source_file,
        **({"arch": arch} if (arch := getattr(checked, "arch", "v1model")) != "v1model" else {}),
        "files": encoder.files,
        "program": program,
    }


def ir_from_dict(data: Any, limits: Limits = DEFAULT_LIMITS) -> CheckedProgram:
    """Rebuild and re-check a program from its IR JSON object (under `limits`)."""
    from softswitch.frontend.typecheck import check  # the checker imports ir; avoid a cycle

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise IrFormatError("not a softswitch IR JSON file (missing \"format\": \"softswitch-ir\")")
    if data.get("version") != VERSION:
        raise IrFormatError(f"IR JSON version {data.get('version')!r} is not {VERSION}")
    files = data.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise IrFormatError("IR JSON: \"files\" must be a list of file names")
    try:
        program = _decode(data.get("program"), files)
    except RecursionError:
        raise IrFormatError("IR JSON: the program is nested too deeply") from None
    if not isinstance(program, ast.Program):
        raise IrFormatError("IR JSON: \"program\" is not a Program node")
    arch = data.get("arch", "v1model")
    if arch not in ("v1model", "tna"):
        raise IrFormatError(f"IR JSON: unknown architecture {arch!r}")
    return check(program, source_file=str(data.get("source_file", "")), arch=arch, limits=limits)


def dumps_ir(checked: CheckedProgram) -> str:
    return json.dumps(ir_to_dict(checked), separators=(",", ":"))


def loads_ir(text: str | bytes, limits: Limits = DEFAULT_LIMITS) -> CheckedProgram:
    """The program of IR JSON `text`, re-checked under `limits` (whose source_bytes bounds the
    JSON too: it is the program's text)."""
    limits.check("source_bytes", "IR JSON", len(text))
    try:
        data = json.loads(text)
    except UnicodeDecodeError as exc:  # a binary file
        raise IrFormatError(f"IR JSON is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} "
                            f"at offset {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise IrFormatError(f"IR JSON is not valid JSON: {exc}") from None
    except RecursionError:
        raise IrFormatError("IR JSON is nested too deeply") from None
    return ir_from_dict(data, limits)


def save_ir(checked: CheckedProgram, path: str | Path) -> None:
    Path(path).write_text(dumps_ir(checked))


def load_ir(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> CheckedProgram:
    """The program of an IR JSON file; a file that is not one is refused naming the file."""
    try:
        limits.check("source_bytes", f"IR JSON {path}", Path(path).stat().st_size)
        data = Path(path).read_bytes()
    except OSError as exc:
        raise IrFormatError(f"{path}: cannot read IR file: {exc.strerror}") from None
    try:
        return loads_ir(data, limits)
    except IrFormatError as exc:
        raise IrFormatError(f"{path}: {exc.message}") from None
