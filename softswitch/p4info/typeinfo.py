"""P4 types as P4Runtime ``P4DataTypeSpec``s, filling ``P4TypeInfo`` as p4c's TypeSpecConverter.

Named types (structs, headers, unions, enums, serializable enums, ``type`` new types, error) are
referenced by name in a type spec and described once in the P4Info ``type_info``; only the types
some P4Info object actually uses (digests, registers, new types of keys and parameters...) are
described there.
"""

from __future__ import annotations

from finsy.proto.p4.config.v1 import p4types_pb2

from softswitch.frontend import ast
from softswitch.frontend.types import (
    BitType,
    BoolType,
    EnumType,
    ErrorType,
    HeaderStackType,
    HeaderType,
    HeaderUnionType,
    NewType,
    StructLikeType,
    StructType,
    TupleType,
    Type,
    VarbitType,
    type_bit_width,
)
from softswitch.p4info.annotations import add_annotations, string_arg


def to_bytes(value: int, width: int) -> bytes:
    """A value as p4c's ``stringRepr``: big-endian over ceil(width / 8) bytes (two's complement)."""
    nbytes = max(1, (width + 7) // 8)
    return (value % (1 << (8 * nbytes))).to_bytes(nbytes, "big")


class TypeSpecs:
    """Converts semantic types to type specs, recording named types in `type_info`."""

    def __init__(self, program: ast.Program, errors: list[str],
                 type_info: p4types_pb2.P4TypeInfo) -> None:
        self._decls: dict[str, ast.Declaration] = {}
        for decl in program.declarations:
            if isinstance(decl, (ast.StructLikeDecl, ast.EnumDecl, ast.TypedefDecl)):
                self._decls.setdefault(decl.name, decl)
        self._errors = errors
        self.type_info = type_info

    # --- named-type helpers -------------------------------------------------------------

    def decl(self, name: str) -> ast.Declaration | None:
        return self._decls.get(name)

    def type_name(self, name: str) -> str:
        """The control-plane name of a named type (its ``@name``, if any)."""
        decl = self._decls.get(name)
        if decl is None:
            return name
        annotated = decl.control_plane_name()
        if annotated is None:
            return name
        return annotated[1:] if annotated.startswith(".") else annotated

    def field_name(self, struct: str, field: str) -> str:
        decl = self._decls.get(struct)
        if isinstance(decl, ast.StructLikeDecl):
            for f in decl.fields:
                if f.name == field:
                    anno = f.string_annotation("name")
                    return anno if anno is not None else field
        return field

    def field_hidden(self, struct: str, field: str) -> bool:
        decl = self._decls.get(struct)
        if isinstance(decl, ast.StructLikeDecl):
            for f in decl.fields:
                if f.name == field:
                    return f.annotation("hidden") is not None
        return False

    def translation(self, t: NewType) -> tuple[str, int | None] | None:
        """(uri, controller width or None for string) of a ``@p4runtime_translation`` type."""
        decl = self._decls.get(t.name)
        if decl is None:
            return None
        anno = decl.annotation("p4runtime_translation")
        if anno is None:
            return None
        uri = string_arg(anno, 0) or ""
        second = anno.args[1] if len(anno.args) > 1 else None
        if isinstance(second, ast.IntLiteral):
            return uri, second.number
        return uri, None

    def width(self, t: Type) -> int:
        """Bit width as P4Info reports it (translated new types: the controller width)."""
        if isinstance(t, NewType):
            tr = self.translation(t)
            if tr is not None:
                return tr[1] or 0
            return self.width(t.underlying)
        if isinstance(t, ErrorType):
            return 0
        return type_bit_width(t)

    # --- conversion ---------------------------------------------------------------------

    def convert(self, t: Type) -> p4types_pb2.P4DataTypeSpec:
        spec = p4types_pb2.P4DataTypeSpec()
        if isinstance(t, BitType):
            if t.signed:
                spec.bitstring.int.bitwidth = t.width
            else:
                spec.bitstring.bit.bitwidth = t.width
        elif isinstance(t, VarbitType):
            spec.bitstring.varbit.max_bitwidth = t.max_width
        elif isinstance(t, BoolType):
            spec.bool.SetInParent()
        elif isinstance(t, TupleType):
            spec.tuple.SetInParent()
            for element in t.elements:
                spec.tuple.members.add().CopyFrom(self.convert(element))
        elif isinstance(t, HeaderStackType):
            self.convert(t.element)
            if isinstance(t.element, HeaderUnionType):
                spec.header_union_stack.header_union.name = self.type_name(t.element.name)
                spec.header_union_stack.size = t.size
            elif isinstance(t.element, StructLikeType):
                spec.header_stack.header.name = self.type_name(t.element.name)
                spec.header_stack.size = t.size
        elif isinstance(t, HeaderType):
            spec.header.name = self._header(t)
        elif isinstance(t, HeaderUnionType):
            spec.header_union.name = self._union(t)
        elif isinstance(t, StructType | StructLikeType):
            spec.struct.name = self._struct(t)
        elif isinstance(t, EnumType):
            if t.underlying is not None:
                spec.serializable_enum.name = self._serializable_enum(t)
            else:
                spec.enum.name = self._enum(t)
        elif isinstance(t, ErrorType):
            spec.error.SetInParent()
            self._error()
        elif isinstance(t, NewType):
            spec.new_type.name = self._new_type(t)
        else:
            raise TypeError(f"type {t} has no P4Runtime representation")
        return spec

    def _struct(self, t: StructLikeType) -> str:
        name = self.type_name(t.name)
        if name not in self.type_info.structs:
            entry = p4types_pb2.P4StructTypeSpec()
            for fname, ftype in t.fields:
                member = entry.members.add()
                member.name = self.field_name(t.name, fname)
                member.type_spec.CopyFrom(self.convert(ftype))
            self.type_info.structs[name].CopyFrom(entry)
        return name

    def _header(self, t: HeaderType) -> str:
        name = self.type_name(t.name)
        if name not in self.type_info.headers:
            entry = p4types_pb2.P4HeaderTypeSpec()
            for fname, ftype in t.fields:
                member = entry.members.add()
                member.name = self.field_name(t.name, fname)
                fspec = self.convert(ftype)
                if fspec.HasField("bitstring"):
                    member.type_spec.CopyFrom(fspec.bitstring)
                elif fspec.HasField("bool"):
                    member.type_spec.bit.bitwidth = 1
                else:
                    # serializable enum / new type fields: their bit representation
                    member.type_spec.bit.bitwidth = self.width(ftype)
            self.type_info.headers[name].CopyFrom(entry)
        return name

    def _union(self, t: HeaderUnionType) -> str:
        name = self.type_name(t.name)
        if name not in self.type_info.header_unions:
            entry = p4types_pb2.P4HeaderUnionTypeSpec()
            for fname, ftype in t.fields:
                member = entry.members.add()
                member.name = self.field_name(t.name, fname)
                assert isinstance(ftype, HeaderType)
                member.header.name = self._header(ftype)
            self.type_info.header_unions[name].CopyFrom(entry)
        return name

    def _enum(self, t: EnumType) -> str:
        name = self.type_name(t.name)
        if name not in self.type_info.enums:
            entry = p4types_pb2.P4EnumTypeSpec()
            for member in t.members:
                entry.members.add().name = member
            self.type_info.enums[name].CopyFrom(entry)
        return name

    def _serializable_enum(self, t: EnumType) -> str:
        name = self.type_name(t.name)
        if name not in self.type_info.serializable_enums:
            assert t.underlying is not None
            entry = p4types_pb2.P4SerializableEnumTypeSpec()
            entry.underlying_type.bitwidth = t.underlying.width
            for member, value in zip(t.members, t.values):
                m = entry.members.add()
                m.name = member
                m.value = to_bytes(value, t.underlying.width)
            self.type_info.serializable_enums[name].CopyFrom(entry)
        return name

    def _error(self) -> None:
        if not self.type_info.HasField("error"):
            self.type_info.error.members.extend(self._errors)

    def _new_type(self, t: NewType) -> str:
        name = self.type_name(t.name)
        if name not in self.type_info.new_types:
            entry = p4types_pb2.P4NewTypeSpec()
            decl = self._decls.get(t.name)
            if decl is not None:
                add_annotations(entry, decl, skip=("p4runtime_translation",))
            tr = self.translation(t)
            if tr is not None:
                entry.translated_type.uri = tr[0]
                if tr[1] is None:
                    entry.translated_type.sdn_string.SetInParent()
                else:
                    entry.translated_type.sdn_bitwidth = tr[1]
            else:
                underlying: Type = t.underlying
                while isinstance(underlying, NewType):
                    underlying = underlying.underlying
                entry.original_type.CopyFrom(self.convert(underlying))
            self.type_info.new_types[name].CopyFrom(entry)
        return name
