"""SetForwardingPipelineConfig refuses a P4Info that contradicts the program (p4info_match.py).

Each case starts from the P4Info softswitch generates for the program (what p4c writes), changes
one thing, and expects INVALID_ARGUMENT naming that thing, with the device left as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import grpc
import pytest
from finsy.proto import p4i, p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from inline_programs import ingress_program

from softswitch.compiler import compile_file
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).parents[2]
FUZZ = ROOT / "tests" / "p4" / "runtime" / "p4rt_fuzz.p4"   # every kind of object
CONST = ROOT / "tests" / "p4" / "const_entries.p4"          # const tables, a const default
FUNCS = ROOT / "tests" / "p4" / "functions_actions.p4"      # actions called from apply only
SRV6 = ROOT / "p4src" / "switch" / "srv6_switch.p4"

DEVICE_ID = 1
BASELINE_COOKIE = 0xBA5E
Action = p4r.SetForwardingPipelineConfigRequest
PREFIX = "P4Info does not match the program: "


@cache
def config(path: Path) -> tuple[p4i.P4Info, bytes]:
    """(generated P4Info, IR JSON) of a program, compiled once."""
    checked = compile_file(path)
    return build_p4info(checked), dumps_ir(checked).encode()


def request(path: Path, p4info: p4i.P4Info | None = None, *, cookie: int = 7,
            action: int = Action.VERIFY_AND_COMMIT) -> p4r.SetForwardingPipelineConfigRequest:
    generated, ir = config(path)
    req = p4r.SetForwardingPipelineConfigRequest(device_id=DEVICE_ID, action=action)
    req.config.p4info.CopyFrom(generated if p4info is None else p4info)
    req.config.p4_device_config = ir
    req.config.cookie.cookie = cookie
    return req


# -- a server with a committed baseline -------------------------------------------------------

@pytest.fixture(scope="module")
def device() -> Iterator[Device]:
    dev = Device(DEVICE_ID)
    yield dev


@pytest.fixture(scope="module")
def stub(device: Device) -> Iterator[p4runtime_pb2_grpc.P4RuntimeStub]:
    server = P4RuntimeServer(device, "127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield p4runtime_pb2_grpc.P4RuntimeStub(channel)
    channel.close()
    server.stop(0)


@pytest.fixture
def baseline(stub: p4runtime_pb2_grpc.P4RuntimeStub, device: Device) -> object:
    """The fuzz program committed with BASELINE_COOKIE; returns the device's pipeline."""
    stub.SetForwardingPipelineConfig(request(FUZZ, cookie=BASELINE_COOKIE))
    assert device.pipeline is not None
    return device.pipeline


def cookie(stub: p4runtime_pb2_grpc.P4RuntimeStub) -> int:
    reply = stub.GetForwardingPipelineConfig(p4r.GetForwardingPipelineConfigRequest(
        device_id=DEVICE_ID, response_type=p4r.GetForwardingPipelineConfigRequest.COOKIE_ONLY))
    return int(reply.config.cookie.cookie)


def refused(stub: p4runtime_pb2_grpc.P4RuntimeStub,
            req: p4r.SetForwardingPipelineConfigRequest) -> str:
    """The details of the INVALID_ARGUMENT the request must end with."""
    with pytest.raises(grpc.RpcError) as info:
        stub.SetForwardingPipelineConfig(req)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value.details()
    return str(info.value.details())


# -- P4Info editing helpers -------------------------------------------------------------------

def named(objects: Any, name: str) -> Any:
    """The one object (with a preamble) or field/param/metadata (without) called `name`."""
    found = [o for o in objects
             if (o.preamble.name if hasattr(o, "preamble") else o.name) == name]
    assert len(found) == 1, name
    return found[0]


def table(p: p4i.P4Info, name: str) -> p4i.Table:
    return named(p.tables, name)


def action(p: p4i.P4Info, name: str) -> p4i.Action:
    return named(p.actions, name)


def field(p: p4i.P4Info, t: str, name: str) -> p4i.MatchField:
    return named(table(p, t).match_fields, name)


def param(p: p4i.P4Info, a: str, name: str) -> p4i.Action.Param:
    return named(action(p, a).params, name)


def obj_id(p: p4i.P4Info, name: str) -> int:
    for f in p.DESCRIPTOR.fields:
        if f.message_type is not None and "preamble" in f.message_type.fields_by_name:
            for o in getattr(p, f.name):
                if o.preamble.name == name:
                    return int(o.preamble.id)
    raise KeyError(name)


def remove(items: Any, item: Any) -> None:
    items.remove(item)


def drop_ref(p: p4i.P4Info, t: str, a: str) -> None:
    refs = table(p, t).action_refs
    remove(refs, next(r for r in refs if r.id == obj_id(p, a)))


def remove_action(p: p4i.P4Info, name: str) -> None:
    aid = obj_id(p, name)
    for t in p.tables:
        for r in [r for r in t.action_refs if r.id == aid]:
            t.action_refs.remove(r)
    remove(p.actions, action(p, name))


def extra_table(p: p4i.P4Info) -> None:
    copy = p.tables.add()
    copy.CopyFrom(table(p, "I.rng"))
    copy.preamble.id, copy.preamble.name, copy.preamble.alias = 0x02FFFFFF, "I.rng2", "rng2"


def digest_port_width(p: p4i.P4Info) -> None:
    port = p.type_info.structs["learn_t"].members[1]
    port.type_spec.bitstring.bit.bitwidth = 10


def add_extern(p: p4i.P4Info) -> None:
    ext = p.externs.add(extern_type_id=0x81, extern_type_name="Checksum")
    ext.instances.add().preamble.name = "I.csum"


Edit = Callable[[p4i.P4Info], None]

# (program, edit, the expected message after PREFIX)
CASES: dict[str, tuple[Path, Edit, str]] = {
    "bitwidth 0": (
        FUZZ, lambda p: setattr(field(p, "I.ex", "hdr.h.a"), "bitwidth", 0),
        "table 'I.ex' match field 'hdr.h.a' has bitwidth 0, the program's is 8"),
    "bitwidth 2**31-1": (
        FUZZ, lambda p: setattr(field(p, "I.ex", "hdr.h.a"), "bitwidth", 2**31 - 1),
        "table 'I.ex' match field 'hdr.h.a' has bitwidth 2147483647, the program's is 8"),
    "another bitwidth": (
        FUZZ, lambda p: setattr(field(p, "I.lpm", "hdr.h.d"), "bitwidth", 31),
        "table 'I.lpm' match field 'hdr.h.d' has bitwidth 31, the program's is 32"),
    "match kind": (
        FUZZ, lambda p: setattr(field(p, "I.lpm", "hdr.h.d"), "match_type",
                                p4i.MatchField.TERNARY),
        "table 'I.lpm' match field 'hdr.h.d' has match type ternary, the program's is lpm"),
    "other match kind": (
        FUZZ, lambda p: setattr(field(p, "I.ex", "hdr.h.a"), "other_match_type", "exact2"),
        "table 'I.ex' match field 'hdr.h.a' has match type exact2, the program's is exact"),
    "renamed match field": (
        FUZZ, lambda p: setattr(field(p, "I.ex", "hdr.h.a"), "name", "hdr.h.x"),
        "table 'I.ex' has match field 'hdr.h.x' at position 1, the program's has 'hdr.h.a'"),
    "match fields swapped": (
        FUZZ, lambda p: table(p, "I.tern").match_fields.reverse(),
        "table 'I.tern' has match field 'hdr.h.b' at position 1, the program's has 'hdr.h.a'"),
    "missing match field": (
        FUZZ, lambda p: remove(table(p, "I.tern").match_fields, field(p, "I.tern", "hdr.h.b")),
        "table 'I.tern' lacks the program's match field 'hdr.h.b'"),
    "extra match field": (
        FUZZ, lambda p: table(p, "I.ex").match_fields.add(
            id=2, name="hdr.h.b", bitwidth=8, match_type=p4i.MatchField.EXACT),
        "table 'I.ex' has match field 'hdr.h.b', which the program's lacks"),
    "renamed action": (
        FUZZ, lambda p: setattr(action(p, "I.set_b").preamble, "name", "I.set_bx"),
        "action 'I.set_bx' is not in the program"),
    "missing action": (
        FUZZ, lambda p: remove_action(p, "I.punt"),
        "the program's action 'I.punt' is missing"),
    "action twice": (
        FUZZ, lambda p: setattr(action(p, "I.drop").preamble, "name", "I.punt"),
        "action 'I.punt' is listed twice"),
    "missing parameter": (
        FUZZ, lambda p: remove(action(p, "I.set_cd").params, param(p, "I.set_cd", "d")),
        "action 'I.set_cd' lacks the program's parameter 'd'"),
    "extra parameter": (
        FUZZ, lambda p: action(p, "I.set_b").params.add(id=2, name="w", bitwidth=8),
        "action 'I.set_b' has parameter 'w', which the program's lacks"),
    "renamed parameter": (
        FUZZ, lambda p: setattr(param(p, "I.set_port", "port"), "name", "prt"),
        "action 'I.set_port' has parameter 'prt' at position 1, the program's has 'port'"),
    "parameter bitwidth": (
        FUZZ, lambda p: setattr(param(p, "I.set_port", "port"), "bitwidth", 16),
        "action 'I.set_port' parameter 'port' has bitwidth 16, the program's is 9"),
    "size 0": (
        FUZZ, lambda p: setattr(table(p, "I.ex"), "size", 0),
        "table 'I.ex' has size 0, the program's is 16"),
    "size changed": (
        FUZZ, lambda p: setattr(table(p, "I.ex"), "size", 1 << 20),
        "table 'I.ex' has size 1048576, the program's is 16"),
    "missing table": (
        FUZZ, lambda p: remove(p.tables, table(p, "I.rng")),
        "the program's table 'I.rng' is missing"),
    "extra table": (
        FUZZ, extra_table,
        "table 'I.rng2' is not in the program"),
    "action ref removed": (
        FUZZ, lambda p: drop_ref(p, "I.tern", "I.drop"),
        "table 'I.tern' lacks the program's action 'I.drop'"),
    "action ref added": (
        FUZZ, lambda p: table(p, "I.tern").action_refs.add(id=obj_id(p, "I.set_b")),
        "table 'I.tern' refers to action 'I.set_b', which the program's table does not have"),
    "action ref scope": (
        FUZZ, lambda p: setattr(table(p, "I.tern").action_refs[1], "scope",
                                p4i.ActionRef.TABLE_ONLY),
        "table 'I.tern' action 'I.drop' has scope TABLE_ONLY, the program's is "
        "TABLE_AND_DEFAULT"),
    "const default action added": (
        FUZZ, lambda p: setattr(table(p, "I.tern"), "const_default_action_id",
                                obj_id(p, "I.set_port")),
        "table 'I.tern' has const default action 'I.set_port', the program's is none"),
    "implementation removed": (
        FUZZ, lambda p: setattr(table(p, "I.indirect"), "implementation_id", 0),
        "table 'I.indirect' has implementation none, the program's is 'I.prof'"),
    "implementation changed": (
        FUZZ, lambda p: setattr(table(p, "I.ecmp"), "implementation_id", obj_id(p, "I.prof")),
        "table 'I.ecmp' has implementation 'I.prof', the program's is 'I.sel'"),
    "direct resource removed": (
        FUZZ, lambda p: table(p, "I.ex").ClearField("direct_resource_ids"),
        "table 'I.ex' has direct resources [], the program's is ['I.ex_ctr']"),
    "idle timeout": (
        FUZZ, lambda p: setattr(table(p, "I.opt"), "idle_timeout_behavior",
                                p4i.Table.NO_TIMEOUT),
        "table 'I.opt' has idle_timeout_behavior NO_TIMEOUT, the program's is NOTIFY_CONTROL"),
    "const table": (
        FUZZ, lambda p: setattr(table(p, "I.ex"), "is_const_table", True),
        "table 'I.ex' has is_const_table true, the program's is false"),
    "profile size": (
        FUZZ, lambda p: setattr(named(p.action_profiles, "I.prof"), "size", 9),
        "action profile 'I.prof' has size 9, the program's is 8"),
    "profile selector": (
        FUZZ, lambda p: setattr(named(p.action_profiles, "I.prof"), "with_selector", True),
        "action profile 'I.prof' has with_selector true, the program's is false"),
    "profile max group size": (
        FUZZ, lambda p: setattr(named(p.action_profiles, "I.sel"), "max_group_size", 4),
        "action profile 'I.sel' has max_group_size 4, the program's is 0"),
    "profile tables": (
        FUZZ, lambda p: named(p.action_profiles, "I.prof").table_ids.append(
            obj_id(p, "I.ex")),
        "action profile 'I.prof' has tables ['I.ex', 'I.indirect'], the program's is "
        "['I.indirect']"),
    "renamed counter": (
        FUZZ, lambda p: setattr(named(p.counters, "I.pkt_ctr").preamble, "name", "I.pkt_ctr2"),
        "counter 'I.pkt_ctr2' is not in the program"),
    "counter unit": (
        FUZZ, lambda p: setattr(named(p.counters, "I.pkt_ctr").spec, "unit",
                                p4i.CounterSpec.PACKETS),
        "counter 'I.pkt_ctr' has unit PACKETS, the program's is BOTH"),
    "counter size": (
        FUZZ, lambda p: setattr(named(p.counters, "I.pkt_ctr"), "size", 0),
        "counter 'I.pkt_ctr' has size 0, the program's is 8"),
    "direct counter unit": (
        FUZZ, lambda p: setattr(named(p.direct_counters, "I.ex_ctr").spec, "unit",
                                p4i.CounterSpec.BYTES),
        "direct counter 'I.ex_ctr' has unit BYTES, the program's is BOTH"),
    "direct counter table": (
        FUZZ, lambda p: setattr(named(p.direct_counters, "I.ex_ctr"), "direct_table_id",
                                obj_id(p, "I.lpm")),
        "direct counter 'I.ex_ctr' has direct table 'I.lpm', the program's is 'I.ex'"),
    "meter unit": (
        FUZZ, lambda p: setattr(named(p.meters, "I.pkt_meter").spec, "unit",
                                p4i.MeterSpec.PACKETS),
        "meter 'I.pkt_meter' has unit PACKETS, the program's is BYTES"),
    "meter type": (
        FUZZ, lambda p: setattr(named(p.meters, "I.pkt_meter").spec, "type",
                                p4i.MeterSpec.SINGLE_RATE_TWO_COLOR),
        "meter 'I.pkt_meter' has type SINGLE_RATE_TWO_COLOR, the program's is "
        "TWO_RATE_THREE_COLOR"),
    "meter size": (
        FUZZ, lambda p: setattr(named(p.meters, "I.pkt_meter"), "size", 5),
        "meter 'I.pkt_meter' has size 5, the program's is 4"),
    "direct meter unit": (
        FUZZ, lambda p: setattr(named(p.direct_meters, "I.lpm_meter").spec, "unit",
                                p4i.MeterSpec.BYTES),
        "direct meter 'I.lpm_meter' has unit BYTES, the program's is PACKETS"),
    "register width": (
        FUZZ, lambda p: setattr(named(p.registers, "I.regs").type_spec.bitstring.bit,
                                "bitwidth", 8),
        "register 'I.regs' has type bit<8>, the program's is bit<16>"),
    "register size": (
        FUZZ, lambda p: setattr(named(p.registers, "I.regs"), "size", 2**31 - 1),
        "register 'I.regs' has size 2147483647, the program's is 8"),
    "digest type": (
        FUZZ, digest_port_width,
        "digest 'learn_t' has type struct learn_t {a: bit<8>, port: bit<10>}, the program's "
        "is struct learn_t {a: bit<8>, port: bit<9>}"),
    "renamed digest": (
        FUZZ, lambda p: setattr(named(p.digests, "learn_t").preamble, "name", "learn2_t"),
        "digest 'learn2_t' is not in the program"),
    "value set size": (
        FUZZ, lambda p: setattr(named(p.value_sets, "P.special"), "size", 0),
        "value set 'P.special' has size 0, the program's is 4"),
    "value set bitwidth": (
        FUZZ, lambda p: setattr(named(p.value_sets, "P.special").match[0], "bitwidth", 9),
        "value set 'P.special' match field #1 has bitwidth 9, the program's is 8"),
    "packet metadata bitwidth": (
        FUZZ, lambda p: setattr(named(p.controller_packet_metadata, "packet_out").metadata[0],
                                "bitwidth", 16),
        "controller header 'packet_out' metadata 'egress_port' has bitwidth 16, the "
        "program's is 9"),
    "packet metadata id": (
        FUZZ, lambda p: setattr(named(p.controller_packet_metadata, "packet_in").metadata[0],
                                "id", 3),
        "controller header 'packet_in' metadata 'ingress_port' has id 3, the program's is 1"),
    "missing packet metadata": (
        FUZZ, lambda p: named(p.controller_packet_metadata, "packet_in").metadata.pop(),
        "controller header 'packet_in' lacks the program's metadata 'pad'"),
    "extern": (
        FUZZ, add_extern,
        "Checksum extern 'I.csum' is not in the program"),
    "const default action changed": (
        CONST, lambda p: setattr(table(p, "I.pair"), "const_default_action_id",
                                 obj_id(p, "I.set_c")),
        "table 'I.pair' has const default action 'I.set_c', the program's is 'NoAction'"),
    "const default action removed": (
        CONST, lambda p: setattr(table(p, "I.pair"), "const_default_action_id", 0),
        "table 'I.pair' has const default action none, the program's is 'NoAction'"),
    "not a const table": (
        CONST, lambda p: setattr(table(p, "I.tern"), "is_const_table", False),
        "table 'I.tern' has is_const_table false, the program's is true"),
    "unknown extra action": (
        FUNCS, lambda p: p.actions.add().preamble.CopyFrom(
            p4i.Preamble(id=0x01000001, name="I.bumpy", alias="bumpy")),
        "action 'I.bumpy' is not in the program"),
    # p4c lists I.bump without its parameter; listed with it, it must be the declared one
    "apply-block action with a wrong parameter": (
        FUNCS, lambda p: action(p, "I.bump").params.add(id=1, name="amount", bitwidth=16),
        "action 'I.bump' parameter 'amount' has bitwidth 16, the program's is 8"),
    "apply-block action with a misnamed parameter": (
        FUNCS, lambda p: action(p, "I.bump").params.add(id=1, name="amt", bitwidth=8),
        "action 'I.bump' has parameter 'amt' at position 1, the program's has 'amount'"),
    "apply-block action with a parameter that is not one": (
        FUNCS, lambda p: action(p, "I.incr").params.add(id=1, name="x", bitwidth=8),
        "action 'I.incr' has parameter 'x', which the program's lacks"),
    "extra action with a wrong parameter": (
        FUNCS, lambda p: (remove_action(p, "I.bump"), add_action(p, "I.bump", ("amount", 16))),
        "action 'I.bump' parameter 'amount' has bitwidth 16, the program's is 8"),
}


def add_action(p: p4i.P4Info, name: str, *params: tuple[str, int]) -> None:
    """Add an action as p4c lists it (an id with the action prefix, params numbered from 1)."""
    new = p.actions.add()
    new.preamble.id = 0x01000000 + len(p.actions)
    new.preamble.name, new.preamble.alias = name, name.rsplit(".", 1)[-1]
    for i, (pname, width) in enumerate(params, start=1):
        new.params.add(id=i, name=pname, bitwidth=width)


@pytest.mark.parametrize("case", list(CASES))
def test_a_p4info_that_contradicts_the_program_is_refused(
        case: str, stub: p4runtime_pb2_grpc.P4RuntimeStub, device: Device,
        baseline: object) -> None:
    path, edit, expected = CASES[case]
    p4info = p4i.P4Info()
    p4info.CopyFrom(config(path)[0])
    edit(p4info)
    assert refused(stub, request(path, p4info)) == PREFIX + expected
    assert device.pipeline is baseline and cookie(stub) == BASELINE_COOKIE


@pytest.mark.parametrize("action", [Action.VERIFY, Action.VERIFY_AND_SAVE,
                                    Action.VERIFY_AND_COMMIT, Action.RECONCILE_AND_COMMIT],
                         ids=Action.Action.Name)
def test_every_action_that_builds_a_pipeline_checks(
        action: int, stub: p4runtime_pb2_grpc.P4RuntimeStub, device: Device,
        baseline: object) -> None:
    p4info = p4i.P4Info()
    p4info.CopyFrom(config(FUZZ)[0])
    field(p4info, "I.ex", "hdr.h.a").bitwidth = 2**31 - 1
    assert PREFIX + "table 'I.ex'" in refused(stub, request(FUZZ, p4info, action=action))
    # no saved pipeline either: Get would answer with its cookie
    assert device.pipeline is baseline and cookie(stub) == BASELINE_COOKIE
    with pytest.raises(grpc.RpcError) as info:
        stub.SetForwardingPipelineConfig(p4r.SetForwardingPipelineConfigRequest(
            device_id=DEVICE_ID, action=Action.COMMIT))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_refused_first_config_leaves_no_pipeline() -> None:
    dev = Device(DEVICE_ID)
    server = P4RuntimeServer(dev, "127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
            p4info = p4i.P4Info()
            p4info.CopyFrom(config(FUZZ)[0])
            table(p4info, "I.ex").size = 0
            assert "table 'I.ex' has size 0" in refused(stub, request(FUZZ, p4info))
            assert dev.pipeline is None
            with pytest.raises(grpc.RpcError) as info:
                cookie(stub)
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        server.stop(0)


@pytest.mark.parametrize("path", [FUZZ, CONST, FUNCS, SRV6], ids=lambda p: p.name)
def test_the_generated_p4info_is_accepted(path: Path, stub: p4runtime_pb2_grpc.P4RuntimeStub,
                                          device: Device) -> None:
    stub.SetForwardingPipelineConfig(request(path, cookie=0x600D))
    assert cookie(stub) == 0x600D and device.pipeline is not None


def test_ids_are_the_clients_own(stub: p4runtime_pb2_grpc.P4RuntimeStub,
                                 device: Device) -> None:
    """References are compared by name: renumbering every object consistently is fine."""
    p4info = p4i.P4Info()
    p4info.CopyFrom(config(FUZZ)[0])
    renumber = {}
    for f in p4info.DESCRIPTOR.fields:
        if f.message_type is not None and "preamble" in f.message_type.fields_by_name:
            for o in getattr(p4info, f.name):
                renumber[o.preamble.id] = o.preamble.id + 1
                o.preamble.id += 1
    for t in p4info.tables:
        for r in t.action_refs:
            r.id = renumber[r.id]
        t.initial_default_action.action_id = renumber[t.initial_default_action.action_id]
        t.implementation_id = renumber.get(t.implementation_id, 0)
        t.direct_resource_ids[:] = [renumber[i] for i in t.direct_resource_ids]
    for ap in p4info.action_profiles:
        ap.table_ids[:] = [renumber[i] for i in ap.table_ids]
    for d in (*p4info.direct_counters, *p4info.direct_meters):
        d.direct_table_id = renumber[d.direct_table_id]
    stub.SetForwardingPipelineConfig(request(FUZZ, p4info, cookie=0x1D5))
    assert cookie(stub) == 0x1D5


def test_annotations_and_documentation_are_ignored(stub: p4runtime_pb2_grpc.P4RuntimeStub,
                                                   ) -> None:
    p4info = p4i.P4Info()
    p4info.CopyFrom(config(FUZZ)[0])
    table(p4info, "I.ex").preamble.annotations.append("@my_note")
    action(p4info, "I.set_b").preamble.doc.brief = "sets b"
    field(p4info, "I.tern", "hdr.h.a").annotations.append("@x")
    p4info.pkg_info.name = "renamed"
    stub.SetForwardingPipelineConfig(request(FUZZ, p4info, cookie=0xA))
    assert cookie(stub) == 0xA


def test_actions_no_table_uses_are_compared_leniently(
        stub: p4runtime_pb2_grpc.P4RuntimeStub) -> None:
    """The actions called from apply blocks, I.bump(bit<8> amount) and I.incr(inout bit<8> x),
    are listed as p4c lists them, without parameters (bound at the call); a P4Info without them,
    or with their declared parameters (other generators), is accepted too."""
    p4info = p4i.P4Info()
    p4info.CopyFrom(config(FUNCS)[0])
    assert [(a.preamble.name, [p.name for p in a.params]) for a in p4info.actions] == [
        ("I.bump", []), ("I.incr", [])]
    stub.SetForwardingPipelineConfig(request(FUNCS, p4info, cookie=0xEFF))
    assert cookie(stub) == 0xEFF
    del p4info.actions[:]
    stub.SetForwardingPipelineConfig(request(FUNCS, p4info, cookie=0xF00))
    assert cookie(stub) == 0xF00
    add_action(p4info, "I.bump", ("amount", 8))
    add_action(p4info, "I.incr")
    stub.SetForwardingPipelineConfig(request(FUNCS, p4info, cookie=0xF01))
    assert cookie(stub) == 0xF01


PRELUDE = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }
"""


def test_a_top_level_action_is_named_as_p4c_localizes_it(
        tmp_path: Path, stub: p4runtime_pb2_grpc.P4RuntimeStub) -> None:
    """A top-level action with a relative @name, called from ingress: p4c lists it as I.tl."""
    source = ingress_program(
        PRELUDE, "top_level(hdr.h, 8w3); t.apply();",
        decls="action set_b(bit<8> v) { hdr.h.b = v; }\n"
              "table t { key = { hdr.h.a: exact; } actions = { set_b; } }",
        top='@name("tl") action top_level(inout h_t h, bit<8> v) { h.a = v; }')
    path = tmp_path / "prog.p4"
    path.write_text(source)
    p4info = p4i.P4Info()
    p4info.CopyFrom(config(path)[0])
    assert [a.preamble.name for a in p4info.actions] == ["NoAction", "I.tl", "I.set_b"]
    stub.SetForwardingPipelineConfig(request(path, p4info, cookie=0x7))
    assert cookie(stub) == 0x7
    action(p4info, "I.tl").params.add(id=1, name="v", bitwidth=7)  # p4c lists it without
    assert refused(stub, request(path, p4info)) == (
        PREFIX + "action 'I.tl' parameter 'v' has bitwidth 7, the program's is 8")
