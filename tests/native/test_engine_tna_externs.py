"""TNA meters, direct meters, direct registers and action selectors on both engines: one program
using each (indexed and direct meters of packets and bytes, colour-aware with every pre-colour
and the constructor's colour values, a struct DirectRegister driven by a DirectRegisterAction and
read and written directly, selectors hashing with a named RANDOM Hash and an inline CRC32 one)
walks the same packets through a TwinSwitch at advancing times; outputs, counters, registers and
meter rates read back must be the same."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from twin import TwinSwitch, assert_same_state
from unit.test_tna_engine import PASS_THROUGH_TAIL

from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

# h: op sel color a(2) b(4) | o: c1 c2 c3 lo(2) hi(2) rv(2) port(2). op picks what ingress does;
# `sel` keys the direct tables; `color` the pre-colour; a, b the selector fields.
PROGRAM = """
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> op; bit<8> sel; bit<8> color; bit<16> a; bit<32> b; }
header o_t { bit<8> c1; bit<8> c2; bit<8> c3; bit<16> lo; bit<16> hi; bit<16> rv; bit<16> port; }
header opt_t { bit<8> x; }
struct headers_t { h_t h; o_t o; opt_t opt; }
struct pair_t { bit<16> lo; bit<16> hi; }
struct ig_md_t { }
struct eg_md_t { }
parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        pkt.extract(hdr.o);
        transition select(hdr.h.op) { 9: opt; default: accept; }
    }
    state opt { pkt.extract(hdr.opt); transition accept; }
}
control Ig(inout headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Meter<bit<8>>(4, MeterType_t.BYTES) mb;
    Meter<bit<8>>(4, MeterType_t.PACKETS, 8w30, 8w20, 8w10) mp;
    DirectMeter(MeterType_t.BYTES) dm;
    DirectRegister<pair_t>({16w5, 16w7}) pairs;
    DirectRegisterAction<pair_t, bit<16>>(pairs) bump = {
        void apply(inout pair_t value, out bit<16> rv) {
            value.lo = value.lo + (bit<16>)hdr.h.color;
            value.hi = value.hi + 1;
            rv = value.hi;
        }
    };
    Hash<bit<16>>(HashAlgorithm_t.RANDOM) rhash;
    ActionProfile(16) prof;
    ActionSelector(prof, rhash, SelectorMode_t.FAIR, 8, 4) sel;
    ActionSelector(16, Hash<bit<32>>(HashAlgorithm_t.CRC32), SelectorMode_t.FAIR) sel2;
    action metered() {
        hdr.o.c3 = dm.execute((MeterColor_t)hdr.h.color, 32w3);
        hdr.o.rv = bump.execute();
    }
    action peek() {
        pair_t p = pairs.read();
        hdr.o.lo = p.lo;
        hdr.o.hi = p.hi;
    }
    action poke() { pairs.write({16w100, hdr.h.a}); }
    action nop() { }
    table direct {
        key = { hdr.h.sel : exact; }
        actions = { metered; peek; poke; nop; }
        meters = dm;
        registers = pairs;
        default_action = nop;
        size = 16;
    }
    action to(PortId_t p) { hdr.o.port = (bit<16>)p; }
    table lb {
        key = { hdr.h.sel : exact; hdr.h.a : selector; hdr.h.b : selector; }
        actions = { to; nop; }
        implementation = sel;
        default_action = nop;
        size = 16;
    }
    table lb2 {
        key = { hdr.h.sel : exact; hdr.h.b : selector; hdr.opt.x : selector; }
        actions = { to; nop; }
        implementation = sel2;
        default_action = nop;
        size = 16;
    }
    apply {
        if (hdr.h.op == 1) { hdr.o.c1 = mb.execute(hdr.h.sel); }
        else if (hdr.h.op == 2) { hdr.o.c1 = mb.execute(hdr.h.sel, (MeterColor_t)hdr.h.color); }
        else if (hdr.h.op == 3) { hdr.o.c2 = mp.execute(hdr.h.sel, (MeterColor_t)hdr.h.color); }
        direct.apply();
        if (hdr.h.op >= 8) { lb2.apply(); } else { lb.apply(); }
        ig_tm_md.ucast_egress_port = 1;
    }
}
""" + PASS_THROUGH_TAIL


def packet(op: int, sel: int, color: int, a: int, b: int, extra: int) -> bytes:
    head = bytes([op, sel, color]) + a.to_bytes(2, "big") + b.to_bytes(4, "big")
    return head + bytes(11) + bytes(extra)


def test_meters_direct_registers_and_selectors_behave_alike(tmp_path: Path) -> None:
    path = tmp_path / "tna_externs.p4"
    path.write_text(PROGRAM)
    sw = TwinSwitch(compile_file(path))
    now = [0]
    for engine in (sw.python, sw.native):
        engine.set_clock(lambda: now[0])
    direct = sw.table("direct")
    for sel, action in ((0, "metered"), (1, "metered"), (2, "peek"), (3, "poke")):
        direct.add_entry([ExactMatch(sel)], action, [])
    dm = sw.direct_meter("dm")
    dm.set_rates(direct.find_entry([ExactMatch(0)]).handle, 2_000, 300, 5_000, 600)
    sw.meter("mb").meter(1).set_rates_per_us(0.01, 200, 0.03, 400)
    sw.meter("mp").meter(2).set_rates_per_us(1e-4, 2, 3e-4, 3)
    for name, table, ports in (("sel", "lb", (5, 6, 7)), ("sel2", "lb2", (8, 9, 10, 11))):
        prof = sw.action_profile(name)
        members = [prof.add_member("Ig.to", [p]) for p in ports]
        group = prof.create_group()
        for m in members:
            prof.add_member_to_group(group, m)
        for sel in range(4):
            sw.table(table).add_group_entry([ExactMatch(sel)], group)
    rng = random.Random(7)
    outputs = set()
    for i in range(600):
        now[0] += rng.choice((0, 1, 3, 50, 400))
        op = rng.choice((0, 1, 2, 3, 8, 9))
        data = packet(op, rng.randrange(5), rng.randrange(4), rng.randrange(1 << 16),
                      rng.randrange(1 << 32), rng.randrange(200))
        out = sw.process_packet(0, data)
        outputs.update(d[9:20] for _, d in out)  # h.o
        if i == 300:  # the cells poke wrote stay with their entries, now read by peek
            for sel in (1, 3):
                direct.modify_entry(direct.find_entry([ExactMatch(sel)]).handle, "Ig.peek", [])
    assert len(outputs) > 20  # colours, registers and ports really vary
    assert_same_state(sw)
