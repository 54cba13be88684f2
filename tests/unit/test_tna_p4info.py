"""P4Info of TNA programs as bf-p4c writes it with --p4runtime-force-std-externs: names without
the pipe prefix, ids hashed from the pipe-prefixed names, the standard extern messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2

from softswitch.compiler import compile_file
from softswitch.errors import P4Error
from softswitch.p4info import Prefix, build_p4info, hashed_id, read_p4info, write_p4info

TESTS = Path(__file__).resolve().parent.parent
MINIMAL = TESTS / "p4" / "tna_minimal.p4"

HEAD = """
#include <core.p4>
#include <tna.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { eth_t eth; }
struct md_t { bit<16> h; bit<32> r; }
struct port_md_t { bit<8> role; bit<56> pad; }
struct learn_t { bit<48> src; bit<9> port; }
parser IP(packet_in pkt, out headers_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    @PLOCALS@
    state start {
        pkt.extract(ig_intr_md);
        @PMD@
        pkt.extract(hdr.eth);
        transition accept;
    }
}
control I(inout headers_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t prsr,
          inout ingress_intrinsic_metadata_for_deparser_t dprsr,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    @ILOCALS@
    apply { @IBODY@ }
}
control ID(packet_out pkt, inout headers_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dprsr) {
    @DLOCALS@
    apply { @DBODY@ pkt.emit(hdr); }
}
parser EP(packet_in pkt, out headers_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control E(inout headers_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md) { apply { } }
control ED(packet_out pkt, inout headers_t hdr, in md_t md) { apply { pkt.emit(hdr); } }
@MAIN@
"""


def p4info_of(
    tmp_path: Path,
    locals_: str = "",
    body: str = "",
    *,
    main: str = "Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;\nSwitch(pipe) main;",
    deparser_locals: str = "",
    deparser_body: str = "",
    parser_locals: str = "",
    port_metadata: str = "pkt.advance(PORT_METADATA_SIZE);",
) -> p4info_pb2.P4Info:
    text = HEAD
    for mark, value in (
        ("@PLOCALS@", parser_locals),
        ("@PMD@", port_metadata),
        ("@DLOCALS@", deparser_locals),
        ("@DBODY@", deparser_body),
        ("@ILOCALS@", locals_),
        ("@IBODY@", body),
        ("@MAIN@", main),
    ):
        text = text.replace(mark, value)
    path = tmp_path / "prog.p4"
    path.write_text(text)
    return build_p4info(compile_file(path))


def by_name(items, name: str):  # type: ignore[no-untyped-def]
    found = [i for i in items if i.preamble.name == name]
    assert found, f"{name} not in {[i.preamble.name for i in items]}"
    return found[0]


def test_minimal_program_p4info() -> None:
    p4info = build_p4info(compile_file(MINIMAL))
    assert p4info.pkg_info.arch == "tna"
    table = by_name(p4info.tables, "SwitchIngress.fwd")
    assert table.preamble.id == hashed_id(Prefix.TABLE, "pipe.SwitchIngress.fwd")
    assert table.preamble.alias == "fwd"
    assert [mf.name for mf in table.match_fields] == ["hdr.ethernet.dst"]
    forward = by_name(p4info.actions, "SwitchIngress.forward")
    assert forward.preamble.id == hashed_id(Prefix.ACTION, "SwitchIngress.forward")  # no prefix
    assert [(p.name, p.bitwidth) for p in forward.params] == [("port", 9)]
    register = by_name(p4info.registers, "SwitchIngress.packets")
    assert register.preamble.id == hashed_id(Prefix.REGISTER, "pipe.SwitchIngress.packets")
    assert register.size == 512
    assert register.type_spec.bitstring.bit.bitwidth == 32
    assert not register.HasField("index_type_name")
    # the RegisterAction is no P4Info object; no v1model-only kinds appear
    assert len(p4info.registers) == 1
    assert not p4info.counters and not p4info.digests and not p4info.action_profiles


def test_port_metadata_extern_stays(tmp_path: Path) -> None:
    p4info = p4info_of(tmp_path)
    assert [(e.extern_type_id, e.extern_type_name) for e in p4info.externs] == [
        (0x90, "PortMetadata")
    ]
    inst = p4info.externs[0].instances[0]
    assert inst.preamble.name == "IP.$PORT_METADATA"
    assert inst.preamble.alias == "$PORT_METADATA"
    assert inst.preamble.id == hashed_id(0x90, "pipe.IP.$PORT_METADATA")  # type: ignore[arg-type]
    assert inst.info.type_url == "type.googleapis.com/barefoot.PortMetadata"
    assert inst.info.value == b"ig_intr_md.ingress_port"
    assert "port_md_t" not in p4info.type_info.structs
    unpacked = p4info_of(
        tmp_path, port_metadata="port_md_t pm = port_metadata_unpack<port_md_t>(pkt);"
    )
    assert "port_md_t" in unpacked.type_info.structs  # bf-p4c converted T into type_info


def test_inline_pipeline_hashes_with_pipe0(tmp_path: Path) -> None:
    locals_ = "table t { key = { hdr.eth.dst : exact; } actions = { NoAction; } }"
    p4info = p4info_of(
        tmp_path,
        locals_,
        "t.apply();",
        main="Switch(Pipeline(IP(), I(), ID(), EP(), E(), ED())) main;",
    )
    table = by_name(p4info.tables, "I.t")
    assert table.preamble.id == hashed_id(Prefix.TABLE, "pipe0.I.t")


COUNTERS = """
    Counter<bit<32>, bit<9>>(512, CounterType_t.PACKETS_AND_BYTES) port_stats;
    Counter<bit<64>, bit<8>>(16, CounterType_t.BYTES) byte_stats;
    Meter<bit<9>>(512, MeterType_t.BYTES) port_meter;
    DirectCounter<bit<32>>(CounterType_t.PACKETS) fwd_counter;
    DirectMeter(MeterType_t.PACKETS) fwd_meter;
    DirectRegister<bit<32>>() fwd_last;
    action fwd(PortId_t port) { tm.ucast_egress_port = port; fwd_counter.count(); }
    table t {
        key = { hdr.eth.dst : exact; }
        actions = { fwd; }
        counters = fwd_counter;
        meters = fwd_meter;
        registers = fwd_last;
        idle_timeout = true;
        size = 256;
    }
"""


def test_counters_meters_and_direct_resources(tmp_path: Path) -> None:
    p4info = p4info_of(tmp_path, COUNTERS, "t.apply(); port_stats.count(ig_intr_md.ingress_port);")
    stats = by_name(p4info.counters, "I.port_stats")
    assert (stats.spec.unit, stats.size) == (p4info_pb2.CounterSpec.BOTH, 512)
    assert stats.preamble.id == hashed_id(Prefix.COUNTER, "pipe.I.port_stats")
    assert by_name(p4info.counters, "I.byte_stats").spec.unit == p4info_pb2.CounterSpec.BYTES
    meter = by_name(p4info.meters, "I.port_meter")
    assert (meter.spec.unit, meter.size) == (p4info_pb2.MeterSpec.BYTES, 512)
    table = by_name(p4info.tables, "I.t")
    dc = by_name(p4info.direct_counters, "I.fwd_counter")
    dm = by_name(p4info.direct_meters, "I.fwd_meter")
    assert dc.spec.unit == p4info_pb2.CounterSpec.PACKETS
    assert dm.spec.unit == p4info_pb2.MeterSpec.PACKETS
    assert dc.direct_table_id == dm.direct_table_id == table.preamble.id
    # the DirectRegister has no standard message: bf-p4c drops it from the direct resources
    assert list(table.direct_resource_ids) == [dc.preamble.id, dm.preamble.id]
    assert table.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL
    assert table.size == 256
    assert not p4info.registers


def test_digest_instances(tmp_path: Path) -> None:
    deparser_locals = """
    Digest<learn_t>() learn;
    @name(".mac_learn") Digest<learn_t>() named;
    Digest<md_t>() never_packed;
"""
    body = """
        if (dprsr.digest_type == 1) { learn.pack({hdr.eth.src, 0}); }
        if (dprsr.digest_type == 2) { named.pack({hdr.eth.src, 1}); }
"""
    p4info = p4info_of(tmp_path, deparser_locals=deparser_locals, deparser_body=body)
    assert [d.preamble.name for d in p4info.digests] == ["ID.learn", "mac_learn"]
    learn = p4info.digests[0]
    assert learn.preamble.id == hashed_id(Prefix.DIGEST, "pipe.ID.learn")
    assert learn.type_spec.struct.name == "learn_t"
    assert p4info.digests[1].preamble.id == hashed_id(Prefix.DIGEST, "pipe.mac_learn")


def test_action_selectors(tmp_path: Path) -> None:
    locals_ = """
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h1;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h2;
    ActionSelector(256, h1, SelectorMode_t.FAIR) ecmp;
    ActionProfile(1024) members;
    ActionSelector(members, h2, SelectorMode_t.RESILIENT, 64, 32) wcmp;
    action fwd(PortId_t port) { tm.ucast_egress_port = port; }
    table a { key = { hdr.eth.dst : exact; md.h : selector; } actions = { fwd; } implementation = ecmp; }
    table b { key = { hdr.eth.src : exact; md.h : selector; } actions = { fwd; } implementation = wcmp; }
    table c { key = { hdr.eth.ether_type : exact; } actions = { fwd; } implementation = members; }
"""
    body = "a.apply(); if (hdr.eth.ether_type == 1) { b.apply(); } else { c.apply(); }"
    p4info = p4info_of(tmp_path, locals_, body)
    assert [p.preamble.name for p in p4info.action_profiles] == ["I.ecmp", "I.members"]
    ecmp, members = p4info.action_profiles
    assert (ecmp.with_selector, ecmp.size, ecmp.max_group_size) == (True, 256, 120)
    assert ecmp.preamble.id == hashed_id(Prefix.ACTION_PROFILE, "pipe.I.ecmp")
    assert (members.with_selector, members.size, members.max_group_size) == (True, 1024, 64)
    tables = {t.preamble.name: t for t in p4info.tables}
    assert tables["I.a"].implementation_id == ecmp.preamble.id
    assert tables["I.b"].implementation_id == members.preamble.id
    assert tables["I.c"].implementation_id == members.preamble.id
    assert list(ecmp.table_ids) == [tables["I.a"].preamble.id]
    assert sorted(members.table_ids) == sorted(
        [tables["I.b"].preamble.id, tables["I.c"].preamble.id]
    )
    assert [m.name for m in tables["I.a"].match_fields] == ["hdr.eth.dst"]  # selector key out


def test_value_sets_keep_preamble_and_size(tmp_path: Path) -> None:
    parser_locals = "value_set<bit<16>>(8) ether_types;"
    p4info = p4info_of(
        tmp_path,
        parser_locals=parser_locals,
        port_metadata="""
        pkt.advance(PORT_METADATA_SIZE);
        transition select(pkt.lookahead<eth_t>().ether_type) {
            ether_types: accept_eth;
            default: accept_eth;
        }
    }
    state accept_eth {""",
    )
    vs = by_name(p4info.value_sets, "IP.ether_types")
    assert vs.size == 8
    assert not vs.match
    assert vs.preamble.id == hashed_id(Prefix.VALUE_SET, "pipe.IP.ether_types")


def test_no_p4info_objects_for_tofino_only_externs(tmp_path: Path) -> None:
    locals_ = """
    Register<bit<16>, bit<8>>(256) reg;
    RegisterAction<bit<16>, bit<8>, bit<16>>(reg) ra = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; v = v + 1; }
    };
    Hash<bit<16>>(HashAlgorithm_t.CRC32) hash;
    Random<bit<8>>() rnd;
"""
    body = "md.h = hash.get(hdr.eth.src); md.h = ra.execute(rnd.get());"
    p4info = p4info_of(tmp_path, locals_, body)
    names = [
        o.preamble.name
        for kind in (
            p4info.registers,
            p4info.counters,
            p4info.meters,
            p4info.digests,
            p4info.action_profiles,
        )
        for o in kind
    ]
    assert names == ["I.reg"]


def test_write_and_read_back(tmp_path: Path) -> None:
    p4info = build_p4info(compile_file(MINIMAL))
    for suffix in (".txt", ".bin", ".json"):
        path = tmp_path / f"p4info{suffix}"
        write_p4info(p4info, path)
        assert read_p4info(path) == p4info


def test_two_pack_calls_of_one_digest_are_refused(tmp_path: Path) -> None:
    body = """
        if (dprsr.digest_type == 1) { learn.pack({hdr.eth.src, 0}); }
        if (dprsr.digest_type == 2) { learn.pack({hdr.eth.dst, 1}); }
"""
    with pytest.raises(P4Error) as info:
        p4info_of(tmp_path, deparser_locals="Digest<learn_t>() learn;", deparser_body=body)
    assert "Expected single call to pack for digest instance 'learn'" in str(info.value)
