"""Put a Switch's program on the C engine: load the program, make its instance, mirror the
Python tables into C and give the C-backed counters, registers, meters and pipeline to the
Switch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from softswitch.engine.externs import CounterArray, Digest, IndexedMeter, RegisterArray, ValueSet
from softswitch.engine.pipeline import RunState
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.engine.tables import Table
from softswitch.ir.checked import CheckedProgram
from softswitch.native.externs import NativeRegisterArray, native_counter
from softswitch.native.meters import native_meter_array
from softswitch.native.pipeline import NativeV1Pipeline
from softswitch.native.profiles import NativeProfileMirror
from softswitch.native.program import NativeInstance, load_program
from softswitch.native.tables import NativeTableMirror
from softswitch.native.valuesets import NativeValueSet


@dataclass
class NativeParts:
    """What a Switch swaps in to run on the C engine."""

    pipeline: Any  # NativeV1Pipeline or NativeTnaPipeline
    counters: dict[str, CounterArray]
    registers: dict[str, RegisterArray]
    meters: dict[str, IndexedMeter]
    value_sets: dict[str, ValueSet]


def build_native(program: CheckedProgram, drop_port: int, tables: dict[str, Table],
                 pre: PacketReplicationEngine, state: RunState, digests: list[Digest],
                 value_sets: dict[str, ValueSet] | None = None,
                 make_pipeline: Callable[[NativeInstance], Any] | None = None) -> NativeParts:
    """The C engine's parts for `program`; the tables start following their C copies.
    `make_pipeline` (TNA: native/tna_attach.py) makes the pipeline, else NativeV1Pipeline.

    Raises NativeUnsupported or NativeBuildError before changing anything."""
    loaded = load_program(program)
    instance = NativeInstance(loaded, drop_port)
    mirrors = [NativeTableMirror(instance.ffi, instance.lib, instance.tables[info.name], info,
                                 tables[info.name])
               for info in loaded.gen.tables]
    counters: dict[str, CounterArray] = {}
    registers: dict[str, RegisterArray] = {}
    meters: dict[str, IndexedMeter] = {}
    native_sets: dict[str, ValueSet] = {}
    for x in loaded.gen.externs:
        cells = instance.cells[x.name]
        if x.kind == "counter":
            counters[x.name] = native_counter(x, cells)
        elif x.kind == "register":
            registers[x.name] = NativeRegisterArray(x, cells, instance)
        elif x.kind == "meter":
            meters[x.name] = native_meter_array(x, instance.lib, cells[0])
        elif x.kind == "value_set":
            old = (value_sets or {}).get(x.name) or ValueSet(x.name, x.size, [0] * x.width)
            native_sets[x.name] = NativeValueSet(old, cells[0])
    profiles: dict[str, NativeProfileMirror] = {}
    for info in loaded.gen.tables:
        profile = tables[info.name].profile
        if info.profile is None or profile is None:
            continue
        mirror = profiles.get(info.profile)
        if mirror is None:
            mirror = profiles[info.profile] = NativeProfileMirror(
                instance.ffi, instance.lib, instance.cells[info.profile][0], {}, profile)
        mirror.actions.update(info.actions)
    pipeline = (make_pipeline(instance) if make_pipeline is not None
                else NativeV1Pipeline(instance, pre, state, digests))
    for p in profiles.values():
        p.attach()
    for m in mirrors:
        m.attach()
    return NativeParts(pipeline, counters, registers, meters, native_sets)

