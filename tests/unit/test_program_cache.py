"""Pushes of the same config bytes share the checked program and its generated code
(runtime/program_cache.py, engine/compiled.py), while each device keeps its own state."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r

from softswitch.compiler import compile_file
from softswitch.ir.serialize import dumps_ir
from softswitch.native.build import compiler_available
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device
from softswitch.runtime.program_cache import ProgramCache
from softswitch.runtime.server.entities import EntityStore
from softswitch.runtime.server.pipeline_config import Bound, PipelineManager
from softswitch.runtime.server.status import RpcError

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "runtime" / "p4rt_externs.p4"
MODIFY, INSERT = p4r.Update.MODIFY, p4r.Update.INSERT


@pytest.fixture(scope="module")
def config() -> tuple[object, bytes]:
    checked = compile_file(PROGRAM)
    return build_p4info(checked), dumps_ir(checked).encode()


def push(manager: PipelineManager, config: tuple[object, bytes], ir: bytes | None = None
         ) -> None:
    request = p4r.SetForwardingPipelineConfigRequest(
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    request.config.p4info.CopyFrom(config[0])
    request.config.p4_device_config = config[1] if ir is None else ir
    manager.set(request)


def managers(cache: ProgramCache, n: int) -> list[PipelineManager]:
    return [PipelineManager(Device(i + 1), EntityStore, lambda _digests: None, cache)
            for i in range(n)]


def object_id(bound: Bound, kind: str, name: str) -> int:
    return next(o.preamble.id for o in getattr(bound.p4info, kind) if name in (o.preamble.name, o.preamble.alias))


def packet(manager: PipelineManager, a: int) -> bytes:
    switch = manager.device.pipeline.switch
    (out,) = switch.process_packet(0, bytes([a, 0, 0, 0, 0, 0, 0, 0]))
    return out.data


@pytest.mark.parametrize("engine", ["python", "c"])
def test_devices_share_the_program_but_not_their_state(
        engine: str, config: tuple[object, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    if engine == "c" and compiler_available() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("SOFTSWITCH_ENGINE", engine)
    cache = ProgramCache()
    one, two = managers(cache, 2)
    push(one, config)
    push(two, config)
    a, b = one.device.pipeline, two.device.pipeline
    assert (cache.misses, cache.hits) == (1, 1)
    assert a.program is b.program
    assert a.switch.generated is b.switch.generated      # the generated Python, made once
    assert a.switch is not b.switch and a.switch.engine == b.switch.engine == engine
    if engine == "c":
        ia, ib = a.switch.pipeline.instance, b.switch.pipeline.instance
        assert ia.program is ib.program                  # one generated, loaded library
        assert ia.inst != ib.inst                        # each its own C state
    bound_a, bound_b = one.active(), two.active()
    assert bound_a is not None and bound_b is not None

    # registers: the program counts packets per h.a in regs and echoes the old count in h.c
    assert [packet(one, 3)[2:4] for _ in range(3)] == [b"\0\0", b"\0\1", b"\0\2"]
    assert packet(two, 3)[2:4] == b"\0\0"

    # counters: three packets on one, one on two, and a counter write on one only
    cid = object_id(bound_a, "counters", "pkt_ctr")
    query = p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=cid, index=p4r.Index(index=3)))
    counts = [next(iter(m.active().store.read(query))).counter_entry.data.packet_count
              for m in (one, two)]
    assert counts == [3, 1]
    written = p4r.CounterEntry(counter_id=cid, index=p4r.Index(index=5))
    written.data.packet_count = 77
    bound_a.store.write(p4r.Update(type=MODIFY, entity=p4r.Entity(counter_entry=written)))
    query.counter_entry.index.index = 5
    assert [next(iter(m.active().store.read(query))).counter_entry.data.packet_count
            for m in (one, two)] == [77, 0]

    # meters: configured on one (third packet RED), two stays unconfigured (GREEN)
    meter = p4r.MeterEntry(meter_id=object_id(bound_a, "meters", "pkt_meter"),
                           index=p4r.Index(index=0))
    meter.config.cir, meter.config.cburst, meter.config.pir, meter.config.pburst = 1, 1, 1, 1
    bound_a.store.write(p4r.Update(type=MODIFY, entity=p4r.Entity(meter_entry=meter)))
    assert [packet(one, 1)[7] for _ in range(3)][-1] == 2
    assert [packet(two, 1)[7] for _ in range(3)] == [0, 0, 0]

    # PRE: a multicast group on one only
    group = p4r.MulticastGroupEntry(multicast_group_id=5)
    group.replicas.add(egress_port=2, instance=1)
    pre = p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=group))
    bound_a.store.write(p4r.Update(type=INSERT, entity=pre))
    everything = p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=p4r.MulticastGroupEntry()))
    assert [len(list(m.active().store.read(everything))) for m in (one, two)] == [1, 0]


def test_the_cache_is_bounded_keyed_on_the_bytes_and_keeps_no_failure(
        config: tuple[object, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "python")
    cache = ProgramCache(capacity=1)
    one, two, three = managers(cache, 3)
    push(one, config)
    # other bytes of the same program (a trailing newline): another entry, evicting the first
    push(two, config, config[1] + b"\n")
    push(three, config)
    assert (cache.misses, cache.hits, len(cache)) == (3, 0, 1)
    assert one.device.pipeline.program is not three.device.pipeline.program
    with pytest.raises(RpcError, match="IR JSON is not valid JSON"):
        push(three, config, b"{not json")
    assert len(cache) == 1 and cache.misses == 3
    cache.clear()
    assert (len(cache), cache.misses, cache.hits) == (0, 0, 0)
    with pytest.raises(ValueError, match="at least 1"):
        ProgramCache(capacity=0)
