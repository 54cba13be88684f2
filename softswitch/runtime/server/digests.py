"""DigestEntry configuration, ValueSetEntry, and engine digests as ``p4.v1.P4Data``."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from finsy.proto import p4i, p4r
from finsy.proto.p4.v1 import p4data_pb2

from softswitch.engine.externs import Digest
from softswitch.runtime.server import bytestrings
from softswitch.runtime.server.p4info_index import P4InfoIndex
from softswitch.runtime.server.write_error import (
    P4RuntimeWriteError,
    already_exists,
    invalid,
    not_found,
    update_type_name,
)


class Digests:
    """Digest configs (INSERT/MODIFY/DELETE, as PI) and engine digest translation."""

    def __init__(self, index: P4InfoIndex) -> None:
        self.index = index
        self._configs: dict[int, p4r.DigestEntry.Config] = {}

    def write(self, kind: int, msg: p4r.DigestEntry) -> None:
        proto = self.index.digest(msg.digest_id)
        where = f"digest '{proto.preamble.name}'"
        exists = msg.digest_id in self._configs
        if kind == p4r.Update.DELETE:
            if not exists:
                raise not_found(f"{where} is not configured")
            del self._configs[msg.digest_id]
            return
        if kind == p4r.Update.INSERT and exists:
            raise already_exists(f"{where} is already configured")
        if kind == p4r.Update.MODIFY and not exists:
            raise not_found(f"{where} is not configured")
        if kind not in (p4r.Update.INSERT, p4r.Update.MODIFY):
            raise invalid(f"{where}: update type {kind} is not INSERT/MODIFY/DELETE")
        c = msg.config
        if c.max_timeout_ns < 0 or c.max_list_size < 0 or c.ack_timeout_ns < 0:
            raise invalid(f"{where}: negative value in the config")
        config = p4r.DigestEntry.Config()
        config.CopyFrom(c)
        self._configs[msg.digest_id] = config

    def read(self, msg: p4r.DigestEntry) -> Iterator[p4r.Entity]:
        if msg.digest_id:
            self.index.digest(msg.digest_id)
        for did, config in sorted(self._configs.items()):
            if msg.digest_id and did != msg.digest_id:
                continue
            out = p4r.Entity()
            out.digest_entry.digest_id = did
            out.digest_entry.config.CopyFrom(config)
            yield out

    def config(self, digest_id: int) -> p4r.DigestEntry.Config | None:
        return self._configs.get(digest_id)

    def to_p4data(self, digest: Digest) -> tuple[int, p4data_pb2.P4Data]:
        """(digest id, P4Data) for an engine digest: a struct (or tuple) of bitstrings in
        the type's field order, or a lone bitstring for a digest of one bit<W> value."""
        proto = self.index.digest_by_name.get(digest.name)
        if proto is None:
            raise not_found(f"no P4Info digest for type '{digest.name}'")
        widths = self._widths(proto.type_spec)
        values = list(digest.values)
        data = p4data_pb2.P4Data()
        which = proto.type_spec.WhichOneof("type_spec")
        if which == "bitstring":
            data.bitstring = bytestrings.encode(values[0], widths[0] if widths else None)
            return proto.preamble.id, data
        members = data.struct.members if which != "tuple" else data.tuple.members
        for i, value in enumerate(values):
            width = widths[i] if i < len(widths) else None
            members.add(bitstring=bytestrings.encode(value, width))
        return proto.preamble.id, data

    def _widths(self, spec: p4i.P4DataTypeSpec) -> list[int | None]:
        which = spec.WhichOneof("type_spec")
        if which == "struct":
            struct = self.index.p4info.type_info.structs.get(spec.struct.name)
            if struct is None:
                return []
            return [_bit_width(m.type_spec) for m in struct.members]
        if which == "tuple":
            return [_bit_width(m) for m in spec.tuple.members]
        return [_bit_width(spec)]


def _bit_width(spec: p4i.P4DataTypeSpec) -> int | None:
    if spec.WhichOneof("type_spec") != "bitstring":
        return None
    bits = spec.bitstring
    kind = bits.WhichOneof("type_spec")
    if kind == "bit":
        return bits.bit.bitwidth
    if kind == "int":
        return bits.int.bitwidth
    if kind == "varbit":
        return bits.varbit.max_bitwidth
    return None


class ValueSets:
    """Parser value sets: a MODIFY replaces all members (P4Runtime spec 9.9)."""

    def __init__(self, index: P4InfoIndex) -> None:
        self.index = index

    def write(self, kind: int, msg: p4r.ValueSetEntry) -> None:
        proto, vs = self.index.value_set(msg.value_set_id)
        where = f"value set '{proto.preamble.name}'"
        if kind != p4r.Update.MODIFY:
            raise invalid(f"{where}: only MODIFY is allowed "
                          f"(got {update_type_name(kind)})")
        if len(msg.members) > proto.size:
            raise P4RuntimeWriteError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                      f"{where}: {len(msg.members)} members exceed its size "
                                      f"{proto.size}")
        fields = {f.id: (i, f) for i, f in enumerate(proto.match)}
        parsed: list[tuple[list[int], list[int]]] = []
        for member in msg.members:
            values = [0] * len(fields)
            masks = [0] * len(fields)
            for fm in member.match:
                found = fields.get(fm.field_id)
                if found is None:
                    raise invalid(f"{where} has no match field with id {fm.field_id}")
                i, f = found
                fwhere = f"{where} field {f.id}"
                which = fm.WhichOneof("field_match_type")
                if which == "exact":
                    values[i] = bytestrings.decode(fm.exact.value, f.bitwidth, fwhere)
                    masks[i] = (1 << f.bitwidth) - 1
                elif which == "ternary":
                    values[i] = bytestrings.decode(fm.ternary.value, f.bitwidth, fwhere)
                    masks[i] = bytestrings.decode(fm.ternary.mask, f.bitwidth, fwhere)
                    if values[i] & ~masks[i]:
                        raise invalid(f"{fwhere}: value has bits outside the mask")
                else:
                    raise invalid(f"{fwhere}: {which} matches are not supported in value sets")
            parsed.append((values, masks))
        vs.clear()
        for values, masks in parsed:
            vs.add(values, masks)

    def read(self, msg: p4r.ValueSetEntry) -> Iterator[p4r.Entity]:
        ids = [msg.value_set_id] if msg.value_set_id else list(self.index.value_sets)
        for vid in ids:
            proto, vs = self.index.value_set(vid)
            out = p4r.Entity()
            out.value_set_entry.value_set_id = vid
            for member in vs.members:
                m = out.value_set_entry.members.add()
                for f, (value, mask) in zip(proto.match, member):
                    fm = m.match.add(field_id=f.id)
                    if mask == (1 << f.bitwidth) - 1:
                        fm.exact.value = bytestrings.encode(value)
                    else:
                        fm.ternary.value = bytestrings.encode(value)
                        fm.ternary.mask = bytestrings.encode(mask)
            yield out
