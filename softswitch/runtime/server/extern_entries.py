"""Counter, DirectCounter, Meter, DirectMeter and Register entities.

These are arrays (or per-entry state) that always exist, so only MODIFY writes them (INSERT
and DELETE are INVALID_ARGUMENT, as in PI). An unset index is a wildcard: a read returns
every index, a write sets every index. An out-of-range index is OUT_OF_RANGE.

A meter config with all four values zero (or no config at all) resets the meter to
unconfigured (every packet GREEN), PI's meaning of DELETE/default config.

Registers: softswitch reads AND writes ``RegisterEntry`` — more than simple_switch_grpc, whose
PI layer answers UNIMPLEMENTED for both; tests relying on it do not run on real BMv2.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from finsy.proto import p4i, p4r
from finsy.proto.p4.v1 import p4data_pb2

from softswitch.engine.meters import Meter
from softswitch.errors import ControlPlaneError
from softswitch.runtime.server import bytestrings
from softswitch.runtime.server.p4info_index import P4InfoIndex
from softswitch.runtime.server.table_entries import TableEntries
from softswitch.runtime.server.write_error import invalid, out_of_range, update_type_name


def _encode_struct_cell(value: int, fields: tuple[tuple[str, int], ...],
                        out: p4data_pb2.P4Data) -> None:
    """A TNA register cell of a struct (kept as its fields concatenated) as a P4Data struct."""
    shift = sum(w for _, w in fields)
    for _name, width in fields:
        shift -= width
        out.struct.members.add(bitstring=bytestrings.encode((value >> shift) & ((1 << width) - 1),
                                                            width))


def _decode_struct_cell(data: p4data_pb2.P4Data, fields: tuple[tuple[str, int], ...],
                        what: str) -> int:
    if data.WhichOneof("data") != "struct" or len(data.struct.members) != len(fields):
        raise invalid(f"{what}: data must be a struct of {len(fields)} members")
    value = 0
    for member, (name, width) in zip(data.struct.members, fields):
        if member.WhichOneof("data") != "bitstring":
            raise invalid(f"{what}: member '{name}' must be a bitstring")
        value = (value << width) | bytestrings.decode(member.bitstring, width, what)
    return value


def _check_modify(kind: int, what: str) -> None:
    if kind != p4r.Update.MODIFY:
        raise invalid(f"{what}: only MODIFY is allowed (got {update_type_name(kind)})")


def _indices(msg: Any, size: int, what: str) -> range:
    if not msg.HasField("index"):
        return range(size)
    i = msg.index.index
    if not 0 <= i < size:
        raise out_of_range(f"{what}: index {i} is out of range (size {size})")
    return range(i, i + 1)


def _rates(config: p4r.MeterConfig, what: str) -> tuple[int, int, int, int] | None:
    rates = (config.cir, config.cburst, config.pir, config.pburst)
    if not any(rates):
        return None
    try:
        Meter("packets").set_rates(*rates)
    except ControlPlaneError as exc:
        raise invalid(f"{what}: {exc}") from exc
    return rates


def _configure(meter: Meter, rates: tuple[int, int, int, int] | None) -> None:
    if rates is None:
        meter.reset_rates()
    else:
        meter.set_rates(*rates)


def _config_proto(meter: Meter | None, out: p4r.MeterConfig) -> bool:
    rates = meter.rates() if meter is not None else None
    if rates is None:
        return False
    out.cir, out.cburst, out.pir, out.pburst = rates.cir, rates.cburst, rates.pir, rates.pburst
    return True


def _counter_proto(unit: int, packets: int, nbytes: int, out: p4r.CounterData) -> None:
    if unit in (p4i.CounterSpec.PACKETS, p4i.CounterSpec.BOTH):
        out.packet_count = packets
    if unit in (p4i.CounterSpec.BYTES, p4i.CounterSpec.BOTH):
        out.byte_count = nbytes


class ExternEntries:
    """Indexed and direct counters and meters, and registers, of one pipeline."""

    def __init__(self, index: P4InfoIndex, tables: TableEntries) -> None:
        self.index = index
        self.tables = tables

    # -- indexed counters ---------------------------------------------------------------------

    def write_counter(self, kind: int, msg: p4r.CounterEntry) -> None:
        proto, counter = self.index.counter(msg.counter_id)
        what = f"counter '{proto.preamble.name}'"
        _check_modify(kind, what)
        for i in _indices(msg, counter.size, what):
            counter.write(i, msg.data.packet_count, msg.data.byte_count)

    def read_counters(self, msg: p4r.CounterEntry) -> Iterator[p4r.Entity]:
        ids = [msg.counter_id] if msg.counter_id else list(self.index.counters)
        for cid in ids:
            proto, counter = self.index.counter(cid)
            for i in _indices(msg, counter.size, f"counter '{proto.preamble.name}'"):
                out = p4r.Entity()
                ce = out.counter_entry
                ce.counter_id = cid
                ce.index.index = i
                _counter_proto(proto.spec.unit, *counter.read(i), ce.data)
                yield out

    # -- direct counters ----------------------------------------------------------------------

    def write_direct_counter(self, kind: int, msg: p4r.DirectCounterEntry) -> None:
        what = "direct counter entry"
        _check_modify(kind, what)
        info, entry = self.tables.find(msg.table_entry, what)
        if not info.table.has_counter:
            raise invalid(f"table '{info.name}' has no direct counter")
        entry.cnt[:] = [msg.data.packet_count, msg.data.byte_count]

    def read_direct_counters(self, msg: p4r.DirectCounterEntry) -> Iterator[p4r.Entity]:
        for info, entry in self._direct_entries(msg.table_entry, "counter"):
            unit = next((c.spec.unit for c, _ in self.index.direct_counters.values()
                         if c.direct_table_id == info.id), p4i.CounterSpec.BOTH)
            out = p4r.Entity()
            dce = out.direct_counter_entry
            dce.table_entry.CopyFrom(self.tables.entry_entity(info, entry).table_entry)
            _counter_proto(unit, entry.cnt[0], entry.cnt[1], dce.data)
            yield out

    # -- indexed meters -----------------------------------------------------------------------

    def write_meter(self, kind: int, msg: p4r.MeterEntry) -> None:
        proto, meters = self.index.meter(msg.meter_id)
        what = f"meter '{proto.preamble.name}'"
        _check_modify(kind, what)
        indices = _indices(msg, meters.size, what)
        rates = _rates(msg.config, what)
        for i in indices:
            _configure(meters.meter(i), rates)

    def read_meters(self, msg: p4r.MeterEntry) -> Iterator[p4r.Entity]:
        ids = [msg.meter_id] if msg.meter_id else list(self.index.meters)
        for mid in ids:
            proto, meters = self.index.meter(mid)
            for i in _indices(msg, meters.size, f"meter '{proto.preamble.name}'"):
                out = p4r.Entity()
                me = out.meter_entry
                me.meter_id = mid
                me.index.index = i
                _config_proto(meters.meter(i), me.config)
                yield out

    # -- direct meters ------------------------------------------------------------------------

    def write_direct_meter(self, kind: int, msg: p4r.DirectMeterEntry) -> None:
        what = "direct meter entry"
        _check_modify(kind, what)
        info, entry = self.tables.find(msg.table_entry, what)
        if entry.meter is None:
            raise invalid(f"table '{info.name}' has no direct meter")
        _configure(entry.meter, _rates(msg.config, f"{what} of table '{info.name}'"))

    def read_direct_meters(self, msg: p4r.DirectMeterEntry) -> Iterator[p4r.Entity]:
        for info, entry in self._direct_entries(msg.table_entry, "meter"):
            out = p4r.Entity()
            dme = out.direct_meter_entry
            dme.table_entry.CopyFrom(self.tables.entry_entity(info, entry).table_entry)
            _config_proto(entry.meter, dme.config)
            yield out

    # -- registers ----------------------------------------------------------------------------

    def write_register(self, kind: int, msg: p4r.RegisterEntry) -> None:
        proto, register = self.index.register(msg.register_id)
        what = f"register '{proto.preamble.name}'"
        _check_modify(kind, what)
        indices = _indices(msg, register.size, what)
        fields = getattr(register, "fields", ())
        if fields:
            value = _decode_struct_cell(msg.data, fields, what)
        else:
            if msg.data.WhichOneof("data") != "bitstring":
                raise invalid(f"{what}: data must be a bitstring")
            decode = bytestrings.decode_signed if register.signed else bytestrings.decode
            value = decode(msg.data.bitstring, register.width, what)
        for i in indices:
            register.write(i, value)

    def read_registers(self, msg: p4r.RegisterEntry) -> Iterator[p4r.Entity]:
        ids = [msg.register_id] if msg.register_id else list(self.index.registers)
        for rid in ids:
            proto, register = self.index.register(rid)
            for i in _indices(msg, register.size, f"register '{proto.preamble.name}'"):
                out = p4r.Entity()
                re = out.register_entry
                re.register_id = rid
                re.index.index = i
                fields = getattr(register, "fields", ())
                if fields:
                    _encode_struct_cell(register.read(i), fields, re.data)
                else:
                    re.data.CopyFrom(p4data_pb2.P4Data(
                        bitstring=bytestrings.encode(register.read(i), register.width)))
                yield out

    # -- internals ----------------------------------------------------------------------------

    def _direct_entries(self, te: p4r.TableEntry, kind: str) -> Iterator[tuple[Any, Any]]:
        """Entries a direct counter/meter read names: one entry, a table's, or all tables'."""
        def has(info: Any) -> bool:
            return info.table.has_counter if kind == "counter" else \
                info.table.meter_kind is not None

        if te.table_id == 0:
            for info in self.index.tables.values():
                if has(info):
                    for entry in info.table.get_entries():
                        yield info, entry
            return
        info = self.index.table(te.table_id)
        if not has(info):
            raise invalid(f"table '{info.name}' has no direct {kind}")
        if te.match:
            yield self.tables.find(te, f"direct {kind} read")
        else:
            for entry in info.table.get_entries():
                yield info, entry
