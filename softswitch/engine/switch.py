"""Switch: one compiled program (v1model or TNA) with its tables, externs and PRE (see DESIGN.md)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from softswitch.engine import codegen, codegen_tna, tna_objects
from softswitch.engine.burst import Burst, BurstResult, burst_by_packet
from softswitch.engine.codegen_info import ExternInfo
from softswitch.engine.compiled import compiled_program
from softswitch.engine.externs import (
    CounterArray,
    Digest,
    DirectCounter,
    DirectMeter,
    IndexedMeter,
    RegisterArray,
    ValueSet,
)
from softswitch.engine.hashes import hash_function
from softswitch.engine.pipeline import OutputPacket, PacketJob, QueueInfo, RunState, V1Pipeline
from softswitch.engine.pre import TOFINO_MAX_MIRROR_SESSION_ID, PacketReplicationEngine
from softswitch.engine.support import noop
from softswitch.engine.tables import ActionProfile, ActionSpec, Table
from softswitch.engine.tna_pipeline import TnaPipeline, TnaRunState
from softswitch.errors import (
    ControlPlaneError,
    NativeBuildError,
    NativeUnsupported,
    P4Error,
    UnsupportedError,
)
from softswitch.frontend import types as t
from softswitch.ir.checked import CheckedProgram

__all__ = ["ENGINES", "Burst", "BurstResult", "OutputPacket", "PacketJob", "QueueInfo", "Switch"]

ENGINES = ("python", "c", "auto")
_log = logging.getLogger("softswitch.engine")


def _meter_kind(value: Any) -> str:
    return "bytes" if str(value) == "bytes" else "packets"


def _log_format(msg: str, values: tuple[int, ...]) -> str:
    parts = msg.split("{}")
    out = [parts[0]]
    for i, rest in enumerate(parts[1:]):
        out.append(str(values[i]) if i < len(values) else "{}")
        out.append(rest)
    return "".join(out)


# The extern kinds whose instances are arrays of cells allocated with the program (v1model's
# and TNA's); the checker bounds each one's size, this their sum.
_ARRAY_KINDS = frozenset({"counter", "meter", "register", "Counter", "Meter", "Register"})


def _check_state_cells(externs: list[ExternInfo], program: CheckedProgram) -> None:
    """Refuse a program whose register, counter and meter arrays together hold more cells
    than its limits allow, before any is allocated."""
    total = 0
    for x in externs:
        if x.kind in _ARRAY_KINDS:
            total += int(x.args.get("size", 0) or 0)
            program.limits.check("state_cells", f"{x.kind} '{x.name}' brings the program's "
                                 "register, counter and meter cells", total)


class Switch:
    """A running switch for one checked program: v1model (V1Pipeline) or TNA (TnaPipeline),
    with the same control-plane API.

    `engine`: "python" (the reference), "c" (the program compiled to C, native/; raises
    NativeUnsupported or NativeBuildError when it cannot), "auto" (C when it can, else
    Python with one warning line); None: $SOFTSWITCH_ENGINE, else "python". `self.engine`
    says which one runs."""

    def __init__(self, program: CheckedProgram, *, drop_port: int = 511,
                 trace: Callable[[str], None] | None = None, engine: str | None = None) -> None:
        if engine is None:
            engine = os.environ.get("SOFTSWITCH_ENGINE") or "python"
        if engine not in ENGINES:
            raise ValueError(f"unknown engine '{engine}' (one of {', '.join(ENGINES)})")
        self.program = program
        self.drop_port = drop_port
        self.trace = trace
        self.arch = program.arch
        tna = self.arch == "tna"
        gen, code = compiled_program(program, trace is not None)
        _check_state_cells(gen.externs, program)
        self.generated = gen
        self.generated_source = gen.source
        self.pre = PacketReplicationEngine()
        if tna:
            self.pre.max_clone_session_id = TOFINO_MAX_MIRROR_SESSION_ID
        self.digests: list[Digest] = []
        ns: dict[str, Any] = {"__name__": "softswitch_generated"}
        exec(code, ns)  # the code is shared by the program's Switches, `ns` is this one's
        self._ns = ns
        field_lists = {i: ns[f] for i, f in gen.field_lists.items()}
        self._state = TnaRunState(drop_port) if tna else RunState(drop_port, field_lists)
        ns["R"] = self._state
        ns["_T"] = trace if trace is not None else (lambda _s: None)
        ns["log_format"] = _log_format
        for gname, algo in gen.hash_fns.items():
            ns[gname] = hash_function(algo)
        self._counters: dict[str, CounterArray] = {}
        self._direct_counters: dict[str, DirectCounter] = {}
        self._meters: dict[str, IndexedMeter] = {}
        self._direct_meters: dict[str, DirectMeter] = {}
        self._registers: dict[str, RegisterArray] = {}
        self._profiles: dict[str, ActionProfile] = {}
        self._value_sets: dict[str, ValueSet] = {}
        self._tables: dict[str, Table] = {}
        (self._make_tna_externs if tna else self._make_externs)(gen, ns)
        self._make_tables(gen, ns)
        self.pipeline: V1Pipeline | TnaPipeline = self._make_pipeline(gen, ns)
        self.engine = "python"
        if engine != "python":
            self._use_native(engine)

    def _use_native(self, engine: str) -> None:
        """Run on the C engine: its pipeline, counters, registers, meters and value sets;
        tables mirrored."""
        try:
            if self.trace is not None:
                raise NativeUnsupported("tracing")
            if self.arch == "tna":
                from softswitch.native.tna_attach import build_native_tna  # cffi when asked

                assert isinstance(self._state, TnaRunState)
                assert isinstance(self.generated, codegen_tna.TnaGeneratedProgram)
                parts = build_native_tna(self.program, self.generated, self.drop_port,
                                         self._tables, self.pre, self._state, self.digests)
            elif self.arch != "v1model":
                raise NativeUnsupported(f"architecture '{self.arch}'")
            else:
                from softswitch.native.attach import build_native  # cffi only when asked for

                parts = build_native(self.program, self.drop_port, self._tables, self.pre,
                                     self._state, self.digests, self._value_sets)
        except (NativeUnsupported, NativeBuildError) as exc:
            if engine == "c":
                raise
            _log.warning("softswitch: the C engine cannot run %s (%s): using the Python engine",
                         self.program.source_file or "this program", exc)
            return
        self._counters.update(parts.counters)
        self._registers.update(parts.registers)
        self._meters.update(parts.meters)
        self._value_sets.update(parts.value_sets)
        self.pipeline = parts.pipeline
        if isinstance(self.pipeline, TnaPipeline):
            self.new_packet = self.pipeline.new_job  # type: ignore[method-assign]
        self.engine = "c"

    def _make_pipeline(self, gen: codegen.GeneratedProgram,
                       ns: dict[str, Any]) -> V1Pipeline | TnaPipeline:
        if isinstance(gen, codegen_tna.TnaGeneratedProgram):
            assert isinstance(self._state, TnaRunState)
            pipeline = TnaPipeline(ns, gen, self.program.blocks, self.program.errors, self.pre,
                                   self._state, self.digests, self.trace)
            self.new_packet = pipeline.new_job  # type: ignore[method-assign]
            return pipeline
        assert isinstance(self._state, RunState)
        return V1Pipeline(ns, gen.block_fns, gen.header_cls, gen.meta_cls, gen.sm_cls, self.pre,
                          self._state, self.digests, self.trace)

    # -- construction -------------------------------------------------------------------------

    def _make_externs(self, gen: codegen.GeneratedProgram, ns: dict[str, Any]) -> None:
        for x in gen.externs:
            a = x.args
            obj: Any
            if x.kind == "counter":
                obj = CounterArray(x.name, int(a.get("size", 0)), str(a.get("type", "packets")))
                self._counters[x.name] = obj
            elif x.kind == "direct_counter":
                obj = DirectCounter(x.name, str(a.get("type", "packets")))
                self._direct_counters[x.name] = obj
            elif x.kind == "meter":
                obj = IndexedMeter(x.name, int(a.get("size", 0)),
                                   _meter_kind(a.get("type")))  # type: ignore[arg-type]
                self._meters[x.name] = obj
            elif x.kind == "direct_meter":
                obj = DirectMeter(x.name, _meter_kind(a.get("type")))  # type: ignore[arg-type]
                self._direct_meters[x.name] = obj
            elif x.kind == "register":
                targs = a.get("type_args", ())
                elem = t.unwrap_newtype(targs[0]) if targs else t.BitType(32)
                width = codegen.bit_width(elem)
                signed = isinstance(elem, t.BitType) and elem.signed
                obj = RegisterArray(x.name, int(a.get("size", 0)), width, signed)
                self._registers[x.name] = obj
            elif x.kind in ("action_profile", "action_selector"):
                selector = None
                if x.kind == "action_selector":
                    selector = hash_function(str(a.get("algorithm", "crc16")))
                obj = ActionProfile(x.name, int(a.get("size", 0) or 0), {}, selector)
                self._profiles[x.name] = obj
            else:
                obj = None  # Checksum16 and friends keep no state
            ns[x.gname] = obj
        for x in gen.value_sets:
            vs = ValueSet(x.name, int(x.args.get("size", 0)), x.args.get("widths", [32]))
            self._value_sets[x.name] = vs
            ns[x.gname] = vs

    def _make_tna_externs(self, gen: codegen.GeneratedProgram, ns: dict[str, Any]) -> None:
        registries: dict[str, dict[str, Any]] = {
            "counter": self._counters, "direct_counter": self._direct_counters,
            "meter": self._meters, "direct_meter": self._direct_meters,
            "register": self._registers, "profile": self._profiles,
        }
        for x, (registry, obj) in zip(gen.externs, tna_objects.build_all(gen.externs, ns)):
            if registry is not None:
                registries[registry][x.name] = obj
        for x in gen.value_sets:
            vs = ValueSet(x.name, int(x.args.get("size", 0)), x.args.get("widths", [32]))
            self._value_sets[x.name] = vs
            ns[x.gname] = vs

    def _make_tables(self, gen: codegen.GeneratedProgram, ns: dict[str, Any]) -> None:
        for info in gen.tables:
            specs = [ActionSpec(a.name, ns[a.fn], a.params, a.aid, a.default_only, a.table_only)
                     for a in info.actions]
            profile = ns.get(info.profile) if info.profile else None
            meter = ns.get(info.direct_meter) if info.direct_meter else None
            counter = ns.get(info.direct_counter) if info.direct_counter else None
            table = Table(info.name, info.key_fields, specs, mode=info.mode, size=info.size,
                          const_entries=info.entries_const, const_default=info.const_default,
                          profile=profile, meter_kind=meter.kind if meter else None,
                          has_counter=counter is not None)
            if profile is not None:
                profile.actions.update({s.name: s for s in specs})
            if meter is not None:
                meter.table = table
            if counter is not None:
                counter.table = table
            table._installing_const = True
            try:
                if info.default_action in table.actions or any(
                        n.endswith("." + info.default_action) for n in table.actions):
                    table.set_default_action(info.default_action, info.default_args)
                elif info.default_action in ("NoAction", ""):  # "": none (profile tables)
                    table.default.action, table.default.fn = info.default_action, noop
                else:
                    raise UnsupportedError(f"table '{info.name}': default action "
                                           f"'{info.default_action}' not in its actions")
                if info.entries:
                    for e in info.entries:
                        table.add_entry(e.matches, e.action, e.args, e.priority)
                    # BMv2 makes a table's entries from the program immutable, const or not
                    table.immutable_entries = True
            except ControlPlaneError as exc:
                raise P4Error(f"table '{info.name}': bad constant entry or default: {exc}") \
                    from exc
            finally:
                table._installing_const = False
            ns[info.gname] = table
            self._tables[info.name] = table

    # -- data plane -----------------------------------------------------------------------------

    def process_packet(self, port: int, data: bytes) -> list[OutputPacket]:
        """Run one packet in on `port`; returns what leaves, in BMv2's order (see pipeline.py)."""
        return self.pipeline.process(port, data)

    def process_batch(self, packets: Sequence[tuple[int, bytes]]) -> list[list[OutputPacket]]:
        """`process_packet` of each (port, data) in turn, each one's outputs in order; on the C
        engine the batch crosses into C once, not once per packet."""
        return self.pipeline.process_batch(packets)

    def process_burst(self, burst: Burst) -> BurstResult:
        """`process_packet` of each frame of `burst` in turn, all outputs in one buffer with
        an (input index, port, offset, length) record each (see burst.py); on the C engine
        without a Python object per packet. The burst's frames see the clock as a batch's
        do: read once per native call."""
        if not isinstance(burst, Burst):
            raise TypeError("process_burst takes a Burst (Burst.of(frames, port), "
                            f"Burst.from_pcap(file, port)), not {type(burst).__name__}")
        native = getattr(self.pipeline, "process_burst", None)
        if native is not None:
            return native(burst)  # type: ignore[no-any-return]
        return burst_by_packet(self.pipeline.process, burst)

    def new_packet(self, port: int, data: bytes) -> PacketJob:
        """An ingress job for a packet received on `port` (for `run`)."""
        return PacketJob(True, port & 0x1FF, bytes(data))

    def run(self, job: PacketJob, queue: QueueInfo | None = None
            ) -> tuple[list[OutputPacket], list[PacketJob]]:
        """One pipeline pass. An ingress job gives ``([], egress jobs + resubmitted ingress
        jobs)``; an egress job (with the queueing metadata of its stay in the egress queue)
        gives ``(transmitted packets, recirculated ingress jobs + egress clones)``."""
        return self.pipeline.run(job, queue)

    def set_clock(self, now_us: Callable[[], int]) -> None:
        """Use `now_us` (µs since the device started) for the global timestamps and meters."""
        self.pipeline.now_us = now_us

    # -- TNA ------------------------------------------------------------------------------------

    def set_cpu_port(self, port: int | None) -> None:
        """The port TNA's copy_to_cpu copies go to (v1model: nothing to set)."""
        if isinstance(self.pipeline, TnaPipeline):
            self.pipeline.cpu_port = port

    def set_queue_count(self, count: int) -> None:
        """The device's egress queues per port: a TNA qid past the last goes to the last."""
        if isinstance(self.pipeline, TnaPipeline):
            self.pipeline.queue_count = max(1, count)

    def set_port_metadata(self, port: int, value: int | bytes) -> None:
        """TNA: the PORT_METADATA_SIZE (64) bits the ingress parser sees after the intrinsic
        metadata of packets received on `port` (the control plane's per-port value)."""
        if not isinstance(self.pipeline, TnaPipeline):
            raise ControlPlaneError("port metadata is a TNA feature")
        data = value if isinstance(value, bytes) else int(value).to_bytes(8, "big")
        if len(data) != 8:
            raise ControlPlaneError("port metadata is 8 bytes (64 bits)")
        self.pipeline.port_metadata[port & 0x1FF] = data

    # -- control plane --------------------------------------------------------------------------

    @staticmethod
    def _lookup(kind: str, objects: dict[str, Any], name: str) -> Any:
        obj = objects.get(name)
        if obj is not None:
            return obj
        matches = [n for n in objects if n.endswith("." + name)]
        if len(matches) == 1:
            return objects[matches[0]]
        if not matches:
            known = ", ".join(objects) or "none"
            raise ControlPlaneError(f"no {kind} named '{name}' (known: {known})")
        raise ControlPlaneError(f"{kind} name '{name}' is ambiguous: {', '.join(matches)}")

    def table(self, name: str) -> Table:
        return self._lookup("table", self._tables, name)  # type: ignore[no-any-return]

    def table_names(self) -> list[str]:
        return list(self._tables)

    def action_profile(self, name: str) -> ActionProfile:
        return self._lookup("action profile", self._profiles, name)  # type: ignore[no-any-return]

    def counter(self, name: str) -> CounterArray:
        return self._lookup("counter", self._counters, name)  # type: ignore[no-any-return]

    def direct_counter(self, name: str) -> DirectCounter:
        return self._lookup(  # type: ignore[no-any-return]
            "direct counter", self._direct_counters, name)

    def meter(self, name: str) -> IndexedMeter:
        return self._lookup("meter", self._meters, name)  # type: ignore[no-any-return]

    def direct_meter(self, name: str) -> DirectMeter:
        return self._lookup(  # type: ignore[no-any-return]
            "direct meter", self._direct_meters, name)

    def register(self, name: str) -> RegisterArray:
        return self._lookup("register", self._registers, name)  # type: ignore[no-any-return]

    def value_set(self, name: str) -> ValueSet:
        return self._lookup("value set", self._value_sets, name)  # type: ignore[no-any-return]
