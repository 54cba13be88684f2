"""The TNA engine where STF cannot look: counters' and meters' byte counts and colours, direct
resources, digests, copy to CPU, port metadata, Random, queue depths in cells seen by egress
through the Device's queues, and P4Runtime over a TNA program (clone sessions as truncating
mirror sessions, struct register cells, digests by instance name)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from finsy.proto import p4r

from softswitch.compiler import compile_file
from softswitch.engine.hashes import crc16
from softswitch.engine.switch import Switch
from softswitch.engine.tables import ExactMatch
from softswitch.engine.tna_externs import (
    ParserChecksum,
    ParserCounterState,
    TnaHash,
    csum_update,
)
from softswitch.engine.tna_pipeline import TnaJob
from softswitch.ir.checked import CheckedProgram
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device
from softswitch.runtime.server import bytestrings
from softswitch.runtime.server.entities import EntityStore

P4_DIR = Path(__file__).resolve().parents[1] / "p4"

# h: port qid op color | enq(4) deq(4) delta(4) | eqid ecos | rnd(2) pm(2) = 22 bytes. Ingress
# forwards by `fwd` (h.port), sets qid and ingress_cos 5; op 1 digests, op 2 copies to the CPU,
# op 3/4 run indexed meters; egress writes its queue signals into h. A one-byte bridged
# header goes from the ingress deparser to the egress parser.
TNA_UNIT = """
#include <core.p4>
#include <tna.p4>
header bridge_t { bit<8> b; }
header h_t {
    bit<8> port; bit<8> qid; bit<8> op; bit<8> color;
    bit<32> enq; bit<32> deq; bit<32> delta;
    bit<8> eqid; bit<8> ecos; bit<16> rnd; bit<16> pm;
}
struct headers_t { bridge_t bridge; h_t h; }
struct port_md_t { bit<16> a; bit<48> rest; }
struct ig_md_t { port_md_t pm; }
struct eg_md_t { bridge_t bridge; }
struct learn_t { bit<8> port; bit<8> qid; }
parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        md.pm = port_metadata_unpack<port_md_t>(pkt);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Ig(inout headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<64>, bit<8>>(4, CounterType_t.PACKETS_AND_BYTES) ig_count;
    Meter<bit<8>>(4, MeterType_t.PACKETS) m;
    Meter<bit<8>>(4, MeterType_t.PACKETS, 8w30, 8w20, 8w10) mc;
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) dc;
    DirectMeter(MeterType_t.PACKETS) dm;
    Random<bit<16>>() rnd;
    action counted(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        dc.count();
        hdr.h.color = dm.execute();
    }
    action uncounted(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }
    table fwd {
        key = { hdr.h.port : exact; }
        actions = { counted; uncounted; }
        counters = dc;
        meters = dm;
        size = 16;
    }
    apply {
        fwd.apply();
        hdr.bridge.setValid();
        ig_tm_md.qid = (QueueId_t)hdr.h.qid;
        ig_tm_md.ingress_cos = 5;
        if (hdr.h.op == 1) { ig_dprsr_md.digest_type = 1; }
        if (hdr.h.op == 2) { ig_tm_md.copy_to_cpu = 1; }
        if (hdr.h.op == 3) { hdr.h.color = m.execute(0); }
        if (hdr.h.op == 4) { hdr.h.color = mc.execute(1); }
        hdr.h.rnd = rnd.get();
        hdr.h.pm = md.pm.a;
        ig_count.count(0);
    }
}
control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Digest<learn_t>() learn;
    apply {
        if (ig_dprsr_md.digest_type == 1) {
            learn.pack({hdr.h.port, hdr.h.qid});
        }
        pkt.emit(hdr);
    }
}
parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(md.bridge);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Eg(inout headers_t hdr, inout eg_md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    Counter<bit<64>, bit<8>>(4, CounterType_t.PACKETS_AND_BYTES) eg_count;
    apply {
        hdr.h.enq = (bit<32>)eg_intr_md.enq_qdepth;
        hdr.h.deq = (bit<32>)eg_intr_md.deq_qdepth;
        hdr.h.delta = (bit<32>)eg_intr_md.deq_timedelta;
        hdr.h.eqid = (bit<8>)eg_intr_md.egress_qid;
        hdr.h.ecos = (bit<8>)eg_intr_md.egress_cos;
        eg_count.count(0);
    }
}
control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md) {
    apply { pkt.emit(hdr.h); }
}
Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
"""

H_BYTES = 22


def h(port: int, qid: int = 0, op: int = 0, payload: bytes = b"") -> bytes:
    return bytes([port, qid, op]) + bytes(H_BYTES - 3) + payload


def fields(data: bytes) -> dict[str, int]:
    i = int.from_bytes
    return {
        "port": data[0],
        "color": data[3],
        "enq": i(data[4:8], "big"),
        "deq": i(data[8:12], "big"),
        "delta": i(data[12:16], "big"),
        "eqid": data[16],
        "ecos": data[17],
        "rnd": i(data[18:20], "big"),
        "pm": i(data[20:22], "big"),
    }


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    path = Path(tmp_path_factory.mktemp("p4")) / "tna_unit.p4"
    path.write_text(TNA_UNIT)
    return compile_file(path)


def switch(program: CheckedProgram) -> Switch:
    sw = Switch(program)
    fwd = sw.table("fwd")
    fwd.add_entry([ExactMatch(1)], "counted", [1])
    fwd.add_entry([ExactMatch(2)], "uncounted", [2])
    return sw


def handle(sw: Switch, port: int) -> int:
    entry = sw.table("fwd").find_entry([ExactMatch(port)])
    assert entry is not None
    return entry.handle


def test_counters_count_the_fcs_and_egress_counts_what_ingress_emitted(
    program: CheckedProgram,
) -> None:
    sw = switch(program)
    data = h(1, payload=bytes(10))  # 32 bytes
    out = sw.process_packet(0, data)
    assert [p for p, _ in out] == [1]
    # ingress: the packet as received + 4 FCS bytes; egress: bridged byte + packet + FCS
    assert sw.counter("Ig.ig_count").read(0) == (1, 36)
    assert sw.counter("Eg.eg_count").read(0) == (1, 37)
    assert sw.pipeline.internal_errors == 0


def test_direct_counter_counts_only_when_the_action_calls_count(program: CheckedProgram) -> None:
    sw = switch(program)
    counted, uncounted = handle(sw, 1), handle(sw, 2)
    sw.process_packet(0, h(1))
    sw.process_packet(0, h(1))
    sw.process_packet(0, h(2))
    dc = sw.direct_counter("dc")
    assert dc.read(counted) == (2, 2 * (H_BYTES + 4))
    assert dc.read(uncounted) == (0, 0)  # BMv2 would count every hit of the table


def test_meters_return_tna_colours_and_the_constructor_colour_values(
    program: CheckedProgram,
) -> None:
    sw = switch(program)
    sw.set_clock(lambda: 0)  # no tokens come back between packets
    unconfigured = [fields(sw.process_packet(0, h(1, op=3))[0][1])["color"]]
    assert unconfigured == [0]  # GREEN
    sw.meter("m").meter(0).set_rates_per_us(1e-9, 1, 1e-9, 1)
    colors = [fields(sw.process_packet(0, h(1, op=3))[0][1])["color"] for _ in range(2)]
    assert colors == [0, 3]  # GREEN, then RED = 3 (not BMv2's 2)
    sw.meter("mc").meter(1).set_rates_per_us(1e-9, 1, 1e-9, 1)
    colors = [fields(sw.process_packet(0, h(2, op=4))[0][1])["color"] for _ in range(2)]
    assert colors == [10, 30]  # Meter(size, type, red 30, yellow 20, green 10)


def test_direct_meter_runs_when_the_action_executes_it(program: CheckedProgram) -> None:
    sw = switch(program)
    sw.set_clock(lambda: 0)
    sw.direct_meter("dm").set_rates(handle(sw, 1), 0, 1, 0, 1)
    colors = [fields(sw.process_packet(0, h(1))[0][1])["color"] for _ in range(2)]
    assert colors == [0, 3]


def test_digest_needs_digest_type_and_is_named_after_the_instance(program: CheckedProgram) -> None:
    sw = switch(program)
    sw.process_packet(0, h(1, qid=3))
    assert sw.digests == []
    sw.process_packet(0, h(2, qid=4, op=1))
    assert len(sw.digests) == 1
    d = sw.digests[0]
    assert d.name == "IgDeparser.learn"
    assert d.values == (2, 4) and d.field_names == ("port", "qid")
    store = EntityStore(SimpleNamespace(p4info=build_p4info(program), switch=sw))
    digest_id, data = store.digests.to_p4data(d)
    assert [bytestrings.decode(m.bitstring, 8, "x") for m in data.struct.members] == [2, 4]
    assert digest_id != 0


def test_copy_to_cpu_goes_to_the_cpu_port(program: CheckedProgram) -> None:
    sw = switch(program)
    assert [p for p, _ in sw.process_packet(0, h(1, op=2))] == [1]  # no CPU port: no copy
    sw.set_cpu_port(64)
    out = dict(sw.process_packet(0, h(1, op=2)))
    assert sorted(out) == [1, 64]
    normal, cpu = fields(out[1]), fields(out[64])
    # the same packet through egress on each port; the CPU copy's class of service is
    # icos_for_copy_to_cpu (0), the unicast copy's ingress_cos (5)
    assert (normal["ecos"], cpu["ecos"]) == (5, 0)
    assert {**normal, "ecos": 0} == {**cpu, "ecos": 0}


def test_port_metadata_reaches_port_metadata_unpack(program: CheckedProgram) -> None:
    sw = switch(program)
    sw.set_port_metadata(3, 0xABCD << 48)
    assert fields(sw.process_packet(3, h(1))[0][1])["pm"] == 0xABCD
    assert fields(sw.process_packet(4, h(1))[0][1])["pm"] == 0


def test_random_is_reproducible_and_varies(program: CheckedProgram) -> None:
    a = [fields(switch(program).process_packet(0, h(1))[0][1])["rnd"] for _ in range(2)]
    sw = switch(program)
    b = [fields(sw.process_packet(0, h(1))[0][1])["rnd"] for _ in range(8)]
    assert a[0] == a[1] == b[0]  # a fresh switch starts the same sequence
    assert len(set(b)) > 1


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def device(program: CheckedProgram, **options: object) -> tuple[Device, list[tuple[int, bytes]]]:
    dev = Device(1, cpu_port=64, **options)  # type: ignore[arg-type]
    out: list[tuple[int, bytes]] = []
    dev.set_output(lambda port, data: out.append((port, data)))
    p4info = build_p4info(program)
    dev.commit(Device.build_pipeline(p4info, dumps_ir(program).encode()))
    sw = dev.switch
    assert sw is not None
    sw.table("fwd").add_entry([ExactMatch(2)], "uncounted", [2])
    return dev, out


def test_egress_sees_queue_depths_in_cells_qid_cos_and_ns_timedelta(
    program: CheckedProgram,
) -> None:
    clock = Clock()
    dev, out = device(program, clock=clock, priority_queues=4)
    dev.set_queue_rate(2, 100_000)  # 10 µs per packet
    # 23 bytes of bridged header and h + 57 of payload = 80, + 4 FCS = 84: 2 cells of 80
    for i in range(4):
        dev.receive(1, h(2, qid=1, payload=bytes([i]) * 57))
    dev.run_until_idle()
    for step in range(1, 4):
        clock.now = step * 10
        dev.run_until_idle()
    seen = [fields(d) for _, d in out]
    assert [d[-1] for _, d in out] == [0, 1, 2, 3]
    assert [f["enq"] for f in seen] == [0, 0, 2, 4]  # the first left at once
    assert [f["deq"] for f in seen] == [0, 4, 2, 0]
    assert [f["delta"] for f in seen] == [0, 10_000, 20_000, 30_000]  # ns
    assert {f["eqid"] for f in seen} == {1} and {f["ecos"] for f in seen} == {5}


def test_qid_picks_the_queue_and_one_past_the_last_goes_to_the_last(
    program: CheckedProgram,
) -> None:
    clock = Clock()
    dev, out = device(program, clock=clock, priority_queues=4)
    dev.set_queue_rate(2, 100_000)
    dev.receive(1, h(2, qid=0, payload=b"\x00"))  # leaves at once
    dev.receive(1, h(2, qid=0, payload=b"\x01"))
    dev.receive(1, h(2, qid=9, payload=b"\x02"))  # queue 3 of 4, served first
    dev.receive(1, h(2, qid=1, payload=b"\x03"))
    dev.run_until_idle()
    for step in range(1, 4):
        clock.now = step * 10
        dev.run_until_idle()
    assert [d[-1] for _, d in out] == [0, 2, 3, 1]
    assert [fields(d)["eqid"] for _, d in out] == [0, 9, 1, 0]  # egress_qid is the qid asked
    job = TnaJob(False, 2, b"", qid=9, qmax=4)
    assert job.priority == 3


def test_copy_to_cpu_through_the_device_is_a_packet_in(program: CheckedProgram) -> None:
    dev, out = device(program)
    packet_ins: list[bytes] = []
    dev.add_packet_in_listener(packet_ins.append)
    dev.receive(1, h(2, op=2))
    dev.run_until_idle()
    assert [p for p, _ in out] == [2] and len(packet_ins) == 1


# -- P4Runtime over a TNA program -------------------------------------------------------------


def store_for(name: str) -> tuple[Switch, EntityStore, object]:
    checked = compile_file(P4_DIR / name)
    sw = Switch(checked)
    p4info = build_p4info(checked)
    return sw, EntityStore(SimpleNamespace(p4info=p4info, switch=sw)), p4info


def p4_id(p4info: object, kind: str, name: str) -> int:
    for obj in getattr(p4info, kind):
        if name in (obj.preamble.name, obj.preamble.alias):
            return int(obj.preamble.id)
    raise KeyError(name)


def test_p4runtime_clone_session_is_a_truncating_mirror_session() -> None:
    sw, store, _ = store_for("tna_mirror.p4")
    session = p4r.CloneSessionEntry(session_id=3, packet_length_bytes=20, class_of_service=2)
    session.replicas.add(egress_port=5, instance=0)
    update = p4r.Update(type=p4r.Update.INSERT)
    update.entity.packet_replication_engine_entry.clone_session_entry.CopyFrom(session)
    store.write(update)
    sw.set_queue_count(8)
    packet = bytes.fromhex("000000000002 000000000001 88b5 0103 0102030405060708".replace(" ", ""))
    jobs = [sw.new_packet(1, packet)]
    seen = []
    while jobs:
        job = jobs.pop(0)
        out, more = sw.run(job)
        if not job.is_ingress:
            seen.append((job.port, job.priority, [d.hex() for _, d in out]))
        jobs += more
    mirrored = [s for s in seen if s[0] == 5]
    assert mirrored == [(5, 2, ["a1110018000500000000000200000000000188b501030102"])]


def test_p4runtime_reads_and_writes_struct_register_cells() -> None:
    sw, store, p4info = store_for("tna_register_action.p4")
    rid = p4_id(p4info, "registers", "pairs")
    entity = p4r.Entity()
    entity.register_entry.register_id = rid
    entity.register_entry.index.index = 3
    [cell] = list(store.read(entity))
    members = cell.register_entry.data.struct.members
    assert [bytestrings.decode(m.bitstring, 16, "x") for m in members] == [1, 2]
    update = p4r.Update(type=p4r.Update.MODIFY)
    update.entity.register_entry.register_id = rid
    update.entity.register_entry.index.index = 3
    for v in (7, 9):
        update.entity.register_entry.data.struct.members.add(bitstring=bytestrings.encode(v, 16))
    store.write(update)
    assert sw.register("pairs").read(3) == (7 << 16) | 9


# -- extern helpers ------------------------------------------------------------------------------


def test_parser_checksum_keeps_each_byte_in_its_place_of_a_word() -> None:
    split = ParserChecksum()
    split.add((0x12,), (8,))  # even offset: high byte of the first word
    split.add((0x34, 0x56), (8, 8))  # odd then even
    whole = ParserChecksum()
    whole.add((0x123456,), (24,))
    assert split.get() == whole.get() == (0x1234 + 0x5600)
    split.subtract((0x1234,), (16,))  # at offset 3 its bytes straddle two words: 0x3412
    assert split.get() == 0x1234 + 0x5600 - 0x3412


def test_checksum_update_sends_zero_as_ffff_when_asked() -> None:
    data = bytes.fromhex("ffff")  # sum ffff: checksum 0000
    assert csum_update(data) == 0
    assert csum_update(data, True) == 0xFFFF


def test_random_hash_is_a_fixed_linear_map() -> None:
    a, b = TnaHash("RANDOM", 16), TnaHash("RANDOM", 16)
    x, y = 0x1234_5678, 0x0F0F_F0F0
    assert a.get((x,), (32,)) == b.get((x,), (32,))
    assert a.get((x ^ y,), (32,)) == a.get((x,), (32,)) ^ a.get((y,), (32,))


def test_parser_counter_set_field_rotates_masks_adds_and_caps() -> None:
    pc = ParserCounterState()
    pc.set_field(0b1011_0000, 200, 4, 3, 2)  # rotate right 4 -> 0b0000_1011, low 4 bits, + 2
    assert pc.value == 13
    pc.set_field(0xFF, 10, 0, 7, 0)
    assert pc.value == 10  # capped at max
    pc.decrement(11)
    assert pc.is_negative() and not pc.is_zero()


# The rest of a program whose ingress is all that is tested: the ingress deparser emits
# every header, and the egress passes the packet through.
PASS_THROUGH_TAIL = """
control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Eg(inout headers_t hdr, inout eg_md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}
control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
"""


# A TLV list counted down by a ParserCounter: the count byte says how many one-byte items follow.
TNA_COUNTER = """
#include <core.p4>
#include <tna.p4>
header count_t { bit<8> n; }
header item_t { bit<8> v; }
header sum_t { bit<8> items; }
struct headers_t { count_t count; item_t[4] items; sum_t sum; }
struct ig_md_t { }
struct eg_md_t { }
parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.count);
        pc.set(hdr.count.n);
        transition select(pc.is_zero()) {
            true: done;
            false: item;
        }
    }
    state item {
        pkt.extract(hdr.items.next);
        pc.decrement(1);
        transition select(pc.is_zero()) {
            true: done;
            false: item;
        }
    }
    state done {
        pkt.extract(hdr.sum);
        transition accept;
    }
}
control Ig(inout headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        hdr.sum.items = 0;
        if (hdr.items[0].isValid()) { hdr.sum.items = hdr.sum.items + 1; }
        if (hdr.items[1].isValid()) { hdr.sum.items = hdr.sum.items + 1; }
        if (hdr.items[2].isValid()) { hdr.sum.items = hdr.sum.items + 1; }
        ig_tm_md.ucast_egress_port = 1;
    }
}
""" + PASS_THROUGH_TAIL


def test_parser_counter_counts_items_in_each_packet(tmp_path: Path) -> None:
    path = tmp_path / "tna_counter.p4"
    path.write_text(TNA_COUNTER)
    sw = Switch(compile_file(path))
    # 2 items then the sum byte: the counter stops after two (state is per packet)
    assert sw.process_packet(0, bytes.fromhex("02aabb00")) == [(1, bytes.fromhex("02aabb02"))]
    assert sw.process_packet(0, bytes.fromhex("03aabbcc00")) == [(1, bytes.fromhex("03aabbcc03"))]
    assert sw.process_packet(0, bytes.fromhex("0000")) == [(1, bytes.fromhex("0000"))]


TNA_SELECTOR = """
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<8> b; bit<8> port; }
struct headers_t { h_t h; }
struct ig_md_t { }
struct eg_md_t { }
parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control Ig(inout headers_t hdr, inout ig_md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<16>>(HashAlgorithm_t.CRC16) sel_hash;
    ActionProfile(16) prof;
    ActionSelector(prof, sel_hash, SelectorMode_t.FAIR, 4, 4) sel;
    action set_port(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    table t {
        key = { hdr.h.a : exact; hdr.h.b : selector; }
        actions = { set_port; }
        implementation = sel;
        size = 16;
    }
    apply { t.apply(); }
}
""" + PASS_THROUGH_TAIL


def test_action_selector_picks_a_member_by_its_hash_of_the_selector_key(tmp_path: Path) -> None:
    path = tmp_path / "tna_selector.p4"
    path.write_text(TNA_SELECTOR)
    sw = Switch(compile_file(path))
    prof = sw.action_profile("sel")
    assert prof is sw.action_profile("prof")  # ActionSelector(prof, ...) selects among prof's
    members = [prof.add_member("Ig.set_port", [port]) for port in (5, 6)]
    group = prof.create_group()
    for m in members:
        prof.add_member_to_group(group, m)
    sw.table("t").add_group_entry([ExactMatch(1)], group)
    ports = [sw.process_packet(0, bytes([1, b, 0]))[0][0] for b in range(6)]
    # CRC-16/ARC of the one-byte key, modulo the two members (handle order)
    assert ports == [(5, 6)[crc16(bytes([b])) % 2] for b in range(6)]
    assert len(set(ports)) == 2


def test_p4runtime_clone_sessions_reach_tofinos_session_ids() -> None:
    sw, store, _ = store_for("tna_mirror.p4")
    session = p4r.CloneSessionEntry(session_id=1015)  # PI for BMv2 stops at 511
    session.replicas.add(egress_port=5, instance=0)
    update = p4r.Update(type=p4r.Update.INSERT)
    update.entity.packet_replication_engine_entry.clone_session_entry.CopyFrom(session)
    store.write(update)
    assert sw.pre.clone_session_ids() == [1015]
