"""Robustness of the P4Runtime server under malformed requests (hypothesis).

A real server on 127.0.0.1 with a real Device runs tests/p4/runtime/server_fuzz.p4 (every match
kind, action profile and selector, counters, meters, registers, a digest, a value set,
controller headers). Requests start from valid ones and are mutated field by field; the
properties are that every call ends, within a timeout, with OK or one of the precise codes
(never INTERNAL, never an exception in the server's log), that a failed request leaves the
whole readable state unchanged, and that the server still serves and forwards afterwards.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import grpc
import pytest
from finsy.proto import p4i, p4r
from finsy.proto.google.rpc import code_pb2
from finsy.proto.p4.v1 import p4data_pb2, p4runtime_pb2_grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p4rt_harness import StreamClient

from softswitch.compiler import compile_file
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer
from softswitch.runtime.server.status import decode_details

PROGRAM = Path(__file__).parents[1] / "p4" / "runtime" / "p4rt_fuzz.p4"
DEVICE_ID = 3
CPU_PORT = 64
ELECTION = (0, 1)
TIMEOUT = 5.0                     # seconds; a call past it is a hang
SC = grpc.StatusCode
PRECISE = {SC.INVALID_ARGUMENT, SC.NOT_FOUND, SC.ALREADY_EXISTS, SC.OUT_OF_RANGE,
           SC.RESOURCE_EXHAUSTED, SC.PERMISSION_DENIED, SC.UNIMPLEMENTED,
           SC.FAILED_PRECONDITION}
PRECISE_NUMBERS = {int(c.value[0]) for c in PRECISE}


# P4RT_FUZZ_SCALE=20 multiplies the example counts for a longer bug hunt.
SCALE = float(os.environ.get("P4RT_FUZZ_SCALE", "1"))


def fuzz(examples: int) -> settings:
    return settings(max_examples=max(1, int(examples * SCALE)), deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- the program ------------------------------------------------------------------------------

@cache
def program() -> tuple[p4i.P4Info, bytes]:
    checked = compile_file(PROGRAM)
    return build_p4info(checked), dumps_ir(checked).encode()


def _repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


@cache
def ids() -> dict[str, int]:
    """Every P4Info object's id by alias and by name."""
    p4info, _ = program()
    out: dict[str, int] = {}
    for field in p4info.DESCRIPTOR.fields:
        if not _repeated(field) or field.message_type is None:
            continue
        if "preamble" not in field.message_type.fields_by_name:
            continue
        for obj in getattr(p4info, field.name):
            out[obj.preamble.name] = out[obj.preamble.alias] = obj.preamble.id
    return out


def all_ids() -> list[int]:
    return sorted(set(ids().values()))


# -- entity builders --------------------------------------------------------------------------

def _action(name: str, *params: bytes) -> p4r.Action:
    action = p4r.Action(action_id=ids()[name])
    for i, value in enumerate(params, start=1):
        action.params.add(param_id=i, value=value)
    return action


def entry(table: str, *matches: p4r.FieldMatch, action: p4r.Action | None = None,
          member: int | None = None, group: int | None = None,
          priority: int = 0) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=ids()[table], match=matches, priority=priority)
    if action is not None:
        te.action.action.CopyFrom(action)
    if member is not None:
        te.action.action_profile_member_id = member
    if group is not None:
        te.action.action_profile_group_id = group
    return te


def exact(fid: int, value: bytes) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, exact=p4r.FieldMatch.Exact(value=value))


def lpm(fid: int, value: bytes, plen: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, lpm=p4r.FieldMatch.LPM(value=value, prefix_len=plen))


def ternary(fid: int, value: bytes, mask: bytes) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, ternary=p4r.FieldMatch.Ternary(value=value, mask=mask))


def range_(fid: int, low: bytes, high: bytes) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, range=p4r.FieldMatch.Range(low=low, high=high))


def optional(fid: int, value: bytes) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, optional=p4r.FieldMatch.Optional(value=value))


def member(profile: str, mid: int, action: p4r.Action) -> p4r.Entity:
    return p4r.Entity(action_profile_member=p4r.ActionProfileMember(
        action_profile_id=ids()[profile], member_id=mid, action=action))


def group(profile: str, gid: int, *members: tuple[int, int]) -> p4r.Entity:
    g = p4r.ActionProfileGroup(action_profile_id=ids()[profile], group_id=gid, max_size=4)
    for mid, weight in members:
        g.members.add(member_id=mid, weight=weight)
    return p4r.Entity(action_profile_group=g)


def mcast(gid: int, *replicas: tuple[int, int]) -> p4r.Entity:
    e = p4r.Entity()
    g = e.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = gid
    for port, instance in replicas:
        g.replicas.add(egress_port=port, instance=instance)
    return e


def clone_session(sid: int, *replicas: tuple[int, int]) -> p4r.Entity:
    e = p4r.Entity()
    s = e.packet_replication_engine_entry.clone_session_entry
    s.session_id = sid
    for port, instance in replicas:
        s.replicas.add(port=port.to_bytes(2, "big"), instance=instance)
    return e


def meter_config(cir: int, cburst: int, pir: int, pburst: int) -> p4r.MeterConfig:
    return p4r.MeterConfig(cir=cir, cburst=cburst, pir=pir, pburst=pburst)


def te_entity(te: p4r.TableEntry) -> p4r.Entity:
    return p4r.Entity(table_entry=te)


def update(kind: int, entity: p4r.Entity) -> p4r.Update:
    return p4r.Update(type=kind, entity=entity)


INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def _ex1() -> p4r.TableEntry:
    return entry("ex", exact(1, b"\x01"), action=_action("set_b_counted", b"\x11"))


def _lpm10() -> p4r.TableEntry:
    return entry("lpm", lpm(1, b"\x0a\x00\x00\x00", 8), action=_action("set_c_metered", b"\x12"))


def _oneshot(b: bytes, *ports: tuple[int, int]) -> p4r.TableEntry:
    """A one-shot entry of `oneshot`: (port, weight) per action of the set."""
    te = entry("oneshot", exact(1, b))
    for port, weight in ports:
        te.action.action_profile_action_set.action_profile_actions.add(
            action=_action("set_port", port.to_bytes(2, "big")), weight=weight)
    return te


def _tern10() -> p4r.TableEntry:
    return entry("tern", ternary(1, b"\x10", b"\xf0"), exact(2, b"\x01"),
                 action=_action("set_port", b"\x03"), priority=10)


@cache
def baseline() -> tuple[p4r.Update, ...]:
    """The state every fuzz example starts from: some of every writable entity."""
    ex1 = _ex1()
    ex1.counter_data.packet_count, ex1.counter_data.byte_count = 3, 300
    lpm10 = _lpm10()
    lpm10.meter_config.CopyFrom(meter_config(100, 10, 200, 20))
    opt5 = entry("opt", optional(1, b"\x05"), action=_action("set_b", b"\x09"), priority=3)
    opt5.idle_timeout_ns = 10**12
    tern_default = p4r.TableEntry(table_id=ids()["tern"], is_default_action=True)
    tern_default.action.action.CopyFrom(_action("set_port", b"\x04"))
    digest = p4r.DigestEntry(digest_id=ids()["learn_t"])
    digest.config.max_timeout_ns, digest.config.max_list_size = 1_000_000, 4
    digest.config.ack_timeout_ns = 1_000_000_000
    value_set = p4r.ValueSetEntry(value_set_id=ids()["special"])
    value_set.members.add().match.append(exact(1, b"\x99"))
    counter = p4r.CounterEntry(counter_id=ids()["pkt_ctr"])
    counter.index.index, counter.data.packet_count, counter.data.byte_count = 3, 5, 500
    meter = p4r.MeterEntry(meter_id=ids()["pkt_meter"], config=meter_config(1000, 100, 2000, 200))
    meter.index.index = 1
    register = p4r.RegisterEntry(register_id=ids()["regs"])
    register.index.index = 2
    register.data.bitstring = b"\x42"
    return (
        update(INSERT, te_entity(ex1)),
        update(INSERT, te_entity(entry("ex", exact(1, b"\x02"), action=_action("punt")))),
        update(INSERT, te_entity(lpm10)),
        update(INSERT, te_entity(_tern10())),
        update(INSERT, te_entity(entry("rng", range_(1, b"\x01\x00", b"\x01\xff"),
                                       action=_action("set_b", b"\x07"), priority=5))),
        update(INSERT, te_entity(opt5)),
        update(MODIFY, te_entity(tern_default)),
        update(INSERT, te_entity(_oneshot(b"\x01", (1, 1), (2, 3)))),
        update(INSERT, member("prof", 1, _action("set_b", b"\x01"))),
        update(INSERT, member("prof", 2, _action("set_cd", b"\x02", b"\x03"))),
        update(INSERT, te_entity(entry("indirect", exact(1, b"\x01"), member=1))),
        update(INSERT, member("sel", 1, _action("set_port", b"\x02"))),
        update(INSERT, member("sel", 2, _action("set_port", b"\x03"))),
        update(INSERT, group("sel", 10, (1, 1), (2, 1))),
        update(INSERT, te_entity(entry("ecmp", exact(1, b"\x00\x01"), group=10))),
        update(MODIFY, p4r.Entity(counter_entry=counter)),
        update(MODIFY, p4r.Entity(meter_entry=meter)),
        update(MODIFY, p4r.Entity(register_entry=register)),
        update(INSERT, mcast(5, (1, 1), (2, 1))),
        update(INSERT, clone_session(7, (3, 0))),
        update(INSERT, p4r.Entity(digest_entry=digest)),
        update(MODIFY, p4r.Entity(value_set_entry=value_set)),
    )


@cache
def templates() -> tuple[p4r.Update, ...]:
    """Valid updates against the baseline: one or more of each kind of write."""
    ex3 = entry("ex", exact(1, b"\x03"), action=_action("set_b_counted", b"\x33"))
    ex3.counter_data.packet_count = 1
    lpm16 = entry("lpm", lpm(1, b"\x0a\x01\x00\x00", 16), action=_action("set_c_metered", b"\x01"))
    lpm16.meter_config.CopyFrom(meter_config(10, 1, 20, 2))
    tern_mod = _tern10()
    tern_mod.action.action.CopyFrom(_action("drop"))
    tern_default = p4r.TableEntry(table_id=ids()["tern"], is_default_action=True)
    tern_default.action.action.CopyFrom(_action("set_cd", b"\x01", b"\x02"))
    opt_idle = entry("opt", optional(1, b"\x05"), action=_action("NoAction"), priority=3)
    opt_idle.idle_timeout_ns = 5
    counter = p4r.CounterEntry(counter_id=ids()["pkt_ctr"])
    counter.index.index, counter.data.packet_count, counter.data.byte_count = 4, 1, 2
    meter = p4r.MeterEntry(meter_id=ids()["pkt_meter"], config=meter_config(5, 5, 6, 6))
    meter.index.index = 0
    register = p4r.RegisterEntry(register_id=ids()["regs"])
    register.index.index = 1
    register.data.bitstring = b"\x01\x02"
    direct_counter = p4r.DirectCounterEntry(table_entry=_ex1())
    direct_counter.data.packet_count, direct_counter.data.byte_count = 9, 90
    direct_counter.table_entry.ClearField("action")
    direct_meter = p4r.DirectMeterEntry(table_entry=_lpm10(), config=meter_config(7, 7, 8, 8))
    direct_meter.table_entry.ClearField("action")
    digest = p4r.DigestEntry(digest_id=ids()["learn_t"])
    digest.config.max_list_size = 1
    value_set = p4r.ValueSetEntry(value_set_id=ids()["special"])
    value_set.members.add().match.append(exact(1, b"\x98"))
    value_set.members.add().match.append(exact(1, b"\x97"))
    return (
        update(INSERT, te_entity(ex3)),
        update(MODIFY, te_entity(entry("ex", exact(1, b"\x01"), action=_action("punt")))),
        update(DELETE, te_entity(entry("ex", exact(1, b"\x02")))),
        update(INSERT, te_entity(lpm16)),
        update(MODIFY, te_entity(tern_mod)),
        update(INSERT, te_entity(entry("tern", ternary(1, b"\x20", b"\xf0"), exact(2, b"\x02"),
                                       action=_action("set_cd", b"\x01", b"\x02"),
                                       priority=20))),
        update(INSERT, te_entity(entry("rng", range_(1, b"\x00\x10", b"\x00\x20"),
                                       action=_action("set_b", b"\x01"), priority=1))),
        update(INSERT, te_entity(entry("opt", optional(2, b"\x07"), optional(1, b"\x08"),
                                       action=_action("NoAction"), priority=2))),
        update(MODIFY, te_entity(tern_default)),
        update(INSERT, te_entity(_oneshot(b"\x02", (3, 1)))),
        update(MODIFY, te_entity(_oneshot(b"\x01", (4, 1), (5, 2)))),
        update(DELETE, te_entity(_oneshot(b"\x01"))),
        update(MODIFY, te_entity(opt_idle)),
        update(INSERT, member("prof", 3, _action("set_b", b"\x03"))),
        update(MODIFY, member("prof", 2, _action("set_cd", b"\x04", b"\x05"))),
        update(INSERT, te_entity(entry("indirect", exact(1, b"\x02"), member=2))),
        update(INSERT, group("sel", 11, (1, 2))),
        update(MODIFY, group("sel", 10, (1, 3))),
        update(INSERT, te_entity(entry("ecmp", exact(1, b"\x00\x02"), group=10))),
        update(MODIFY, p4r.Entity(counter_entry=counter)),
        update(MODIFY, p4r.Entity(meter_entry=meter)),
        update(MODIFY, p4r.Entity(register_entry=register)),
        update(MODIFY, p4r.Entity(direct_counter_entry=direct_counter)),
        update(MODIFY, p4r.Entity(direct_meter_entry=direct_meter)),
        update(INSERT, mcast(6, (4, 1), (4, 2))),
        update(MODIFY, mcast(5, (1, 2))),
        update(DELETE, clone_session(7)),
        update(INSERT, clone_session(8, (5, 1))),
        update(MODIFY, p4r.Entity(digest_entry=digest)),
        update(MODIFY, p4r.Entity(value_set_entry=value_set)),
    )


def wildcard_reads() -> list[p4r.Entity]:
    """Entities whose Read returns the whole readable state of the device."""
    te = p4r.TableEntry()
    te.counter_data.SetInParent()
    te.meter_config.SetInParent()
    defaults = p4r.TableEntry(is_default_action=True)
    pre_mcast = p4r.Entity()
    pre_mcast.packet_replication_engine_entry.multicast_group_entry.SetInParent()
    pre_clone = p4r.Entity()
    pre_clone.packet_replication_engine_entry.clone_session_entry.SetInParent()
    return [
        p4r.Entity(table_entry=te),
        p4r.Entity(table_entry=defaults),
        p4r.Entity(action_profile_member=p4r.ActionProfileMember()),
        p4r.Entity(action_profile_group=p4r.ActionProfileGroup()),
        p4r.Entity(counter_entry=p4r.CounterEntry()),
        p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry()),
        p4r.Entity(meter_entry=p4r.MeterEntry()),
        p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry()),
        p4r.Entity(register_entry=p4r.RegisterEntry()),
        pre_mcast,
        pre_clone,
        p4r.Entity(digest_entry=p4r.DigestEntry()),
        p4r.Entity(value_set_entry=p4r.ValueSetEntry()),
    ]


# -- protobuf mutation ------------------------------------------------------------------------

_INT_EDGES = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 511, 512, 0xFFFF, 0x10000]
_CPP = FieldDescriptor


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    """Values for one scalar field: edge values, P4Info ids, anything of the type."""
    t = field.cpp_type
    if t == _CPP.CPPTYPE_BOOL:
        return st.booleans()
    if t == _CPP.CPPTYPE_STRING:
        if field.type == _CPP.TYPE_BYTES:
            return st.one_of(
                st.sampled_from([b"", b"\x00", b"\x00\x00\x01", b"\xff", b"\xff\xff",
                                 b"\x01" + b"\x00" * 4, b"\x00" * 40 + b"\x01",
                                 b"\xff" * 9, b"\x01" * 4096]),
                st.binary(max_size=12))
        return st.one_of(st.sampled_from(["", "x", "I.ex", "\x00", "é" * 3]), st.text(max_size=12))
    if t == _CPP.CPPTYPE_ENUM:
        return st.one_of(st.integers(-2, 8), st.integers(-2**31, 2**31 - 1))
    if t in (_CPP.CPPTYPE_FLOAT, _CPP.CPPTYPE_DOUBLE):
        return st.floats(allow_nan=True)
    bits = 64 if t in (_CPP.CPPTYPE_INT64, _CPP.CPPTYPE_UINT64) else 32
    signed = t in (_CPP.CPPTYPE_INT32, _CPP.CPPTYPE_INT64)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    edges = [v for v in [*_INT_EDGES, lo, hi, -1] if lo <= v <= hi]
    return st.one_of(st.sampled_from(edges), st.sampled_from(all_ids()), st.integers(lo, hi))


@dataclass
class _Slot:
    """One place a mutation can act: a field of a message present in the tree."""

    msg: Message
    field: FieldDescriptor


def _slots(msg: Message, depth: int = 0) -> list[_Slot]:
    out = []
    for field in msg.DESCRIPTOR.fields:
        out.append(_Slot(msg, field))
        if field.cpp_type != _CPP.CPPTYPE_MESSAGE or depth > 12:
            continue
        if _repeated(field):
            if field.message_type.GetOptions().map_entry:
                continue
            for item in getattr(msg, field.name):
                out.extend(_slots(item, depth + 1))
        elif msg.HasField(field.name):
            out.extend(_slots(getattr(msg, field.name), depth + 1))
    return out


def mutate(data: st.DataObject, msg: Message, max_mutations: int = 3) -> None:
    """Apply 1..max_mutations random mutations to `msg` in place."""
    for _ in range(data.draw(st.integers(1, max_mutations), label="mutations")):
        slots = _slots(msg)
        slot = data.draw(st.sampled_from(slots), label="slot")
        m, f = slot.msg, slot.field
        repeated = _repeated(f)
        if f.cpp_type == _CPP.CPPTYPE_MESSAGE:
            items = getattr(m, f.name)
            if repeated:
                if f.message_type.GetOptions().map_entry:
                    continue
                op = data.draw(st.sampled_from(["add", "drop", "dup", "clear", "swap"]))
                if op == "add" or not items:
                    items.add()
                elif op == "drop":
                    del items[data.draw(st.integers(0, len(items) - 1))]
                elif op == "dup":
                    items.add().CopyFrom(items[data.draw(st.integers(0, len(items) - 1))])
                elif op == "swap" and len(items) > 1:
                    first = type(items[0])()
                    first.CopyFrom(items[0])
                    items[0].CopyFrom(items[-1])
                    items[-1].CopyFrom(first)
                else:
                    m.ClearField(f.name)
            elif m.HasField(f.name) and data.draw(st.booleans()):
                m.ClearField(f.name)
            else:
                items.SetInParent()
        elif repeated:
            values = getattr(m, f.name)
            if values and data.draw(st.booleans()):
                del values[data.draw(st.integers(0, len(values) - 1))]
            else:
                values.append(data.draw(_scalar(f)))
        else:
            setattr(m, f.name, data.draw(_scalar(f), label=f.full_name))


def targeted(data: st.DataObject, up: p4r.Update) -> None:
    """Semantic mutations generic ones rarely hit: lo > hi, don't-care masks and prefixes."""
    if not up.entity.HasField("table_entry"):
        return
    for fm in up.entity.table_entry.match:
        kind = fm.WhichOneof("field_match_type")
        if kind == "range" and data.draw(st.booleans()):
            fm.range.low, fm.range.high = fm.range.high, fm.range.low
        elif kind == "ternary" and data.draw(st.booleans()):
            fm.ternary.mask = data.draw(st.sampled_from([b"\x00", b"\x01", b"", b"\xff\xff"]))
        elif kind == "lpm" and data.draw(st.booleans()):
            fm.lpm.prefix_len = data.draw(st.sampled_from([0, -1, 7, 9, 32, 33, 2**31 - 1]))


# -- the server under test --------------------------------------------------------------------

class ErrorLog(logging.Handler):
    """Collects ERROR records and exception traces logged by any thread."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.records.append(self.format(record))

    def check(self) -> None:
        records, self.records = self.records, []
        assert not records, "server logged errors:\n" + "\n".join(records)


class Stream(StreamClient):
    """The harness's stream client, plus the calls the fuzz tests need."""

    def get_any(self, timeout: float = TIMEOUT) -> p4r.StreamMessageResponse:
        return self.responses.get(timeout=timeout)

    def half_close(self) -> None:
        self._requests.put(None)

    def close(self) -> None:
        self._requests.put(None)
        self.call.cancel()
        assert self.done.wait(TIMEOUT), "stream did not end"


def arbitration(election_id: tuple[int, int] | None, device_id: int = DEVICE_ID,
                role: str | None = None) -> p4r.StreamMessageRequest:
    up = p4r.MasterArbitrationUpdate(device_id=device_id)
    if election_id is not None:
        up.election_id.high, up.election_id.low = election_id
    if role is not None:
        up.role.name = role
    return p4r.StreamMessageRequest(arbitration=up)


class Env:
    """Device + server + a primary client; `reset` restores the baseline state."""

    def __init__(self) -> None:
        self.outputs: queue.Queue[tuple[int, bytes]] = queue.Queue()
        self.device = Device(DEVICE_ID, cpu_port=CPU_PORT)
        self.device.set_output(lambda port, data: self.outputs.put((port, data)))
        self.device.start()
        self.server = P4RuntimeServer(self.device, "127.0.0.1:0")
        self.server.start()
        # As a controller's (p4rt.client.CHANNEL_OPTIONS): with gRPC's default metadata limit,
        # a failed batch's per-update errors past 8 KiB are dropped at random by the client
        # ("Stream removed": RESOURCE_EXHAUSTED), and the test would judge the server by an
        # answer it never gave.
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.server.port}",
                                             options=[("grpc.max_metadata_size", 4 << 20)])
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.primary = Stream(self.stub)
        self.primary.send(arbitration(ELECTION))
        assert self.primary.get("arbitration").arbitration.status.code == code_pb2.OK
        self.log = ErrorLog()
        logging.getLogger().addHandler(self.log)
        self.reset()

    def close(self) -> None:
        logging.getLogger().removeHandler(self.log)
        self.primary.close()
        self.channel.close()
        self.server.stop(0)
        self.device.stop()

    def set_pipeline(self, action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                     ) -> p4r.SetForwardingPipelineConfigRequest:
        p4info, ir = program()
        request = p4r.SetForwardingPipelineConfigRequest(device_id=DEVICE_ID, action=action)
        request.election_id.high, request.election_id.low = ELECTION
        request.config.p4info.CopyFrom(p4info)
        request.config.p4_device_config = ir
        request.config.cookie.cookie = 0xF0220
        return request

    def write_request(self, *updates: p4r.Update) -> p4r.WriteRequest:
        request = p4r.WriteRequest(device_id=DEVICE_ID, updates=updates)
        request.election_id.high, request.election_id.low = ELECTION
        return request

    def reset(self) -> None:
        self.stub.SetForwardingPipelineConfig(self.set_pipeline(), timeout=TIMEOUT)
        self.stub.Write(self.write_request(*baseline()), timeout=TIMEOUT)
        self._state: list[p4r.Entity] | None = None

    def read(self, *entities: p4r.Entity, device_id: int = DEVICE_ID) -> list[p4r.Entity]:
        request = p4r.ReadRequest(device_id=device_id, entities=entities)
        return [e for r in self.stub.Read(request, timeout=TIMEOUT) for e in r.entities]

    def state(self) -> list[p4r.Entity]:
        """The whole readable state (cached until the next `changed`)."""
        if self._state is None:
            self._state = self.read(*wildcard_reads())
        return self._state

    @contextmanager
    def example(self) -> Iterator[None]:
        """One fuzz example: a failing one leaves the baseline restored for the next."""
        self.state()
        try:
            yield
        except BaseException:
            self.reset()
            raise

    def assert_unchanged(self, what: object) -> None:
        before = self.state()
        after = self.read(*wildcard_reads())
        assert after == before, f"state changed by a failed request:\n{what}"

    def check_serves(self) -> None:
        """Capabilities answers; a packet and a packet-out are forwarded as the baseline says."""
        self.log.check()
        self.reset()
        assert self.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=TIMEOUT)
        while not self.outputs.empty():
            self.outputs.get_nowait()
        packet = bytes.fromhex("4040" "0000" "0b000000") + b"payload"
        self.device.receive(2, packet)      # misses everything: the tern default, port 4
        assert self.outputs.get(timeout=TIMEOUT) == (4, packet)
        out = p4r.PacketOut(payload=packet)
        out.metadata.add(metadata_id=1, value=b"\x06")
        self.primary.send(p4r.StreamMessageRequest(packet=out))
        assert self.outputs.get(timeout=TIMEOUT) == (6, packet)
        self.log.check()


def guarded(env: Env) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Run each example inside `env.example()`."""
    def wrap(fn: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> None:
            with env.example():
                fn(*args, **kwargs)
        return run
    return wrap


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    e = Env()
    yield e
    e.close()


# -- status checks ----------------------------------------------------------------------------

@dataclass
class Outcome:
    code: grpc.StatusCode
    message: str
    errors: list[p4r.Error]


def call(fn: Callable[..., Any], request: Any, *, streaming: bool = False) -> Outcome:
    """Run one RPC; the outcome must come within TIMEOUT."""
    try:
        result = fn(request, timeout=TIMEOUT)
        if streaming:
            list(result)
    except grpc.RpcError as error:
        assert error.code() != SC.DEADLINE_EXCEEDED, f"hang: {request}"
        return Outcome(error.code(), error.details() or "",
                       decode_details(error.trailing_metadata()))
    return Outcome(SC.OK, "", [])


def check_precise(outcome: Outcome, what: object) -> None:
    assert outcome.code in PRECISE | {SC.OK}, f"{outcome.code}: {outcome.message}\n{what}"


def check_write(outcome: Outcome, request: p4r.WriteRequest) -> bool:
    """Checks the status of a Write; True when the request may have changed the state."""
    if outcome.code == SC.OK:
        return True
    if outcome.code != SC.UNKNOWN:
        check_precise(outcome, request)
        return False
    assert len(outcome.errors) == len(request.updates), f"{outcome.message}\n{request}"
    codes = [e.canonical_code for e in outcome.errors]
    assert all(c == code_pb2.OK or c in PRECISE_NUMBERS for c in codes), \
        f"{[(e.canonical_code, e.message) for e in outcome.errors]}\n{request}"
    assert any(c != code_pb2.OK for c in codes)
    return any(c == code_pb2.OK for c in codes)


# -- Write ------------------------------------------------------------------------------------

def test_the_baseline_and_every_template_are_valid(env: Env) -> None:
    """Fuzzing starts from valid writes: each template alone succeeds on the baseline."""
    env.reset()
    assert len(env.state()) > 40
    for template in templates():
        before = env.state()
        outcome = call(env.stub.Write, env.write_request(template))
        assert outcome.code == SC.OK, f"{outcome.message} {outcome.errors}\n{template}"
        assert env.read(*wildcard_reads()) != before, template
        env.reset()


def _write_request(data: st.DataObject, env: Env) -> p4r.WriteRequest:
    updates = []
    for _ in range(data.draw(st.integers(1, 3), label="batch")):
        up = p4r.Update()
        up.CopyFrom(data.draw(st.sampled_from(templates()), label="template"))
        if data.draw(st.integers(0, 9)) < 8:
            if data.draw(st.booleans()):
                targeted(data, up)
            mutate(data, up)
        updates.append(up)
    request = env.write_request(*updates)
    if data.draw(st.integers(0, 9)) == 0:
        header = p4r.WriteRequest()
        header.CopyFrom(request)
        header.ClearField("updates")
        mutate(data, header, 2)
        header.updates.extend(request.updates)
        request = header
    return request


def test_malformed_writes_get_precise_statuses_and_change_nothing(env: Env) -> None:
    @fuzz(350)
    @given(data=st.data())
    @guarded(env)
    def run(data: st.DataObject) -> None:
        request = _write_request(data, env)
        outcome = call(env.stub.Write, request)
        if check_write(outcome, request):
            env.reset()
        else:
            env.assert_unchanged(request)
        env.log.check()

    run()
    env.check_serves()


def test_random_bytes_as_requests(env: Env) -> None:
    """Bytes that may not decode at all, sent as each unary RPC's request."""
    methods = ["Write", "Read", "SetForwardingPipelineConfig", "GetForwardingPipelineConfig",
               "Capabilities"]
    valid = env.write_request(*templates()[:3]).SerializeToString()

    @fuzz(120)
    @given(method=st.sampled_from(methods),
           payload=st.one_of(st.binary(max_size=64),
                             st.integers(0, len(valid)).map(lambda n: valid[:n]),
                             st.binary(max_size=8).map(lambda b: valid + b)))
    @guarded(env)
    def run(method: str, payload: bytes) -> None:
        fn = env.channel.unary_stream if method == "Read" else env.channel.unary_unary
        rpc = fn(f"/p4.v1.P4Runtime/{method}", request_serializer=lambda b: b,
                 response_deserializer=lambda b: b)
        outcome = call(rpc, payload, streaming=method == "Read")
        if method == "Write" and outcome.code in (SC.OK, SC.UNKNOWN):
            if outcome.code == SC.UNKNOWN:
                assert outcome.errors, outcome.message
            env.reset()
        elif method == "SetForwardingPipelineConfig" and outcome.code == SC.OK:
            env.reset()
        else:
            check_precise(outcome, payload)
            env.assert_unchanged(payload)
        env.log.check()

    run()
    env.check_serves()


def test_undecodable_requests_are_invalid_argument(env: Env) -> None:
    """Bytes that are no protobuf at all (an invalid wire type) are the client's error."""
    garbage = b"\xff\xff\xff"
    for method in ("Write", "SetForwardingPipelineConfig", "Capabilities"):
        rpc = env.channel.unary_unary(f"/p4.v1.P4Runtime/{method}",
                                      request_serializer=lambda b: b)
        outcome = call(rpc, garbage)
        assert outcome.code == SC.INVALID_ARGUMENT, (method, outcome)
        assert "Cannot parse the request" in outcome.message
    read = env.channel.unary_stream("/p4.v1.P4Runtime/Read", request_serializer=lambda b: b)
    assert call(read, garbage, streaming=True).code == SC.INVALID_ARGUMENT
    stream = env.channel.stream_stream("/p4.v1.P4Runtime/StreamChannel",
                                       request_serializer=lambda b: b)
    with pytest.raises(grpc.RpcError) as info:
        list(stream(iter([garbage]), timeout=TIMEOUT))
    assert info.value.code() == SC.INVALID_ARGUMENT
    env.log.check()


# -- Read -------------------------------------------------------------------------------------

def test_malformed_reads_get_precise_statuses_and_change_nothing(env: Env) -> None:
    shapes = [u.entity for u in templates()] + wildcard_reads()

    @fuzz(150)
    @given(data=st.data())
    @guarded(env)
    def run(data: st.DataObject) -> None:
        request = p4r.ReadRequest(device_id=DEVICE_ID)
        for _ in range(data.draw(st.integers(1, 3))):
            entity = request.entities.add()
            entity.CopyFrom(data.draw(st.sampled_from(shapes)))
        if data.draw(st.integers(0, 9)) < 9:
            mutate(data, request)
        outcome = call(env.stub.Read, request, streaming=True)
        check_precise(outcome, request)
        env.assert_unchanged(request)
        env.log.check()

    run()
    env.check_serves()


# -- SetForwardingPipelineConfig / GetForwardingPipelineConfig --------------------------------

def _ir_variants() -> st.SearchStrategy[bytes]:
    _, ir = program()
    return st.one_of(
        st.binary(max_size=64),
        st.integers(0, len(ir)).map(lambda n: ir[:n]),
        st.tuples(st.integers(0, len(ir) - 1), st.binary(min_size=1, max_size=4)).map(
            lambda t: ir[:t[0]] + t[1] + ir[t[0] + len(t[1]):]),
        st.sampled_from([b"{}", b"[]", b"null", b'{"version": 99}', b"\xff\xfe", ir + b"x"]),
    )


def exercise(env: Env) -> None:
    """Whatever config was accepted (a P4Info that may not fit the program) serves without an
    internal error: reads, every template write, packets in and out, digests."""
    check_precise(call(env.stub.Read, p4r.ReadRequest(device_id=DEVICE_ID,
                                                      entities=wildcard_reads()),
                       streaming=True), "read")
    for template in templates():
        request = env.write_request(template)
        check_write(call(env.stub.Write, request), request)
    out = p4r.PacketOut(payload=bytes.fromhex("d1000000" "00000000"))
    out.metadata.add(metadata_id=1, value=b"\x02")
    env.primary.send(p4r.StreamMessageRequest(packet=out))
    for port in (2, CPU_PORT):
        env.device.receive(port, bytes.fromhex("d1010000" "00000000"))
    env.device.receive(2, bytes.fromhex("0202"))
    env.primary.send(arbitration(ELECTION))       # answered after the packet-out's error, if any
    while True:
        response = env.primary.get_any()
        if response.WhichOneof("update") == "error":
            assert response.error.canonical_code in PRECISE_NUMBERS, response
        if response.WhichOneof("update") == "arbitration":
            break
    # the digest sweep still runs after the stream abuse and names its next wake-up
    assert 0.0005 <= env.server.service.tick_digests() <= 1.0


def _p4info_with_duplicate_param() -> p4i.P4Info:
    p4info = p4i.P4Info()
    p4info.CopyFrom(program()[0])
    action = next(a for a in p4info.actions if a.preamble.name == "I.set_b")
    action.params.add().CopyFrom(action.params[0])
    return p4info


def test_p4info_with_duplicate_or_dangling_ids_is_refused(env: Env) -> None:
    """Found by the fuzzer: such a P4Info was committed, then member writes crashed."""
    def refused(edit: Callable[[p4i.P4Info], None]) -> None:
        request = env.set_pipeline()
        edit(request.config.p4info)
        outcome = call(env.stub.SetForwardingPipelineConfig, request)
        assert outcome.code == SC.INVALID_ARGUMENT and "Invalid P4Info" in outcome.message
        env.assert_unchanged(request.config.p4info)

    env.reset()
    refused(lambda p: p.CopyFrom(_p4info_with_duplicate_param()))
    refused(lambda p: setattr(p.tables[0].preamble, "id", p.tables[1].preamble.id))
    refused(lambda p: p.tables[0].match_fields.add().CopyFrom(p.tables[0].match_fields[0]))
    refused(lambda p: p.tables[0].action_refs.add(id=12345))
    refused(lambda p: setattr(p.tables[0], "implementation_id", 0x11000001))
    refused(lambda p: p.controller_packet_metadata[0].metadata.add(id=1, name="x", bitwidth=1))
    refused(lambda p: setattr(p.tables[3].match_fields[0], "bitwidth", -1))
    refused(lambda p: setattr(p.actions[1].params[0], "bitwidth", -3))
    env.log.check()


def test_entity_store_with_duplicate_param_ids() -> None:
    """The store alone (no pipeline check) also refuses such an action cleanly."""
    from softswitch.runtime.server.entities import EntityStore, P4RuntimeWriteError
    pipeline = Device.build_pipeline(_p4info_with_duplicate_param(), program()[1])
    store = EntityStore(pipeline)
    with pytest.raises(P4RuntimeWriteError):
        store.write(update(INSERT, member("prof", 3, _action("set_b", b"\x03"))))


def test_entity_store_with_a_negative_bitwidth() -> None:
    from softswitch.runtime.server.entities import EntityStore, P4RuntimeWriteError
    p4info = p4i.P4Info()
    p4info.CopyFrom(program()[0])
    next(t for t in p4info.tables if t.preamble.name == "I.rng").match_fields[0].bitwidth = -1
    store = EntityStore(Device.build_pipeline(p4info, program()[1]))
    with pytest.raises(P4RuntimeWriteError):
        store.write(update(INSERT, te_entity(entry(
            "rng", range_(1, b"\x00\x10", b"\x00\x20"), action=_action("set_b", b"\x01"),
            priority=1))))


def test_entity_store_with_an_update_type_outside_the_enum() -> None:
    from softswitch.runtime.server.entities import EntityStore, P4RuntimeWriteError
    store = EntityStore(Device.build_pipeline(*program()))
    counter = p4r.CounterEntry(counter_id=ids()["pkt_ctr"])
    with pytest.raises(P4RuntimeWriteError):
        store.write(update(-1, p4r.Entity(counter_entry=counter)))


def test_garbage_pipeline_configs_are_rejected_cleanly(env: Env) -> None:
    @fuzz(90)
    @given(data=st.data())
    @guarded(env)
    def run(data: st.DataObject) -> None:
        action = data.draw(st.sampled_from(
            [p4r.SetForwardingPipelineConfigRequest.VERIFY,
             p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_SAVE,
             p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
             p4r.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT]))
        request = env.set_pipeline(action)
        garbage = data.draw(st.sampled_from(["p4info", "device_config", "both", "request"]))
        if garbage in ("p4info", "both"):
            mutate(data, request.config.p4info, 4)
        if garbage in ("device_config", "both"):
            request.config.p4_device_config = data.draw(_ir_variants())
        if garbage == "request":
            mutate(data, request, 2)
        outcome = call(env.stub.SetForwardingPipelineConfig, request)
        check_precise(outcome, request.action)
        if outcome.code == SC.OK and request.action != p4r.SetForwardingPipelineConfigRequest.VERIFY:
            exercise(env)
            env.reset()
        else:
            env.assert_unchanged(request.action)
        get = p4r.GetForwardingPipelineConfigRequest(device_id=DEVICE_ID)
        mutate(data, get, 2)
        check_precise(call(env.stub.GetForwardingPipelineConfig, get), get)
        env.log.check()

    run()
    env.check_serves()


# -- StreamChannel ----------------------------------------------------------------------------

def _stream_message(data: st.DataObject) -> p4r.StreamMessageRequest:
    kind = data.draw(st.sampled_from(["arbitration", "packet", "digest_ack", "other", "empty"]))
    if kind == "arbitration":
        election = data.draw(st.one_of(
            st.none(), st.sampled_from([(0, 0), (0, 1), (0, 2), (2**64 - 1, 2**64 - 1)]),
            st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))))
        message = arbitration(election, data.draw(st.sampled_from([DEVICE_ID, 0, 2**64 - 1])),
                              data.draw(st.sampled_from([None, "", "r1", "\x00"])))
    elif kind == "packet":
        out = p4r.PacketOut(payload=bytes.fromhex("4040000000000000"))
        out.metadata.add(metadata_id=1, value=b"\x05")
        message = p4r.StreamMessageRequest(packet=out)
    elif kind == "digest_ack":
        message = p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(
            digest_id=ids()["learn_t"], list_id=1))
    elif kind == "other":
        message = p4r.StreamMessageRequest()
        message.other.type_url = "type.googleapis.com/p4.v1.PacketOut"
    else:
        message = p4r.StreamMessageRequest()
    if data.draw(st.booleans()):
        mutate(data, message, 2)
    return message


def test_random_stream_sequences(env: Env) -> None:
    """Streams of arbitration, packet-outs and acks, valid or not, on a server of their own."""
    other = Env()   # election ids here can outrank any later client: keep `env` clean
    try:
        @fuzz(60)
        @given(data=st.data())
        @guarded(other)
        def run(data: st.DataObject) -> None:
            messages = [_stream_message(data) for _ in range(data.draw(st.integers(1, 6)))]
            raw = data.draw(st.one_of(st.none(), st.binary(max_size=32)))
            stream = Stream(other.stub)
            try:
                for message in messages:
                    stream.send(message)
                stream.half_close()
                stream.done.wait(1.0)
            finally:
                stream.close()
            while not stream.responses.empty():
                response = stream.responses.get_nowait()
                if response.WhichOneof("update") == "error":
                    assert response.error.canonical_code in PRECISE_NUMBERS, response
            if stream.error is not None and stream.error.code() != SC.CANCELLED:
                assert stream.error.code() in PRECISE, stream.error
            if raw is not None:
                rpc = other.channel.stream_stream("/p4.v1.P4Runtime/StreamChannel",
                                                  request_serializer=lambda b: b,
                                                  response_deserializer=lambda b: b)
                responses = rpc(iter([raw]), timeout=2.0)
                try:
                    for _ in responses:
                        pass
                except grpc.RpcError as error:
                    assert error.code() in PRECISE, error
            other.assert_unchanged(messages)
            other.log.check()

        run()
        assert other.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=TIMEOUT)
        other.log.check()
    finally:
        other.close()
    env.check_serves()


def test_packet_outs_and_acks_from_the_primary(env: Env) -> None:
    """Packet-outs with wrong metadata and acks for unknown lists, from the real primary."""
    @fuzz(80)
    @given(data=st.data())
    @guarded(env)
    def run(data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(["packet", "digest_ack"]))
        if kind == "packet":
            out = p4r.PacketOut(payload=data.draw(st.binary(max_size=24)))
            for _ in range(data.draw(st.integers(0, 3))):
                out.metadata.add(metadata_id=data.draw(st.sampled_from([0, 1, 2, 3, 2**32 - 1])),
                                 value=data.draw(_scalar(p4r.PacketMetadata.DESCRIPTOR
                                                         .fields_by_name["value"])))
            message = p4r.StreamMessageRequest(packet=out)
        else:
            message = p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(
                digest_id=data.draw(st.sampled_from([ids()["learn_t"], 0, 1, 2**32 - 1])),
                list_id=data.draw(st.integers(0, 2**64 - 1))))
        env.primary.send(message)
        # A ping that the stream is still being served: arbitration with the same id is
        # answered with an advisory, after any StreamError for the message before it.
        env.primary.send(arbitration(ELECTION))
        while True:
            response = env.primary.get_any()
            which = response.WhichOneof("update")
            if which == "error":
                assert response.error.canonical_code in PRECISE_NUMBERS, response
            if which == "arbitration":
                assert response.arbitration.status.code == code_pb2.OK
                break
        env.log.check()

    run()
    while not env.outputs.empty():
        env.outputs.get_nowait()
    env.check_serves()


def test_p4data_shapes_in_register_writes(env: Env) -> None:
    """Register data of every P4Data shape (structs, tuples, enums...), not just bitstrings."""
    kinds = [f.name for f in p4data_pb2.P4Data.DESCRIPTOR.fields]

    @fuzz(40)
    @given(data=st.data())
    @guarded(env)
    def run(data: st.DataObject) -> None:
        entry = p4r.RegisterEntry(register_id=ids()["regs"])
        entry.index.index = data.draw(st.sampled_from([0, 7, 8, -1, 2**63 - 1]))
        field = p4data_pb2.P4Data.DESCRIPTOR.fields_by_name[data.draw(st.sampled_from(kinds))]
        if field.cpp_type == _CPP.CPPTYPE_MESSAGE:
            getattr(entry.data, field.name).SetInParent()
            mutate(data, entry.data, 2)
        else:
            setattr(entry.data, field.name, data.draw(_scalar(field)))
        request = env.write_request(update(MODIFY, p4r.Entity(register_entry=entry)))
        if check_write(call(env.stub.Write, request), request):
            env.reset()
        else:
            env.assert_unchanged(request)
        env.log.check()

    run()
    env.check_serves()
