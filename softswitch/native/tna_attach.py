"""Put a TNA Switch's program on the C engine: native/attach.py's parts with the TNA pipeline,
and registers whose cells start at (and reset to) the program's initial value."""

from __future__ import annotations

from typing import Any

from softswitch.engine.codegen_tna import TnaGeneratedProgram
from softswitch.engine.externs import Digest
from softswitch.engine.pre import PacketReplicationEngine
from softswitch.engine.tables import Table
from softswitch.engine.tna_pipeline import TnaRunState
from softswitch.ir.checked import CheckedProgram
from softswitch.native.attach import NativeParts, build_native
from softswitch.native.cgen_tna import TnaNativeProgram
from softswitch.native.externs import NativeRegisterArray
from softswitch.native.program import NativeInstance
from softswitch.native.tna_pipeline import NativeTnaPipeline


class NativeTnaRegister(NativeRegisterArray):
    """A TNA Register in C: `initial` is where its cells start and reset to."""

    initial = 0
    fields: tuple[tuple[str, int], ...] = ()  # a struct cell's (P4Runtime reads it as one)

    def reset(self) -> None:
        self.values[:] = [self.initial] * len(self.values)


def build_native_tna(program: CheckedProgram, pygen: TnaGeneratedProgram, drop_port: int,
                     tables: dict[str, Table], pre: PacketReplicationEngine,
                     state: TnaRunState, digests: list[Digest]) -> NativeParts:
    """The C engine's parts for the TNA program `program` (`pygen` its Python generation).

    Raises NativeUnsupported or NativeBuildError before changing anything."""
    made: list[NativeInstance] = []

    def pipeline(instance: NativeInstance) -> Any:
        made.append(instance)
        return NativeTnaPipeline(instance, pygen, program.blocks, program.errors, pre, state,
                                 digests)

    parts = build_native(program, drop_port, tables, pre, state, digests,
                         make_pipeline=pipeline)
    gen = made[0].program.gen
    assert isinstance(gen, TnaNativeProgram)
    for name, reg in parts.registers.items():
        reg.__class__ = NativeTnaRegister  # the same object, with TNA's reset
        assert isinstance(reg, NativeTnaRegister)
        initial = gen.initial.get(name, 0)
        reg.initial = reg.values.value(initial)  # type: ignore[attr-defined]
        reg.fields = gen.cell_fields.get(name, ())
        if initial:
            reg.reset()
    return parts
